package native

import (
	"encoding/binary"
	"fmt"

	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/ops"
)

// TfIdfVectorizer (version 9) counts the n-grams of a pool in each row of
// its input and weights the counts.
//
// The pool holds the n-grams grouped by length: ngram_counts[i] is where
// the (i+1)-grams start in pool_int64s or pool_strings, and the k-th n-gram
// of the pool (in pool order over all lengths) is counted at output
// position ngram_indexes[k]. For every n in [min_gram_length,
// max_gram_length] and every skip s in [0, max_skip_count], the n items at
// positions p, p+s+1, ..., p+(n-1)(s+1) of a row form an n-gram; unigrams
// are counted once (the skip does not apply to them). The output, per row,
// has max(ngram_indexes)+1 entries: the count (TF), its indicator (IDF) or
// the count (TFIDF), the last two scaled by the weight of the n-gram.
// weights[k] belongs to the k-th n-gram of the pool, like ngram_indexes[k],
// not to output position k: so the schema's text says
// (https://onnx.ai/onnx/operators/onnx__TfIdfVectorizer.html), and so ONNX
// Runtime computes; ONNX's reference indexes weights by output position,
// which is the same only when ngram_indexes is the identity. A missing
// weights attribute means weight 1.
type tfidfKernel struct {
	minN, maxN int
	maxSkip    int
	mode       tfidfMode
	weights    []float32 // per pool n-gram, or nil (all 1)
	indexes    []int     // output position of each pool n-gram
	outSize    int
	byString   bool
	// grams[n-1] maps the key of an n-gram (tfidfIntKey or tfidfStringKey)
	// to its number in pool order.
	grams  []map[string]int
	counts []float32 // one row's count per pool n-gram
	key    []byte
	pos    []int
	out    outputBuffer
}

type tfidfMode int

const (
	tfidfTF tfidfMode = iota
	tfidfIDF
	tfidfTFIDF
)

// newTfidfKernel checks the attributes of a node and builds its pool maps.
func newTfidfKernel(op *ops.TfIdfVectorizer) (*tfidfKernel, error) {
	k := &tfidfKernel{minN: int(op.MinGramLength), maxN: int(op.MaxGramLength), maxSkip: int(op.MaxSkipCount)}
	switch op.Mode {
	case "TF":
		k.mode = tfidfTF
	case "IDF":
		k.mode = tfidfIDF
	case "TFIDF":
		k.mode = tfidfTFIDF
	default:
		return nil, fmt.Errorf("mode %q is not TF, IDF or TFIDF", op.Mode)
	}
	if op.MinGramLength < 1 || op.MaxGramLength < op.MinGramLength || op.MaxGramLength > 1<<16 {
		return nil, fmt.Errorf("min_gram_length %d and max_gram_length %d must satisfy 1 <= min <= max", op.MinGramLength, op.MaxGramLength)
	}
	if op.MaxSkipCount < 0 || op.MaxSkipCount > 1<<30 {
		return nil, fmt.Errorf("max_skip_count %d is negative or too large", op.MaxSkipCount)
	}
	if len(op.PoolInt64s) > 0 && len(op.PoolStrings) > 0 {
		return nil, fmt.Errorf("pool_int64s and pool_strings are both set")
	}
	k.byString = len(op.PoolStrings) > 0
	poolLen := len(op.PoolInt64s)
	if k.byString {
		poolLen = len(op.PoolStrings)
	}
	k.grams = make([]map[string]int, k.maxN)
	for i := range k.grams {
		k.grams[i] = map[string]int{}
	}
	gram := 0 // index of the n-gram in pool order
	maxIndex := int64(-1)
	for _, x := range op.NgramIndexes {
		if x < 0 {
			return nil, fmt.Errorf("ngram_indexes holds a negative index %d", x)
		}
		maxIndex = max(maxIndex, x)
	}
	if maxIndex >= 1<<31 {
		return nil, fmt.Errorf("ngram_indexes holds an index %d too large for an output", maxIndex)
	}
	for i, start := range op.NgramCounts {
		n := i + 1
		end := int64(poolLen)
		if i+1 < len(op.NgramCounts) {
			end = op.NgramCounts[i+1]
		}
		if start < 0 || end < start || end > int64(poolLen) {
			return nil, fmt.Errorf("ngram_counts %v do not partition a pool of %d items", op.NgramCounts, poolLen)
		}
		if (end-start)%int64(n) != 0 {
			return nil, fmt.Errorf("the %d-grams of the pool (items %d to %d) are not a whole number of %d-grams", n, start, end, n)
		}
		for p := int(start); p < int(end); p += n {
			if gram >= len(op.NgramIndexes) {
				return nil, fmt.Errorf("ngram_indexes has %d entries, fewer than the pool's n-grams", len(op.NgramIndexes))
			}
			if n <= k.maxN {
				var key []byte
				if k.byString {
					key = tfidfStringKey(nil, op.PoolStrings[p:p+n])
				} else {
					key = tfidfIntKey(nil, op.PoolInt64s[p:p+n])
				}
				k.grams[n-1][string(key)] = gram
			}
			gram++
		}
	}
	k.outSize = int(maxIndex + 1)
	k.indexes = make([]int, gram)
	for i := range k.indexes {
		k.indexes[i] = int(op.NgramIndexes[i])
	}
	k.counts = make([]float32, gram)
	if len(op.Weights) > 0 {
		if len(op.Weights) < gram {
			return nil, fmt.Errorf("weights has %d entries, fewer than the pool's %d n-grams", len(op.Weights), gram)
		}
		k.weights = op.Weights[:gram]
	}
	return k, nil
}

func tfidfIntKey(dst []byte, v []int64) []byte {
	for _, x := range v {
		dst = binary.LittleEndian.AppendUint64(dst, uint64(x))
	}
	return dst
}

// tfidfStringKey joins strings with their lengths, so that no two
// different lists share a key.
func tfidfStringKey(dst []byte, v []string) []byte {
	for _, s := range v {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	return dst
}

func (k *tfidfKernel) compute(x *onnx.Tensor) (*onnx.Tensor, error) {
	var rows, cols int
	switch len(x.Shape) {
	case 1:
		rows, cols = 1, x.Shape[0]
	case 2:
		rows, cols = x.Shape[0], x.Shape[1]
	default:
		return nil, fmt.Errorf("input has shape %v; TfIdfVectorizer takes [C] or [N, C]", x.Shape)
	}
	var ints []int64
	var strs []string
	switch d := x.Data.(type) {
	case []int64:
		ints = d
	case []int32:
		ints, _ = intsOf(x)
	case []string:
		strs = d
	default:
		return nil, network.Unsupportedf("TfIdfVectorizer of %v tensors", x.Type)
	}
	if (strs != nil) != k.byString {
		if k.byString {
			return nil, fmt.Errorf("the pool holds strings but the input is tensor(%v)", x.Type)
		}
		return nil, fmt.Errorf("the pool holds integers but the input is tensor(string)")
	}
	shape := []int{k.outSize}
	if len(x.Shape) == 2 {
		shape = []int{rows, k.outSize}
	}
	out := k.out.tensor(onnx.Float, shape)
	y := out.Data.([]float32)
	for r := range rows {
		row := y[r*k.outSize : (r+1)*k.outSize]
		clear(k.counts)
		if ints != nil {
			k.countRow(k.counts, cols, func(dst []byte, pos []int) []byte {
				for _, p := range pos {
					dst = binary.LittleEndian.AppendUint64(dst, uint64(ints[r*cols+p]))
				}
				return dst
			})
		} else {
			k.countRow(k.counts, cols, func(dst []byte, pos []int) []byte {
				for _, p := range pos {
					s := strs[r*cols+p]
					dst = binary.AppendUvarint(dst, uint64(len(s)))
					dst = append(dst, s...)
				}
				return dst
			})
		}
		k.weigh(row)
	}
	return out, nil
}

// countRow adds the pool n-grams of one row of cols items to counts (one
// per pool n-gram); key appends the key of the items at the given
// positions.
func (k *tfidfKernel) countRow(counts []float32, cols int, key func([]byte, []int) []byte) {
	if cap(k.pos) < k.maxN {
		k.pos = make([]int, k.maxN)
	}
	pos := k.pos[:k.maxN]
	for n := k.minN; n <= k.maxN; n++ {
		m := k.grams[n-1]
		if len(m) == 0 {
			continue
		}
		maxSkip := k.maxSkip
		if n == 1 {
			maxSkip = 0
		}
		for s := 0; s <= maxSkip; s++ {
			span := (n-1)*(s+1) + 1
			if span > cols {
				break
			}
			for p := 0; p+span <= cols; p++ {
				for i := range n {
					pos[i] = p + i*(s+1)
				}
				k.key = key(k.key[:0], pos[:n])
				if id, ok := m[string(k.key)]; ok {
					counts[id]++
				}
			}
		}
	}
}

// weigh writes one row of output from the row's count per pool n-gram.
// Pool n-grams that share an output position add up there (for IDF
// without weights the position holds 1 when any of them occurs).
func (k *tfidfKernel) weigh(row []float32) {
	clear(row)
	for id, c := range k.counts {
		if c == 0 {
			continue
		}
		pos := k.indexes[id]
		switch {
		case k.mode == tfidfTF:
			row[pos] += c
		case k.mode == tfidfIDF && k.weights == nil:
			row[pos] = 1
		case k.mode == tfidfIDF:
			row[pos] += k.weights[id]
		default: // TFIDF
			row[pos] += c * k.weight(id)
		}
	}
}

func (k *tfidfKernel) weight(i int) float32 {
	if k.weights == nil {
		return 1
	}
	return k.weights[i]
}

// VisitTfIdfVectorizer compiles TfIdfVectorizer.
func (b *builder) VisitTfIdfVectorizer(op *ops.TfIdfVectorizer) error {
	x, err := b.input(op.In.X)
	if err != nil {
		return err
	}
	if b.probing {
		return nil
	}
	k, err := newTfidfKernel(op)
	if err != nil {
		return err
	}
	return b.emit(unaryTensorKernel(x, b.output(op.Out.Y), k.compute))
}
