package native

import (
	"math"
	"math/rand"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// rnnRef is a direct transcription of the ONNX equations, one batch row
// and one time step at a time, in float64: the reference the GEMM-based
// kernel is checked against. Layout 0 only; the test converts.
type rnnRefCase struct {
	cell             rnnCell
	S, B, I, H, dirs int
	reverse          bool
	clip             float64
	lbr, inputForget bool
	acts             [][]rnnAct
	x, w, r, bias, p []float64
	h0, c0           []float64
	lens             []int
}

func (c *rnnRefCase) run() (y, yh, yc []float64) {
	G := c.cell.gates()
	S, B, I, H := c.S, c.B, c.I, c.H
	y = make([]float64, S*c.dirs*B*H)
	yh = make([]float64, c.dirs*B*H)
	yc = make([]float64, c.dirs*B*H)
	clip := func(v float64) float64 {
		if c.clip > 0 {
			return math.Max(-c.clip, math.Min(c.clip, v))
		}
		return v
	}
	for d := range c.dirs {
		W := c.w[d*G*H*I:]
		R := c.r[d*G*H*H:]
		wb := make([]float64, G*H)
		rb := make([]float64, G*H)
		if c.bias != nil {
			copy(wb, c.bias[d*2*G*H:])
			copy(rb, c.bias[d*2*G*H+G*H:])
		}
		// xw(t, b, gate j) and hr(h, gate j) as plain dot products.
		xw := func(t, b, j int) float64 {
			s := 0.0
			for k := range I {
				s += c.x[(t*B+b)*I+k] * W[j*I+k]
			}
			return s
		}
		dot := func(h []float64, j int) float64 {
			s := 0.0
			for k := range H {
				s += h[k] * R[j*H+k]
			}
			return s
		}
		for b := range B {
			h := make([]float64, H)
			cs := make([]float64, H)
			if c.h0 != nil {
				copy(h, c.h0[(d*B+b)*H:])
			}
			if c.c0 != nil {
				copy(cs, c.c0[(d*B+b)*H:])
			}
			L := S
			if c.lens != nil {
				L = c.lens[b]
			}
			for s := range L {
				t := s
				if d == 1 || c.reverse {
					t = L - 1 - s
				}
				nh := make([]float64, H)
				a := c.acts[d]
				for j := range H {
					switch c.cell {
					case cellRNN:
						nh[j] = a[0].apply(clip(xw(t, b, j) + dot(h, j) + wb[j] + rb[j]))
					case cellGRU:
						z := a[0].apply(clip(xw(t, b, j) + dot(h, j) + wb[j] + rb[j]))
						r := func(k int) float64 {
							return a[0].apply(clip(xw(t, b, H+k) + dot(h, H+k) + wb[H+k] + rb[H+k]))
						}
						var pre float64
						if c.lbr {
							pre = xw(t, b, 2*H+j) + wb[2*H+j] + r(j)*(dot(h, 2*H+j)+rb[2*H+j])
						} else {
							rh := make([]float64, H)
							for k := range H {
								rh[k] = r(k) * h[k]
							}
							pre = xw(t, b, 2*H+j) + dot(rh, 2*H+j) + wb[2*H+j] + rb[2*H+j]
						}
						hc := a[1].apply(clip(pre))
						nh[j] = (1-z)*hc + z*h[j]
					case cellLSTM:
						var pi, po, pf float64
						if c.p != nil {
							pd := c.p[d*3*H:]
							pi, po, pf = pd[j], pd[H+j], pd[2*H+j]
						}
						g := func(k int) float64 { return xw(t, b, k*H+j) + dot(h, k*H+j) + wb[k*H+j] + rb[k*H+j] }
						i := a[0].apply(clip(g(0) + pi*cs[j]))
						f := a[0].apply(clip(g(2) + pf*cs[j]))
						if c.inputForget {
							f = 1 - i
						}
						cc := a[1].apply(clip(g(3)))
						cs[j] = f*cs[j] + i*cc
						o := a[0].apply(clip(g(1) + po*cs[j]))
						nh[j] = o * a[2].apply(cs[j])
					}
				}
				h = nh
				copy(y[((t*c.dirs+d)*B+b)*H:], h)
			}
			copy(yh[(d*B+b)*H:], h)
			copy(yc[(d*B+b)*H:], cs)
		}
	}
	return y, yh, yc
}

func rnnRandFloats(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.Float64()*2 - 1
	}
	return v
}

func rnnTestF32(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

// toLayout1 turns [A, B, rest] into [B, A, rest].
func rnnSwap01(v []float64, a, b, rest int) []float64 {
	out := make([]float64, len(v))
	for i := range a {
		for j := range b {
			copy(out[(j*a+i)*rest:(j*a+i+1)*rest], v[(i*b+j)*rest:(i*b+j+1)*rest])
		}
	}
	return out
}

func TestRecurrentKernelsMatchDefinition(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	type cfg struct {
		name      string
		cell      rnnCell
		direction string
		layout    int64
		clip      *float32
		lbr, fgt  bool
		lens      bool
		peep      bool
		acts      []string
		alphas    []float32
		betas     []float32
	}
	clip := float32(0.7)
	cases := []cfg{
		{name: "rnn bidirectional", cell: cellRNN, direction: "bidirectional"},
		{name: "rnn reverse relu lens", cell: cellRNN, direction: "reverse", acts: []string{"Relu"}, lens: true},
		{name: "rnn layout1 leaky", cell: cellRNN, direction: "forward", layout: 1, acts: []string{"LeakyRelu"}, alphas: []float32{0.3}},
		{name: "gru default", cell: cellGRU, direction: "forward"},
		{name: "gru lbr bidirectional lens", cell: cellGRU, direction: "bidirectional", lbr: true, lens: true},
		{name: "gru reverse clip hardsigmoid", cell: cellGRU, direction: "reverse", clip: &clip,
			acts: []string{"HardSigmoid", "ScaledTanh"}, alphas: []float32{0.3, 1.5}, betas: []float32{0.4, 0.8}},
		{name: "gru layout1 lbr", cell: cellGRU, direction: "bidirectional", layout: 1, lbr: true},
		{name: "lstm peepholes bidirectional", cell: cellLSTM, direction: "bidirectional", peep: true, lens: true},
		{name: "lstm input_forget clip", cell: cellLSTM, direction: "forward", fgt: true, clip: &clip},
		{name: "lstm layout1 reverse affine", cell: cellLSTM, direction: "reverse", layout: 1, peep: true,
			acts: []string{"Sigmoid", "Affine", "Softsign"}, alphas: []float32{0.5}, betas: []float32{0.1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			S, B, I, H := 4, 3, 5, 6
			c, err := parseRNNConfig(tc.cell, tc.direction, nil, tc.layout, tc.clip, tc.acts, tc.alphas, tc.betas)
			if err != nil {
				t.Fatal(err)
			}
			c.linearBeforeReset, c.inputForget = tc.lbr, tc.fgt
			G, D := tc.cell.gates(), c.dirs
			ref := &rnnRefCase{cell: tc.cell, S: S, B: B, I: I, H: H, dirs: D, reverse: c.reverse, clip: c.clip,
				lbr: tc.lbr, inputForget: tc.fgt, acts: c.acts,
				x: rnnRandFloats(rng, S*B*I), w: rnnRandFloats(rng, D*G*H*I), r: rnnRandFloats(rng, D*G*H*H),
				bias: rnnRandFloats(rng, D*2*G*H), h0: rnnRandFloats(rng, D*B*H), c0: rnnRandFloats(rng, D*B*H)}
			if tc.peep {
				ref.p = rnnRandFloats(rng, D*3*H)
			}
			var lens *onnx.Tensor
			if tc.lens {
				ref.lens = []int{4, 2, 0}
				lens = onnx.FromSlice([]int32{4, 2, 0}, B)
			}
			wy, wyh, wyc := ref.run()

			x, h0, c0 := ref.x, ref.h0, ref.c0
			xShape, sShape := []int{S, B, I}, []int{D, B, H}
			if tc.layout == 1 {
				x, h0, c0 = rnnSwap01(x, S, B, I), rnnSwap01(h0, D, B, H), rnnSwap01(c0, D, B, H)
				xShape, sShape = []int{B, S, I}, []int{B, D, H}
				// Y [S, D, B, H] -> [B, S, D, H]
				wy = rnnSwap01(wy, S*D, B, H)
				tmp := make([]float64, len(wy))
				for b := range B {
					for s := range S {
						for d := range D {
							copy(tmp[((b*S+s)*D+d)*H:], wy[(b*S*D+s*D+d)*H:(b*S*D+s*D+d+1)*H])
						}
					}
				}
				wy, wyh, wyc = tmp, rnnSwap01(wyh, D, B, H), rnnSwap01(wyc, D, B, H)
			}
			var p, cIn *onnx.Tensor
			if ref.p != nil {
				p = onnx.FromSlice(rnnTestF32(ref.p), D, 3*H)
			}
			if tc.cell == cellLSTM {
				cIn = onnx.FromSlice(rnnTestF32(c0), sShape...)
			}
			k := &rnnKernel{cfg: c}
			outs, err := k.compute(onnx.FromSlice(rnnTestF32(x), xShape...), onnx.FromSlice(rnnTestF32(ref.w), D, G*H, I),
				onnx.FromSlice(rnnTestF32(ref.r), D, G*H, H), onnx.FromSlice(rnnTestF32(ref.bias), D, 2*G*H), lens,
				onnx.FromSlice(rnnTestF32(h0), sShape...), cIn, p, true, true)
			if err != nil {
				t.Fatal(err)
			}
			assertClose(t, outs[0].Float32s(), wy)
			assertClose(t, outs[1].Float32s(), wyh)
			if tc.cell == cellLSTM {
				assertClose(t, outs[2].Float32s(), wyc)
			}
		})
	}
}

// Version 22 (no Debian data) is built and run through a graph.
func TestRecurrentOperatorsAtVersion22(t *testing.T) {
	x := onnx.FromSlice([]float32{1, 2}, 2, 1, 1) // seq 2, batch 1, input 1
	w := onnx.FromSlice([]float32{0.5}, 1, 1, 1)
	r := onnx.FromSlice([]float32{0.25}, 1, 1, 1)
	y, err := runNode1(t, 22, "RNN", []*onnx.Attribute{intAttr("hidden_size", 1)}, x, w, r)
	if err != nil {
		t.Fatal(err)
	}
	h1 := math.Tanh(0.5)
	h2 := math.Tanh(1 + 0.25*h1)
	assertClose(t, y.Float32s(), []float64{h1, h2})
}

func TestRecurrentShapeErrors(t *testing.T) {
	x := onnx.FromSlice([]float32{1, 2}, 2, 1, 1)
	w := onnx.FromSlice([]float32{0.5, 1}, 1, 2, 1) // 2 rows for hidden 1: wrong for RNN
	r := onnx.FromSlice([]float32{0.25}, 1, 1, 1)
	if _, err := runNode1(t, 14, "RNN", []*onnx.Attribute{intAttr("hidden_size", 1)}, x, w, r); err == nil {
		t.Fatal("W of the wrong shape was accepted")
	}
	if _, err := parseRNNConfig(cellLSTM, "sideways", nil, 0, nil, nil, nil, nil); err == nil {
		t.Fatal("an unknown direction was accepted")
	}
}

// The float32 vector path (default activations, no clip, no peepholes)
// must agree with the float64 element-wise path, and so must the float32
// element-wise path it leaves in place for the other configurations. Odd
// sizes leave a tail after the vector kernels' full blocks.
func TestRecurrentFloat32VectorPathMatchesFloat64(t *testing.T) {
	// absTol is for a hidden size of 7: each gate's float32 sum over the
	// hidden state rounds once per term, so the bound grows with it.
	const relTol, absTol = 1e-5, 1e-6
	rng := rand.New(rand.NewSource(7))
	clip := float32(0.9)
	cases := []struct {
		name      string
		cell      rnnCell
		direction string
		lbr       bool
		clip      *float32
		peep      bool
		vector    bool // whether the float32 run takes the vector path
		layout    int64
		lens      []int32 // sequence_lens, or nil
		hidden    int     // 0: 7; more than 8 so that the per-step products have full groups of eight columns
		batch     int     // 0: 2; 4 or more multiplies by the transposed R (rnnTransposedBatch)
	}{
		{name: "rnn forward", cell: cellRNN, direction: "forward", vector: true},
		{name: "lstm forward", cell: cellLSTM, direction: "forward", vector: true},
		{name: "lstm bidirectional", cell: cellLSTM, direction: "bidirectional", vector: true},
		{name: "gru forward", cell: cellGRU, direction: "forward", vector: true},
		{name: "gru bidirectional", cell: cellGRU, direction: "bidirectional", vector: true},
		{name: "gru lbr forward", cell: cellGRU, direction: "forward", lbr: true, vector: true},
		{name: "gru lbr bidirectional", cell: cellGRU, direction: "bidirectional", lbr: true, vector: true},
		{name: "rnn bidirectional lens", cell: cellRNN, direction: "bidirectional", vector: true, lens: []int32{5, 1}, hidden: 19},
		{name: "lstm reverse layout1 lens", cell: cellLSTM, direction: "reverse", vector: true, layout: 1, lens: []int32{2, 5}, hidden: 19},
		{name: "lstm bidirectional wide", cell: cellLSTM, direction: "bidirectional", vector: true, hidden: 19},
		{name: "gru bidirectional layout1 lens", cell: cellGRU, direction: "bidirectional", vector: true, layout: 1, lens: []int32{0, 4}, hidden: 19},
		{name: "gru lbr bidirectional lens", cell: cellGRU, direction: "bidirectional", lbr: true, vector: true, lens: []int32{3, 5}, hidden: 19},
		{name: "lstm bidirectional batch 5 lens", cell: cellLSTM, direction: "bidirectional", vector: true, lens: []int32{5, 1, 0, 3, 5}, hidden: 19, batch: 5},
		{name: "gru lbr reverse batch 4", cell: cellGRU, direction: "reverse", lbr: true, vector: true, hidden: 19, batch: 4},
		{name: "gru bidirectional layout1 batch 6 lens", cell: cellGRU, direction: "bidirectional", vector: true, layout: 1, lens: []int32{2, 5, 5, 4, 1, 3}, hidden: 9, batch: 6},
		{name: "rnn forward batch 4", cell: cellRNN, direction: "forward", vector: true, hidden: 19, batch: 4},
		{name: "lstm peepholes element-wise", cell: cellLSTM, direction: "bidirectional", peep: true},
		{name: "lstm clip element-wise", cell: cellLSTM, direction: "forward", clip: &clip},
		{name: "gru clip element-wise", cell: cellGRU, direction: "bidirectional", clip: &clip},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			S, B, I, H := 5, 2, 3, 7
			if tc.hidden > 0 {
				H = tc.hidden
			}
			if tc.batch > 0 {
				B = tc.batch
			}
			c, err := parseRNNConfig(tc.cell, tc.direction, nil, tc.layout, tc.clip, nil, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			c.linearBeforeReset = tc.lbr
			G, D := tc.cell.gates(), c.dirs
			for d := range D {
				if got := c.plainActivations(d) && !tc.peep; got != tc.vector {
					t.Fatalf("direction %d takes the vector path: %v, want %v", d, got, tc.vector)
				}
			}
			// Weights scaled up so that the gates reach the saturating
			// ranges of sigmoid and tanh, not only their linear middle.
			scaled := func(n int, s float64) []float64 {
				v := rnnRandFloats(rng, n)
				for i := range v {
					v[i] *= s
				}
				return v
			}
			x, w, r := scaled(S*B*I, 2), scaled(D*G*H*I, 1.5), scaled(D*G*H*H, 1)
			bias, h0, c0 := scaled(D*2*G*H, 1), scaled(D*B*H, 1), scaled(D*B*H, 2)
			var p []float64
			if tc.peep {
				p = scaled(D*3*H, 1)
			}
			run := func(elem onnx.DataType) [3]*onnx.Tensor {
				tensor := func(v []float64, shape ...int) *onnx.Tensor {
					if v == nil {
						return nil
					}
					if elem == onnx.Double {
						return onnx.FromSlice(append([]float64(nil), v...), shape...)
					}
					return onnx.FromSlice(rnnTestF32(v), shape...)
				}
				// Layout 1 reads the same values as [B, S, I] and [B, D, H].
				xShape, sShape := []int{S, B, I}, []int{D, B, H}
				if tc.layout == 1 {
					xShape, sShape = []int{B, S, I}, []int{B, D, H}
				}
				var cIn, lens *onnx.Tensor
				if tc.cell == cellLSTM {
					cIn = tensor(c0, sShape...)
				}
				if tc.lens != nil {
					lens = onnx.FromSlice(tc.lens, B)
				}
				k := &rnnKernel{cfg: c}
				outs, err := k.compute(tensor(x, xShape...), tensor(w, D, G*H, I), tensor(r, D, G*H, H), tensor(bias, D, 2*G*H),
					lens, tensor(h0, sShape...), cIn, tensor(p, D, 3*H), true, true)
				if err != nil {
					t.Fatal(err)
				}
				return outs
			}
			got, want := run(onnx.Float), run(onnx.Double)
			n := 2
			if tc.cell == cellLSTM {
				n = 3
			}
			for o := range n {
				g, w := got[o].Float32s(), want[o].Float64s()
				if len(g) != len(w) {
					t.Fatalf("output %d: %d values, want %d", o, len(g), len(w))
				}
				for i := range w {
					if diff := math.Abs(float64(g[i]) - w[i]); diff > absTol*max(1, float64(H)/7)+relTol*math.Abs(w[i]) {
						t.Fatalf("output %d element %d: float32 %v, float64 %v (difference %.3g)", o, i, g[i], w[i], diff)
					}
				}
			}
		})
	}
}
