// Package memlimit decides whether the memory a request needs — the
// tensors of declared shapes made for --random-inputs, a synthetic
// dataset — fits before any of it is allocated, so that a shape too large
// for the machine is an error naming what asked for it and how much,
// instead of the Go runtime's fatal "out of memory" and a goroutine dump.
// The default limit is the machine's memory; commands let a user set
// another (--memory-limit).
package memlimit
