package runner

import (
	"io"
	"math/rand/v2"
	"slices"
	"testing"
)

// noise is a Transform that draws from the sampler's random numbers, so
// that the test sees whether prefetching keeps their order.
type noise struct{}

func (noise) Apply(x []float32, _ []int, rng *rand.Rand) {
	for i := range x {
		x[i] += float32(rng.Float64())
	}
}

type batch struct {
	x []float32
	y []int64
}

// The prefetcher hands out the batches, labels and transformed inputs that
// calling Next in turn gives, over epoch ends (a partial batch included),
// and a batch stays intact while the one after it is read.
func TestPrefetcherGivesTheSamplersBatchesInOrder(t *testing.T) {
	opts := SamplerOptions{BatchSize: 4, Seed: 3, Transforms: []Transform{noise{}}}
	direct, err := NewShuffled(indexDataset(10), opts)
	if err != nil {
		t.Fatal(err)
	}
	ahead, err := NewShuffled(indexDataset(10), opts)
	if err != nil {
		t.Fatal(err)
	}
	p := newPrefetcher(ahead)
	defer p.close()
	for epoch := range 3 {
		for k := 0; ; k++ {
			wx, wy, _, werr := direct.Next()
			gx, gy, gerr := p.next()
			if werr == io.EOF || gerr == io.EOF {
				if werr != gerr {
					t.Fatalf("epoch %d batch %d: direct %v, prefetched %v", epoch, k, werr, gerr)
				}
				break
			}
			if werr != nil || gerr != nil {
				t.Fatal(werr, gerr)
			}
			want := batch{slices.Clone(wx.Float32s()), slices.Clone(wy.Int64s())}
			if !slices.Equal(gx.Float32s(), want.x) || !slices.Equal(gy.Int64s(), want.y) {
				t.Fatalf("epoch %d batch %d: prefetched %v %v, want %v %v", epoch, k, gx.Float32s(), gy.Int64s(), want.x, want.y)
			}
			// The next batch is being read now (or already is): this one
			// must not change under it.
			if p.pending {
				r := <-p.got
				p.pending = false
				if !slices.Equal(gx.Float32s(), want.x) || !slices.Equal(gy.Int64s(), want.y) {
					t.Fatalf("epoch %d batch %d changed while the next was read", epoch, k)
				}
				// Hand the read batch back as the next answer.
				go func() { p.got <- r }()
				p.pending = true
			}
		}
	}
}
