// Package conv holds the native backend's convolution kernels: the window
// geometry they take (Geometry), im2col and its adjoint col2im (with 2-D
// forms that skip the N-D walker), the block packer that feeds the GEMM
// one tile of the im2col matrix at a time instead of storing it whole
// (PackIm2colPanels2D), and the thin direct convolution of depthwise and
// other one- or two-output groups (DirectThin, ThinProduct).
//
// It knows nothing of ONNX: package native computes a Geometry from an
// operator's attributes (auto_pad, pads, strides, dilations) and checks
// it, then calls these kernels, which trust it. It runs the GEMM of
// package gemm and the axpy of package vec, and has no assembly of its
// own.
package conv
