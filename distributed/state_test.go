package distributed

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/optimizer"
)

func adamRule(t *testing.T) optimizer.UpdateRuleOptimizer {
	t.Helper()
	hp, _ := optimizer.Defaults("adam")
	hp.LR = 0.02
	r, err := optimizer.New("adam", hp)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func bits(p []float32) []uint32 {
	out := make([]uint32, len(p))
	for i, x := range p {
		out[i] = math.Float32bits(x)
	}
	return out
}

// setTinyParams feeds the flat parameters p (in the order of Gradients)
// into tn.
func setTinyParams(t *testing.T, tn *tinyNet, p []float32) {
	t.Helper()
	off := 0
	for _, pg := range tn.net.Gradients(tn.loss) {
		cur, err := network.FetchTensor(tn.net, pg.Param)
		if err != nil {
			t.Fatal(err)
		}
		off += copy(cur.Float32s(), p[off:])
		if err := tn.net.Feed(pg.Param, cur); err != nil {
			t.Fatal(err)
		}
	}
}

// In a job of one process every scheme resumes exactly from its State and
// the parameters; mavg's state carries its step count.
func TestSchemesResumeAlone(t *testing.T) {
	const k, m = 3, 4
	ds := tinyData(64)
	for _, scheme := range Schemes() {
		a := newTinyNet(t, 3)
		oa, err := New(scheme, NewComm(Self{}), a.net, a.loss, adamRule(t), Options{AverageEvery: 2})
		if err != nil {
			t.Fatal(err)
		}
		for s := range k {
			if _, err := oa.Step(a.rows(t, ds, 8*s, 8*s+8)); err != nil {
				t.Fatal(err)
			}
		}
		st, err := optimizer.StateOf(oa)
		if err != nil {
			t.Fatal(err)
		}
		// Four parameters × (m, v, step), and mavg's count.
		want := 12
		if scheme == "mavg" {
			want++
			if c := st["mavg.steps"]; c == nil || c.Int64s()[0] != k {
				t.Errorf("mavg: steps in the state %v, want %d", c, k)
			}
		}
		if len(st) != want {
			t.Errorf("%s: %d state tensors, want %d", scheme, len(st), want)
		}
		b := newTinyNet(t, 4) // other weights: the checkpoint's replace them
		setTinyParams(t, b, a.params(t))
		ob, err := New(scheme, NewComm(Self{}), b.net, b.loss, adamRule(t), Options{AverageEvery: 2})
		if err != nil {
			t.Fatal(err)
		}
		if err := optimizer.SetStateOf(ob, st); err != nil {
			t.Fatalf("%s: %v", scheme, err)
		}
		if back, err := optimizer.StateOf(ob); err != nil || len(back) != len(st) {
			t.Errorf("%s: state after SetState: %d tensors, %v", scheme, len(back), err)
		} else if scheme == "mavg" && back["mavg.steps"].Int64s()[0] != k {
			t.Errorf("mavg: SetState left the count at %d, want %d", back["mavg.steps"].Int64s()[0], k)
		}
		for s := k; s < k+m; s++ {
			la, err := oa.Step(a.rows(t, ds, 8*s, 8*s+8))
			if err != nil {
				t.Fatal(err)
			}
			lb, err := ob.Step(b.rows(t, ds, 8*s, 8*s+8))
			if err != nil {
				t.Fatal(err)
			}
			if la != lb {
				t.Errorf("%s step %d: loss %g uninterrupted, %g resumed", scheme, s, la, lb)
			}
		}
		if !slices.Equal(bits(a.params(t)), bits(b.params(t))) {
			t.Errorf("%s: the resumed run's parameters differ from the uninterrupted run's", scheme)
		}
	}
}

func TestMavgStateErrors(t *testing.T) {
	ds := tinyData(16)
	tn := newTinyNet(t, 3)
	o, err := New("mavg", NewComm(Self{}), tn.net, tn.loss, adamRule(t), Options{AverageEvery: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Step(tn.rows(t, ds, 0, 8)); err != nil {
		t.Fatal(err)
	}
	good, err := optimizer.StateOf(o)
	if err != nil {
		t.Fatal(err)
	}
	edits := []struct {
		what string
		edit func(map[string]*onnx.Tensor)
		want string
	}{
		{"no count", func(s map[string]*onnx.Tensor) { delete(s, "mavg.steps") }, `"mavg.steps" is missing`},
		{"count as float", func(s map[string]*onnx.Tensor) { s["mavg.steps"] = onnx.Scalar(float32(5)) }, "int64 scalar"},
		{"negative count", func(s map[string]*onnx.Tensor) { s["mavg.steps"] = onnx.Scalar(int64(-1)) }, "-1"},
		{"rule's tensor missing", func(s map[string]*onnx.Tensor) {
			s["mavg.steps"] = onnx.Scalar(int64(7))
			for name := range s {
				if strings.HasPrefix(name, "adam.v/") {
					delete(s, name)
					return
				}
			}
		}, "missing"},
	}
	for _, e := range edits {
		s := map[string]*onnx.Tensor{}
		for k, v := range good {
			s[k] = v
		}
		e.edit(s)
		if err := optimizer.SetStateOf(o, s); err == nil || !strings.Contains(err.Error(), e.want) {
			t.Errorf("%s: %v, want an error saying %q", e.what, err, e.want)
		}
		after, err := optimizer.StateOf(o)
		if err != nil {
			t.Fatal(err)
		}
		if c := after["mavg.steps"].Int64s()[0]; c != 1 {
			t.Errorf("%s: the failed SetState set the count to %d", e.what, c)
		}
	}
	// Another scheme does not know mavg's count: its rule rejects it.
	d, err := New("dsgd", NewComm(Self{}), tn.net, tn.loss, adamRule(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := optimizer.SetStateOf(d, good); err == nil || !strings.Contains(err.Error(), "mavg.steps") {
		t.Errorf("mavg's state into dsgd: %v", err)
	}
}
