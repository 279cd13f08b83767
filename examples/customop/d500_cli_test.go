package customop_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The example's d500 (the tool with ChannelSwish registered) runs the
// operator's test case through the command line as it runs a built-in
// one: conformance passes it, gradcheck passes it, run --bench times it,
// ops lists it; the plain tool, without the registration, skips it as
// unsupported.
func TestD500WithTheOperator(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two d500 binaries")
	}
	dir := t.TempDir()
	caseDir := writeCase(t, dir, "test_channel_swish", "ChannelSwish", expectedY)
	custom := filepath.Join(dir, "d500-customop")
	plain := filepath.Join(dir, "d500")
	for bin, pkg := range map[string]string{custom: "./d500", plain: "github.com/deep500/deep500-go/cmd/d500"} {
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	run := func(bin string, args ...string) (string, int) {
		out, err := exec.Command(bin, args...).CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	lastLine := func(s string) string {
		lines := strings.Split(strings.TrimSpace(s), "\n")
		return lines[len(lines)-1]
	}

	if out, code := run(custom, "conformance", caseDir); code != 0 || lastLine(out) != "1 passed, 0 failed, 0 skipped" {
		t.Errorf("conformance: exit %d\n%s", code, out)
	}
	if out, code := run(custom, "gradcheck", caseDir); code != 0 || lastLine(out) != "1 passed, 0 failed, 0 skipped" {
		t.Errorf("gradcheck: exit %d\n%s", code, out)
	}
	model := filepath.Join(caseDir, "model.onnx")
	data := filepath.Join(caseDir, "test_data_set_0")
	out, code := run(custom, "run", "--model", model, "--input", "X="+filepath.Join(data, "input_0.pb"),
		"--input", "Beta="+filepath.Join(data, "input_1.pb"), "--bench", "5", "--output-dir", filepath.Join(dir, "out"))
	if code != 0 || !strings.Contains(out, "median") {
		t.Errorf("run --bench: exit %d\n%s", code, out)
	}
	out, code = run(custom, "ops", "--backend", "native")
	if code != 0 || !strings.Contains(out, "example.customop") || !strings.Contains(out, "ChannelSwish") {
		t.Errorf("ops should list the custom operator: exit %d\n%s", code, lastLine(out))
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "ChannelSwish") && !strings.HasSuffix(strings.TrimSpace(l), "yes") {
			t.Errorf("ops: %q, want native yes", l)
		}
	}
	out, code = run(plain, "conformance", caseDir)
	if code != 0 || lastLine(out) != "0 passed, 0 failed, 1 skipped" || !strings.Contains(out, "ChannelSwish") {
		t.Errorf("the plain d500 should skip the unregistered operator, naming it: exit %d\n%s", code, out)
	}
}
