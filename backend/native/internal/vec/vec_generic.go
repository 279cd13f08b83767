//go:build !amd64 || purego

package vec

// archImpls has no entry: without assembly for this architecture (or
// with the purego tag) the portable kernels run.
func archImpls() []Impl { return nil }
