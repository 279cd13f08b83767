package tickers

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/deep500/deep500-go/runner"
)

func TestProgressQuietWhenNotATerminal(t *testing.T) {
	if p := NewProgress(&bytes.Buffer{}, 10); p != nil {
		t.Fatal("a progress bar for a buffer")
	}
	f, err := os.CreateTemp(t.TempDir(), "log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if p := NewProgress(f, 10); p != nil {
		t.Fatal("a progress bar for a regular file")
	}
	var nilBar *Progress
	nilBar.Event(runner.Event{Kind: runner.AfterStep}) // must not panic
}

func TestProgressLine(t *testing.T) {
	var b bytes.Buffer
	p := &Progress{W: &b, Total: 100}
	p.Event(runner.Event{Kind: runner.BeforeTraining})
	p.Event(runner.Event{Kind: runner.AfterStep, Epoch: 1, Step: 25, Loss: 0.5})
	got := p.line(1, 25, 5*time.Second)
	for _, want := range []string{"epoch 1 [=======", " 25%", "25/100 steps", "5.0 steps/s", "ETA 15s", "loss 0.5000"} {
		if !strings.Contains(got, want) {
			t.Errorf("line %q lacks %q", got, want)
		}
	}
	if !strings.HasPrefix(b.String(), "\r") {
		t.Errorf("bar not drawn in place: %q", b.String())
	}
}

// The bar counts the run's steps across epochs and is drawn full at the
// last step however soon it comes.
func TestProgressCountsTheRun(t *testing.T) {
	var b bytes.Buffer
	p := &Progress{W: &b, Total: 6}
	p.Event(runner.Event{Kind: runner.BeforeTraining})
	for step := 1; step <= 6; step++ {
		p.Event(runner.Event{Kind: runner.AfterStep, Epoch: (step-1)/4 + 1, Step: step, Loss: 1})
	}
	if !strings.Contains(b.String(), "epoch 2 [==============================] 100% 6/6 steps") {
		t.Errorf("last draw %q, want the full bar of 6 steps in epoch 2", b.String())
	}
}
