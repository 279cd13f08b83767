package runner

import "github.com/deep500/deep500-go/onnx"

// prefetcher reads a sampler's batches one ahead on a goroutine of its
// own: while a step trains on batch k, batch k+1 is read and transformed
// (the sampler's two buffer pairs keep batch k intact meanwhile). The
// batches, their order and the sampler's random numbers are those of
// calling Next in turn: one goroutine makes every call, in sequence. At
// the end of an epoch it stops reading ahead, so the next epoch starts
// when the loop asks for it, as without prefetching.
type prefetcher struct {
	s       *Sampler
	want    chan struct{}
	got     chan fetched
	pending bool // a read is in flight
}

type fetched struct {
	x, y *onnx.Tensor
	err  error
}

func newPrefetcher(s *Sampler) *prefetcher {
	p := &prefetcher{s: s, want: make(chan struct{}), got: make(chan fetched)}
	go func() {
		for range p.want {
			x, y, _, err := p.s.Next()
			p.got <- fetched{x, y, err}
		}
	}()
	return p
}

// next returns what Sampler.Next would, and starts reading the batch after
// it unless this one ended the epoch or failed.
func (p *prefetcher) next() (x, y *onnx.Tensor, err error) {
	if !p.pending {
		p.want <- struct{}{}
	}
	r := <-p.got
	p.pending = false
	if r.err == nil {
		p.want <- struct{}{}
		p.pending = true
	}
	return r.x, r.y, r.err
}

// close waits for a read in flight and ends the goroutine. The sampler has
// then read one batch more than the loop used when the run stopped before
// the epoch's end.
func (p *prefetcher) close() {
	if p.pending {
		<-p.got
		p.pending = false
	}
	close(p.want)
}
