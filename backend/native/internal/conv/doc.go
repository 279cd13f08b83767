// Package conv holds the native backend's convolution kernels: the window
// geometry they take (Geometry), im2col and its adjoint col2im (with 2-D
// forms that skip the N-D walker), the block writer that feeds the GEMM
// one tile of the im2col matrix at a time instead of storing it whole
// (Im2colBlock2D), the thin direct convolution of depthwise and
// other one- or two-output groups (DirectThin, ThinProduct), and the
// vector kernels of float32 depthwise planes of 3×3 and 5×5 windows,
// stride 1 or 2 (DepthwiseLayout, depthwise.go), and the direct float32
// 3×3 convolution of stride 1 or 2 without im2col, on a padded copy of
// the input (Direct3x3Layout, direct3x3.go).
//
// It knows nothing of ONNX: package native computes a Geometry from an
// operator's attributes (auto_pad, pads, strides, dilations) and checks
// it, then calls these kernels, which trust it. It runs the GEMM of
// package gemm and the axpy of package vec. Its own assembly, the
// depthwise kernels in AVX-512 and AVX2/FMA and the direct 3×3 kernels
// in AVX-512, is generated with avo by the module under _asm (go generate
// reproduces depthwise_amd64.s, direct3x3_amd64.s and their stubs); the implementation is chosen once, at init, from the CPU's
// features (dispatch.go), and building with the purego tag leaves the
// portable Go kernel.
package conv
