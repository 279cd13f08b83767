package gorgonia

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// dtypeOf maps an ONNX element type to the Gorgonia dtype that holds it.
// Only the types Gorgonia's ops compute with are mapped.
func dtypeOf(t onnx.DataType) (tensor.Dtype, error) {
	switch t {
	case onnx.Float:
		return tensor.Float32, nil
	case onnx.Double:
		return tensor.Float64, nil
	case onnx.Int32:
		return tensor.Int32, nil
	case onnx.Int64:
		return tensor.Int64, nil
	case onnx.Bool:
		return tensor.Bool, nil
	}
	return tensor.Dtype{}, network.Unsupportedf("element type %v", t)
}

// onnxTypeOf is the inverse of dtypeOf.
func onnxTypeOf(dt tensor.Dtype) (onnx.DataType, error) {
	switch dt {
	case tensor.Float32:
		return onnx.Float, nil
	case tensor.Float64:
		return onnx.Double, nil
	case tensor.Int32:
		return onnx.Int32, nil
	case tensor.Int64:
		return onnx.Int64, nil
	case tensor.Bool:
		return onnx.Bool, nil
	}
	return onnx.Undefined, network.Unsupportedf("gorgonia dtype %v", dt)
}

// gshape is the shape a value has inside Gorgonia: ONNX's rank-0 tensors
// are held as vectors of one element, because Gorgonia's scalars are a
// different kind of value that most of its tensor ops reject.
func gshape(shape []int) tensor.Shape {
	if len(shape) == 0 {
		return tensor.Shape{1}
	}
	return tensor.Shape(append([]int(nil), shape...))
}

// denseOf wraps t's backing slice (shared, not copied) as a Gorgonia dense
// tensor of shape gshape(t.Shape). Callers that must not share copy first.
func denseOf(t *onnx.Tensor) (*tensor.Dense, error) {
	if _, err := dtypeOf(t.Type); err != nil {
		return nil, err
	}
	if onnx.NumElements(t.Shape) == 0 {
		return nil, network.Unsupportedf("empty tensors (shape %v)", t.Shape)
	}
	return tensor.New(tensor.WithShape(gshape(t.Shape)...), tensor.WithBacking(t.Data)), nil
}

// copyDenseOf is denseOf on a copy of t's data.
func copyDenseOf(t *onnx.Tensor) (*tensor.Dense, error) {
	c := &onnx.Tensor{Type: t.Type, Shape: t.Shape, Data: onnx.MakeSlice(t.Type, onnx.NumElements(t.Shape))}
	onnx.CopySlice(c.Data, t.Data)
	return denseOf(c)
}

// tensorOf copies a Gorgonia value into a new onnx.Tensor of the given
// ONNX shape (which has the value's number of elements).
func tensorOf(v G.Value, shape []int) (*onnx.Tensor, error) {
	if v == nil {
		return nil, fmt.Errorf("no value computed")
	}
	var data any
	var dt tensor.Dtype
	switch x := v.(type) {
	case *tensor.Dense:
		if x.RequiresIterator() {
			x = x.Materialize().(*tensor.Dense)
		}
		dt = x.Dtype()
		switch d := x.Data().(type) {
		case []float32:
			data = append([]float32(nil), d...)
		case []float64:
			data = append([]float64(nil), d...)
		case []int32:
			data = append([]int32(nil), d...)
		case []int64:
			data = append([]int64(nil), d...)
		case []bool:
			data = append([]bool(nil), d...)
		case float32:
			data = []float32{d}
		case float64:
			data = []float64{d}
		case int32:
			data = []int32{d}
		case int64:
			data = []int64{d}
		case bool:
			data = []bool{d}
		default:
			return nil, network.Unsupportedf("gorgonia data of type %T", d)
		}
	case *G.F32:
		dt, data = tensor.Float32, []float32{float32(*x)}
	case *G.F64:
		dt, data = tensor.Float64, []float64{float64(*x)}
	case *G.I32:
		dt, data = tensor.Int32, []int32{int32(*x)}
	case *G.I64:
		dt, data = tensor.Int64, []int64{int64(*x)}
	case *G.B:
		dt, data = tensor.Bool, []bool{bool(*x)}
	default:
		return nil, network.Unsupportedf("gorgonia value of type %T", v)
	}
	ot, err := onnxTypeOf(dt)
	if err != nil {
		return nil, err
	}
	t := &onnx.Tensor{Type: ot, Shape: append([]int{}, shape...), Data: data}
	if n := onnx.NumElements(shape); n != onnx.SliceLen(data) {
		return nil, fmt.Errorf("gorgonia computed %d elements where shape %v needs %d", onnx.SliceLen(data), shape, n)
	}
	return t, nil
}

// int64sOf reads an integer tensor (a shape, axes, starts) as int64s.
func int64sOf(t *onnx.Tensor) ([]int64, error) {
	switch d := t.Data.(type) {
	case []int64:
		return append([]int64(nil), d...), nil
	case []int32:
		out := make([]int64, len(d))
		for i, x := range d {
			out[i] = int64(x)
		}
		return out, nil
	}
	return nil, fmt.Errorf("expected an integer tensor, got %v", t.Type)
}

// floatOf reads a one-element floating-point tensor (Clip's bounds).
func floatOf(t *onnx.Tensor) (float64, error) {
	if onnx.NumElements(t.Shape) != 1 {
		return 0, fmt.Errorf("expected one element, got shape %v", t.Shape)
	}
	switch d := t.Data.(type) {
	case []float32:
		return float64(d[0]), nil
	case []float64:
		return d[0], nil
	}
	return 0, network.Unsupportedf("bound of type %v", t.Type)
}
