package onnxruntime

import (
	"fmt"
	"unsafe"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	ort "github.com/yalue/onnxruntime_go"
)

// ortValues collects the ONNX Runtime values made for one run, so that all
// are destroyed together, whatever fails half-way.
type ortValues []ort.Value

func (vs *ortValues) add(v ort.Value) ort.Value {
	*vs = append(*vs, v)
	return v
}

func (vs *ortValues) destroy() {
	for _, v := range *vs {
		if v != nil {
			destroyValue(v)
		}
	}
	*vs = nil
}

// destroyValue destroys one value. When onnxruntime_go fails to convert an
// output it leaves a typed nil pointer in the outputs slice, whose Destroy
// panics; there is nothing to free then.
func destroyValue(v ort.Value) {
	defer func() { _ = recover() }()
	v.Destroy()
}

// toORT converts a value to ONNX Runtime's. Numeric tensors share their
// backing slice with ONNX Runtime (no copy); the caller must keep v unchanged
// until the values in keep are destroyed.
func toORT(v onnx.Value, keep *ortValues) (ort.Value, error) {
	switch v := v.(type) {
	case *onnx.Tensor:
		return tensorToORT(v, keep)
	case *onnx.Sequence:
		if len(v.Values) == 0 {
			return nil, network.Unsupportedf("onnxruntime_go cannot make an empty sequence")
		}
		elems := make([]ort.Value, len(v.Values))
		for i, e := range v.Values {
			ev, err := toORT(e, keep)
			if err != nil {
				return nil, fmt.Errorf("sequence element %d: %w", i, err)
			}
			elems[i] = ev
		}
		s, err := ort.NewSequence(elems)
		if err != nil {
			return nil, err
		}
		return keep.add(s), nil
	case *onnx.Map:
		if v.Keys == nil || v.Values == nil {
			return nil, fmt.Errorf("map without keys or values")
		}
		vals, err := stackScalars(v.Values)
		if err != nil {
			return nil, fmt.Errorf("map values: %w", err)
		}
		k, err := tensorToORT(v.Keys, keep)
		if err != nil {
			return nil, fmt.Errorf("map keys: %w", err)
		}
		vv, err := tensorToORT(vals, keep)
		if err != nil {
			return nil, fmt.Errorf("map values: %w", err)
		}
		m, err := ort.NewMap(k, vv)
		if err != nil {
			return nil, err
		}
		return keep.add(m), nil
	case *onnx.Optional:
		return nil, network.Unsupportedf("onnxruntime_go cannot make optional values")
	case *onnx.SparseTensor:
		return nil, network.Unsupportedf("onnxruntime_go cannot make sparse tensors")
	case nil:
		return nil, fmt.Errorf("nil value")
	}
	return nil, fmt.Errorf("value of Go type %T", v)
}

// stackScalars joins a map's values (one scalar tensor per key) into the
// 1-D tensor ONNX Runtime keeps them in.
func stackScalars(s *onnx.Sequence) (*onnx.Tensor, error) {
	if len(s.Values) == 0 {
		return nil, network.Unsupportedf("onnxruntime_go cannot make an empty map")
	}
	first, ok := s.Values[0].(*onnx.Tensor)
	if !ok {
		return nil, network.Unsupportedf("map values that are not tensors")
	}
	out := onnx.NewTensor(first.Type, len(s.Values))
	if !mapValueType(first.Type) {
		return nil, network.Unsupportedf("map values of type %v (ONNX Runtime's maps hold float, double, int64 or string)", first.Type)
	}
	for i, e := range s.Values {
		t, ok := e.(*onnx.Tensor)
		if !ok || t.Type != first.Type || t.Len() != 1 {
			return nil, fmt.Errorf("map value %d is not a scalar %v", i, first.Type)
		}
		if err := onnx.CopyElement(out, i, t, 0); err != nil {
			return nil, fmt.Errorf("map value %d: %w", i, err)
		}
	}
	return out, nil
}

// mapValueType tells whether onnxruntime_go's maps hold values of type t.
func mapValueType(t onnx.DataType) bool {
	switch t {
	case onnx.Float, onnx.Double, onnx.Int64, onnx.Int32, onnx.String:
		return true
	}
	return false
}

func ortShape(shape []int) ort.Shape {
	s := make(ort.Shape, len(shape))
	for i, d := range shape {
		s[i] = int64(d)
	}
	return s
}

// tensorToORT converts a dense tensor. A rank-0 tensor of a type without
// onnxruntime_go's Scalar (strings, 16-bit and 8-bit floats) is refused; the
// network reshapes declared scalar inputs to [1] so this only happens for
// inputs of undeclared rank.
func tensorToORT(t *onnx.Tensor, keep *ortValues) (ort.Value, error) {
	if err := t.Check(); err != nil {
		return nil, err
	}
	if len(t.Shape) == 0 {
		return scalarToORT(t, keep)
	}
	s := ortShape(t.Shape)
	var v ort.Value
	var err error
	switch d := t.Data.(type) {
	case []float32:
		v, err = ort.NewTensor(s, d)
	case []float64:
		v, err = ort.NewTensor(s, d)
	case []int8:
		if t.Type != onnx.Int8 {
			return nil, network.Unsupportedf("onnxruntime_go has no %v tensors", t.Type)
		}
		v, err = ort.NewTensor(s, d)
	case []int16:
		v, err = ort.NewTensor(s, d)
	case []int32:
		v, err = ort.NewTensor(s, d)
	case []int64:
		v, err = ort.NewTensor(s, d)
	case []uint8:
		if t.Type != onnx.Uint8 {
			return nil, network.Unsupportedf("onnxruntime_go has no %v tensors", t.Type)
		}
		v, err = ort.NewTensor(s, d)
	case []uint16:
		v, err = ort.NewTensor(s, d)
	case []uint32:
		v, err = ort.NewTensor(s, d)
	case []uint64:
		v, err = ort.NewTensor(s, d)
	case []bool:
		v, err = ort.NewTensor(s, d)
	case []string:
		st, e := ort.NewStringTensor(s)
		if e != nil {
			return nil, e
		}
		keep.add(st)
		if e := st.SetContents(d); e != nil {
			return nil, e
		}
		return st, nil
	case []onnx.F16:
		v, err = customTensor(s, bytesOf(d), ort.TensorElementDataTypeFloat16)
	case []onnx.BF16:
		v, err = customTensor(s, bytesOf(d), ort.TensorElementDataTypeBFloat16)
	case []onnx.F8E4M3FN:
		v, err = customTensor(s, bytesOf(d), ort.TensorElementDataTypeFloat8E4M3FN)
	case []onnx.F8E4M3FNUZ:
		v, err = customTensor(s, bytesOf(d), ort.TensorElementDataTypeFloat8E4M3FNUZ)
	case []onnx.F8E5M2:
		v, err = customTensor(s, bytesOf(d), ort.TensorElementDataTypeFloat8E5M2)
	case []onnx.F8E5M2FNUZ:
		v, err = customTensor(s, bytesOf(d), ort.TensorElementDataTypeFloat8E5M2FNUZ)
	default:
		return nil, network.Unsupportedf("onnxruntime_go has no %v tensors", t.Type)
	}
	if err != nil {
		return nil, err
	}
	return keep.add(v), nil
}

func scalarToORT(t *onnx.Tensor, keep *ortValues) (ort.Value, error) {
	var v ort.Value
	var err error
	switch d := t.Data.(type) {
	case []float32:
		v, err = ort.NewScalar(d[0])
	case []float64:
		v, err = ort.NewScalar(d[0])
	case []int8:
		v, err = ort.NewScalar(d[0])
	case []int16:
		v, err = ort.NewScalar(d[0])
	case []int32:
		v, err = ort.NewScalar(d[0])
	case []int64:
		v, err = ort.NewScalar(d[0])
	case []uint8:
		v, err = ort.NewScalar(d[0])
	case []uint16:
		v, err = ort.NewScalar(d[0])
	case []uint32:
		v, err = ort.NewScalar(d[0])
	case []uint64:
		v, err = ort.NewScalar(d[0])
	case []bool:
		v, err = ort.NewScalar(d[0])
	default:
		return nil, network.Unsupportedf("onnxruntime_go cannot make a rank-0 %v tensor for an input whose rank the graph does not declare", t.Type)
	}
	if err != nil {
		return nil, err
	}
	return keep.add(v), nil
}

// customTensor makes a tensor of raw element bytes. onnxruntime_go wants at
// least one byte even for an empty tensor; ONNX Runtime reads none of it.
func customTensor(s ort.Shape, b []byte, dt ort.TensorElementDataType) (ort.Value, error) {
	if len(b) == 0 {
		b = make([]byte, 1)
	}
	return ort.NewCustomDataTensor(s, b, dt)
}

// bytesOf views a slice of 1- or 2-byte elements as its bytes (little
// endian, as ONNX Runtime on x86-64 and arm64 reads them).
func bytesOf[T ~uint8 | ~uint16](d []T) []byte {
	if len(d) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&d[0])), len(d)*int(unsafe.Sizeof(z)))
}

// fromORT converts an output of ONNX Runtime to a value. Tensor data made
// by onnxruntime_go lives in Go memory, so it is taken without a copy and
// stays valid after the ORT value is destroyed.
func fromORT(v ort.Value) (onnx.Value, error) {
	switch v := v.(type) {
	case *ort.Tensor[float32]:
		return goTensor(v.GetShape(), v.GetData()), nil
	case *ort.Tensor[float64]:
		return goTensor(v.GetShape(), v.GetData()), nil
	case *ort.Tensor[int8]:
		return goTensor(v.GetShape(), v.GetData()), nil
	case *ort.Tensor[int16]:
		return goTensor(v.GetShape(), v.GetData()), nil
	case *ort.Tensor[int32]:
		return goTensor(v.GetShape(), v.GetData()), nil
	case *ort.Tensor[int64]:
		return goTensor(v.GetShape(), v.GetData()), nil
	case *ort.Tensor[uint8]:
		return goTensor(v.GetShape(), v.GetData()), nil
	case *ort.Tensor[uint16]:
		return goTensor(v.GetShape(), v.GetData()), nil
	case *ort.Tensor[uint32]:
		return goTensor(v.GetShape(), v.GetData()), nil
	case *ort.Tensor[uint64]:
		return goTensor(v.GetShape(), v.GetData()), nil
	case *ort.Tensor[bool]:
		return goTensor(v.GetShape(), v.GetData()), nil
	case *ort.StringTensor:
		// onnxruntime_go's GetContents sizes its offsets by the shape's
		// FlattenedSize, which is 0 for a rank-0 shape, and then indexes
		// the first one (a panic): a scalar string cannot be read, and an
		// empty tensor is read here.
		shape := v.GetShape()
		if len(shape) == 0 {
			return nil, network.Unsupportedf("onnxruntime_go cannot read a rank-0 string tensor")
		}
		if shape.FlattenedSize() == 0 {
			return goTensor(shape, []string{}), nil
		}
		s, err := v.GetContents()
		if err != nil {
			return nil, err
		}
		return goTensor(v.GetShape(), s), nil
	case *ort.CustomDataTensor:
		return customFromORT(v)
	case *ort.Sequence:
		elems, err := v.GetValues()
		if err != nil {
			return nil, err
		}
		seq := &onnx.Sequence{Values: make([]onnx.Value, len(elems))}
		for i, e := range elems {
			if seq.Values[i], err = fromORT(e); err != nil {
				return nil, fmt.Errorf("sequence element %d: %w", i, err)
			}
		}
		if len(seq.Values) > 0 {
			if t, ok := seq.Values[0].(*onnx.Tensor); ok {
				seq.Elem = &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: t.Type}
			}
		}
		return seq, nil
	case *ort.Map:
		kv, vv, err := v.GetKeysAndValues()
		if err != nil {
			return nil, err
		}
		k, err := fromORT(kv)
		if err != nil {
			return nil, fmt.Errorf("map keys: %w", err)
		}
		vals, err := fromORT(vv)
		if err != nil {
			return nil, fmt.Errorf("map values: %w", err)
		}
		kt, ok1 := k.(*onnx.Tensor)
		vt, ok2 := vals.(*onnx.Tensor)
		if !ok1 || !ok2 || (vt.Len() > 0 && !mapValueType(vt.Type)) {
			return nil, network.Unsupportedf("a map whose keys or values are not tensors")
		}
		return &onnx.Map{Keys: kt, Values: splitScalars(vt)}, nil
	}
	return nil, network.Unsupportedf("onnxruntime_go value of Go type %T", v)
}

func goTensor[T onnx.Element](shape ort.Shape, data []T) *onnx.Tensor {
	s := make([]int, len(shape))
	for i, d := range shape {
		s[i] = int(d)
	}
	return onnx.FromSlice(data, s...)
}

// splitScalars turns a 1-D tensor into a sequence of its elements as
// scalars, the form onnx.Map keeps values in.
func splitScalars(t *onnx.Tensor) *onnx.Sequence {
	n := t.Len()
	seq := &onnx.Sequence{Elem: &onnx.TypeInfo{Kind: onnx.TensorKind, Elem: t.Type, HasShape: true}, Values: make([]onnx.Value, n)}
	for i := range n {
		e := onnx.NewTensor(t.Type)
		_ = onnx.CopyElement(e, 0, t, i) // e has t's type
		seq.Values[i] = e
	}
	return seq
}

// customFromORT reads the 8-bit float tensors onnxruntime_go returns as raw
// bytes. Its copy takes one byte per element, which is right only for 8-bit
// types: the network casts 16-bit float outputs to float32 before they get
// here, and any other type is refused rather than read short.
func customFromORT(v *ort.CustomDataTensor) (onnx.Value, error) {
	b := append([]byte(nil), v.GetData()...)
	shape := v.GetShape()
	n := int(shape.FlattenedSize())
	if len(shape) == 0 {
		n = 1
	}
	dt := ort.TensorElementDataType(v.DataType())
	if len(b) < n {
		return nil, fmt.Errorf("onnxruntime_go returned %d bytes for %d elements of %v", len(b), n, dt)
	}
	b = b[:n]
	switch dt {
	case ort.TensorElementDataTypeFloat8E4M3FN:
		return goTensor(shape, castBytes[onnx.F8E4M3FN](b)), nil
	case ort.TensorElementDataTypeFloat8E4M3FNUZ:
		return goTensor(shape, castBytes[onnx.F8E4M3FNUZ](b)), nil
	case ort.TensorElementDataTypeFloat8E5M2:
		return goTensor(shape, castBytes[onnx.F8E5M2](b)), nil
	case ort.TensorElementDataTypeFloat8E5M2FNUZ:
		return goTensor(shape, castBytes[onnx.F8E5M2FNUZ](b)), nil
	}
	return nil, network.Unsupportedf("onnxruntime_go cannot read %v outputs (it copies one byte per element)", dt)
}

func castBytes[T ~uint8](b []byte) []T {
	out := make([]T, len(b))
	for i, x := range b {
		out[i] = T(x)
	}
	return out
}
