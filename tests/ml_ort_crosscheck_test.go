package tests

import (
	"math"
	"testing"

	"github.com/deep500/deep500-go/metrics"
	"github.com/deep500/deep500-go/onnx"
	onnxpb "github.com/deep500/deep500-go/onnx/pb"
	"google.golang.org/protobuf/proto"
)

// The ai.onnx.ml preprocessing, encoder and map operators of native
// (backend/native/ml_preprocess.go, ml_encoders.go, ml_maps.go) give what
// ONNX Runtime gives on the same one-node models, maps and sequences of
// maps included, under the cross-backend comparison rule.

func mlxTensorType(elem onnx.DataType) *onnxpb.TypeProto {
	return &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(elem))}}}
}

func mlxMapType(key, value onnx.DataType) *onnxpb.TypeProto {
	return &onnxpb.TypeProto{Value: &onnxpb.TypeProto_MapType{MapType: &onnxpb.TypeProto_Map{KeyType: proto.Int32(int32(key)), ValueType: mlxTensorType(value)}}}
}

func mlxSeqType(elem *onnxpb.TypeProto) *onnxpb.TypeProto {
	return &onnxpb.TypeProto{Value: &onnxpb.TypeProto_SequenceType{SequenceType: &onnxpb.TypeProto_Sequence{ElemType: elem}}}
}

func mlxInts(name string, v ...int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: v}
}

func mlxInt(name string, v int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(v)}
}

func mlxFloats(name string, v ...float32) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_FLOATS.Enum(), Floats: v}
}

func mlxFloat(name string, v float32) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_FLOAT.Enum(), F: proto.Float32(v)}
}

func mlxStrings(name string, v ...string) *onnxpb.AttributeProto {
	a := &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_STRINGS.Enum()}
	for _, s := range v {
		a.Strings = append(a.Strings, []byte(s))
	}
	return a
}

func mlxString(name, v string) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_STRING.Enum(), S: []byte(v)}
}

func mlxTensorAttr(t *testing.T, name string, v *onnx.Tensor) *onnxpb.AttributeProto {
	t.Helper()
	tp, err := onnx.TensorToProto(name, v)
	if err != nil {
		t.Fatal(err)
	}
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_TENSOR.Enum(), T: tp}
}

// mlxModel is a model of one ai.onnx.ml node at the ml opset given, with
// inputs X0, X1, ... of the types given and one output Y of type out.
func mlxModel(t *testing.T, op string, opset int64, attrs []*onnxpb.AttributeProto, out *onnxpb.TypeProto, in ...*onnxpb.TypeProto) *onnx.Model {
	t.Helper()
	node := &onnxpb.NodeProto{OpType: proto.String(op), Domain: proto.String("ai.onnx.ml"), Output: []string{"Y"}, Attribute: attrs}
	g := &onnxpb.GraphProto{Name: proto.String(op), Node: []*onnxpb.NodeProto{node},
		Output: []*onnxpb.ValueInfoProto{{Name: proto.String("Y"), Type: out}}}
	for i, ty := range in {
		name := "X" + string(rune('0'+i))
		node.Input = append(node.Input, name)
		g.Input = append(g.Input, &onnxpb.ValueInfoProto{Name: proto.String(name), Type: ty})
	}
	p := &onnxpb.ModelProto{IrVersion: proto.Int64(8), Graph: g, OpsetImport: []*onnxpb.OperatorSetIdProto{
		{Domain: proto.String(""), Version: proto.Int64(17)}, {Domain: proto.String("ai.onnx.ml"), Version: proto.Int64(opset)}}}
	data, err := proto.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	m, err := onnx.Decode(data, "")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mlxScalars[T onnx.Element](vals ...T) *onnx.Sequence {
	s := &onnx.Sequence{}
	for _, v := range vals {
		s.Values = append(s.Values, onnx.Scalar(v))
	}
	return s
}

func TestMLOperatorsAgreeWithONNXRuntime(t *testing.T) {
	f32, f64, i64, str := onnx.Float, onnx.Double, onnx.Int64, onnx.String
	probs := onnx.FromSlice([]float32{0.1, 0.2, 0.7, 0.6, 0.3, 0.1, 0, 1, 0}, 3, 3)
	rows := onnx.FromSlice([]float32{3, -4, 1, 0, 0, 0, -1, -2, -4, 0.5, 2, 8}, 4, 3)
	nan := float32(math.NaN())
	cases := []struct {
		name  string
		op    string
		opset int64
		attrs []*onnxpb.AttributeProto
		out   *onnxpb.TypeProto
		in    []*onnxpb.TypeProto
		feeds []onnx.Value
	}{
		{"ZipMap int64 labels", "ZipMap", 1, []*onnxpb.AttributeProto{mlxInts("classlabels_int64s", 7, 3, 5)},
			mlxSeqType(mlxMapType(i64, f32)), []*onnxpb.TypeProto{mlxTensorType(f32)}, []onnx.Value{probs}},
		{"ZipMap string labels", "ZipMap", 1, []*onnxpb.AttributeProto{mlxStrings("classlabels_strings", "cat", "dog", "eel")},
			mlxSeqType(mlxMapType(str, f32)), []*onnxpb.TypeProto{mlxTensorType(f32)}, []onnx.Value{probs}},
		{"DictVectorizer string->float", "DictVectorizer", 1, []*onnxpb.AttributeProto{mlxStrings("string_vocabulary", "a", "c", "b", "z")},
			mlxTensorType(f32), []*onnxpb.TypeProto{mlxMapType(str, f32)},
			[]onnx.Value{&onnx.Map{Keys: onnx.FromSlice([]string{"c", "a", "q"}, 3), Values: mlxScalars[float32](8, 4, 1)}}},
		{"DictVectorizer string->int64", "DictVectorizer", 1, []*onnxpb.AttributeProto{mlxStrings("string_vocabulary", "a", "c", "b")},
			mlxTensorType(i64), []*onnxpb.TypeProto{mlxMapType(str, i64)},
			[]onnx.Value{&onnx.Map{Keys: onnx.FromSlice([]string{"b"}, 1), Values: mlxScalars[int64](-3)}}},
		{"DictVectorizer int64->double", "DictVectorizer", 1, []*onnxpb.AttributeProto{mlxInts("int64_vocabulary", 3, 1, 2)},
			mlxTensorType(f64), []*onnxpb.TypeProto{mlxMapType(i64, f64)},
			[]onnx.Value{&onnx.Map{Keys: onnx.FromSlice([]int64{1, 3}, 2), Values: mlxScalars(0.5, 2.5)}}},
		{"DictVectorizer int64->string", "DictVectorizer", 1, []*onnxpb.AttributeProto{mlxInts("int64_vocabulary", 3, 1, 2)},
			mlxTensorType(str), []*onnxpb.TypeProto{mlxMapType(i64, str)},
			[]onnx.Value{&onnx.Map{Keys: onnx.FromSlice([]int64{2, 3}, 2), Values: mlxScalars("two", "three")}}},
		{"CastMap float TO_FLOAT DENSE", "CastMap", 1, nil,
			mlxTensorType(f32), []*onnxpb.TypeProto{mlxMapType(i64, f32)},
			[]onnx.Value{&onnx.Map{Keys: onnx.FromSlice([]int64{3, 1, 0}, 3), Values: mlxScalars[float32](1.5, 2.25, -1)}}},
		{"CastMap float TO_INT64 SPARSE", "CastMap", 1, []*onnxpb.AttributeProto{mlxString("cast_to", "TO_INT64"), mlxString("map_form", "SPARSE"), mlxInt("max_map", 5)},
			mlxTensorType(i64), []*onnxpb.TypeProto{mlxMapType(i64, f32)},
			[]onnx.Value{&onnx.Map{Keys: onnx.FromSlice([]int64{3, 1, 0}, 3), Values: mlxScalars[float32](1.5, -2.75, 9)}}},
		{"CastMap float TO_STRING", "CastMap", 1, []*onnxpb.AttributeProto{mlxString("cast_to", "TO_STRING")},
			mlxTensorType(str), []*onnxpb.TypeProto{mlxMapType(i64, f32)},
			[]onnx.Value{&onnx.Map{Keys: onnx.FromSlice([]int64{3, 1}, 2), Values: mlxScalars[float32](1.5, -0.125)}}},
		{"CastMap string TO_FLOAT SPARSE", "CastMap", 1, []*onnxpb.AttributeProto{mlxString("map_form", "SPARSE"), mlxInt("max_map", 4)},
			mlxTensorType(f32), []*onnxpb.TypeProto{mlxMapType(i64, str)},
			[]onnx.Value{&onnx.Map{Keys: onnx.FromSlice([]int64{2, 0}, 2), Values: mlxScalars("7.5", " -3e2")}}},
		{"CastMap string TO_STRING SPARSE", "CastMap", 1, []*onnxpb.AttributeProto{mlxString("cast_to", "TO_STRING"), mlxString("map_form", "SPARSE"), mlxInt("max_map", 3)},
			mlxTensorType(str), []*onnxpb.TypeProto{mlxMapType(i64, str)},
			[]onnx.Value{&onnx.Map{Keys: onnx.FromSlice([]int64{2}, 1), Values: mlxScalars("x")}}},
		{"Normalizer MAX", "Normalizer", 1, []*onnxpb.AttributeProto{mlxString("norm", "MAX")},
			mlxTensorType(f32), []*onnxpb.TypeProto{mlxTensorType(f32)}, []onnx.Value{rows}},
		{"Normalizer L1", "Normalizer", 1, []*onnxpb.AttributeProto{mlxString("norm", "L1")},
			mlxTensorType(f32), []*onnxpb.TypeProto{mlxTensorType(f32)}, []onnx.Value{rows}},
		{"Normalizer L2 double", "Normalizer", 1, []*onnxpb.AttributeProto{mlxString("norm", "L2")},
			mlxTensorType(f32), []*onnxpb.TypeProto{mlxTensorType(f64)}, []onnx.Value{onnx.FromSlice([]float64{1, -2, 2, 0, 0, 0}, 2, 3)}},
		{"Scaler", "Scaler", 1, []*onnxpb.AttributeProto{mlxFloats("offset", 1, 0.5, -2), mlxFloats("scale", 2, -1, 0.25)},
			mlxTensorType(f32), []*onnxpb.TypeProto{mlxTensorType(f32)}, []onnx.Value{rows}},
		{"Scaler int64", "Scaler", 1, []*onnxpb.AttributeProto{mlxFloats("offset", 1), mlxFloats("scale", 0.5)},
			mlxTensorType(f32), []*onnxpb.TypeProto{mlxTensorType(i64)}, []onnx.Value{onnx.FromSlice([]int64{1, 2, 3, 4}, 2, 2)}},
		{"Imputer NaN", "Imputer", 1, []*onnxpb.AttributeProto{mlxFloats("imputed_value_floats", 10, 20, 30), mlxFloat("replaced_value_float", nan)},
			mlxTensorType(f32), []*onnxpb.TypeProto{mlxTensorType(f32)}, []onnx.Value{onnx.FromSlice([]float32{nan, 1, 2, 3, nan, nan}, 2, 3)}},
		{"Imputer int64", "Imputer", 1, []*onnxpb.AttributeProto{mlxInts("imputed_value_int64s", 9), mlxInt("replaced_value_int64", -1)},
			mlxTensorType(i64), []*onnxpb.TypeProto{mlxTensorType(i64)}, []onnx.Value{onnx.FromSlice([]int64{-1, 5, 7, -1}, 2, 2)}},
		{"Binarizer", "Binarizer", 1, []*onnxpb.AttributeProto{mlxFloat("threshold", 0.5)},
			mlxTensorType(f32), []*onnxpb.TypeProto{mlxTensorType(f32)}, []onnx.Value{rows}},
		{"ArrayFeatureExtractor", "ArrayFeatureExtractor", 1, nil,
			mlxTensorType(f32), []*onnxpb.TypeProto{mlxTensorType(f32), mlxTensorType(i64)}, []onnx.Value{rows, onnx.FromSlice([]int64{2, 0}, 2)}},
		{"ArrayFeatureExtractor 1-D strings", "ArrayFeatureExtractor", 1, nil,
			mlxTensorType(str), []*onnxpb.TypeProto{mlxTensorType(str), mlxTensorType(i64)},
			[]onnx.Value{onnx.FromSlice([]string{"a", "b", "c"}, 3), onnx.FromSlice([]int64{1, 1, 2}, 3)}},
		{"FeatureVectorizer", "FeatureVectorizer", 1, []*onnxpb.AttributeProto{mlxInts("inputdimensions", 4, 1)},
			mlxTensorType(f32), []*onnxpb.TypeProto{mlxTensorType(f32), mlxTensorType(f32)},
			[]onnx.Value{rows, onnx.FromSlice([]float32{1, 2, 3, 4, 5, 6, 7, 8}, 4, 2)}},
		{"OneHotEncoder", "OneHotEncoder", 1, []*onnxpb.AttributeProto{mlxInts("cats_int64s", 1, 2, 3)},
			mlxTensorType(f32), []*onnxpb.TypeProto{mlxTensorType(i64)}, []onnx.Value{onnx.FromSlice([]int64{1, 3, 2, 5}, 2, 2)}},
		{"OneHotEncoder strings", "OneHotEncoder", 1, []*onnxpb.AttributeProto{mlxStrings("cats_strings", "a", "b")},
			mlxTensorType(f32), []*onnxpb.TypeProto{mlxTensorType(str)}, []onnx.Value{onnx.FromSlice([]string{"b", "x", "a"}, 3)}},
		{"LabelEncoder 1", "LabelEncoder", 1, []*onnxpb.AttributeProto{mlxStrings("classes_strings", "a", "b", "c")},
			mlxTensorType(i64), []*onnxpb.TypeProto{mlxTensorType(str)}, []onnx.Value{onnx.FromSlice([]string{"b", "z", "c"}, 3)}},
		{"LabelEncoder 2", "LabelEncoder", 2, []*onnxpb.AttributeProto{mlxStrings("keys_strings", "a", "b", "c"), mlxInts("values_int64s", 0, 1, 2), mlxInt("default_int64", 42)},
			mlxTensorType(i64), []*onnxpb.TypeProto{mlxTensorType(str)}, []onnx.Value{onnx.FromSlice([]string{"a", "b", "d", "c", "g"}, 5)}},
		{"LabelEncoder 4 float NaN keys", "LabelEncoder", 4, []*onnxpb.AttributeProto{mlxFloats("keys_floats", nan, 1.5), mlxStrings("values_strings", "nan", "x")},
			mlxTensorType(str), []*onnxpb.TypeProto{mlxTensorType(f32)},
			[]onnx.Value{onnx.FromSlice([]float32{math.Float32frombits(0x7fc00abc), 1.5, 2}, 3)}},
		{"LabelEncoder 4 tensors", "LabelEncoder", 4, []*onnxpb.AttributeProto{
			mlxTensorAttr(t, "keys_tensor", onnx.FromSlice([]string{"a", "b", "c"}, 3)),
			mlxTensorAttr(t, "values_tensor", onnx.FromSlice([]int16{0, 1, 2}, 3)),
			mlxTensorAttr(t, "default_tensor", onnx.FromSlice([]int16{42}, 1))},
			mlxTensorType(onnx.Int16), []*onnxpb.TypeProto{mlxTensorType(str)}, []onnx.Value{onnx.FromSlice([]string{"a", "b", "d", "c", "g"}, 5)}},
		{"CategoryMapper", "CategoryMapper", 1, []*onnxpb.AttributeProto{mlxStrings("cats_strings", "a", "b"), mlxInts("cats_int64s", 5, 6)},
			mlxTensorType(str), []*onnxpb.TypeProto{mlxTensorType(i64)}, []onnx.Value{onnx.FromSlice([]int64{6, 7, 5}, 3)}},
	}
	for _, c := range cases {
		m := mlxModel(t, c.op, c.opset, c.attrs, c.out, c.in...)
		feeds := map[string]onnx.Value{}
		for i, v := range c.feeds {
			feeds["X"+string(rune('0'+i))] = v
		}
		want, err := runOn("onnxruntime", m, feeds)
		if err != nil {
			t.Errorf("%s on onnxruntime: %v", c.name, err)
			continue
		}
		got, err := runOn("native", m, feeds)
		if err != nil {
			t.Errorf("%s on native: %v", c.name, err)
			continue
		}
		if d := metrics.Compare(got["Y"], want["Y"], metrics.CrossBackendTolerance.ScaledTo(want["Y"])); !d.Equal() {
			t.Errorf("%s: native differs from onnxruntime: %s", c.name, d.Mismatch)
		}
	}
}
