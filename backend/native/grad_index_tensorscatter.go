package native

import (
	"fmt"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// VisitTensorScatter: the present cache is the past one with the update
// written over some positions along axis; past_cache's gradient is the
// output's with those positions zeroed, update's is the output's gradient
// read at them. write_indices gets none.
func (gb *gradBuilder) VisitTensorScatter(op *ops.TensorScatter) error {
	cache, upd, idxIn, y := gb.slot(op.In.PastCache), gb.slot(op.In.Update), gb.slot(op.In.WriteIndices), gb.slot(op.Out.PresentCache)
	axis, circular := op.Axis, op.Mode == "circular"
	var cacheScratch, updScratch gradScratch
	var starts []int64
	return gb.set(func(slots []onnx.Value, g *gradState) error {
		gy := g.of(y)
		if gy == nil || !g.wants(cache) && !g.wants(upd) {
			return nil
		}
		ct, err := floatTensor(slots[cache], "past_cache")
		if err != nil {
			return err
		}
		ut, err := floatTensor(slots[upd], "update")
		if err != nil {
			return err
		}
		r := len(ct.Shape)
		ax, err := normalizeAxis(axis, r)
		if err != nil {
			return err
		}
		if len(ut.Shape) != r || !sameShape(gy.Shape, ct.Shape) || gy.Type != ct.Type || ut.Type != ct.Type {
			return fmt.Errorf("TensorScatter gradient of tensor(%v)%v for past_cache %v and update %v", gy.Type, gy.Shape, ct.Shape, ut.Shape)
		}
		B, maxSeq, seq := ct.Shape[0], ct.Shape[ax], ut.Shape[ax]
		if cap(starts) < B {
			starts = make([]int64, B)
		}
		starts = starts[:B]
		clear(starts)
		if idxIn >= 0 {
			it, ok := slots[idxIn].(*onnx.Tensor)
			if !ok || it == nil || it.Len() != B {
				return fmt.Errorf("write_indices must hold %d integers, is %s", B, onnx.DescribeValue(slots[idxIn]))
			}
			switch d := it.Data.(type) {
			case []int64:
				copy(starts, d)
			case []int32:
				for i, v := range d {
					starts[i] = int64(v)
				}
			default:
				return fmt.Errorf("write_indices must be int32 or int64, got %v", it.Type)
			}
		}
		mid, inner := onnx.NumElements(ct.Shape[1:ax]), onnx.NumElements(ct.Shape[ax+1:])
		var gc, gu *onnx.Tensor
		if g.wants(cache) {
			gc = cacheScratch.buf.tensor(ct.Type, ct.Shape)
			onnx.CopySlice(gc.Data, gy.Data)
		}
		if g.wants(upd) {
			gu = updScratch.buf.tensor(ut.Type, ut.Shape)
		}
		switch d := gy.Data.(type) {
		case []float32:
			var dc, du []float32
			if gc != nil {
				dc = gc.Data.([]float32)
			}
			if gu != nil {
				du = gu.Data.([]float32)
			}
			gradTensorScatter(dc, du, d, starts, mid, maxSeq, seq, inner, circular)
		case []float64:
			var dc, du []float64
			if gc != nil {
				dc = gc.Data.([]float64)
			}
			if gu != nil {
				du = gu.Data.([]float64)
			}
			gradTensorScatter(dc, du, d, starts, mid, maxSeq, seq, inner, circular)
		}
		if gc != nil {
			if err := g.add(cache, gc); err != nil {
				return err
			}
		}
		if gu != nil {
			return g.add(upd, gu)
		}
		return nil
	})
}

// gradTensorScatter clears the written positions of dc (the cache's
// gradient, nil when unwanted) and gathers them from gy into du (the
// update's, nil when unwanted).
func gradTensorScatter[T floatElem](dc, du, gy []T, starts []int64, mid, maxSeq, seq, inner int, circular bool) {
	for b, st := range starts {
		for m := range mid {
			for s := range seq {
				p := int(st) + s
				if circular {
					p %= maxSeq
				}
				src := ((b*mid+m)*seq + s) * inner
				dst := ((b*mid+m)*maxSeq + p) * inner
				if du != nil {
					copy(du[src:src+inner], gy[dst:dst+inner])
				}
				if dc != nil {
					clear(dc[dst : dst+inner])
				}
			}
		}
	}
}
