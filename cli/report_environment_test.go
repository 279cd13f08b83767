package cli

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/deep500/deep500-go/metrics"
)

// The case commands' reports carry the environment with the --threads the
// cases ran on, and GOMAXPROCS for 0 (all cores).
func TestCaseReportEnvironmentThreads(t *testing.T) {
	c := "/usr/share/libonnx-testdata/data/node/test_abs"
	if _, err := os.Stat(c); err != nil {
		t.Skipf("ONNX test data absent (Debian libonnx-testdata): %v", err)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		command, threads string
		want             int
	}{
		{"conformance", "1", 1},
		{"gradcheck", "1", 1},
		{"conformance", "0", runtime.GOMAXPROCS(0)},
	} {
		path := filepath.Join(dir, tc.command+tc.threads+".json")
		if _, stderr, code := d500(t, tc.command, "--threads", tc.threads, "--json", path, c); code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.command, code, stderr)
		}
		var rep metrics.Report
		readJSONFile(t, path, &rep)
		if rep.Environment == nil || rep.Environment.Threads != tc.want || rep.Environment.CPU == "" {
			t.Errorf("%s --threads %s: environment %+v, want %d threads", tc.command, tc.threads, rep.Environment, tc.want)
		}
	}
}
