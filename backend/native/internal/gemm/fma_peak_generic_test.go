//go:build !amd64 || purego

package gemm

// fmaPeakGFLOPS has no loop to measure without assembly: 0.
func fmaPeakGFLOPS() float64 { return 0 }
