package ops

import "testing"

func TestTypeRank(t *testing.T) {
	prefer := []string{"float", "int64"}
	for in, want := range map[string]int{
		"tensor(float)":           0,
		"tensor(int64)":           1,
		"tensor(uint8)":           3, // unlisted: after every listed type
		"seq(tensor(int64))":      101,
		"optional(tensor(float))": 200,
		"map(string, float)":      203,
		"sparse_tensor(int64)":    201,
	} {
		if got := TypeRank(in, prefer); got != want {
			t.Errorf("TypeRank(%q) = %d, want %d", in, got, want)
		}
	}
}
