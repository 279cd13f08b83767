//go:build !mpi

package distributed

import (
	"fmt"
	"os"
)

// Available reports whether this binary was built with MPI (-tags mpi).
const Available = false

// Init fails: this binary was built without MPI.
func Init() (*Comm, error) { return nil, ErrNoMPI }

// Finalize does nothing without MPI.
func Finalize() {}

// Abort prints err to standard error and exits with status 1.
func Abort(err error) {
	fmt.Fprintf(os.Stderr, "%v\n", err)
	os.Exit(1)
}
