package onnx

import (
	"fmt"
	"sort"
	"sync"
)

// Operator is a node's typed operator. Package ops generates one type per
// ONNX operator; custom operators implement it the same way.
type Operator interface {
	// OpType and Domain identify the operator ("Conv", "" for ai.onnx).
	OpType() string
	Domain() string
	// SinceVersion is the version of the operator's schema that the
	// importing opset selected: the newest one not above it.
	SinceVersion() int
}

// OperatorConstructor builds the typed operator of a node for the schema
// version since. It reads and checks the node's attributes and inputs.
type OperatorConstructor func(n *Node, since int) (Operator, error)

type registration struct {
	since int
	ctor  OperatorConstructor
}

var (
	registryMu sync.RWMutex
	registry   = map[[2]string][]registration{} // (domain, op type) to versions, ascending
)

// RegisterOperator makes ctor the constructor of (domain, opType) from
// schema version since until the next registered version. Registering the
// same version twice replaces the earlier constructor.
func RegisterOperator(domain, opType string, since int, ctor OperatorConstructor) {
	registryMu.Lock()
	defer registryMu.Unlock()
	key := [2]string{CanonicalDomain(domain), opType}
	regs := registry[key]
	for i := range regs {
		if regs[i].since == since {
			regs[i].ctor = ctor
			return
		}
	}
	regs = append(regs, registration{since, ctor})
	sort.Slice(regs, func(i, j int) bool { return regs[i].since < regs[j].since })
	registry[key] = regs
}

// LookupOperator finds the constructor that an import of opset selects for
// (domain, opType): the newest registered version not above opset.
func LookupOperator(domain, opType string, opset int64) (since int, ctor OperatorConstructor, ok bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	regs := registry[[2]string{CanonicalDomain(domain), opType}]
	for i := len(regs) - 1; i >= 0; i-- {
		if int64(regs[i].since) <= opset {
			return regs[i].since, regs[i].ctor, true
		}
	}
	return 0, nil, false
}

// RegisteredOperator is one entry of the operator registry.
type RegisteredOperator struct {
	Domain, OpType string
	Since          int
}

// RegisteredOperators lists every registered (domain, op type, version),
// sorted.
func RegisteredOperators() []RegisteredOperator {
	registryMu.RLock()
	defer registryMu.RUnlock()
	var out []RegisteredOperator
	for k, regs := range registry {
		for _, r := range regs {
			out = append(out, RegisteredOperator{k[0], k[1], r.since})
		}
	}
	SortRegisteredOperators(out)
	return out
}

// SortRegisteredOperators sorts list by domain, op type and version.
func SortRegisteredOperators(list []RegisteredOperator) {
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if a.Domain != b.Domain {
			return a.Domain < b.Domain
		}
		if a.OpType != b.OpType {
			return a.OpType < b.OpType
		}
		return a.Since < b.Since
	})
}

// UnknownOperator stands for a node whose operator is not registered for
// the imported opset. Loading succeeds; a backend reports it unsupported.
type UnknownOperator struct {
	Type, Dom string
	Opset     int64
}

func (u *UnknownOperator) OpType() string    { return u.Type }
func (u *UnknownOperator) Domain() string    { return u.Dom }
func (u *UnknownOperator) SinceVersion() int { return 0 }

// Reason says why the operator is unknown, naming it.
func (u *UnknownOperator) Reason() string {
	d := u.Dom
	if d == "" {
		d = "ai.onnx"
	}
	return fmt.Sprintf("unknown operator %s (domain %s, opset %d)", u.Type, d, u.Opset)
}

// UnknownNodes returns the nodes of m whose operator is an
// UnknownOperator: in its graph, in the graphs of its nodes' attributes
// (the branches of an If, the body of a Loop), and in its functions'
// bodies. A model with one is not a valid model of its opsets: no
// schema of the domain defines that operator at the imported version.
func (m *Model) UnknownNodes() []*Node {
	var out []*Node
	var walk func(nodes []*Node)
	walk = func(nodes []*Node) {
		for _, n := range nodes {
			if _, ok := n.Op.(*UnknownOperator); ok {
				out = append(out, n)
			}
			for _, a := range n.Attributes {
				if a.Graph != nil {
					walk(a.Graph.Nodes)
				}
				for _, g := range a.Graphs {
					walk(g.Nodes)
				}
			}
		}
	}
	if m.Graph != nil {
		walk(m.Graph.Nodes)
	}
	for _, f := range m.Functions {
		walk(f.Nodes)
	}
	return out
}

// FunctionCall is the operator of a node that calls a model-local function.
type FunctionCall struct {
	Function *Function
}

func (f *FunctionCall) OpType() string    { return f.Function.Name }
func (f *FunctionCall) Domain() string    { return f.Function.Domain }
func (f *FunctionCall) SinceVersion() int { return 1 }
