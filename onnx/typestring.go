package onnx

import (
	"fmt"
	"strings"
)

// ParseTypeString reads a type as ONNX's schemas spell it (the form
// TypeInfo.String writes): tensor(T), sparse_tensor(T), seq(X),
// optional(X), map(K, V) with V a type or a bare element type (as in
// "map(int64, float)"). The result has no shape.
func ParseTypeString(s string) (*TypeInfo, error) {
	s = strings.TrimSpace(s)
	open := strings.IndexByte(s, '(')
	if open < 0 || !strings.HasSuffix(s, ")") {
		return nil, fmt.Errorf("type %q is not of the form kind(...)", s)
	}
	kind, arg := s[:open], s[open+1:len(s)-1]
	switch kind {
	case "tensor", "sparse_tensor":
		dt, err := ParseDataType(arg)
		if err != nil {
			return nil, err
		}
		k := TensorKind
		if kind == "sparse_tensor" {
			k = SparseTensorKind
		}
		return &TypeInfo{Kind: k, Elem: dt}, nil
	case "seq", "optional":
		inner, err := ParseTypeString(arg)
		if err != nil {
			return nil, err
		}
		k := SequenceKind
		if kind == "optional" {
			k = OptionalKind
		}
		return &TypeInfo{Kind: k, Inner: inner}, nil
	case "map":
		key, val, ok := strings.Cut(arg, ",")
		if !ok {
			return nil, fmt.Errorf("type %q has no value type", s)
		}
		kt, err := ParseDataType(strings.TrimSpace(key))
		if err != nil {
			return nil, err
		}
		val = strings.TrimSpace(val)
		if !strings.Contains(val, "(") {
			val = "tensor(" + val + ")"
		}
		inner, err := ParseTypeString(val)
		if err != nil {
			return nil, err
		}
		return &TypeInfo{Kind: MapKind, Elem: kt, Inner: inner}, nil
	}
	return nil, fmt.Errorf("type %q is of no kind ONNX has", s)
}
