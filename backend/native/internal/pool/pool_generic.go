//go:build !amd64 || purego

package pool

// archImpls has no assembly implementations off amd64 (or with purego).
func archImpls() []Impl { return nil }
