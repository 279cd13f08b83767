package runner

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/deep500/deep500-go/onnx"
)

// SyntheticConfig describes a synthetic classification problem: Gaussian
// blobs, one per class, around class centres placed at random directions
// at distance Sep from the origin, with per-element noise of standard
// deviation Noise. With the defaults the classes are linearly separable
// (with overwhelming probability), so any model can learn them.
type SyntheticConfig struct {
	Classes int     // default 10
	Shape   []int   // one sample's shape; default [1 28 28]
	N       int     // training samples; default 1024
	TestN   int     // test samples; default N/4 (at least 1)
	Seed    uint64  // 0 means 1
	Sep     float64 // centre distance from the origin; default 3
	Noise   float64 // noise standard deviation; default 0.5
}

func (c *SyntheticConfig) defaults() {
	if c.Classes <= 0 {
		c.Classes = 10
	}
	if len(c.Shape) == 0 {
		c.Shape = []int{1, 28, 28}
	}
	if c.N <= 0 {
		c.N = 1024
	}
	if c.TestN <= 0 {
		c.TestN = max(c.N/4, 1)
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Sep <= 0 {
		c.Sep = 3
	}
	if c.Noise <= 0 {
		c.Noise = 0.5
	}
}

// Bytes is the memory Synthetic takes for cfg (the samples of both sets
// and the class centres, as float32, and the labels), checked for
// overflow, so that a shape too large can be refused before any of it is
// made.
func (c SyntheticConfig) Bytes() (int64, error) {
	c.defaults()
	d, err := onnx.TensorBytes(onnx.Float, c.Shape)
	if err != nil {
		return 0, err
	}
	rows := int64(c.Classes) + int64(c.N) + int64(c.TestN)
	if d > 0 && rows > (math.MaxInt64-8*rows)/d {
		return 0, fmt.Errorf("%d samples of shape %v take more than %d bytes", c.N+c.TestN, c.Shape, int64(math.MaxInt64))
	}
	return rows*d + 8*(int64(c.N)+int64(c.TestN)), nil
}

// Synthetic generates the training and test sets of cfg. The same config
// always gives the same data; both sets share the class centres.
func Synthetic(cfg SyntheticConfig) (train, test *Memory) {
	cfg.defaults()
	d := onnx.NumElements(cfg.Shape)
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	centres := make([]float32, cfg.Classes*d)
	for c := 0; c < cfg.Classes; c++ {
		v := centres[c*d : (c+1)*d]
		var norm float64
		for j := range v {
			g := rng.NormFloat64()
			v[j] = float32(g)
			norm += g * g
		}
		s := cfg.Sep / math.Sqrt(norm)
		for j := range v {
			v[j] *= float32(s)
		}
	}
	gen := func(n int, stream uint64) *Memory {
		r := rand.New(rand.NewPCG(cfg.Seed, stream))
		m := &Memory{Shape: append([]int{}, cfg.Shape...), X: make([]float32, n*d), Y: make([]int64, n), Classes: cfg.Classes}
		for i := 0; i < n; i++ {
			c := r.IntN(cfg.Classes)
			m.Y[i] = int64(c)
			x, ctr := m.X[i*d:(i+1)*d], centres[c*d:(c+1)*d]
			for j := range x {
				x[j] = ctr[j] + float32(r.NormFloat64()*cfg.Noise)
			}
		}
		return m
	}
	return gen(cfg.N, 1), gen(cfg.TestN, 2)
}
