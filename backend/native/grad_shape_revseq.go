package native

import (
	"fmt"

	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// Backward rule of ReverseSequence (version 10): the forward permutes
// [inner] blocks of the input (the first sequence_lens[b] steps of each
// batch entry reversed, the rest in place), so the input's gradient is
// the output's gradient permuted back. sequence_lens gets none.
type gradReverseSequenceKernel struct {
	batchAxis, timeAxis int
	x, lens, y          int
	sx                  gradScratch
}

func (gb *gradBuilder) VisitReverseSequence(op *ops.ReverseSequence) error {
	if op.BatchAxis != 0 && op.BatchAxis != 1 || op.TimeAxis != 0 && op.TimeAxis != 1 || op.BatchAxis == op.TimeAxis {
		return fmt.Errorf("batch_axis %d and time_axis %d must be 0 and 1 in some order", op.BatchAxis, op.TimeAxis)
	}
	k := &gradReverseSequenceKernel{batchAxis: int(op.BatchAxis), timeAxis: int(op.TimeAxis),
		x: gb.slot(op.In.Input), lens: gb.slot(op.In.SequenceLens), y: gb.slot(op.Out.Y)}
	return gb.set(k.run)
}

func (k *gradReverseSequenceKernel) run(slots []onnx.Value, g *gradState) error {
	gy := g.of(k.y)
	if gy == nil || !g.wants(k.x) {
		return nil
	}
	x, err := floatTensor(slots[k.x], "input")
	if err != nil {
		return err
	}
	lt, ok := slots[k.lens].(*onnx.Tensor)
	if !ok || lt == nil {
		return fmt.Errorf("sequence_lens is %s, not a tensor", onnx.DescribeValue(slots[k.lens]))
	}
	if gy.Type != x.Type || !sameShape(gy.Shape, x.Shape) || len(x.Shape) < 2 {
		return fmt.Errorf("ReverseSequence gradient: output gradient tensor(%v)%v for input tensor(%v)%v", gy.Type, gy.Shape, x.Type, x.Shape)
	}
	batch, steps := x.Shape[k.batchAxis], x.Shape[k.timeAxis]
	if lt.Len() != batch {
		return fmt.Errorf("sequence_lens has %d entries for a batch of %d", lt.Len(), batch)
	}
	dx := k.sx.zeros(x.Type, x.Shape)
	switch d := dx.Data.(type) {
	case []float32:
		err = gradReverseSequence(k, d, gy.Data.([]float32), lt, x.Shape, steps)
	case []float64:
		err = gradReverseSequence(k, d, gy.Data.([]float64), lt, x.Shape, steps)
	}
	if err != nil {
		return err
	}
	return g.add(k.x, dx)
}

// gradRevSeqLen reads sequence_lens[i] (int32 or int64).
func gradRevSeqLen(lt *onnx.Tensor, i int) (int64, error) {
	switch d := lt.Data.(type) {
	case []int64:
		return d[i], nil
	case []int32:
		return int64(d[i]), nil
	}
	return 0, fmt.Errorf("sequence_lens of type %v", lt.Type)
}

func gradReverseSequence[T floatElem](k *gradReverseSequenceKernel, dx, dy []T, lt *onnx.Tensor, shape []int, steps int) error {
	d1 := shape[1]
	inner := onnx.NumElements(shape[2:])
	// Strides of the first two axes.
	bs, ts := d1*inner, inner
	if k.batchAxis == 1 {
		bs, ts = inner, d1*inner
	}
	for i0 := range shape[0] {
		for i1 := range d1 {
			bi, ti := i0, i1
			if k.batchAxis == 1 {
				bi, ti = i1, i0
			}
			l, err := gradRevSeqLen(lt, bi)
			if err != nil {
				return err
			}
			if l < 0 || l > int64(steps) {
				return fmt.Errorf("sequence_lens[%d] = %d is out of range [0, %d]", bi, l, steps)
			}
			src := ti
			if int64(ti) < l {
				src = int(l) - 1 - ti
			}
			o := bi*bs + src*ts
			addInto(dx[o:o+inner], dy[(i0*d1+i1)*inner:(i0*d1+i1+1)*inner])
		}
	}
	return nil
}
