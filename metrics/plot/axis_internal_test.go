package plot

import (
	"math"
	"testing"
)

// The accuracy axis fits the accuracies drawn, within [0, 1].
func TestAccuracyAxis(t *testing.T) {
	for _, tc := range []struct{ lo, hi, min, max float64 }{
		{0.85, 0.9, 0.83, 0.92},
		{0.5, 0.5, 0.48, 0.52},
		{0.01, 0.99, 0, 1},
		{0.2, 0.8, 0.14, 0.86},
	} {
		mn, mx := accuracyAxis(tc.lo, tc.hi)
		if math.Abs(mn-tc.min) > 1e-12 || math.Abs(mx-tc.max) > 1e-12 {
			t.Errorf("accuracyAxis(%v, %v) = %v, %v; want %v, %v", tc.lo, tc.hi, mn, mx, tc.min, tc.max)
		}
	}
	if mn, mx := accuracyAxis(math.Inf(1), math.Inf(-1)); mn != 0 || mx != 1 {
		t.Errorf("no accuracies: %v, %v", mn, mx)
	}
}
