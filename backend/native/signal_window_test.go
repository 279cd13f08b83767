package native

import (
	"slices"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// With an integer output_datatype the window is computed in float64 and
// truncated, as ONNX's reference does (astype of the float64 values): every
// value but the peak, which is exactly 1, becomes 0. A peak rounded to
// 0.9999999999999999 would give 0 there.
func TestWindowIntegerOutputKeepsThePeak(t *testing.T) {
	cases := []struct {
		op       string
		size     int64
		periodic int64
		dt       onnx.DataType
		want     []float64
	}{
		// The sizes difftest drew against ONNX Runtime.
		{"BlackmanWindow", 6, 1, onnx.Uint64, []float64{0, 0, 0, 1, 0, 0}},
		{"BlackmanWindow", 8, 1, onnx.Int32, []float64{0, 0, 0, 0, 1, 0, 0, 0}},
		{"BlackmanWindow", 12, 1, onnx.Int16, []float64{0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0}},
		{"BlackmanWindow", 7, 0, onnx.Int64, []float64{0, 0, 0, 1, 0, 0, 0}},
		{"HannWindow", 4, 1, onnx.Int32, []float64{0, 0, 1, 0}},
		{"HannWindow", 5, 0, onnx.Uint8, []float64{0, 0, 1, 0, 0}},
		{"HammingWindow", 3, 0, onnx.Int8, []float64{0, 1, 0}},
		{"HammingWindow", 10, 1, onnx.Int64, []float64{0, 0, 0, 0, 0, 1, 0, 0, 0, 0}},
	}
	for _, c := range cases {
		attrs := []*onnx.Attribute{intAttr("periodic", c.periodic), intAttr("output_datatype", int64(c.dt))}
		out, err := runNode1(t, 17, c.op, attrs, onnx.Scalar(c.size))
		if err != nil {
			t.Fatalf("%s %d %v: %v", c.op, c.size, c.dt, err)
		}
		got, err := float64sOf(out)
		if err != nil || out.Type != c.dt || !slices.Equal(got, c.want) {
			t.Errorf("%s size %d periodic %d as %v: got %v %v (%v), want %v", c.op, c.size, c.periodic, c.dt, out.Type, got, err, c.want)
		}
	}
}

// In float64 the peaks are exactly 1 too, and the other values follow the
// definitions: Blackman 0.42 - 0.5 cos(2πj/N) + 0.08 cos(4πj/N), Hann
// sin²(πj/N), Hamming 25/46 - 21/46 cos(2πj/N).
func TestWindowFloat64Values(t *testing.T) {
	attrs := []*onnx.Attribute{intAttr("output_datatype", int64(onnx.Double))}
	out, err := runNode1(t, 17, "BlackmanWindow", attrs, onnx.Scalar[int64](4))
	if err != nil {
		t.Fatal(err)
	}
	// j = 1: 0.42 - 0.5·0 + 0.08·(-1) = 0.34; j = 2: 0.42 + 0.5 + 0.08 = 1.
	got := out.Float64s()
	if got[2] != 1 || got[1]-0.34 > 1e-15 || 0.34-got[1] > 1e-15 || got[0] > 1e-16 || got[0] < -1e-16 {
		t.Errorf("BlackmanWindow(4) = %v, want [0 0.34 1 0.34]", got)
	}
	out, err = runNode1(t, 17, "HammingWindow", attrs, onnx.Scalar[int64](2))
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Float64s(); got[1] != 1 || got[0]-4.0/46 > 1e-15 || 4.0/46-got[0] > 1e-15 {
		t.Errorf("HammingWindow(2) = %v, want [2/46 1]", got)
	}
}
