package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// Help that is asked for goes to standard output, the same for `d500 help
// CMD`, `d500 CMD --help` and `d500 CMD -h`, each flag once with its
// default once; `d500 version` and --version name the build; unknown
// names are usage errors whatever they name.
func TestD500HelpVersionAndUsage(t *testing.T) {
	dir := t.TempDir()
	bin := buildD500(t, dir)
	help, stderr, code := runD500(t, bin, "help", "train")
	if code != 0 || stderr != "" || !strings.HasPrefix(help, "usage: d500 train ") || !strings.Contains(help, "--lr F") {
		t.Fatalf("d500 help train: exit %d\nstdout:\n%s\nstderr:\n%s", code, help, stderr)
	}
	if strings.Count(help, "\n      --weight-decay F") != 1 || strings.Contains(help, "(default -1)") {
		t.Errorf("a flag or a sentinel default shown twice:\n%s", help)
	}
	for _, args := range [][]string{{"train", "--help"}, {"train", "-h"}} {
		if out, se, code := runD500(t, bin, args...); code != 0 || se != "" || out != help {
			t.Errorf("d500 %v: exit %d, stderr %q, stdout differs from d500 help train:\n%s", args, code, se, out)
		}
	}
	top, _, code := runD500(t, bin, "help")
	for _, name := range []string{"bench", "conformance", "train", "version", "completion", "Exit status"} {
		if code != 0 || !strings.Contains(top, name) {
			t.Errorf("d500 help: exit %d, no %q:\n%s", code, name, top)
		}
	}
	version, _, code := runD500(t, bin, "version")
	if code != 0 || !strings.HasPrefix(version, "d500 ") || !strings.Contains(version, runtime.Version()) || !strings.Contains(version, "backend native: built in") {
		t.Errorf("d500 version: exit %d:\n%s", code, version)
	}
	if v, _, code := runD500(t, bin, "--version"); code != 0 || strings.TrimSpace(v) != strings.SplitN(version, "\n", 2)[0] {
		t.Errorf("d500 --version: exit %d: %q", code, v)
	}
	// The same exit status for every unknown name: a command, an
	// optimizer, a preset, a dataset, a backend.
	for _, args := range [][]string{
		{"distribute"},
		{"train", "--model", "mlp", "--dataset", "synthetic", "--optimizer", "nosuch"},
		{"train", "--model", "nosuch", "--dataset", "synthetic"},
		{"train", "--model", "mlp", "--dataset", "nosuch"},
		{"compare-optimizers", "--model", "nosuch", "--dataset", "synthetic", "--a", "sgd", "--b", "adam", "--steps", "1", "--csv", filepath.Join(dir, "c.csv")},
		{"model", "nosuch", "-o", filepath.Join(dir, "x.onnx")},
		{"run", "--model", "mlp.onnx", "--backend", "nosuch"},
	} {
		if _, se, code := runD500(t, bin, args...); code != 2 || !strings.Contains(se, "nosuch") && !strings.Contains(se, "distribute") {
			t.Errorf("d500 %v: exit %d, want 2 naming the name:\n%s", args, code, se)
		}
	}
}

// `d500 completion bash` loads in bash (with the bash-completion package
// setup installs) and completes commands, flags and preset names; the zsh
// and fish scripts are written too.
func TestD500Completion(t *testing.T) {
	dir := t.TempDir()
	bin := buildD500(t, dir)
	const bashCompletion = "/usr/share/bash-completion/bash_completion"
	if _, err := os.Stat(bashCompletion); err != nil {
		t.Fatalf("%v (make setup installs the Debian package bash-completion)", err)
	}
	script := filepath.Join(dir, "d500.bash")
	out, stderr, code := runD500(t, bin, "completion", "bash")
	if code != 0 || !strings.Contains(out, "__start_d500") {
		t.Fatalf("d500 completion bash: exit %d\n%s", code, stderr)
	}
	if err := os.WriteFile(script, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	complete := func(line string) string {
		t.Helper()
		words := strings.Fields(line)
		if strings.HasSuffix(line, " ") {
			words = append(words, "")
		}
		var quoted []string
		for _, w := range words {
			quoted = append(quoted, "'"+w+"'")
		}
		prog := "source " + bashCompletion + "; source " + script + "; COMP_WORDS=(" + strings.Join(quoted, " ") + "); " +
			"COMP_CWORD=" + strconv.Itoa(len(words)-1) + "; COMP_LINE='" + line + "'; COMP_POINT=${#COMP_LINE}; __start_d500 2>/dev/null; echo \"${COMPREPLY[*]}\""
		cmd := exec.Command("bash", "-c", prog)
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"))
		got, err := cmd.Output()
		if err != nil {
			t.Fatalf("bash completing %q: %v", line, err)
		}
		return strings.TrimSpace(string(got))
	}
	for line, want := range map[string]string{
		"d500 con":           "conformance",
		"d500 train --l":     "--loss --lr --lr-schedule",
		"d500 bench --pa":    "--passes",
		"d500 model mobilen": "mobilenet_v3_small mobilenetv2",
	} {
		if got := complete(line); got != want {
			t.Errorf("completing %q: %q, want %q", line, got, want)
		}
	}
	for _, shell := range []string{"zsh", "fish"} {
		if out, _, code := runD500(t, bin, "completion", shell); code != 0 || !strings.Contains(out, "d500") {
			t.Errorf("d500 completion %s: exit %d", shell, code)
		}
	}
}
