package metrics

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// Environment says where and when a measurement was taken, so that a
// figure read later can be traced to its machine, toolchain and source.
type Environment struct {
	Time       string `json:"time"` // RFC 3339, UTC
	Host       string `json:"host"`
	CPU        string `json:"cpu"` // the model name the kernel reports
	Cores      int    `json:"cores"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	GOOS       string `json:"goos"`
	GOARCH     string `json:"goarch"`
	GoVersion  string `json:"go_version"`
	// Commit is the source revision the binary was built from (empty when
	// the build carries none, as under go run or go test), Modified whether
	// the working tree had uncommitted changes.
	Commit   string `json:"commit"`
	Modified bool   `json:"modified"`
}

// BuildCommit and BuildModified ("true" or "false") are the source
// revision and the state of its working tree, set at link time (make bench
// passes -ldflags -X for them) for builds that carry no version-control
// stamp (-buildvcs=false, or a git worktree the go command does not read).
// The stamp, where there is one, wins.
var BuildCommit, BuildModified string

// CurrentEnvironment describes this process and machine now.
func CurrentEnvironment() Environment {
	host, _ := os.Hostname()
	env := Environment{
		Time:       time.Now().UTC().Format(time.RFC3339),
		Host:       host,
		CPU:        cpuModel(),
		Cores:      runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		GOOS:       runtime.GOOS,
		GOARCH:     runtime.GOARCH,
		GoVersion:  runtime.Version(),
		Commit:     BuildCommit,
		Modified:   BuildModified == "true",
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				env.Commit = s.Value
			case "vcs.modified":
				env.Modified = s.Value == "true"
			}
		}
	}
	return env
}

// cpuModel is the first "model name" of /proc/cpuinfo, or "unknown" where
// there is none (other systems, some architectures).
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return "unknown"
}
