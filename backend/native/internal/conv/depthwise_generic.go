//go:build !amd64 || purego

package conv

// depthwiseArchImpls has no entry: without assembly for this architecture
// (or with the purego tag) the portable depthwise kernel runs.
func depthwiseArchImpls() []DepthwiseImpl { return nil }
