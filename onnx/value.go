package onnx

import "fmt"

// Value is anything a graph's edge can carry: *Tensor, *SparseTensor,
// *Sequence, *Map or *Optional.
type Value interface{ isValue() }

// SparseTensor is a tensor in coordinate form: Values[i] sits at the
// coordinates Indices names. Indices is int64, either [NNZ, rank]
// (coordinates) or [NNZ] (linear indices), as in the ONNX format.
type SparseTensor struct {
	Shape   []int
	Values  *Tensor
	Indices *Tensor
}

func (*SparseTensor) isValue() {}

// MaxDenseElements bounds the dense size Dense will allocate, so a hostile
// file cannot make it ask for terabytes (2^31 elements: 8 GiB of float32).
const MaxDenseElements = 1 << 31

// Dense expands the sparse tensor into a dense one of its shape.
func (s *SparseTensor) Dense() (*Tensor, error) {
	if s.Values == nil {
		return nil, fmt.Errorf("sparse tensor without values")
	}
	total, err := ShapeElements(s.Shape)
	if err != nil {
		return nil, fmt.Errorf("sparse tensor: %w", err)
	}
	if total > MaxDenseElements {
		return nil, fmt.Errorf("sparse tensor of shape %v is too large to make dense (%d elements, limit %d)", s.Shape, total, MaxDenseElements)
	}
	out := NewTensor(s.Values.Type, s.Shape...)
	nnz := s.Values.Len()
	idx := []int64(nil)
	if s.Indices != nil {
		idx = s.Indices.Int64s()
	}
	linear := make([]int, nnz)
	switch {
	case nnz == 0:
	case len(idx) == nnz:
		for i, v := range idx {
			linear[i] = int(v)
		}
	case len(s.Shape) > 0 && len(idx) == nnz*len(s.Shape):
		for i := range nnz {
			off := 0
			for d, dim := range s.Shape {
				c := int(idx[i*len(s.Shape)+d])
				if c < 0 || c >= dim {
					return nil, fmt.Errorf("sparse index %d out of range for dimension %d of %v", c, d, s.Shape)
				}
				off = off*dim + c
			}
			linear[i] = off
		}
	default:
		return nil, fmt.Errorf("sparse tensor: %d indices do not fit %d values of shape %v", len(idx), nnz, s.Shape)
	}
	for i, off := range linear {
		if off < 0 || off >= total {
			return nil, fmt.Errorf("sparse index %d out of range for shape %v", off, s.Shape)
		}
		if err := CopyElement(out, off, s.Values, i); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// CopyElement copies element j of src to element i of dst, two tensors of
// the same element type (or sharing a backing slice type).
func CopyElement(dst *Tensor, i int, src *Tensor, j int) error {
	if sliceType(dst.Type) != sliceType(src.Type) {
		return fmt.Errorf("element type %v into %v", src.Type, dst.Type)
	}
	CopySlice(sliceFrom(dst.Data, i), sliceFrom(src.Data, j))
	return nil
}

// sliceFrom returns data[i:i+1] for a backing slice of any element type.
func sliceFrom(data any, i int) any {
	switch d := data.(type) {
	case []float32:
		return d[i : i+1]
	case []float64:
		return d[i : i+1]
	case []int8:
		return d[i : i+1]
	case []int16:
		return d[i : i+1]
	case []int32:
		return d[i : i+1]
	case []int64:
		return d[i : i+1]
	case []uint8:
		return d[i : i+1]
	case []uint16:
		return d[i : i+1]
	case []uint32:
		return d[i : i+1]
	case []uint64:
		return d[i : i+1]
	case []bool:
		return d[i : i+1]
	case []string:
		return d[i : i+1]
	case []complex64:
		return d[i : i+1]
	case []complex128:
		return d[i : i+1]
	case []F16:
		return d[i : i+1]
	case []BF16:
		return d[i : i+1]
	case []F8E4M3FN:
		return d[i : i+1]
	case []F8E4M3FNUZ:
		return d[i : i+1]
	case []F8E5M2:
		return d[i : i+1]
	case []F8E5M2FNUZ:
		return d[i : i+1]
	case []F4E2M1:
		return d[i : i+1]
	case []F8E8M0:
		return d[i : i+1]
	}
	return nil
}

// Sequence is an ordered list of values of one type (ONNX seq(...)).
type Sequence struct {
	Elem   *TypeInfo // element type; nil when unknown (an empty sequence from test data)
	Values []Value
}

func (*Sequence) isValue() {}

// Map is an ONNX map: 1-D keys (int64 or string) and one value per key.
type Map struct {
	Keys   *Tensor
	Values *Sequence
}

func (*Map) isValue() {}

// Optional holds a value or nothing (Value == nil).
type Optional struct {
	Elem  *TypeInfo // type of the value it may hold
	Value Value
}

func (*Optional) isValue() {}

// TypeKind tells which kind of value a TypeInfo describes.
type TypeKind int

// The kinds of ONNX types.
const (
	UnknownKind TypeKind = iota
	TensorKind
	SparseTensorKind
	SequenceKind
	MapKind
	OptionalKind
)

// TypeInfo is an ONNX type: a tensor type with an optional shape, or a
// sequence, map or optional of another type.
type TypeInfo struct {
	Kind     TypeKind
	Elem     DataType  // element type of a tensor or sparse tensor; key type of a map
	Shape    []Dim     // tensor shape; nil with HasShape false when unknown
	HasShape bool      // whether Shape is known (a scalar has HasShape and no dims)
	Inner    *TypeInfo // element of a sequence or optional; value type of a map
}

// Dim is one dimension of a declared shape: a size, a symbolic name, or
// neither (unknown).
type Dim struct {
	Size  int64 // -1 when not a fixed size
	Param string
}

// TensorTypeOf is the type of a tensor value: its element type and its
// fixed shape.
func TensorTypeOf(t *Tensor) *TypeInfo {
	ti := &TypeInfo{Kind: TensorKind, Elem: t.Type, HasShape: true, Shape: make([]Dim, len(t.Shape))}
	for i, d := range t.Shape {
		ti.Shape[i] = Dim{Size: int64(d)}
	}
	return ti
}

// String formats the type as ONNX's type strings do: "tensor(float)",
// "seq(tensor(int64))", "map(string, float)", "optional(...)".
func (t *TypeInfo) String() string {
	if t == nil {
		return "unknown"
	}
	switch t.Kind {
	case TensorKind:
		return "tensor(" + t.Elem.String() + ")"
	case SparseTensorKind:
		return "sparse_tensor(" + t.Elem.String() + ")"
	case SequenceKind:
		return "seq(" + t.Inner.String() + ")"
	case MapKind:
		return "map(" + t.Elem.String() + ", " + t.Inner.String() + ")"
	case OptionalKind:
		return "optional(" + t.Inner.String() + ")"
	}
	return "unknown"
}

// ValueInfo names a graph input, output or intermediate value and its type.
type ValueInfo struct {
	Name string
	Type *TypeInfo
}

// DescribeValue returns a short description of a value for messages.
func DescribeValue(v Value) string {
	switch x := v.(type) {
	case *Tensor:
		return fmt.Sprintf("tensor(%v)%v", x.Type, x.Shape)
	case *SparseTensor:
		if x.Values != nil {
			return fmt.Sprintf("sparse_tensor(%v)%v", x.Values.Type, x.Shape)
		}
		return "sparse_tensor"
	case *Sequence:
		return fmt.Sprintf("seq of %d", len(x.Values))
	case *Map:
		return "map"
	case *Optional:
		if x.Value == nil {
			return "optional(none)"
		}
		return "optional(" + DescribeValue(x.Value) + ")"
	case nil:
		return "none"
	}
	return fmt.Sprintf("%T", v)
}
