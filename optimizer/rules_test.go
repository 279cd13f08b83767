package optimizer

import (
	"math"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// Each optimizer's first three steps on a 3-element parameter with fixed
// gradients, against the published formula written out again here, one
// element at a time, from scratch.

var (
	testP0    = []float64{0.5, -1.2, 2.0}
	testGrads = [3][]float64{{0.3, -0.7, 1.1}, {-0.2, 0.4, 0.9}, {0.05, -1.5, 0.6}}
)

// expected runs ref (per element: value, gradient, step 1..3 → new value)
// over the fixed gradients.
type refRule func(x, g float64, t, elem int) float64

func runRef(ref refRule) [3][]float64 {
	var out [3][]float64
	x := append([]float64(nil), testP0...)
	for t := range 3 {
		for e := range x {
			x[e] = ref(x[e], testGrads[t][e], t+1, e)
		}
		out[t] = append([]float64(nil), x...)
	}
	return out
}

func checkRule(t *testing.T, name string, hp Hyperparams, ref refRule) {
	t.Helper()
	want := runRef(ref)
	for _, dt := range []onnx.DataType{onnx.Double, onnx.Float} {
		o, err := New(name, hp)
		if err != nil {
			t.Fatal(err)
		}
		p := onnx.NewTensor(dt, 3)
		g := onnx.NewTensor(dt, 3)
		set := func(tt *onnx.Tensor, v []float64) {
			for i, x := range v {
				if dt == onnx.Float {
					tt.Float32s()[i] = float32(x)
				} else {
					tt.Float64s()[i] = x
				}
			}
		}
		get := func(tt *onnx.Tensor, i int) float64 {
			if dt == onnx.Float {
				return float64(tt.Float32s()[i])
			}
			return tt.Float64s()[i]
		}
		set(p, testP0)
		tol := 1e-12
		if dt == onnx.Float {
			tol = 1e-5
		}
		for step := range 3 {
			set(g, testGrads[step])
			if err := o.UpdateRule(g, p, "w"); err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				if d := math.Abs(get(p, i) - want[step][i]); d > tol*math.Max(1, math.Abs(want[step][i])) {
					t.Errorf("%s %v step %d elem %d: got %.10g, want %.10g", name, dt, step+1, i, get(p, i), want[step][i])
				}
			}
		}
	}
}

func TestSGDPlain(t *testing.T) {
	hp, _ := Defaults("sgd")
	hp.LR, hp.WeightDecay = 0.1, 0.01
	checkRule(t, "sgd", hp, func(x, g float64, _, _ int) float64 {
		return x - 0.1*(g+0.01*x)
	})
}

func TestSGDMomentum(t *testing.T) {
	hp, _ := Defaults("momentum")
	hp.LR, hp.WeightDecay, hp.Dampening = 0.1, 0.01, 0.2
	buf := make([]float64, 3)
	checkRule(t, "momentum", hp, func(x, g float64, step, e int) float64 {
		d := g + 0.01*x
		if step == 1 {
			buf[e] = d
		} else {
			buf[e] = 0.9*buf[e] + 0.8*d
		}
		return x - 0.1*buf[e]
	})
}

func TestSGDNesterov(t *testing.T) {
	hp, _ := Defaults("nesterov")
	hp.LR, hp.WeightDecay = 0.1, 0.01
	buf := make([]float64, 3)
	checkRule(t, "nesterov", hp, func(x, g float64, step, e int) float64 {
		d := g + 0.01*x
		if step == 1 {
			buf[e] = d
		} else {
			buf[e] = 0.9*buf[e] + d
		}
		return x - 0.1*(d+0.9*buf[e])
	})
}

func TestAdam(t *testing.T) {
	hp, _ := Defaults("adam")
	hp.LR, hp.WeightDecay = 0.05, 0.1
	m, v := make([]float64, 3), make([]float64, 3)
	checkRule(t, "adam", hp, func(x, g float64, step, e int) float64 {
		d := g + 0.1*x
		m[e] = 0.9*m[e] + 0.1*d
		v[e] = 0.999*v[e] + 0.001*d*d
		mhat := m[e] / (1 - math.Pow(0.9, float64(step)))
		vhat := v[e] / (1 - math.Pow(0.999, float64(step)))
		return x - 0.05*mhat/(math.Sqrt(vhat)+1e-8)
	})
}

func TestAdamW(t *testing.T) {
	hp, _ := Defaults("adamw")
	hp.LR, hp.WeightDecay = 0.05, 0.1
	m, v := make([]float64, 3), make([]float64, 3)
	checkRule(t, "adamw", hp, func(x, g float64, step, e int) float64 {
		x -= 0.05 * 0.1 * x
		m[e] = 0.9*m[e] + 0.1*g
		v[e] = 0.999*v[e] + 0.001*g*g
		mhat := m[e] / (1 - math.Pow(0.9, float64(step)))
		vhat := v[e] / (1 - math.Pow(0.999, float64(step)))
		return x - 0.05*mhat/(math.Sqrt(vhat)+1e-8)
	})
}

func TestAdagrad(t *testing.T) {
	hp, _ := Defaults("adagrad")
	hp.LR, hp.WeightDecay, hp.LRDecay, hp.InitialAcc = 0.1, 0.01, 0.5, 0.2
	s := []float64{0.2, 0.2, 0.2}
	checkRule(t, "adagrad", hp, func(x, g float64, step, e int) float64 {
		d := g + 0.01*x
		s[e] += d * d
		return x - 0.1/(1+0.5*float64(step-1))*d/(math.Sqrt(s[e])+1e-10)
	})
}

func TestRMSprop(t *testing.T) {
	hp, _ := Defaults("rmsprop")
	hp.WeightDecay = 0.01
	s := make([]float64, 3)
	checkRule(t, "rmsprop", hp, func(x, g float64, _, e int) float64 {
		d := g + 0.01*x
		s[e] = 0.99*s[e] + 0.01*d*d
		return x - 0.01*d/(math.Sqrt(s[e])+1e-8)
	})
}

func TestRMSpropCenteredMomentum(t *testing.T) {
	hp, _ := Defaults("rmsprop")
	hp.Centered, hp.Momentum, hp.Alpha = true, 0.5, 0.9
	s, a, b := make([]float64, 3), make([]float64, 3), make([]float64, 3)
	checkRule(t, "rmsprop", hp, func(x, g float64, _, e int) float64 {
		s[e] = 0.9*s[e] + 0.1*g*g
		a[e] = 0.9*a[e] + 0.1*g
		b[e] = 0.5*b[e] + g/(math.Sqrt(s[e]-a[e]*a[e])+1e-8)
		return x - 0.01*b[e]
	})
}

func TestAcceleGrad(t *testing.T) {
	hp, _ := Defaults("accelegrad")
	hp.D, hp.G, hp.WeightDecay = 0.5, 0.3, 0.01
	// Whole-vector form: the step size uses the norm over the tensor.
	want := [3][]float64{}
	y := append([]float64(nil), testP0...)
	z := append([]float64(nil), testP0...)
	x := append([]float64(nil), testP0...)
	alpha := []float64{1, 1, 1, 1} // t = 0..3: α_3 = (3+1)/4 = 1
	sum := 0.0
	for t := range 3 {
		g := make([]float64, 3)
		n2 := 0.0
		for e := range 3 {
			g[e] = testGrads[t][e] + 0.01*x[e]
			n2 += g[e] * g[e]
		}
		sum += alpha[t] * alpha[t] * n2
		eta := 2 * 0.5 / math.Sqrt(0.3*0.3+sum)
		for e := range 3 {
			z[e] -= alpha[t] * eta * g[e]
			y[e] = x[e] - eta*g[e]
			tau := 1 / alpha[t+1]
			x[e] = tau*z[e] + (1-tau)*y[e]
		}
		want[t] = append([]float64(nil), x...)
	}
	checkRule(t, "accelegrad", hp, func(_, _ float64, step, e int) float64 {
		return want[step-1][e]
	})
	// α and τ beyond the first steps: α_t = (t+1)/4 from t = 3.
	if accelegradAlpha(2) != 1 || accelegradAlpha(3) != 1 || accelegradAlpha(7) != 2 {
		t.Errorf("alpha schedule: %g %g %g", accelegradAlpha(2), accelegradAlpha(3), accelegradAlpha(7))
	}
}

func TestNewNames(t *testing.T) {
	for _, n := range Names() {
		hp, err := Defaults(n)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := New(n, hp); err != nil {
			t.Errorf("New(%q, defaults): %v", n, err)
		}
	}
	if _, err := New("lbfgs", Hyperparams{}); err == nil {
		t.Error("New(lbfgs) succeeded")
	}
	hp, _ := Defaults("nesterov")
	hp.Dampening = 0.1
	if _, err := New("nesterov", hp); err == nil {
		t.Error("Nesterov with dampening accepted")
	}
}

// A float32 parameter with a float64 gradient is updated from the
// gradient's float64 values, as with a float64 parameter: one step of each
// rule gives the float64 parameter's result rounded to float32, bit for
// bit, for gradients float32 cannot hold.
func TestMixedGradientTypeUsesTheGradientsValues(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			hp, err := Defaults(name)
			if err != nil {
				t.Fatal(err)
			}
			hp.LR = 0.1
			mixed, err := New(name, hp)
			if err != nil {
				t.Fatal(err)
			}
			wide, err := New(name, hp)
			if err != nil {
				t.Fatal(err)
			}
			g := onnx.FromSlice([]float64{0.1 + 1e-12, -0.3 + 3e-11, 1.0 / 3}, 3)
			p32 := onnx.FromSlice([]float32{0.5, -1.25, 2}, 3)
			p64 := onnx.FromSlice([]float64{0.5, -1.25, 2}, 3)
			if err := mixed.UpdateRule(g, p32, "w"); err != nil {
				t.Fatal(err)
			}
			if err := wide.UpdateRule(g, p64, "w"); err != nil {
				t.Fatal(err)
			}
			for i, v := range p64.Float64s() {
				if got := p32.Float32s()[i]; math.Float32bits(got) != math.Float32bits(float32(v)) {
					t.Errorf("element %d: %v with a float64 gradient on a float32 parameter, %v rounded from float64", i, got, float32(v))
				}
			}
		})
	}
}
