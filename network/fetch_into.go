package network

import "github.com/deep500/deep500-go/onnx"

// IntoFetcher is implemented by a Network that can copy a tensor's current
// value into a buffer the caller owns. Reference optimizers fetch every
// parameter and gradient at every step; with it they reuse one buffer per
// tensor instead of allocating a copy each time.
type IntoFetcher interface {
	// FetchInto copies the named tensor (as Fetch would return it) into
	// dst, which must have its element type and shape.
	FetchInto(name string, dst *onnx.Tensor) error
}

// FetchTensorInto returns the current value of the named tensor. When dst
// is not nil and n implements IntoFetcher, the value is copied into dst
// and dst is returned; otherwise it is fetched into a new tensor. Callers
// pass back the tensor from their previous call, so that after the first
// step nothing is allocated.
func FetchTensorInto(n Network, name string, dst *onnx.Tensor) (*onnx.Tensor, error) {
	if f, ok := n.(IntoFetcher); ok && dst != nil {
		if err := f.FetchInto(name, dst); err != nil {
			return nil, err
		}
		return dst, nil
	}
	return FetchTensor(n, name)
}
