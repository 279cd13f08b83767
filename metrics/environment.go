package metrics

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/cpu"
)

// Environment says where and when a measurement was taken, so that a
// figure read later can be traced to its machine, toolchain and source.
type Environment struct {
	Time string `json:"time"` // RFC 3339, UTC
	Host string `json:"host"`
	CPU  string `json:"cpu"` // the model name the kernel reports
	// CPUFeatures are the instruction-set extensions the native backend's
	// kernels choose their code by that this CPU has (x86: avx2, fma,
	// avx512f, …; see kernelFeatures), as golang.org/x/sys/cpu reports
	// them, so after any GODEBUG that turns one off.
	CPUFeatures []string `json:"cpu_features"`
	Cores       int      `json:"cores"`
	GOMAXPROCS  int      `json:"gomaxprocs"`
	// Threads is the number of worker threads the measured backends were
	// given: the command's --threads, or GOMAXPROCS where it gave none or
	// 0 (all cores). Rows that set their own (d500 bench) say so per row.
	Threads int `json:"threads"`
	// MemoryBytes is the machine's memory (MemTotal of /proc/meminfo), 0
	// where it is not known.
	MemoryBytes int64  `json:"memory_bytes"`
	GOOS        string `json:"goos"`
	GOARCH      string `json:"goarch"`
	// OS is the distribution (PRETTY_NAME of /etc/os-release) and Kernel
	// the kernel's release, each empty where not known.
	OS        string `json:"os,omitempty"`
	Kernel    string `json:"kernel,omitempty"`
	GoVersion string `json:"go_version"`
	// BuildTags are the build's -tags (mpi, torch, purego: which
	// backends and kernels the binary holds), empty for none.
	BuildTags string `json:"build_tags,omitempty"`
	// Commit is the source revision the binary was built from (empty when
	// the build carries none, as under go run or go test), Modified whether
	// the working tree had uncommitted changes.
	Commit   string `json:"commit"`
	Modified bool   `json:"modified"`
	// Backends holds the versions of what the backends run on — the ONNX
	// Runtime library, the Go modules of the engines, Open MPI — by name;
	// one that cannot be found is left out.
	Backends map[string]string `json:"backend_versions,omitempty"`
}

// BuildCommit and BuildModified ("true" or "false") are the source
// revision and the state of its working tree, set at link time (make bench
// passes -ldflags -X for them) for builds that carry no version-control
// stamp (-buildvcs=false, or a git worktree the go command does not read).
// The stamp, where there is one, wins.
var BuildCommit, BuildModified string

// CurrentEnvironment describes this process and machine now, with
// GOMAXPROCS threads and the backends probed with their default settings.
func CurrentEnvironment() Environment { return NewEnvironment(0, nil) }

// NewEnvironment describes this process and machine now, for a run whose
// backends were given threads worker threads (0: all cores, recorded as
// GOMAXPROCS) and the backend settings (--backend-opt; nil for none),
// which the version probes read (ONNX Runtime's library path, say).
func NewEnvironment(threads int, settings map[string]string) Environment {
	m := machineFacts()
	host, _ := os.Hostname()
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	env := Environment{
		Time:        time.Now().UTC().Format(time.RFC3339),
		Host:        host,
		CPU:         m.cpu,
		CPUFeatures: slices.Clone(m.features),
		Cores:       runtime.NumCPU(),
		GOMAXPROCS:  runtime.GOMAXPROCS(0),
		Threads:     threads,
		MemoryBytes: m.memory,
		GOOS:        runtime.GOOS,
		GOARCH:      runtime.GOARCH,
		OS:          m.os,
		Kernel:      m.kernel,
		GoVersion:   runtime.Version(),
	}
	env.Commit, env.Modified, env.BuildTags = BuildStamp()
	env.Backends = backendVersions(settings, m.mpi)
	return env
}

// BuildStamp is the source revision the binary was built from, whether
// its tree had uncommitted changes, and its build tags: the build's
// version-control stamp where it carries one, else BuildCommit and
// BuildModified. It probes nothing, so it is cheap enough for a version
// line.
func BuildStamp() (commit string, modified bool, tags string) {
	commit, modified = BuildCommit, BuildModified == "true"
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return commit, modified, ""
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		case "-tags":
			tags = s.Value
		}
	}
	return commit, modified, tags
}

// A VersionProbe finds the version of something a backend runs on, given
// the run's backend settings (nil for none); an error leaves it out.
type VersionProbe func(settings map[string]string) (string, error)

var probes struct {
	sync.Mutex
	byName map[string]VersionProbe
}

// RegisterVersionProbe adds a probe whose answer every Environment made
// afterwards records under name (a later probe of the same name replaces
// it). The probes live with the backends' users, not here: the ONNX
// Runtime library is reached through cgo, which this package does without.
// A probe may be slow the first time (loading a library) and should be
// cheap after.
func RegisterVersionProbe(name string, probe VersionProbe) {
	probes.Lock()
	defer probes.Unlock()
	if probes.byName == nil {
		probes.byName = map[string]VersionProbe{}
	}
	probes.byName[name] = probe
}

// backendVersions asks every registered probe, and adds Open MPI's
// version (mpi, "" when not installed).
func backendVersions(settings map[string]string, mpi string) map[string]string {
	probes.Lock()
	byName := make(map[string]VersionProbe, len(probes.byName))
	for name, p := range probes.byName {
		byName[name] = p
	}
	probes.Unlock()
	out := map[string]string{}
	for name, probe := range byName {
		if v, err := probe(settings); err == nil && v != "" {
			out[name] = v
		}
	}
	if mpi != "" {
		out["openmpi"] = mpi
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// machine holds what does not change while the process runs, read once.
type machine struct {
	cpu, os, kernel, mpi string
	features             []string
	memory               int64
}

var machineFacts = sync.OnceValue(func() machine {
	return machine{
		cpu:      cpuModel(),
		features: kernelFeatures(),
		memory:   memTotal(),
		os:       osRelease(),
		kernel:   kernelRelease(),
		mpi:      openMPIVersion(),
	}
})

// kernelFeatures lists the CPU features the native kernels dispatch on
// (backend/native/internal: gemm, conv, pool and vec pick AVX-512, AVX2
// with FMA, or portable code from these) that this CPU has. Only amd64
// has such kernels; elsewhere the list is empty.
func kernelFeatures() []string {
	if runtime.GOARCH != "amd64" {
		return []string{}
	}
	var out []string
	for _, f := range []struct {
		name string
		has  bool
	}{
		{"avx2", cpu.X86.HasAVX2},
		{"fma", cpu.X86.HasFMA},
		{"bmi2", cpu.X86.HasBMI2},
		{"avx512f", cpu.X86.HasAVX512F},
		{"avx512dq", cpu.X86.HasAVX512DQ},
		{"avx512vl", cpu.X86.HasAVX512VL},
	} {
		if f.has {
			out = append(out, f.name)
		}
	}
	return out
}

// cpuModel is the first "model name" of /proc/cpuinfo, or "unknown" where
// there is none (other systems, some architectures).
func cpuModel() string {
	if v := procField("/proc/cpuinfo", "model name"); v != "" {
		return v
	}
	return "unknown"
}

// memTotal is MemTotal of /proc/meminfo in bytes (the file gives kB), 0
// where it cannot be read.
func memTotal() int64 {
	v := strings.TrimSuffix(procField("/proc/meminfo", "MemTotal"), " kB")
	kb, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0
	}
	return kb * 1024
}

// procField is the value of the first line "key: value" of a file like
// /proc/cpuinfo, trimmed, or "" when the file or the key is missing.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, value, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(value)
		}
	}
	return ""
}

// osRelease is PRETTY_NAME of /etc/os-release (unquoted), "" where there
// is none.
func osRelease() string {
	data, err := os.ReadFile("/etc/os-release")
	if err != nil {
		return ""
	}
	return parseOSRelease(string(data))
}

// parseOSRelease finds PRETTY_NAME in the text of an os-release file.
func parseOSRelease(text string) string {
	for _, line := range strings.Split(text, "\n") {
		v, ok := strings.CutPrefix(strings.TrimSpace(line), "PRETTY_NAME=")
		if !ok {
			continue
		}
		if u, err := strconv.Unquote(v); err == nil {
			return u
		}
		return strings.Trim(v, `"'`)
	}
	return ""
}

// kernelRelease is the running kernel's release (Linux:
// /proc/sys/kernel/osrelease), "" where it cannot be read.
func kernelRelease() string {
	data, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// openMPIVersion is the installed Open MPI's version from `ompi_info
// --version` ("Open MPI v4.1.4" gives "4.1.4"), "" when it is not
// installed or says nothing recognisable. It is bounded in time: a broken
// installation must not hold up a report.
func openMPIVersion() string {
	path, err := exec.LookPath("ompi_info")
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return ""
	}
	return parseOpenMPIVersion(string(out))
}

// parseOpenMPIVersion finds the version in ompi_info --version's output.
func parseOpenMPIVersion(out string) string {
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Open MPI v"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
