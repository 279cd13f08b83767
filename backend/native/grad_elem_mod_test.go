package native

import (
	"math"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/onnx"
)

// TestGradModDivisor checks Mod's rule for dB = -dC q against central
// differences of the version-28 forward, with B broadcast over A's rows.
// Half the quotients A/B are negative and not integers, where q = floor
// (fmod=0, floor mod on floats) and q = trunc (fmod=1) differ. B is
// non-differentiable from version 13, so the engine asks for dB only at
// version 10; the rule is compiled and run directly here, as a caller
// that wants every input's gradient would.
func TestGradModDivisor(t *testing.T) {
	a := []float64{-5.3, 4.1, -2.2, 7.7, -0.9, 3.4}
	b := []float64{2.1, -1.3, 0.7}
	u := []float64{0.7, -1.1, 0.4, 1.3, -0.6, 0.9} // dC
	for _, fmod := range []int64{0, 1} {
		attrs := []*onnx.Attribute{intAttr("fmod", fmod)}
		node := testNode(t, 28, "Mod", []string{"A", "B"}, []string{"C"}, attrs...)
		net, err := New(graphOf(t, []*onnx.Node{node}, map[string][]int64{"A": {2, 3}, "B": {3}}, "C", nil), backend.Options{})
		if err != nil {
			t.Fatal(err)
		}
		e := net.(*executor)
		rule, err := (&gradBuilder{e: e}).compile(node)
		if err != nil {
			t.Fatal(err)
		}
		n := len(e.slots)
		g := &gradState{grads: make([]*onnx.Tensor, n), bufs: make([]outputBuffer, n), want: make([]bool, n)}
		for i := range g.want {
			g.want[i] = true
		}
		slots := make([]onnx.Value, n)
		sa, sb, sc := e.slotOf["A"], e.slotOf["B"], e.slotOf["C"]
		slots[sa], slots[sb] = onnx.FromSlice(a, 2, 3), onnx.FromSlice(b, 3)
		g.grads[sc] = onnx.FromSlice(u, 2, 3)
		if err := rule(slots, g); err != nil {
			t.Fatal(err)
		}
		// loss(B) = Σ u ⊙ Mod(A, B) by the forward kernel.
		loss := func(bv []float64) float64 {
			c, err := runNode1(t, 28, "Mod", attrs, onnx.FromSlice(a, 2, 3), onnx.FromSlice(bv, 3))
			if err != nil {
				t.Fatal(err)
			}
			s := 0.0
			for i, v := range c.Float64s() {
				s += u[i] * v
			}
			return s
		}
		const h = 1e-6
		db := g.grads[sb].Float64s()
		for j := range b {
			up, down := append([]float64{}, b...), append([]float64{}, b...)
			up[j] += h
			down[j] -= h
			numeric := (loss(up) - loss(down)) / (2 * h)
			if math.Abs(db[j]-numeric) > 1e-6 {
				t.Errorf("fmod=%d: dB[%d] = %.8g by the rule, %.8g by central differences", fmod, j, db[j], numeric)
			}
		}
		if da := g.grads[sa].Float64s(); da[4] != u[4] {
			t.Errorf("fmod=%d: dA = %v, want dC %v", fmod, da, u)
		}
	}
}
