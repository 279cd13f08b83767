//go:build mpi

package distributed

/*
#cgo pkg-config: ompi
#include <mpi.h>

// probe_any waits for a message with tag from any rank of the world and
// tells which rank sent it, without receiving it.
static int probe_any(int tag, int *source) {
	MPI_Status st;
	int rc = MPI_Probe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st);
	*source = st.MPI_SOURCE;
	return rc;
}
*/
import "C"

import "fmt"

// RecvAny receives into buf the first message under tag from whichever
// rank sends one, and returns that rank. empi's receive names its source,
// so the source is first found with MPI_Probe (the one MPI call this
// package makes itself).
func (m mpiTransport) RecvAny(tag int, buf []float32) (int, error) {
	var src C.int
	if rc := C.probe_any(C.int(tag), &src); rc != C.MPI_SUCCESS {
		return -1, fmt.Errorf("MPI_Probe failed with error code %d", int(rc))
	}
	return int(src), m.c.RecvF32(int(src), tag, buf)
}
