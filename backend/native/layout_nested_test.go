package native

import (
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

// permutations lists every permutation of 0..n-1.
func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var all [][]int
	for _, p := range permutations(n - 1) {
		for at := 0; at <= len(p); at++ {
			q := append(append(append([]int{}, p[:at]...), n-1), p[at:]...)
			all = append(all, q)
		}
	}
	return all
}

// Every permutation of tensors of rank 1 to 5 matches the definition
// out[i] = x[i permuted back]: the nested loops (rank 4 and below after
// merging), the 2-D transpose of the two innermost axes with full blocks
// of eight and a remainder (sizes 9 and 17), and the general walk (rank
// 5 that does not merge).
func TestTransposeEveryPermutationMatchesDefinition(t *testing.T) {
	for _, shape := range [][]int{{5}, {9, 17}, {17, 9}, {3, 9, 17}, {2, 17, 3, 9}, {1, 16, 4, 8}, {2, 3, 1, 9, 5}, {2, 3, 4, 5, 6}} {
		x := onnx.NewTensor(onnx.Float, shape...)
		for i := range x.Float32s() {
			x.Float32s()[i] = float32(i)
		}
		inStrides := rowMajorStrides(shape)
		for _, p := range permutations(len(shape)) {
			out := make([]int, len(p))
			for i, a := range p {
				out[i] = shape[a]
			}
			y := onnx.NewTensor(onnx.Float, out...)
			if err := transposeInto(y, x, p); err != nil {
				t.Fatal(err)
			}
			outStrides := rowMajorStrides(out)
			for o, got := range y.Float32s() {
				src, rem := 0, o
				for d, a := range p {
					src += rem / outStrides[d] * inStrides[a]
					rem %= outStrides[d]
				}
				if got != float32(src) {
					t.Fatalf("shape %v perm %v: element %d = %v, want %v", shape, p, o, got, src)
				}
			}
		}
	}
}
