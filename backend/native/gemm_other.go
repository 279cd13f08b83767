//go:build !amd64

package native

// useAsmKernels is false: there are no assembly micro-kernels for this
// architecture, and the portable one runs.
var useAsmKernels = false

func asmKernel[T floatElem]() (*microKernel[T], bool) { return nil, false }

func asmGemv[T floatElem]() (*gemvKernels[T], bool) { return nil, false }

// transposePanel8 fills nothing: packPanelsBColumns's loop does it all.
func transposePanel8(panel, src []float32, ld, kc int) int { return 0 }
