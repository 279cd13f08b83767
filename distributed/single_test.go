package distributed

import (
	"errors"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/optimizer"
)

func TestSelfComm(t *testing.T) {
	c := NewComm(Self{})
	buf := []float32{1, 2, 3}
	if err := c.AllReduceMean(buf); err != nil || buf[0] != 1 || buf[2] != 3 {
		t.Fatalf("one-rank mean: %v, %v", buf, err)
	}
	l, r := make([]float32, 3), make([]float32, 3)
	if err := c.RingExchange(buf, l, r); err != nil || l[1] != 2 || r[2] != 3 {
		t.Fatalf("one-rank ring: %v %v, %v", l, r, err)
	}
	dst := make([]float32, 3)
	if err := c.Gather(0, dst, buf); err != nil || dst[1] != 2 {
		t.Fatalf("one-rank gather: %v, %v", dst, err)
	}
	if err := c.Send(0, 1, buf); err == nil || !strings.Contains(err.Error(), "no rank 0") {
		t.Errorf("send in a job of one: %v", err)
	}
	if _, err := c.RecvAny(1, buf); err == nil || !strings.Contains(err.Error(), "no other rank") {
		t.Errorf("receive from any rank in a job of one: %v", err)
	}
	if err := c.Broadcast(1, buf); err == nil || !strings.Contains(err.Error(), "rank 1 out of range") {
		t.Errorf("broadcast from rank 1 of 1: %v", err)
	}
	if err := c.Gather(0, make([]float32, 2), buf); err == nil || !strings.Contains(err.Error(), "holds 2 values, want 1×3") {
		t.Errorf("gather into a short buffer: %v", err)
	}
	if tr := c.Traffic(); tr.BytesSent != 0 || tr.BytesReceived != 0 {
		t.Errorf("a job of one moved %+v", tr)
	}
}

func TestPartition(t *testing.T) {
	ds := tinyData(10)
	seen := map[int]bool{}
	for rank := 0; rank < 3; rank++ {
		p, err := Partition(ds, rank, 3, 5)
		if err != nil {
			t.Fatal(err)
		}
		if p.Len() != 3 {
			t.Fatalf("rank %d has %d samples, want ⌊10/3⌋ = 3", rank, p.Len())
		}
		x := make([]float32, 6)
		for i, j := range p.(*part).idx {
			if seen[j] {
				t.Errorf("sample %d is in two parts", j)
			}
			seen[j] = true
			y, err := p.Sample(i, x)
			if err != nil || y != ds.Y[j] || x[0] != ds.X[j*6] {
				t.Errorf("rank %d sample %d is not the dataset's sample %d", rank, i, j)
			}
		}
		if p.(*part).NumClasses() != 3 {
			t.Errorf("classes not passed on")
		}
	}
	if len(seen) != 9 {
		t.Errorf("the parts cover %d samples, want 9", len(seen))
	}
	// Seed 0 keeps blocks of index order.
	p, _ := Partition(ds, 1, 2, 0)
	if idx := p.(*part).idx; idx[0] != 5 || idx[4] != 9 {
		t.Errorf("unshuffled part of rank 1: %v", idx)
	}
	if _, err := Partition(ds, 0, 11, 1); err == nil {
		t.Error("10 samples split among 11 ranks: no error")
	}
	if _, err := Partition(ds, 2, 2, 1); err == nil {
		t.Error("rank 2 of 2: no error")
	}
}

// In a job of one process every scheme is plain SGD: the same parameters
// as the driver after the same steps.
// With ClipNorm 0.05 every step's gradient is clipped.
func TestSchemesAloneAreTheDriver(t *testing.T) {
	for _, clipNorm := range []float64{0, 0.05} {
		schemesAloneAreTheDriver(t, clipNorm)
	}
}

func schemesAloneAreTheDriver(t *testing.T, clipNorm float64) {
	ds := tinyData(32)
	ref := newTinyNet(t, 3)
	drv := optimizer.NewDriver(ref.net, ref.loss, sgd(t, 0.1), clipNorm)
	for s := 0; s < 4; s++ {
		if _, err := drv.Step(ref.rows(t, ds, 8*s, 8*s+8)); err != nil {
			t.Fatal(err)
		}
	}
	want := ref.params(t)
	for _, scheme := range Schemes() {
		tn := newTinyNet(t, 3)
		opt, err := New(scheme, NewComm(Self{}), tn.net, tn.loss, sgd(t, 0.1), Options{AverageEvery: 2, ClipNorm: clipNorm})
		if err != nil {
			t.Fatal(err)
		}
		for s := 0; s < 4; s++ {
			if _, err := opt.Step(tn.rows(t, ds, 8*s, 8*s+8)); err != nil {
				t.Fatal(err)
			}
		}
		if d := maxAbsDiff(tn.params(t), want); d > 0 {
			t.Errorf("%s alone (clip norm %g) differs from the driver by %g", scheme, clipNorm, d)
		}
		if st := opt.LastStep(); st.BytesSent != 0 || st.ComputeSeconds <= 0 {
			t.Errorf("%s alone: step figures %+v", scheme, st)
		}
	}
}

func TestNewErrors(t *testing.T) {
	tn := newTinyNet(t, 1)
	if _, err := New("ring", NewComm(Self{}), tn.net, tn.loss, sgd(t, 0.1), Options{}); err == nil || !strings.Contains(err.Error(), `unknown distributed scheme "ring"`) {
		t.Errorf("unknown scheme: %v", err)
	}
	if _, err := New("dsgd", NewComm(Self{}), tn.net, "nosuchloss", sgd(t, 0.1), Options{}); err == nil || !strings.Contains(err.Error(), "nosuchloss") {
		t.Errorf("bad loss: %v", err)
	}
	if _, err := New("mavg", NewComm(Self{}), tn.net, tn.loss, sgd(t, 0.1), Options{AverageEvery: -1}); err == nil {
		t.Error("negative averaging period: no error")
	}
}

func TestInitWithoutMPI(t *testing.T) {
	if Available {
		t.Skip("this build has MPI; TestRanks covers Init")
	}
	if _, err := Init(); !errors.Is(err, ErrNoMPI) || !strings.Contains(err.Error(), "-tags mpi") {
		t.Errorf("Init without MPI: %v", err)
	}
}
