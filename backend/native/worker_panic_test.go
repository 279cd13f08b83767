package native

import (
	"strings"
	"testing"

	"github.com/deep500/deep500-go/backend/native/internal/par"
	"github.com/deep500/deep500-go/onnx"
)

// explodingParts panics in every part but the caller's first.
type explodingParts struct{}

func (explodingParts) Work(w int) {
	if w > 0 {
		panic("kernel bug in part")
	}
}

// A kernel that panics on the pool's goroutines is an error naming the
// node, as one that panics on the executor's own goroutine is: not a
// crash of the process.
func TestKernelPanicOnWorkerIsNodeError(t *testing.T) {
	e := &executor{}
	s := &step{node: &onnx.Node{Name: "conv_7", OpType: "Conv"}, run: func([]onnx.Value) error {
		par.Spread(2, explodingParts{})
		return nil
	}}
	err := e.runStep(s)
	if err == nil || !strings.Contains(err.Error(), `Conv "conv_7"`) || !strings.Contains(err.Error(), "kernel bug in part") {
		t.Fatalf("runStep = %v, want an error naming the node and the panic", err)
	}
}
