package onnx

import "testing"

func TestParseTypeString(t *testing.T) {
	for in, want := range map[string]*TypeInfo{
		"tensor(float)":                    {Kind: TensorKind, Elem: Float},
		" sparse_tensor(int64) ":           {Kind: SparseTensorKind, Elem: Int64},
		"seq(tensor(uint8))":               {Kind: SequenceKind, Inner: &TypeInfo{Kind: TensorKind, Elem: Uint8}},
		"optional(seq(tensor(bool)))":      {Kind: OptionalKind, Inner: &TypeInfo{Kind: SequenceKind, Inner: &TypeInfo{Kind: TensorKind, Elem: Bool}}},
		"map(string, float)":               {Kind: MapKind, Elem: String, Inner: &TypeInfo{Kind: TensorKind, Elem: Float}},
		"map(int64,tensor(double))":        {Kind: MapKind, Elem: Int64, Inner: &TypeInfo{Kind: TensorKind, Elem: Double}},
		"seq(map(int64, float))":           {Kind: SequenceKind, Inner: &TypeInfo{Kind: MapKind, Elem: Int64, Inner: &TypeInfo{Kind: TensorKind, Elem: Float}}},
		"optional(tensor(float8e4m3fnuz))": {Kind: OptionalKind, Inner: &TypeInfo{Kind: TensorKind, Elem: Float8E4M3FNUZ}},
	} {
		got, err := ParseTypeString(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if got.String() != want.String() || got.HasShape {
			t.Errorf("%q: got %v (shape known %v), want %v", in, got, got.HasShape, want)
		}
	}
	for _, in := range []string{"float", "tensor(nope)", "map(int64)", "list(tensor(float))", "seq(tensor(float)", "seq()"} {
		if got, err := ParseTypeString(in); err == nil {
			t.Errorf("%q: got %v, want an error", in, got)
		}
	}
}
