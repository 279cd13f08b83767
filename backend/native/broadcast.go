package native

import (
	"fmt"
	"slices"
)

// broadcastShapes returns the shape that numpy's multidirectional
// broadcasting gives for the operands: shapes are aligned at their last
// dimension, and each dimension is either equal or 1 in every operand.
func broadcastShapes(shapes ...[]int) ([]int, error) {
	return broadcastShapesInto(nil, shapes...)
}

// broadcastShapesInto is broadcastShapes writing into dst's storage, so
// that a kernel keeping dst between runs allocates nothing.
func broadcastShapesInto(dst []int, shapes ...[]int) ([]int, error) {
	rank := 0
	for _, s := range shapes {
		rank = max(rank, len(s))
	}
	out := slices.Grow(dst[:0], rank)[:rank]
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		offset := rank - len(s)
		for i, d := range s {
			switch o := out[offset+i]; {
			case d == o || d == 1:
			case o == 1:
				out[offset+i] = d
			default:
				// A copy, so that the callers' argument list stays on
				// their stack.
				return nil, fmt.Errorf("shapes %v are not broadcastable", slices.Clone(shapes))
			}
		}
	}
	return out, nil
}

// broadcastStrides returns the element strides with which an operand of
// shape s is read while walking a tensor of shape out (which s broadcasts
// to): its row-major strides, with 0 where s is missing or has size 1, so
// the same element is read again along that dimension.
func broadcastStrides(s, out []int) []int {
	strides := make([]int, len(out))
	fillBroadcastStrides(strides, s, out)
	return strides
}

// fillBroadcastStrides is broadcastStrides into strides (len(out) long).
func fillBroadcastStrides(strides, s, out []int) {
	clear(strides)
	offset := len(out) - len(s)
	step := 1
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] != 1 {
			strides[offset+i] = step
		}
		step *= s[i]
	}
}

// walkInline is the number of ints a stridedWalk holds without allocating:
// the merged dimensions and, per operand, a stride for each. Rank 8 with
// three operands fits; larger walks spill to the heap.
const walkInline = 32

// walkMaxOperands is the most operands a walk visits: an output and the
// inputs of a ternary operator.
const walkMaxOperands = 4

// walkOffsets is the offset of each operand's first element in a row,
// passed by value so that a walk's visit function keeps nothing.
type walkOffsets [walkMaxOperands]int

// stridedWalk is a plan for visiting every element of an output of some
// shape in row-major order together with the matching element of each
// operand. Adjacent dimensions that every operand walks contiguously (or
// repeats) are merged, so that [N,C,H,W] + [1,C,1,1] becomes a walk over
// N*C rows of H*W elements; the kernels then run tight loops over rows.
//
// The plan is held in an inline array (spilling to the heap only past
// walkInline ints), so planning and walking allocate nothing: data holds
// the rank merged dimensions, the last being the row length, followed by
// each operand's rank strides.
type stridedWalk struct {
	rank, operands int
	inline         [walkInline]int
	spill          []int // used instead of inline when the plan is larger
}

// data is the plan's storage: dims then each operand's strides.
func (w *stridedWalk) data() []int {
	if w.spill != nil {
		return w.spill
	}
	return w.inline[:]
}

// dim is merged dimension d; stride is operand k's step along it.
func (w *stridedWalk) dim(d int) int       { return w.data()[d] }
func (w *stridedWalk) stride(k, d int) int { return w.data()[(k+1)*w.rank+d] }

// newBroadcastWalk plans a walk over out for operands of the given shapes,
// each broadcast to out (broadcastStrides), without allocating when out's
// rank is at most walkInline.
func newBroadcastWalk(out []int, shapes ...[]int) stridedWalk {
	var inline [walkMaxOperands][walkInline]int
	var strides [walkMaxOperands][]int
	for k, s := range shapes {
		if len(out) <= walkInline {
			strides[k] = inline[k][:len(out)]
		} else {
			strides[k] = make([]int, len(out))
		}
		fillBroadcastStrides(strides[k], s, out)
	}
	return newStridedWalk(out, strides[:len(shapes)]...)
}

// newStridedWalk plans a walk over out for operands read with the given
// per-dimension strides (one slice per operand, each of len(out)); at most
// walkMaxOperands operands.
func newStridedWalk(out []int, operandStrides ...[]int) stridedWalk {
	var w stridedWalk
	w.operands = len(operandStrides)
	if w.operands > walkMaxOperands {
		panic("native: stridedWalk with more than walkMaxOperands operands") // a kernel bug, not bad input
	}
	// Merge into a scratch layout of (1+operands) columns per dimension,
	// then lay the result out as dims followed by each operand's strides.
	var scratchInline [walkInline]int
	scratch := scratchInline[:]
	need := max(1, len(out)) * (1 + w.operands)
	if need > walkInline {
		scratch = make([]int, need)
		w.spill = make([]int, need)
	}
	cols := 1 + w.operands
	rank := 0
	for i := range out {
		if out[i] == 1 && len(out) > 1 {
			continue // a size-1 dimension never moves any pointer
		}
		if rank > 0 && mergeable(scratch[(rank-1)*cols:rank*cols], operandStrides, i, out[i]) {
			row := scratch[(rank-1)*cols : rank*cols]
			row[0] *= out[i]
			for k, s := range operandStrides {
				row[1+k] = s[i]
			}
			continue
		}
		row := scratch[rank*cols : (rank+1)*cols]
		row[0] = out[i]
		for k, s := range operandStrides {
			row[1+k] = s[i]
		}
		rank++
	}
	if rank == 0 { // a scalar or all-ones shape: one row of one element
		scratch[0] = 1
		for k := range operandStrides {
			scratch[1+k] = 0
		}
		rank = 1
	}
	w.rank = rank
	data := w.data()
	for d := range rank {
		data[d] = scratch[d*cols]
		for k := range w.operands {
			data[(k+1)*rank+d] = scratch[d*cols+1+k]
		}
	}
	return w
}

// mergeable reports whether output dimension i (of size size) can be
// folded into the walk's current last dimension, whose size and operand
// strides are last: for every operand, one step along that dimension must
// equal a whole run along dimension i.
func mergeable(last []int, operandStrides [][]int, i, size int) bool {
	for k, s := range operandStrides {
		if last[1+k] != s[i]*size {
			return false
		}
	}
	return true
}

// rowLen is the number of elements of one row: the innermost merged
// dimension.
func (w *stridedWalk) rowLen() int { return w.dim(w.rank - 1) }

// rowStride is the step of operand k within a row (0 when it repeats one
// element, 1 when it is contiguous, other values after a transpose).
func (w *stridedWalk) rowStride(k int) int { return w.stride(k, w.rank-1) }

// rows is the number of rows of the walk.
func (w *stridedWalk) rows() int {
	n := 1
	for d := range w.rank - 1 {
		n *= w.dim(d)
	}
	return n
}

// forEachRow calls visit once per row, in row-major order, with the row's
// index and the offset of each operand's first element in that row.
func (w *stridedWalk) forEachRow(visit func(row int, offsets walkOffsets)) {
	w.forRows(0, w.rows(), visit)
}

// forRows is forEachRow over rows [lo, hi) only, so that disjoint ranges
// can run on different goroutines.
func (w *stridedWalk) forRows(lo, hi int, visit func(row int, offsets walkOffsets)) {
	data := w.data()
	outerRank := w.rank - 1
	outer := data[:outerRank]
	var counterInline [walkInline]int
	counter := counterInline[:]
	if outerRank > walkInline {
		counter = make([]int, outerRank)
	}
	var offsets walkOffsets
	// Start the odometer at row lo.
	rem := lo
	for d := outerRank - 1; d >= 0; d-- {
		counter[d] = rem % outer[d]
		rem /= outer[d]
		for k := range w.operands {
			offsets[k] += counter[d] * data[(k+1)*w.rank+d]
		}
	}
	for row := lo; row < hi; row++ {
		visit(row, offsets)
		// Advance the odometer over the outer dimensions, innermost first.
		for d := outerRank - 1; d >= 0; d-- {
			counter[d]++
			for k := range w.operands {
				offsets[k] += data[(k+1)*w.rank+d]
			}
			if counter[d] < outer[d] {
				break
			}
			for k := range w.operands {
				offsets[k] -= data[(k+1)*w.rank+d] * outer[d]
			}
			counter[d] = 0
		}
	}
}
