package runner

import (
	"fmt"
	"io"
	"math/rand/v2"
	"sort"

	"github.com/deep500/deep500-go/onnx"
)

// SamplerOptions are the settings every sampler shares.
type SamplerOptions struct {
	BatchSize int  // samples per batch; must be positive
	DropLast  bool // drop the last batch of an epoch if it is partial
	// Transforms are applied in order to each sample after it is read
	// (normalisation, augmentation). They run in the batch buffer.
	Transforms []Transform
	// Seed seeds the transforms' random numbers (and, for the shuffled and
	// bucketed samplers, the order).
	Seed uint64
}

// Sampler draws batches from a dataset, epoch after epoch. Next fills an
// input tensor [B, ...] (float32) and a label tensor [B] (int64) allocated
// once and reused: there are two pairs, used in turn, so a batch stays
// valid until the second call to Next after it (the runner reads the next
// batch while a step trains on the current one). The last batch of an
// epoch has fewer rows unless DropLast is set.
type Sampler struct {
	ds    Dataset
	opts  SamplerOptions
	order func(epoch int, perm []int, bounds [][2]int) [][2]int

	epoch  int
	perm   []int    // sample indices in this epoch's order
	bounds [][2]int // batches as [start,end) into perm
	next   int      // next batch in bounds
	sample int      // elements per sample
	bufs   [2]batchBuffers
	turn   int // the buffers the next call fills
	// rng gives the transforms their random numbers; pcg, its source, is
	// seeded anew for each batch from (Seed, epoch, batch), so that a run
	// resumed at any batch (Seek) draws what an uninterrupted one does.
	rng     *rand.Rand
	pcg     *rand.PCG
	started bool
}

// batchBuffers is one batch's storage.
type batchBuffers struct {
	xbuf  []float32
	ybuf  []int64
	x, y  *onnx.Tensor
	xfull any // xbuf and ybuf boxed once, so full batches allocate nothing
	yfull any
}

func newSampler(ds Dataset, opts SamplerOptions, order func(int, []int, [][2]int) [][2]int) (*Sampler, error) {
	if opts.BatchSize <= 0 {
		return nil, fmt.Errorf("sampler: batch size %d is not positive", opts.BatchSize)
	}
	if ds.Len() == 0 {
		return nil, fmt.Errorf("sampler: empty dataset")
	}
	b := opts.BatchSize
	s := &Sampler{ds: ds, opts: opts, order: order, sample: onnx.NumElements(ds.SampleShape())}
	for i := range s.bufs {
		bb := &s.bufs[i]
		bb.xbuf = make([]float32, b*s.sample)
		bb.ybuf = make([]int64, b)
		bb.x = &onnx.Tensor{Type: onnx.Float, Shape: append([]int{b}, ds.SampleShape()...), Data: bb.xbuf}
		bb.y = &onnx.Tensor{Type: onnx.Int64, Shape: []int{b}, Data: bb.ybuf}
		bb.xfull, bb.yfull = bb.x.Data, bb.y.Data
	}
	s.perm = make([]int, ds.Len())
	s.pcg = rand.NewPCG(opts.Seed, 0x7a4f)
	s.rng = rand.New(s.pcg)
	return s, nil
}

// regularBounds cuts perm into batches of the sampler's size.
func (s *Sampler) regularBounds(n int, bounds [][2]int) [][2]int {
	bounds = bounds[:0]
	b := s.opts.BatchSize
	for i := 0; i < n; i += b {
		end := min(i+b, n)
		if end-i < b && s.opts.DropLast {
			break
		}
		bounds = append(bounds, [2]int{i, end})
	}
	return bounds
}

// NewOrdered returns a sampler that visits the samples in index order.
func NewOrdered(ds Dataset, opts SamplerOptions) (*Sampler, error) {
	var s *Sampler
	s, err := newSampler(ds, opts, func(_ int, perm []int, bounds [][2]int) [][2]int {
		for i := range perm {
			perm[i] = i
		}
		return s.regularBounds(len(perm), bounds)
	})
	return s, err
}

// NewShuffled returns a sampler that visits the samples in a random order,
// drawn anew for each epoch from opts.Seed: the same seed gives the same
// sequence of epochs.
func NewShuffled(ds Dataset, opts SamplerOptions) (*Sampler, error) {
	var s *Sampler
	s, err := newSampler(ds, opts, func(epoch int, perm []int, bounds [][2]int) [][2]int {
		r := rand.New(rand.NewPCG(opts.Seed, uint64(epoch)))
		for i := range perm {
			perm[i] = i
		}
		r.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		return s.regularBounds(len(perm), bounds)
	})
	return s, err
}

// NewBucketed returns a sampler whose batches each hold samples of one
// bucket, key(i) being sample i's bucket (e.g. a sequence length). Within a
// bucket the samples are in index order if shuffle is false; otherwise
// they, and the order of the batches, are shuffled per epoch from
// opts.Seed. DropLast applies to each bucket's last batch. key is called
// once per sample, when the sampler is made.
func NewBucketed(ds Dataset, key func(i int) int, shuffle bool, opts SamplerOptions) (*Sampler, error) {
	keys := make([]int, ds.Len())
	for i := range keys {
		keys[i] = key(i)
	}
	var s *Sampler
	s, err := newSampler(ds, opts, func(epoch int, perm []int, bounds [][2]int) [][2]int {
		r := rand.New(rand.NewPCG(opts.Seed, uint64(epoch)))
		for i := range perm {
			perm[i] = i
		}
		if shuffle {
			r.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		}
		sort.SliceStable(perm, func(a, b int) bool { return keys[perm[a]] < keys[perm[b]] })
		bounds = bounds[:0]
		b := opts.BatchSize
		for start := 0; start < len(perm); {
			end := start
			for end < len(perm) && keys[perm[end]] == keys[perm[start]] {
				end++
			}
			for i := start; i < end; i += b {
				e := min(i+b, end)
				if e-i < b && opts.DropLast {
					break
				}
				bounds = append(bounds, [2]int{i, e})
			}
			start = end
		}
		if shuffle {
			r.Shuffle(len(bounds), func(i, j int) { bounds[i], bounds[j] = bounds[j], bounds[i] })
		}
		return bounds
	})
	return s, err
}

// Epoch is the number of the current epoch, from 0.
func (s *Sampler) Epoch() int { return s.epoch }

// BatchesPerEpoch is the number of batches Next returns per epoch.
func (s *Sampler) BatchesPerEpoch() int {
	s.plan()
	return len(s.bounds)
}

func (s *Sampler) plan() {
	if !s.started {
		s.bounds = s.order(s.epoch, s.perm, s.bounds)
		s.next = 0
		s.started = true
	}
}

// Next returns the next batch of the current epoch, or io.EOF at the end
// of the epoch; the call after io.EOF starts the next epoch. The tensors
// are reused by the second call after this one. indices are the batch's
// sample indices (a view valid until the next epoch starts).
func (s *Sampler) Next() (x, y *onnx.Tensor, indices []int, err error) {
	s.plan()
	if s.next >= len(s.bounds) {
		s.epoch++
		s.started = false
		return nil, nil, nil, io.EOF
	}
	bd := s.bounds[s.next]
	if len(s.opts.Transforms) > 0 {
		s.pcg.Seed(s.opts.Seed, 0x7a4f<<48^uint64(s.epoch)<<24^uint64(s.next))
	}
	s.next++
	idx := s.perm[bd[0]:bd[1]]
	n, k := len(idx), s.sample
	bb := &s.bufs[s.turn]
	s.turn = 1 - s.turn
	for j, i := range idx {
		xs := bb.xbuf[j*k : (j+1)*k]
		if bb.ybuf[j], err = s.ds.Sample(i, xs); err != nil {
			return nil, nil, nil, err
		}
		for _, t := range s.opts.Transforms {
			t.Apply(xs, s.ds.SampleShape(), s.rng)
		}
	}
	bb.x.Shape[0], bb.y.Shape[0] = n, n
	if n == s.opts.BatchSize {
		bb.x.Data, bb.y.Data = bb.xfull, bb.yfull
	} else { // a partial batch, at most once per epoch
		bb.x.Data, bb.y.Data = bb.xbuf[:n*k], bb.ybuf[:n]
	}
	return bb.x, bb.y, idx, nil
}

// Reset goes back to the start of epoch 0.
func (s *Sampler) Reset() {
	s.epoch, s.started = 0, false
}

// Seek makes batch (from 0) of epoch (from 0) the one the next call to
// Next returns, with the samples, order and random numbers it has when
// reached by calling Next from the start; batch may be the epoch's number
// of batches (Next then ends the epoch).
func (s *Sampler) Seek(epoch, batch int) error {
	if epoch < 0 || batch < 0 {
		return fmt.Errorf("sampler: cannot seek to batch %d of epoch %d", batch, epoch)
	}
	s.epoch, s.started = epoch, false
	s.plan()
	if batch > len(s.bounds) {
		return fmt.Errorf("sampler: batch %d is past the %d batches of an epoch", batch, len(s.bounds))
	}
	s.next = batch
	return nil
}
