// Package distributed is layer 2 of Deep500: training on several processes
// that talk over MPI.
//
// It has three parts:
//
//   - Comm, a communicator: rank, size, barrier, all-reduce (sum and mean)
//     of float32 buffers, broadcast, send/receive (also from any rank),
//     gather and exchange with ring neighbours. It meters what it moves
//     (bytes sent and received) and the time spent in communication. MPI
//     does the moving: the Transport behind a Comm is
//     github.com/emer/empi/v2/mpi over Open MPI (plus one MPI_Probe of our
//     own, which empi lacks), compiled only with the build tag mpi (see
//     Init); without the tag Init says how to get that build. Self is the
//     one-process transport.
//   - Distributed optimizers (New, Schemes) that wrap any reference
//     optimizer (an optimizer.UpdateRuleOptimizer) through the Network API:
//     pssgd, asgd, dsgd, mavg, dpsgd and allreduce. They all start from rank
//     0's parameters and report per-step communication figures (Stats).
//   - Distributed samplers' data: Partition gives each rank its own seeded
//     part of a dataset; Replicated gives every rank all of it.
//
// A failure on one rank must not leave the others waiting in a collective
// forever: Abort prints the message and ends every rank of the job with a
// non-zero status.
package distributed
