//go:build mpi

package distributed

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/onnx"
	onnxpb "github.com/deep500/deep500-go/onnx/pb"
	"github.com/deep500/deep500-go/optimizer"
	"google.golang.org/protobuf/proto"
)

// The consistent schemes resume a job of two ranks exactly from rank 0's
// State and parameters alone, as a checkpoint written by rank 0 does.
func TestResumeOnTwoRanks(t *testing.T) {
	if world == nil {
		out, err := launch(t, "TestResumeOnTwoRanks", 2)
		if err != nil {
			t.Fatalf("mpirun -np 2: %v\n%s", err, out)
		}
		if n := strings.Count(out, "--- PASS: TestResumeOnTwoRanks "); n != 2 {
			t.Fatalf("TestResumeOnTwoRanks passed on %d ranks, want 2:\n%s", n, out)
		}
		t.Logf("both ranks passed:\n%s", out)
		return
	}
	const k, m = 3, 4
	for _, scheme := range []string{"pssgd", "dsgd", "allreduce"} {
		for _, name := range []string{"momentum", "adam"} {
			a := newTinyNet(t, 11)
			oa, err := New(scheme, world, a.net, a.loss, rule(t, name), Options{})
			mustOK(t, err)
			for s := range k {
				_, err := oa.Step(halfBatch(t, a, world.Rank(), s))
				mustOK(t, err)
			}
			own, err := optimizer.StateOf(oa)
			mustOK(t, err)
			st := broadcastState(t, own)
			switch {
			case scheme == "pssgd" && world.Rank() == 1:
				must(t, len(own) == 0, "pssgd: the worker's rule has state (%d tensors)", len(own))
			default:
				must(t, len(st) > 0 && sameStateBits(own, st), "%s %s: rank %d's state differs from rank 0's", scheme, name, world.Rank())
			}
			p := a.params(t)
			mustOK(t, world.Broadcast(0, p))

			b := newTinyNet(t, 12)
			ob, err := New(scheme, world, b.net, b.loss, rule(t, name), Options{})
			mustOK(t, err)
			setTinyParams(t, b, p)
			mustOK(t, optimizer.SetStateOf(ob, st))
			for s := k; s < k+m; s++ {
				_, err := oa.Step(halfBatch(t, a, world.Rank(), s))
				mustOK(t, err)
				_, err = ob.Step(halfBatch(t, b, world.Rank(), s))
				mustOK(t, err)
			}
			must(t, slices.Equal(bits(a.params(t)), bits(b.params(t))), "%s %s: rank %d resumed from rank 0's state differs from the uninterrupted run", scheme, name, world.Rank())
			must(t, !slices.Equal(bits(a.params(t)), bits(p)), "%s %s: the last steps did not move the parameters", scheme, name)
		}
	}
}

// broadcastState returns rank 0's state on every rank: encoded as
// TensorProtos, its bytes carried four to a float32 (a broadcast copies
// bits, it computes nothing).
func broadcastState(t *testing.T, s map[string]*onnx.Tensor) map[string]*onnx.Tensor {
	t.Helper()
	var data []byte
	if world.Rank() == 0 {
		g := &onnxpb.GraphProto{}
		for name, x := range s {
			p, err := onnx.TensorToProto(name, x)
			mustOK(t, err)
			g.Initializer = append(g.Initializer, p)
		}
		var err error
		data, err = proto.Marshal(g)
		mustOK(t, err)
	}
	n := []float32{float32(len(data))}
	mustOK(t, world.Broadcast(0, n))
	size := int(n[0])
	words := make([]float32, (size+3)/4)
	padded := make([]byte, 4*len(words))
	copy(padded, data)
	for i := range words {
		words[i] = math.Float32frombits(binary.LittleEndian.Uint32(padded[4*i:]))
	}
	mustOK(t, world.Broadcast(0, words))
	for i, w := range words {
		binary.LittleEndian.PutUint32(padded[4*i:], math.Float32bits(w))
	}
	g := &onnxpb.GraphProto{}
	mustOK(t, proto.Unmarshal(padded[:size], g))
	out := map[string]*onnx.Tensor{}
	for _, p := range g.Initializer {
		x, err := onnx.TensorFromProto(p, "")
		mustOK(t, err)
		out[p.GetName()] = x
	}
	return out
}

// sameStateBits reports whether two states hold the same names and bits.
func sameStateBits(a, b map[string]*onnx.Tensor) bool {
	if len(a) != len(b) {
		return false
	}
	for name, x := range a {
		y, ok := b[name]
		if !ok || x.Type != y.Type || !slices.Equal(x.Shape, y.Shape) {
			return false
		}
		switch d := x.Data.(type) {
		case []float64:
			for i, v := range d {
				if math.Float64bits(v) != math.Float64bits(y.Float64s()[i]) {
					return false
				}
			}
		case []int64:
			if !slices.Equal(d, y.Int64s()) {
				return false
			}
		default:
			return false
		}
	}
	return true
}
