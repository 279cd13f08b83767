//go:build mpi

package distributed

import (
	"fmt"
	"os"

	"github.com/emer/empi/v2/mpi"
)

// Available reports whether this binary was built with MPI (-tags mpi).
const Available = true

// mpiTransport is the Transport over github.com/emer/empi/v2/mpi, on the
// world communicator.
type mpiTransport struct {
	c       *mpi.Comm
	scratch *[]float32 // the all-reduce's send buffer, reused
}

func (m mpiTransport) Rank() int      { return m.c.Rank() }
func (m mpiTransport) Size() int      { return m.c.Size() }
func (m mpiTransport) Barrier() error { return m.c.Barrier() }

// AllReduceSum sends a copy of buf: empi's in-place form passes
// MPI_IN_PLACE, the address 1, as a Go pointer, which the Go runtime
// rejects ("invalid pointer found on stack") when it moves the stack.
func (m mpiTransport) AllReduceSum(buf []float32) error {
	s := *m.scratch
	if cap(s) < len(buf) {
		s = make([]float32, len(buf))
		*m.scratch = s
	}
	s = s[:len(buf)]
	copy(s, buf)
	return m.c.AllReduceF32(mpi.OpSum, buf, s)
}
func (m mpiTransport) Broadcast(root int, buf []float32) error { return m.c.BcastF32(root, buf) }
func (m mpiTransport) Send(to, tag int, buf []float32) error   { return m.c.SendF32(to, tag, buf) }
func (m mpiTransport) Recv(from, tag int, buf []float32) error {
	return m.c.RecvF32(from, tag, buf)
}
func (m mpiTransport) Gather(root int, dst, src []float32) error {
	if m.c.Rank() != root {
		dst = nil
	}
	return m.c.GatherF32(root, dst, src)
}

// Init starts MPI and returns the communicator of all the job's processes
// (MPI_COMM_WORLD). A process started without mpirun is a job of one.
// Call Finalize before a successful exit, Abort on failure.
func Init() (*Comm, error) {
	if !mpi.IsOn() {
		// Go may run a goroutine's successive MPI calls on different OS
		// threads, which MPI's default (single-thread) level does not
		// allow; ask for MPI_THREAD_MULTIPLE, which Debian's Open MPI
		// gives. Our calls never overlap, so a library that offers less
		// still works in practice: go on either way.
		_ = mpi.InitThreadSafe()
	}
	// empi logs every MPI error itself; ours carry the rank and operation.
	mpi.LogErrors = false
	c, err := mpi.NewComm(nil)
	if err != nil {
		return nil, fmt.Errorf("MPI: %w", err)
	}
	return NewComm(mpiTransport{c: c, scratch: new([]float32)}), nil
}

// Finalize shuts MPI down; every rank must call it before exiting with
// success.
func Finalize() {
	if mpi.IsOn() {
		mpi.Finalize()
	}
}

// Abort prints err, prefixed with this rank, to standard error and ends
// every process of the job. empi's Comm.Abort would end them too, but it
// passes error code 0, and mpirun then exits with status 0 as if all went
// well; so this rank exits with status 1 without finalizing, which Open
// MPI's launcher treats as a failed job: it kills the other ranks and
// exits non-zero itself (TestAbortEndsEveryRank).
func Abort(err error) {
	fmt.Fprintf(os.Stderr, "rank %d of %d: %v\n", mpi.WorldRank(), mpi.WorldSize(), err)
	os.Exit(1)
}
