package ops

import (
	"fmt"
	"math"
	"sync"

	"github.com/deep500/deep500-go/onnx"
)

// Custom operators registered at run time (Deep500's level-0 custom
// operators). Unlike the loss operators, which are typed by hand, they
// share one type, Custom: a user writes no struct and no visitor method.
// A backend runs them by implementing CustomVisitor and looking up its own
// kernel for (domain, op type, version); package native's RegisterKernel
// does both registrations at once.

// Custom is the operator of a node whose (domain, op type, version) was
// registered with RegisterCustom. It carries the node's input and output
// names and its attributes, read with the Attr* methods.
type Custom struct {
	Base
	domain, opType string
	attrs          []*onnx.Attribute

	// In and Out are the node's input and output names in order; "" marks
	// an omitted optional one.
	In, Out []string
}

// CustomVisitor is the visitor interface a backend implements to run
// custom operators. A backend without it answers "unsupported".
type CustomVisitor interface {
	VisitCustom(*Custom) error
}

var _ Op = (*Custom)(nil)

func (o *Custom) OpType() string { return o.opType }
func (o *Custom) Domain() string { return o.domain }

// Validate checks nothing beyond what the constructor did: a custom
// operator has no schema; its kernel checks the node when a backend
// compiles it.
func (o *Custom) Validate() error { return nil }

// CheckTypes accepts every type, for the same reason.
func (o *Custom) CheckTypes([]onnx.DataType) error { return nil }

// Accept calls v.VisitCustom, or answers Unsupported(o) when v does not
// run custom operators.
func (o *Custom) Accept(v Visitor) error {
	if cv, ok := v.(CustomVisitor); ok {
		return cv.VisitCustom(o)
	}
	return Unsupported(o)
}

// Attr returns the node's attribute of that name, or nil when the node
// does not set it (or, inside a function body, refers to an attribute of
// the call).
func (o *Custom) Attr(name string) *onnx.Attribute {
	for _, a := range o.attrs {
		if a.Name == name && a.RefAttrName == "" {
			return a
		}
	}
	return nil
}

// Attributes returns the node's attributes as the operator was built
// with them.
func (o *Custom) Attributes() []*onnx.Attribute { return append([]*onnx.Attribute(nil), o.attrs...) }

// attrErr names the node and the attribute.
func (o *Custom) attrErr(name string, err error) error {
	return fmt.Errorf("%s: attribute %q: %w", describe(o), name, err)
}

// AttrFloat reads a FLOAT attribute (an INT is accepted), or def when it
// is absent.
func (o *Custom) AttrFloat(name string, def float32) (float32, error) {
	a := o.Attr(name)
	if a == nil {
		return def, nil
	}
	v, err := attrFloat(a)
	if err != nil {
		return def, o.attrErr(name, err)
	}
	return v, nil
}

// AttrInt reads an INT attribute, or def when it is absent.
func (o *Custom) AttrInt(name string, def int64) (int64, error) {
	a := o.Attr(name)
	if a == nil {
		return def, nil
	}
	v, err := attrInt(a)
	if err != nil {
		return def, o.attrErr(name, err)
	}
	return v, nil
}

// AttrString reads a STRING attribute, or def when it is absent.
func (o *Custom) AttrString(name, def string) (string, error) {
	a := o.Attr(name)
	if a == nil {
		return def, nil
	}
	v, err := attrString(a)
	if err != nil {
		return def, o.attrErr(name, err)
	}
	return v, nil
}

// AttrFloats reads a FLOATS attribute (INTS are accepted), nil when it is
// absent.
func (o *Custom) AttrFloats(name string) ([]float32, error) {
	a := o.Attr(name)
	if a == nil {
		return nil, nil
	}
	v, err := attrFloats(a)
	if err != nil {
		return nil, o.attrErr(name, err)
	}
	return v, nil
}

// AttrInts reads an INTS attribute, nil when it is absent.
func (o *Custom) AttrInts(name string) ([]int64, error) {
	a := o.Attr(name)
	if a == nil {
		return nil, nil
	}
	v, err := attrInts(a)
	if err != nil {
		return nil, o.attrErr(name, err)
	}
	return v, nil
}

// AttrStrings reads a STRINGS attribute, nil when it is absent.
func (o *Custom) AttrStrings(name string) ([]string, error) {
	a := o.Attr(name)
	if a == nil {
		return nil, nil
	}
	v, err := attrStrings(a)
	if err != nil {
		return nil, o.attrErr(name, err)
	}
	return v, nil
}

// AttrTensor reads a TENSOR attribute, nil when it is absent. The tensor
// is the node's own: read it, do not change it.
func (o *Custom) AttrTensor(name string) (*onnx.Tensor, error) {
	a := o.Attr(name)
	if a == nil {
		return nil, nil
	}
	v, err := attrTensor(a)
	if err != nil {
		return nil, o.attrErr(name, err)
	}
	return v, nil
}

// customKey identifies a registered custom operator version.
type customKey struct {
	domain, opType string
	since          int
}

var (
	customMu   sync.Mutex
	customRegs = map[customKey]bool{}
	customOps  = map[[2]string]bool{} // (domain, op type) with a custom version
)

// RegisterCustom registers (domain, opType) from version since (until
// the next registered version) as a custom operator: onnx.Load then types
// its nodes as *Custom, for models that import domain at version since or
// later. Register before loading a model; a node loaded earlier stays an
// unknown operator.
//
// Registering the same version again is not an error (several backends
// may each register their kernels for one operator). It is an error when
// domain is one whose operators ONNX or this project defines (ai.onnx,
// ai.onnx.ml, ai.onnx.preview, ai.onnx.preview.training, ai.deep500), or
// when (domain, opType) is already registered otherwise than by
// RegisterCustom (a built-in or hand-typed operator).
func RegisterCustom(domain, opType string, since int) error {
	domain = onnx.CanonicalDomain(domain)
	switch {
	case opType == "":
		return fmt.Errorf("ops: a custom operator needs an op type")
	case since < 1:
		return fmt.Errorf("ops: custom operator %s (domain %s): version %d, want 1 or more", opType, domain, since)
	case ReservedDomain(domain):
		return fmt.Errorf("ops: custom operator %s: domain %q is reserved for the operators ONNX and this project define; use a domain of your own", opType, displayDomain(domain))
	}
	customMu.Lock()
	defer customMu.Unlock()
	key := customKey{domain, opType, since}
	if customRegs[key] {
		return nil
	}
	if !customOps[[2]string{domain, opType}] {
		if s, _, ok := onnx.LookupOperator(domain, opType, math.MaxInt64); ok {
			return fmt.Errorf("ops: custom operator %s (domain %s, version %d) clashes with operator %s of that domain registered at version %d",
				opType, domain, since, opType, s)
		}
	}
	onnx.RegisterOperator(domain, opType, since, func(n *onnx.Node, since int) (onnx.Operator, error) {
		return newCustom(domain, opType, n, since)
	})
	customRegs[key] = true
	customOps[[2]string{domain, opType}] = true
	return nil
}

// CustomOperators lists the operator versions registered with
// RegisterCustom, sorted.
func CustomOperators() []onnx.RegisteredOperator {
	customMu.Lock()
	defer customMu.Unlock()
	out := make([]onnx.RegisteredOperator, 0, len(customRegs))
	for k := range customRegs {
		out = append(out, onnx.RegisteredOperator{Domain: k.domain, OpType: k.opType, Since: k.since})
	}
	onnx.SortRegisteredOperators(out)
	return out
}

// reservedDomain reports whether ONNX's schemas or the project's own
// operators use domain.
func ReservedDomain(domain string) bool {
	if domain == "" || domain == LossDomain {
		return true
	}
	reservedOnce.Do(func() {
		reserved = map[string]bool{}
		for _, s := range schemaTable {
			reserved[onnx.CanonicalDomain(s.Domain)] = true
		}
	})
	return reserved[domain]
}

var (
	reservedOnce sync.Once
	reserved     map[string]bool
)

func displayDomain(d string) string {
	if d == "" {
		return "ai.onnx"
	}
	return d
}

func newCustom(domain, opType string, n *onnx.Node, since int) (onnx.Operator, error) {
	seen := make(map[string]bool, len(n.Attributes))
	for _, a := range n.Attributes {
		if seen[a.Name] {
			return nil, fmt.Errorf("%v: attribute %q given twice", n, a.Name)
		}
		seen[a.Name] = true
	}
	return &Custom{
		Base:   NewBase(n, since),
		domain: domain, opType: opType,
		attrs: append([]*onnx.Attribute(nil), n.Attributes...),
		In:    append([]string(nil), n.Inputs...),
		Out:   append([]string(nil), n.Outputs...),
	}, nil
}
