//go:build !amd64 || purego

package conv

// direct3x3ArchImpls has no entry: without assembly for this
// architecture (or with the purego tag) the portable kernel runs.
func direct3x3ArchImpls() []Direct3x3Impl { return nil }
