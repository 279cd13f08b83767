package gorgonia

import (
	"fmt"
	"hash"
	"hash/fnv"
	"slices"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// copyReshape is a reshape that copies. Gorgonia's own Reshape returns its
// input's memory and may reshape it in place (its "unsafe" form), and the
// tape machine's register allocation does not see that the two nodes share
// memory: a later in-place op on the reshaped node then clobbers a value
// still used elsewhere. Every reshape this backend adds goes through this
// op, whose result owns its memory.
type copyReshape struct {
	from, to tensor.Shape
}

// reshape returns x with the given shape (same number of elements), a
// copy; x itself when the shape is already that.
func reshape(x *G.Node, to []int) (*G.Node, error) {
	from := x.Shape()
	if slices.Equal(from, tensor.Shape(to)) { // not Shape.Eq, for which [3] equals [1, 3]
		return x, nil
	}
	if x.IsScalar() || from.TotalSize() != tensor.Shape(to).TotalSize() {
		return nil, fmt.Errorf("cannot reshape %v to %v", from, to)
	}
	return G.ApplyOp(copyReshape{from: from.Clone(), to: tensor.Shape(append([]int(nil), to...))}, x)
}

func (op copyReshape) Arity() int { return 1 }

func (op copyReshape) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(G.TensorType{Dims: len(op.from), Of: a}, G.TensorType{Dims: len(op.to), Of: a})
}

func (op copyReshape) InferShape(...G.DimSizer) (tensor.Shape, error) { return op.to.Clone(), nil }

func (op copyReshape) Do(vals ...G.Value) (G.Value, error) {
	if len(vals) != 1 {
		return nil, fmt.Errorf("reshape: %d inputs", len(vals))
	}
	var d *tensor.Dense
	switch v := vals[0].(type) {
	case *tensor.Dense:
		d = v
	case *G.F32:
		// A slice of one element comes out of Gorgonia as a scalar even
		// where the node's shape says otherwise.
		d = tensor.New(tensor.WithShape(1), tensor.WithBacking([]float32{float32(*v)}))
	case *G.F64:
		d = tensor.New(tensor.WithShape(1), tensor.WithBacking([]float64{float64(*v)}))
	default:
		return nil, fmt.Errorf("reshape: input is %T, not a dense tensor", vals[0])
	}
	var c *tensor.Dense
	if d.RequiresIterator() {
		c = d.Materialize().(*tensor.Dense)
		if c == d {
			c = d.Clone().(*tensor.Dense)
		}
	} else {
		c = d.Clone().(*tensor.Dense)
	}
	if err := c.Reshape(op.to...); err != nil {
		return nil, err
	}
	return c, nil
}

func (op copyReshape) ReturnsPtr() bool     { return false }
func (op copyReshape) CallsExtern() bool    { return false }
func (op copyReshape) OverwritesInput() int { return -1 }

func (op copyReshape) WriteHash(h hash.Hash) { fmt.Fprintf(h, "d500.reshape %v→%v", op.from, op.to) }

func (op copyReshape) Hashcode() uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}

func (op copyReshape) String() string { return fmt.Sprintf("CopyReshape%v", op.to) }

// settle copies a slice's result into a dense tensor of the given shape,
// even when the node's shape is already that: Gorgonia's Slice may yield a
// scalar value, or a view, that other ops reject.
func settle(x *G.Node, to []int) (*G.Node, error) {
	if x.IsScalar() {
		return nil, fmt.Errorf("cannot settle a scalar node to %v", to)
	}
	return G.ApplyOp(copyReshape{from: x.Shape().Clone(), to: tensor.Shape(append([]int(nil), to...))}, x)
}

// DiffWRT implements gorgonia.SDOp.
func (op copyReshape) DiffWRT(int) []bool { return []bool{true} }

// SymDiff implements gorgonia.SDOp: the gradient reshaped back.
func (op copyReshape) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	g, err := G.ApplyOp(copyReshape{from: op.to, to: op.from}, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{g}, nil
}
