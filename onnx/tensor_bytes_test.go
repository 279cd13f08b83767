package onnx

import "testing"

// TensorBytes is what NewTensor's slice takes, and an error, not an
// overflow, for a shape past int64.
func TestTensorBytes(t *testing.T) {
	for _, tc := range []struct {
		dt    DataType
		shape []int
		want  int64
	}{
		{Float, []int{2, 3}, 24}, {Double, []int{5}, 40}, {Float16, []int{7}, 14}, {Bool, []int{3}, 3},
		{Int64, nil, 8}, {Complex128, []int{2}, 32}, {Float, []int{1000000, 1000000}, 4e12}, {Uint8, []int{0, 5}, 0},
	} {
		got, err := TensorBytes(tc.dt, tc.shape)
		if err != nil || got != tc.want {
			t.Errorf("TensorBytes(%v, %v) = %d, %v; want %d", tc.dt, tc.shape, got, err, tc.want)
		}
		if n := NumElements(tc.shape); n > 0 && n < 1<<20 {
			if made := NewTensor(tc.dt, tc.shape...); ElementBytes(tc.dt)*n != int(got) || made == nil {
				t.Errorf("%v: ElementBytes disagrees with NewTensor", tc.dt)
			}
		}
	}
	if _, err := TensorBytes(Double, []int{1 << 31, 1 << 31, 4}); err == nil {
		t.Error("no error for 2^64 doubles")
	}
	for dt := Float; dt <= Int2; dt++ {
		if ElementBytes(dt) == 0 {
			t.Errorf("%v has no element size", dt)
		}
	}
}
