package metrics

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/backend"
	_ "github.com/deep500/deep500-go/backend/native"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
	"google.golang.org/protobuf/proto"
)

// caseBytes serializes a case's model and feeds, to compare two cases.
func caseBytes(t *testing.T, c *diffCase) []byte {
	t.Helper()
	p, err := onnx.ModelToProto(c.Model)
	if err != nil {
		t.Fatal(err)
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range sortedKeys(c.Feeds) {
		var m proto.Message
		switch v := c.Feeds[name].(type) {
		case *onnx.Tensor:
			m, err = onnx.TensorToProto(name, v)
		case *onnx.Sequence:
			m, err = onnx.SequenceToProto(name, v)
		case *onnx.Map:
			m, err = onnx.MapToProto(name, v)
		case *onnx.Optional:
			m, err = onnx.OptionalToProto(name, v)
		}
		if err != nil || m == nil {
			t.Fatalf("%s: feed %s: %v", c.Name, name, err)
		}
		fb, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, fb...)
	}
	return append(b, c.Random...)
}

// sameCase reports whether two cases have the same name, model and
// feeds.
func sameCase(t *testing.T, a, b *diffCase) bool {
	return a.Name == b.Name && bytes.Equal(caseBytes(t, a), caseBytes(t, b))
}

// Every operator version of the schemas gets its cases: either a model
// that loads, or a reason it cannot be generated; never a generator bug
// or a panic. The same seed makes the same cases, byte for byte; another
// seed makes other ones.
func TestDiffGenerateEveryVersion(t *testing.T) {
	generated, cannotGen, differ := 0, 0, 0
	for _, s := range ops.Schemas() {
		for k := range 2 {
			c, err := safeGenerate(s, 1, k)
			switch {
			case errors.Is(err, errCannotGenerate):
				cannotGen++
				continue
			case err != nil:
				t.Errorf("%s case %d: %v", s, k, err)
				continue
			}
			generated++
			again, err := safeGenerate(s, 1, k)
			if err != nil || !sameCase(t, c, again) {
				t.Errorf("%s case %d: a second generation with seed 1 differs (%v)", s, k, err)
			}
			other, err := safeGenerate(s, 2, k)
			if err == nil && !sameCase(t, c, other) {
				differ++
			}
			for _, in := range c.Model.Graph.Inputs {
				if _, ok := c.Feeds[in.Name]; !ok {
					t.Errorf("%s: graph input %s has no feed", c.Name, in.Name)
				}
			}
		}
	}
	t.Logf("%d cases generated, %d cannot be, %d differ with another seed", generated, cannotGen, differ)
	if generated < 1000 {
		t.Errorf("only %d of %d cases generated", generated, 2*len(ops.Schemas()))
	}
	if differ < generated*9/10 {
		t.Errorf("seed 2 changed only %d of %d cases", differ, generated)
	}
}

// Case names say the operator, its version, the types chosen and the
// case number; case 0 takes the most common types.
func TestDiffCaseNames(t *testing.T) {
	for _, tc := range []struct {
		domain, op string
		since      int
		want       string
	}{
		{"", "Conv", 11, "Conv-v11/float/case0"},
		{"", "Cast", 13, "Cast-v13/float_float/case0"},
		{"", "Shape", 15, "Shape-v15/float/case0"},
		{"", "SequenceAt", 11, "SequenceAt-v11/seq-float_float_int64/case0"},
		{"ai.onnx.ml", "ZipMap", 1, "ai.onnx.ml.ZipMap-v1/seq-map-string-float/case0"},
	} {
		c, _ := safeGenerate(ops.Schema(tc.domain, tc.op, tc.since), 1, 0)
		if c.Name != tc.want {
			t.Errorf("%s-%d: name %q, want %q", tc.op, tc.since, c.Name, tc.want)
		}
	}
	if got := typeLabel("optional(seq(tensor(uint8)))"); got != "opt-seq-uint8" {
		t.Errorf("typeLabel = %q", got)
	}
}

// The opset import selects exactly the version under test.
func TestDiffOpsetSelectsTheVersion(t *testing.T) {
	for _, tc := range []struct {
		domain, op string
		since      int
	}{{"", "Resize", 13}, {"", "Pad", 2}, {"ai.onnx.ml", "TreeEnsembleClassifier", 3}} {
		c, err := safeGenerate(ops.Schema(tc.domain, tc.op, tc.since), 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Model.Opset(tc.domain); got != int64(tc.since) {
			t.Errorf("%s: opset %d, want %d", c.Name, got, tc.since)
		}
		if n := c.Model.Graph.Nodes[0]; n.Op.SinceVersion() != tc.since {
			t.Errorf("%s: node resolves to version %d", c.Name, n.Op.SinceVersion())
		}
	}
}

// Shapes the rules must get right: Conv's weight fits its input's
// channels and group, MatMul's inner dimensions agree, Gather's indices
// are inside the axis.
func TestDiffRulesMakeValidShapes(t *testing.T) {
	for k := range 20 {
		c, err := safeGenerate(ops.Schema("", "Conv", 11), 7, k)
		if err != nil {
			t.Fatal(err)
		}
		x, w := c.Feeds["X"].(*onnx.Tensor), c.Feeds["W"].(*onnx.Tensor)
		group := int64(1)
		if a := c.Model.Graph.Nodes[0].Attr("group"); a != nil {
			group = a.Int
		}
		if int64(x.Shape[1]) != int64(w.Shape[1])*group || int64(w.Shape[0])%group != 0 {
			t.Errorf("%s: X %v, W %v, group %d", c.Name, x.Shape, w.Shape, group)
		}
		g, err := safeGenerate(ops.Schema("", "Gather", 13), 7, k)
		if err != nil {
			t.Fatal(err)
		}
		data := g.Feeds["data"].(*onnx.Tensor)
		axis := 0
		if a := g.Model.Graph.Nodes[0].Attr("axis"); a != nil {
			axis = int(a.Int)
			if axis < 0 {
				axis += data.Rank()
			}
		}
		for _, v := range floatsOf(g.Feeds["indices"].(*onnx.Tensor)) {
			if v < -float64(data.Shape[axis]) || v >= float64(data.Shape[axis]) {
				t.Errorf("%s: index %v outside dimension %d of %v", g.Name, v, axis, data.Shape)
			}
		}
	}
}

// judge: a backend without the kernel skips the case (its reason kept),
// one backend failing where the other runs is a failure naming both,
// random outputs compare by type and shape only, and a mismatch says
// which output and how.
func TestDiffJudge(t *testing.T) {
	c := &diffCase{Name: "X-v1/float/case0", Model: &onnx.Model{Graph: &onnx.Graph{Outputs: []*onnx.ValueInfo{{Name: "y"}}}}}
	y := func(v ...float32) map[string]onnx.Value { return map[string]onnx.Value{"y": onnx.FromSlice(v, len(v))} }
	tol := CrossBackendTolerance
	noKernel := network.Unsupportedf("no kernel for int8")
	if st, why, _, _ := judge("a", "b", c, nil, y(1), noKernel, nil, tol); st != Skipped || !strings.Contains(why, "no kernel for int8") {
		t.Errorf("unsupported: %s %q", st, why)
	}
	if st, why, _, _ := judge("a", "b", c, nil, y(1), errors.New("boom"), nil, tol); st != Failed || why != "a fails: boom; b runs it" {
		t.Errorf("one error: %s %q", st, why)
	}
	if st, _, _, _ := judge("a", "b", c, nil, nil, errors.New("x"), errors.New("y"), tol); st != Skipped {
		t.Errorf("both errors: %s", st)
	}
	if st, why, abs, _ := judge("a", "b", c, y(1, 2), y(1, 2.5), nil, nil, tol); st != Failed || !strings.Contains(why, `output "y": 1 of 2 elements differ`) || abs != 0.5 {
		t.Errorf("mismatch: %s %q %v", st, why, abs)
	}
	if st, _, _, _ := judge("a", "b", c, y(1, 2), y(1, 2.0005), nil, nil, tol); st != Passed {
		t.Errorf("within tolerance: %s", st)
	}
	c.Random = "draws"
	if st, _, _, _ := judge("a", "b", c, y(1, 2), y(7, 9), nil, nil, tol); st != Passed {
		t.Errorf("random values: %s", st)
	}
	if st, why, _, _ := judge("a", "b", c, y(1, 2), y(7), nil, nil, tol); st != Failed || !strings.Contains(why, "shape [2], want [1]") {
		t.Errorf("random shapes: %s %q", st, why)
	}
	// ONNX Runtime's refusals: a missing kernel skips, a rejected model
	// does not.
	ort := network.Unsupportedf("onnxruntime: ONNX Runtime cannot build a session: Could not find an implementation for X(1)")
	if !unsupported(ort) {
		t.Error("missing kernel not taken as unsupported")
	}
	bad := network.Unsupportedf("onnxruntime: ONNX Runtime cannot build a session: [ShapeInferenceError] axis out of range")
	if unsupported(bad) {
		t.Error("a shape inference error taken as unsupported")
	}
}

// A native-against-native run of a few operators passes every case it
// generates, counts them, and writes the report's fields.
func TestRunDiffNativeAgainstItself(t *testing.T) {
	if _, err := backend.Get("native"); err != nil {
		t.Skip(err)
	}
	var seen int
	rep, err := RunDiff(context.Background(), DiffConfig{
		Backend: "native", Against: "native", Cases: 2, Seed: 3,
		Filter:   regexp.MustCompile(`^(Add|Conv|Gather|Slice|ReduceSum|TopK)-v13/`),
		OnResult: func(Result) { seen++ },
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed+rep.Failed+rep.Skipped != seen || seen == 0 {
		t.Fatalf("%s, %d results seen", rep.Summary(), seen)
	}
	for _, r := range rep.Tests {
		if r.Status == Failed {
			t.Errorf("%s: %s", r.Name, r.Reason)
		}
		if !strings.HasPrefix(r.Name, r.Operators+"-v") {
			t.Errorf("%s: operators %q", r.Name, r.Operators)
		}
	}
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &top); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"backend", "against", "seed", "cases_per_op", "passed", "failed", "skipped", "tests"} {
		if _, ok := top[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	if string(top["against"]) != `"native"` || string(top["seed"]) != "3" || string(top["cases_per_op"]) != "2" {
		t.Errorf("JSON: against %s, seed %s, cases_per_op %s", top["against"], top["seed"], top["cases_per_op"])
	}
}
