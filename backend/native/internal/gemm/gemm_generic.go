//go:build !amd64 || purego

package gemm

// archImpls has no entry: without assembly for this architecture (or
// with the purego tag) the portable micro-kernel runs.
func archImpls() []Impl { return nil }
