package cli

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

func TestParseArgsInterspersed(t *testing.T) {
	fs := newFlagSet("x", "", io.Discard)
	j := fs.String("json", "", "")
	v := fs.Bool("v", false, "")
	pos, code := parseArgs(fs, []string{"a", "--json", "r.json", "b", "-v", "--", "-c"})
	if code != -1 || strings.Join(pos, " ") != "a b -c" || *j != "r.json" || !*v {
		t.Errorf("positional %q code %d json %q v %v", pos, code, *j, *v)
	}
	fs = newFlagSet("x", "", io.Discard)
	if _, code := parseArgs(fs, []string{"a", "--nope"}); code != exitUsage {
		t.Errorf("unknown flag: code %d", code)
	}
	fs = newFlagSet("x", "", io.Discard)
	if _, code := parseArgs(fs, []string{"-h"}); code != exitOK {
		t.Errorf("-h: code %d", code)
	}
}

func TestRunUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(nil, &out, &errOut); code != exitUsage || !strings.Contains(errOut.String(), "conformance") {
		t.Errorf("no arguments: code %d, stderr %q", code, errOut.String())
	}
	errOut.Reset()
	// A name that is not a command is an unknown command.
	if code := run([]string{"distribute"}, &out, &errOut); code != exitUsage || !strings.Contains(errOut.String(), `unknown command "distribute"`) {
		t.Errorf("distribute: code %d, stderr %q", code, errOut.String())
	}
	out.Reset()
	if code := run([]string{"help"}, &out, &errOut); code != exitOK || !strings.Contains(out.String(), "ops") {
		t.Errorf("help: code %d, stdout %q", code, out.String())
	}
}
