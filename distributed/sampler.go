package distributed

import (
	"fmt"
	"math/rand/v2"

	"github.com/deep500/deep500-go/runner"
)

// part is the view of a dataset that one rank trains on.
type part struct {
	runner.Dataset
	idx []int // indices into the whole dataset
}

func (p *part) Len() int { return len(p.idx) }

func (p *part) Sample(i int, x []float32) (int64, error) {
	if i < 0 || i >= len(p.idx) {
		return 0, fmt.Errorf("sample %d out of range [0,%d)", i, len(p.idx))
	}
	return p.Dataset.Sample(p.idx[i], x)
}

// NumClasses passes on the whole dataset's number of classes, if it has one.
func (p *part) NumClasses() int {
	if c, ok := p.Dataset.(runner.Classes); ok {
		return c.NumClasses()
	}
	return 0
}

// Partition returns rank's part of ds when it is split among size ranks:
// the samples are permuted by seed (the same permutation on every rank,
// so the parts are disjoint) and cut into size parts of ⌊Len/size⌋
// samples; the remainder is left out, so that every rank has as many
// batches per epoch and the ranks' steps stay in step. seed 0 keeps
// index order: rank r gets the r-th contiguous block. A sampler over the
// part (shuffled or ordered) draws the batches.
func Partition(ds runner.Dataset, rank, size int, seed uint64) (runner.Dataset, error) {
	if size <= 0 || rank < 0 || rank >= size {
		return nil, fmt.Errorf("partition: rank %d of %d", rank, size)
	}
	per := ds.Len() / size
	if per == 0 {
		return nil, fmt.Errorf("partition: %d samples cannot be split among %d ranks", ds.Len(), size)
	}
	perm := make([]int, ds.Len())
	for i := range perm {
		perm[i] = i
	}
	if seed != 0 {
		r := rand.New(rand.NewPCG(seed, 0xd157))
		r.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
	}
	return &part{Dataset: ds, idx: perm[rank*per : (rank+1)*per]}, nil
}

// Sampling is how a training set is shared among the ranks.
type Sampling string

const (
	// Partitioned: each rank its own part (Partition).
	Partitioned Sampling = "partitioned"
	// Replicated: every rank the whole set, in an order of its own
	// (ReplicatedSeed).
	Replicated Sampling = "replicated"
)

// ReplicatedSeed is the shuffling seed of rank's sampler in replicated
// sampling: each rank sees all the data, but not in the same order, or
// every rank would compute the same gradients.
func ReplicatedSeed(seed uint64, rank int) uint64 { return seed + uint64(rank)*0x9e3779b97f4a7c15 }
