// Package fft is the native backend's discrete Fourier transform of
// complex128 sequences of any length: radix-2 Cooley-Tukey for powers of
// two, Bluestein's chirp-z for the others, both O(n log n), with plans
// built once per length and cached.
//
// It knows nothing of ONNX: the DFT and STFT operators of package native
// frame, window and scale the signal and call it.
package fft
