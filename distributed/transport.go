package distributed

import "errors"

// ErrNoMPI is Init's error in a binary built without MPI; it says how to
// get one that can train on several processes.
var ErrNoMPI = errors.New("distributed training needs the mpi build: install Open MPI (make setup) and build with `go build -tags mpi ./cmd/d500` (or make build-mpi)")

// Transport is the message layer a Comm drives: blocking MPI-style
// primitives on float32 buffers. The MPI transport (build tag mpi) and
// Self implement it. Buffers must not be empty; dst and src of the
// collectives are distinct slices.
type Transport interface {
	Rank() int
	Size() int
	Barrier() error
	// AllReduceSum replaces buf on every rank with the element-wise sum of
	// all ranks' buf.
	AllReduceSum(buf []float32) error
	// Broadcast copies root's buf into every rank's buf.
	Broadcast(root int, buf []float32) error
	// Send and Recv are blocking point-to-point messages; a Recv matches a
	// Send from that rank with the same tag and length.
	Send(to, tag int, buf []float32) error
	Recv(from, tag int, buf []float32) error
	// RecvAny receives the first message under tag from any rank and
	// returns the sender.
	RecvAny(tag int, buf []float32) (from int, err error)
	// Gather places every rank's src, in rank order, into root's dst
	// (len(dst) = Size()·len(src); dst is ignored on other ranks).
	Gather(root int, dst, src []float32) error
}

// Self is the transport of a job of one process: every collective leaves
// the buffers as they are, and point-to-point messages have no peer.
type Self struct{}

func (Self) Rank() int                      { return 0 }
func (Self) Size() int                      { return 1 }
func (Self) Barrier() error                 { return nil }
func (Self) AllReduceSum([]float32) error   { return nil }
func (Self) Broadcast(int, []float32) error { return nil }
func (Self) Gather(_ int, dst, src []float32) error {
	copy(dst, src)
	return nil
}
func (Self) Send(to, _ int, _ []float32) error {
	return errNoPeer(to)
}
func (Self) Recv(from, _ int, _ []float32) error {
	return errNoPeer(from)
}
func (Self) RecvAny(int, []float32) (int, error) {
	return -1, errors.New("a job of one process has no other rank to hear from")
}
