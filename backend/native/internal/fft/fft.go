package fft

import (
	"math"
	"math/bits"
	"math/cmplx"
	"sync"
)

// Plan is a plan for the discrete Fourier transform of one length n,
// forward or inverse (unnormalized: the caller scales an inverse by 1/n):
//
//	X[k] = sum_j x[j] exp(-+2 pi i j k / n)
//
// Powers of two run an iterative radix-2 Cooley-Tukey transform; other
// lengths use Bluestein's chirp-z algorithm, which writes the transform as
// a convolution computed with a power-of-two FFT, so every length costs
// O(n log n). A plan is read-only once built and may be shared by
// goroutines; each call passes its own scratch space.
type Plan struct {
	n       int
	inverse bool
	// radix-2: twiddles[j] = exp(-+2 pi i j / n) for j < n/2, and the
	// bit-reversal permutation.
	twiddles []complex128
	rev      []int
	// Bluestein: chirp[j] = exp(-+pi i j^2 / n), and the FFT (size m) of the
	// conjugate chirp extended circularly.
	chirp  []complex128
	filter []complex128
	sub    *Plan // forward FFT of size m
	subInv *Plan // inverse FFT of size m
}

// NewPlan builds the plan for length n >= 1, forward or inverse.
func NewPlan(n int, inverse bool) *Plan {
	p := &Plan{n: n, inverse: inverse}
	sign := -1.0
	if inverse {
		sign = 1
	}
	if n&(n-1) == 0 {
		p.twiddles = make([]complex128, n/2)
		for j := range p.twiddles {
			s, c := math.Sincos(sign * 2 * math.Pi * float64(j) / float64(n))
			p.twiddles[j] = complex(c, s)
		}
		p.rev = make([]int, n)
		shift := bits.UintSize - bits.Len(uint(n)) + 1
		for j := range p.rev {
			if n > 1 {
				p.rev[j] = int(bits.Reverse(uint(j)) >> shift)
			}
		}
		return p
	}
	m := 1
	for m < 2*n-1 {
		m <<= 1
	}
	p.chirp = make([]complex128, n)
	for j := range n {
		// j*j mod 2n keeps the angle small and exact for large j.
		jj := (int64(j) * int64(j)) % int64(2*n)
		s, c := math.Sincos(sign * math.Pi * float64(jj) / float64(n))
		p.chirp[j] = complex(c, s)
	}
	p.sub = NewPlan(m, false)
	p.subInv = NewPlan(m, true)
	p.filter = make([]complex128, m)
	p.filter[0] = cmplx.Conj(p.chirp[0])
	for j := 1; j < n; j++ {
		p.filter[j] = cmplx.Conj(p.chirp[j])
		p.filter[m-j] = cmplx.Conj(p.chirp[j])
	}
	p.sub.Transform(p.filter, nil)
	return p
}

// ScratchLen is the scratch length Transform needs.
func (p *Plan) ScratchLen() int {
	if p.chirp == nil {
		return 0
	}
	return p.sub.n
}

// Transform replaces x (length n) by its transform; scratch must hold
// ScratchLen elements.
func (p *Plan) Transform(x, scratch []complex128) {
	if p.chirp == nil {
		p.radix2(x)
		return
	}
	m := p.sub.n
	a := scratch[:m]
	for j := range p.n {
		a[j] = x[j] * p.chirp[j]
	}
	clear(a[p.n:])
	p.sub.radix2(a)
	for j := range a {
		a[j] *= p.filter[j]
	}
	p.subInv.radix2(a)
	scale := 1 / float64(m)
	for k := range p.n {
		x[k] = a[k] * p.chirp[k] * complex(scale, 0)
	}
}

// radix2 is the in-place iterative transform of a power-of-two length.
func (p *Plan) radix2(x []complex128) {
	n := p.n
	for j, r := range p.rev {
		if j < r {
			x[j], x[r] = x[r], x[j]
		}
	}
	for size := 2; size <= n; size <<= 1 {
		half, step := size/2, n/size
		for start := 0; start < n; start += size {
			for j := range half {
				w := p.twiddles[j*step]
				u, v := x[start+j], x[start+j+half]*w
				x[start+j] = u + v
				x[start+j+half] = u - v
			}
		}
	}
}

// Cache keeps the plans a kernel has built, by length and direction;
// lookups are safe from several goroutines. The zero value is empty and
// ready.
type Cache struct {
	mu    sync.Mutex
	plans map[[2]int]*Plan
}

// Plan returns the plan for length n >= 1, built on first use.
func (c *Cache) Plan(n int, inverse bool) *Plan {
	key := [2]int{n, 0}
	if inverse {
		key[1] = 1
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.plans[key]; ok {
		return p
	}
	if c.plans == nil {
		c.plans = map[[2]int]*Plan{}
	}
	p := NewPlan(n, inverse)
	c.plans[key] = p
	return p
}
