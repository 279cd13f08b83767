package tickers_test

import (
	"bytes"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/backend"
	_ "github.com/deep500/deep500-go/backend/native"
	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/optimizer"
	"github.com/deep500/deep500-go/runner"
	"github.com/deep500/deep500-go/tickers"
)

func run(t *testing.T, lr float64, epochs int, ts ...tickers.Ticker) (runner.Result, error) {
	t.Helper()
	m, err := models.Preset("mlp", 1)
	if err != nil {
		t.Fatal(err)
	}
	loss, err := network.AppendLoss(m, network.LossSoftmaxCrossEntropy, "y", "labels")
	if err != nil {
		t.Fatal(err)
	}
	net, err := backend.New("native", m, backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer net.Close()
	train, test, err := runner.ParseSpec("synthetic:classes=3,n=64,test=20")
	if err != nil {
		t.Fatal(err)
	}
	tr, _ := runner.NewOrdered(train, runner.SamplerOptions{BatchSize: 32})
	te, _ := runner.NewOrdered(test, runner.SamplerOptions{BatchSize: 32})
	hp, _ := optimizer.Defaults("sgd")
	hp.LR = lr
	rule, _ := optimizer.New("sgd", hp)
	var ls []runner.Listener
	for _, x := range ts {
		ls = append(ls, x)
	}
	r, err := runner.New(runner.Config{Net: net, Optimizer: optimizer.NewDriver(net, loss, rule, 0),
		Hyper: rule.(optimizer.Tunable).Hyperparameters(), Input: "x", Labels: "labels", Output: "y", Loss: loss,
		Train: tr, Test: te, Epochs: epochs, Listeners: ls})
	if err != nil {
		t.Fatal(err)
	}
	return r.Run()
}

func TestCSVAndSummary(t *testing.T) {
	var buf, sum bytes.Buffer
	c := tickers.NewCSV(&buf)
	if _, err := run(t, 0.05, 2, c, &tickers.Summary{W: &sum}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if lines[0] != "epoch,step,samples,seconds,loss,train_accuracy,test_accuracy,lr" {
		t.Fatalf("header %q", lines[0])
	}
	// 2 epochs of 2 steps, each followed by one evaluation.
	if len(lines) != 1+6 {
		t.Fatalf("rows:\n%s", buf.String())
	}
	for i, l := range lines[1:] {
		f := strings.Split(l, ",")
		if len(f) != 8 {
			t.Fatalf("row %q", l)
		}
		eval := i%3 == 2
		if eval != (f[4] == "" && f[6] != "") || eval != (f[5] == "") || f[7] != "0.05" {
			t.Errorf("row %d %q", i, l)
		}
		if !eval {
			// A step's training accuracy is its batch's: k/32.
			acc, err := strconv.ParseFloat(f[5], 64)
			if k := acc * 32; err != nil || acc < 0 || acc > 1 || k != math.Trunc(k) {
				t.Errorf("row %d: train accuracy %q is not a fraction of a 32-sample batch", i, f[5])
			}
		}
	}
	if f := strings.Split(lines[2], ","); f[0] != "1" || f[1] != "2" || f[2] != "64" {
		t.Errorf("second step row %q", lines[2])
	}
	if !strings.Contains(sum.String(), "epoch 2:") || !strings.Contains(sum.String(), "ms/step") ||
		!strings.Contains(sum.String(), "train accuracy") {
		t.Errorf("summary:\n%s", sum.String())
	}
}

func TestNaNAbort(t *testing.T) {
	res, err := run(t, 1e30, 5, tickers.NaNAbort{})
	if err == nil || !strings.Contains(err.Error(), "at step") {
		t.Fatalf("want a NaN/Inf abort, got %v (%+v)", err, res)
	}
	if res.Steps >= 10 {
		t.Errorf("ran %d steps after the abort", res.Steps)
	}
	t.Log(err)
}

// With a folder, the NaN abort leaves the gradients of the failing step
// there, one readable TensorProto per parameter.
func TestNaNAbortSavesGradients(t *testing.T) {
	dir := t.TempDir()
	_, err := run(t, 1e30, 5, tickers.NaNAbort{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("want an abort naming %s, got %v", dir, err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.grad.pb"))
	if len(files) == 0 {
		t.Fatal("no gradient files written")
	}
	for _, f := range files {
		if _, v, err := onnx.ReadValue(f, nil); err != nil || v == nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestAccuracyAbort(t *testing.T) {
	res, err := run(t, 0.05, 50, tickers.AccuracyAbort{Target: 0.9})
	if err != nil || !res.Stopped || res.Epochs >= 50 {
		t.Fatalf("%+v, %v", res, err)
	}
}
