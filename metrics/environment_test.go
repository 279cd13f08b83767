package metrics

import (
	"encoding/json"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/cpu"
)

func TestNewEnvironment(t *testing.T) {
	env := NewEnvironment(3, nil)
	if env.Threads != 3 {
		t.Errorf("threads %d, want the 3 given", env.Threads)
	}
	if all := NewEnvironment(0, nil); all.Threads != runtime.GOMAXPROCS(0) {
		t.Errorf("threads 0 recorded as %d, want GOMAXPROCS %d", all.Threads, runtime.GOMAXPROCS(0))
	}
	if CurrentEnvironment().Threads != runtime.GOMAXPROCS(0) {
		t.Error("CurrentEnvironment does not record GOMAXPROCS threads")
	}
	// The features are those x/sys/cpu reports for the kernels.
	if runtime.GOARCH == "amd64" {
		has := strings.Join(env.CPUFeatures, " ")
		for name, want := range map[string]bool{"avx2": cpu.X86.HasAVX2, "fma": cpu.X86.HasFMA, "avx512f": cpu.X86.HasAVX512F} {
			if got := strings.Contains(" "+has+" ", " "+name+" "); got != want {
				t.Errorf("cpu_features %q: %s listed %v, x/sys/cpu says %v", has, name, got, want)
			}
		}
	}
	// On Linux the memory, kernel and distribution are read from /proc and
	// /etc/os-release.
	if runtime.GOOS == "linux" {
		if env.MemoryBytes < 1<<20 {
			t.Errorf("memory %d bytes", env.MemoryBytes)
		}
		if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil && env.Kernel != strings.TrimSpace(string(data)) {
			t.Errorf("kernel %q, /proc says %q", env.Kernel, data)
		}
		if _, err := os.Stat("/etc/os-release"); err == nil && env.OS == "" {
			t.Error("no distribution read from /etc/os-release")
		}
	}
	// Every field named in the design is in the JSON.
	data, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"cpu", "cpu_features", "cores", "memory_bytes", "goos", "go_version", "commit", "threads"} {
		if !strings.Contains(string(data), `"`+key+`":`) {
			t.Errorf("JSON %s lacks %q", data, key)
		}
	}
}

func TestVersionProbes(t *testing.T) {
	var got map[string]string
	RegisterVersionProbe("test-engine", func(settings map[string]string) (string, error) {
		got = settings
		return "1.2." + settings["patch"], nil
	})
	RegisterVersionProbe("test-missing", func(map[string]string) (string, error) { return "", errors.New("not installed") })
	defer func() {
		probes.Lock()
		delete(probes.byName, "test-engine")
		delete(probes.byName, "test-missing")
		probes.Unlock()
	}()
	env := NewEnvironment(1, map[string]string{"patch": "3"})
	if env.Backends["test-engine"] != "1.2.3" || got["patch"] != "3" {
		t.Errorf("versions %v; the probe saw settings %v", env.Backends, got)
	}
	if _, ok := env.Backends["test-missing"]; ok {
		t.Errorf("a probe that failed is recorded: %v", env.Backends)
	}
}

func TestParseOSReleaseAndOpenMPI(t *testing.T) {
	if got := parseOSRelease("NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\n"); got != "Debian GNU/Linux 12 (bookworm)" {
		t.Errorf("PRETTY_NAME %q", got)
	}
	if got := parseOSRelease("PRETTY_NAME=Alpine\n"); got != "Alpine" {
		t.Errorf("unquoted PRETTY_NAME %q", got)
	}
	if got := parseOSRelease("NAME=x\n"); got != "" {
		t.Errorf("no PRETTY_NAME: %q", got)
	}
	if got := parseOpenMPIVersion("Open MPI v4.1.4\n\nhttp://www.open-mpi.org/community/help/\n"); got != "4.1.4" {
		t.Errorf("Open MPI version %q", got)
	}
	if got := parseOpenMPIVersion("mpich 4\n"); got != "" {
		t.Errorf("not Open MPI: %q", got)
	}
}
