package tickers_test

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/runner"
	"github.com/deep500/deep500-go/tickers"
)

// stepColumn writes the step number again, and nothing on evaluations.
type stepColumn struct{}

func (stepColumn) Names() []string { return []string{"extra_step"} }
func (stepColumn) Cells(e runner.Event) []string {
	if e.Kind != runner.AfterStep {
		return []string{""}
	}
	return []string{strconv.Itoa(e.Step)}
}

func TestCSVColumns(t *testing.T) {
	var buf bytes.Buffer
	if _, err := run(t, 0.05, 1, tickers.NewCSVColumns(&buf, stepColumn{})); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if lines[0] != "epoch,step,samples,seconds,loss,train_accuracy,test_accuracy,lr,extra_step" {
		t.Fatalf("header %q", lines[0])
	}
	// One epoch of 2 steps and one evaluation.
	if len(lines) != 4 {
		t.Fatalf("rows:\n%s", buf.String())
	}
	for i, l := range lines[1:] {
		f := strings.Split(l, ",")
		want := f[1]
		if i == 2 {
			want = ""
		}
		if len(f) != 9 || f[8] != want {
			t.Errorf("row %d %q: extra cell %q, want %q", i, l, f[len(f)-1], want)
		}
	}
}
