//go:build mpi

package distributed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
	"github.com/deep500/deep500-go/optimizer"
	"github.com/deep500/deep500-go/runner"
)

// The tests of this file run twice: `go test -tags mpi` runs them as
// usual, and then each one launches this same test binary under
// `mpirun -np 2` with childEnv set, where the function does the real work
// on two ranks. In a child, any failed check ends both ranks (Abort), so
// a rank never waits in a collective for one that has given up.
const childEnv = "D500_DISTRIBUTED_TEST_CHILD"

var world *Comm

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "" {
		os.Exit(m.Run())
	}
	c, err := Init()
	if err != nil {
		Abort(err)
	}
	world = c
	if code := m.Run(); code != 0 {
		Abort(fmt.Errorf("tests failed (status %d)", code))
	}
	Finalize()
	os.Exit(0)
}

// launch runs the test named name on two ranks and returns mpirun's
// combined output. The deadline only guards against a hang.
func launch(t *testing.T, name string, np int) (string, error) {
	t.Helper()
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Fatalf("mpirun not found (install Debian's openmpi-bin, e.g. with make setup): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, mpirun, "-np", fmt.Sprint(np), "--oversubscribe", os.Args[0], "-test.run", "^"+name+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"=1", "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("mpirun did not end within 5 minutes (a hang):\n%s", out)
	}
	return string(out), err
}

// must ends every rank when a check fails in a child.
func must(t *testing.T, ok bool, format string, args ...any) {
	t.Helper()
	if !ok {
		msg := fmt.Sprintf(format, args...)
		t.Error(msg)
		Abort(fmt.Errorf("%s: %s", t.Name(), msg))
	}
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	must(t, err == nil, "%v", err)
}

func TestRanks(t *testing.T) {
	if world == nil {
		out, err := launch(t, "TestRanks", 2)
		if err != nil {
			t.Fatalf("mpirun -np 2: %v\n%s", err, out)
		}
		if n := strings.Count(out, "--- PASS: TestRanks "); n != 2 {
			t.Fatalf("TestRanks passed on %d ranks, want 2:\n%s", n, out)
		}
		t.Logf("both ranks passed:\n%s", out)
		return
	}
	must(t, world.Size() == 2, "run with 2 ranks, got %d", world.Size())
	t.Run("Comm", testComm)
	t.Run("DSGDIsSGDOnFullBatches", testDSGDIsSGD)
	t.Run("ConsistentSchemesAgree", testConsistentAgree)
	t.Run("IdenticalAfterEveryStep", testIdentical)
	t.Run("InconsistentSchemesFollowTheirRules", testInconsistentRules)
	t.Run("ASGDConvergesDeterministically", testASGDConverges)
	t.Run("RunningStatsAgree", testRunningStatsAgree)
}

func TestAbortEndsEveryRank(t *testing.T) {
	if world == nil {
		out, err := launch(t, "TestAbortEndsEveryRank", 2)
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() == 0 {
			t.Fatalf("mpirun ended with %v, want a non-zero exit status:\n%s", err, out)
		}
		if !strings.Contains(out, "rank 1 of 2: rank one failed on purpose") {
			t.Errorf("the failing rank's message is missing:\n%s", out)
		}
		if strings.Contains(out, "rank 0 went on") {
			t.Errorf("rank 0 got past a barrier that rank 1 never reached:\n%s", out)
		}
		return
	}
	if world.Rank() == 1 {
		Abort(errors.New("rank one failed on purpose"))
	}
	// Rank 1 never gets here: without the abort this would wait forever.
	if err := world.Barrier(); err == nil {
		fmt.Println("rank 0 went on")
	}
}

func testComm(t *testing.T) {
	r := world.Rank()
	before := world.Traffic()
	buf := []float32{float32(r + 1), float32(10 * (r + 1)), 0.5}
	mustOK(t, world.AllReduceSum(buf))
	must(t, buf[0] == 3 && buf[1] == 30 && buf[2] == 1, "all-reduce sum: %v", buf)
	tr := world.Traffic().Sub(before)
	must(t, tr.BytesSent == 12 && tr.BytesReceived == 12 && tr.Seconds > 0, "all-reduce of 3 floats: traffic %+v", tr)

	buf = []float32{float32(r + 1), float32(10 * (r + 1))}
	mustOK(t, world.AllReduceMean(buf))
	must(t, buf[0] == 1.5 && buf[1] == 15, "all-reduce mean: %v", buf)

	buf = []float32{float32(r), float32(r) + 7}
	mustOK(t, world.Broadcast(1, buf))
	must(t, buf[0] == 1 && buf[1] == 8, "broadcast from rank 1: %v", buf)

	var dst []float32
	if r == 0 {
		dst = make([]float32, 4)
	}
	mustOK(t, world.Gather(0, dst, []float32{float32(r), float32(r + 10)}))
	if r == 0 {
		must(t, fmt.Sprint(dst) == "[0 10 1 11]", "gather on rank 0: %v", dst)
	}

	msg := make([]float32, 1)
	if r == 0 {
		mustOK(t, world.Send(1, 5, []float32{42}))
		mustOK(t, world.Recv(1, 6, msg))
		must(t, msg[0] == 43, "reply from rank 1: %v", msg)
	} else {
		mustOK(t, world.Recv(0, 5, msg))
		must(t, msg[0] == 42, "message from rank 0: %v", msg)
		mustOK(t, world.Send(0, 6, []float32{msg[0] + 1}))
	}

	if r == 1 {
		mustOK(t, world.Send(0, 7, []float32{7}))
	} else {
		from, err := world.RecvAny(7, msg)
		mustOK(t, err)
		must(t, from == 1 && msg[0] == 7, "receive from any rank: %v from %d", msg, from)
	}

	l, rt := make([]float32, 2), make([]float32, 2)
	mustOK(t, world.RingExchange([]float32{float32(r), float32(-r)}, l, rt))
	o := float32(1 - r)
	must(t, l[0] == o && l[1] == -o && rt[0] == o, "ring exchange on rank %d: left %v right %v", r, l, rt)
	left, right := world.Neighbours()
	must(t, left == 1-r && right == 1-r, "neighbours of %d: %d %d", r, left, right)
	mustOK(t, world.Barrier())
}

// The batches of the two-rank runs: rank r's k-th batch is the r-th half
// of the k-th full batch of 8 samples.
const fullBatch = 8

func halfBatch(t *testing.T, tn *tinyNet, rank, k int) map[string]onnx.Value {
	from := k*fullBatch + rank*fullBatch/2
	return tn.rows(t, tinyData(64), from, from+fullBatch/2)
}

// run trains tinyNet(seed) with scheme on this rank's half batches for
// steps steps and returns the final parameters; after each step check is
// called with the step number and the optimizer.
func run(t *testing.T, scheme string, rule optimizer.UpdateRuleOptimizer, steps int, check func(step int, tn *tinyNet, o Optimizer)) []float32 {
	t.Helper()
	tn := newTinyNet(t, 11)
	o, err := New(scheme, world, tn.net, tn.loss, rule, Options{AverageEvery: 2})
	mustOK(t, err)
	for k := 0; k < steps; k++ {
		_, err := o.Step(halfBatch(t, tn, world.Rank(), k))
		mustOK(t, err)
		if check != nil {
			check(k+1, tn, o)
		}
	}
	return tn.params(t)
}

func rule(t *testing.T, name string) optimizer.UpdateRuleOptimizer {
	hp, err := optimizer.Defaults(name)
	mustOK(t, err)
	hp.LR = 0.05
	r, err := optimizer.New(name, hp)
	mustOK(t, err)
	return r
}

// dsgd on two ranks with half batches takes the steps single-process SGD
// takes on the full batches: the mean of the halves' mean gradients is
// the full batch's mean gradient.
func testDSGDIsSGD(t *testing.T) {
	for _, name := range []string{"sgd", "momentum"} {
		ref := newTinyNet(t, 11)
		drv := optimizer.NewDriver(ref.net, ref.loss, rule(t, name), 0)
		data := tinyData(64)
		for k := 0; k < 6; k++ {
			_, err := drv.Step(ref.rows(t, data, k*fullBatch, (k+1)*fullBatch))
			mustOK(t, err)
		}
		want := ref.params(t)
		got := run(t, "dsgd", rule(t, name), 6, nil)
		d := maxAbsDiff(got, want)
		must(t, d < 1e-5, "%s: dsgd on 2 ranks differs from single-process SGD on full batches by %g", name, d)
		t.Logf("rank %d, %s: dsgd vs full-batch single process: max |Δ| = %g over %d parameters", world.Rank(), name, d, len(want))
	}
}

// pssgd, dsgd and allreduce compute the same averaged gradient; with a
// stateful rule (Adam) they must still agree.
func testConsistentAgree(t *testing.T) {
	for _, name := range []string{"sgd", "adam"} {
		ps := run(t, "pssgd", rule(t, name), 6, nil)
		ds := run(t, "dsgd", rule(t, name), 6, nil)
		ar := run(t, "allreduce", rule(t, name), 6, nil)
		d1, d2 := maxAbsDiff(ps, ds), maxAbsDiff(ar, ds)
		must(t, d1 < 1e-6 && d2 < 1e-6, "%s: pssgd-dsgd %g, allreduce-dsgd %g", name, d1, d2)
		must(t, maxAbsDiff(ds, newTinyNet(t, 11).params(t)) > 1e-3, "%s: the parameters did not move", name)
	}
}

// sameOnAllRanks reports whether every rank holds the same bits as rank 0,
// and every rank gets the same answer.
func sameOnAllRanks(t *testing.T, p []float32) bool {
	r0 := append([]float32(nil), p...)
	mustOK(t, world.Broadcast(0, r0))
	diff := float32(0)
	for i := range p {
		if p[i] != r0[i] {
			diff++
		}
	}
	flag := []float32{diff}
	mustOK(t, world.AllReduceSum(flag))
	return flag[0] == 0
}

func testIdentical(t *testing.T) {
	for _, scheme := range []string{"pssgd", "dsgd", "allreduce"} {
		run(t, scheme, rule(t, "adam"), 5, func(step int, tn *tinyNet, o Optimizer) {
			must(t, o.Consistent(), "%s does not call itself consistent", scheme)
			must(t, sameOnAllRanks(t, tn.params(t)), "%s: ranks differ after step %d", scheme, step)
			st := o.LastStep()
			must(t, st.BytesSent > 0 && st.BytesReceived > 0 && st.Seconds > 0 && st.ComputeSeconds > 0, "%s step %d figures: %+v", scheme, step, st)
		})
	}
	// mavg (every 2 steps) is identical right after averaging and differs
	// in between; dpsgd's ranks differ after every step. (asgd's worker, on
	// two ranks, leaves each exchange with the server's parameters of that
	// moment; its inconsistency is the stale gradient, which
	// InconsistentSchemesFollowTheirRules checks.)
	run(t, "mavg", rule(t, "sgd"), 4, func(step int, tn *tinyNet, o Optimizer) {
		same := sameOnAllRanks(t, tn.params(t))
		must(t, same == (step%2 == 0), "mavg every 2 steps: after step %d identical=%v", step, same)
	})
	run(t, "dpsgd", rule(t, "sgd"), 2, func(step int, tn *tinyNet, o Optimizer) {
		must(t, !o.Consistent() && !sameOnAllRanks(t, tn.params(t)), "dpsgd: ranks identical after step %d", step)
	})
}

// gradAt returns the flat gradient of tn's loss at parameters p on batch.
func gradAt(t *testing.T, tn *tinyNet, p []float32, batch map[string]onnx.Value) []float32 {
	setParams(t, tn, p)
	_, err := tn.net.InferenceAndBackprop(batch, tn.loss)
	mustOK(t, err)
	var g []float32
	for _, pg := range tn.net.Gradients(tn.loss) {
		v, err := network.FetchTensor(tn.net, pg.Grad)
		mustOK(t, err)
		g = append(g, v.Float32s()...)
	}
	return g
}

func setParams(t *testing.T, tn *tinyNet, p []float32) {
	off := 0
	for _, pg := range tn.net.Gradients(tn.loss) {
		v, err := network.FetchTensor(tn.net, pg.Param)
		mustOK(t, err)
		off += copy(v.Float32s(), p[off:])
		mustOK(t, tn.net.Feed(pg.Param, v))
	}
}

// sgdStep is the reference SGD rule's arithmetic: in float64, rounded.
func sgdStep(p, g []float32, lr float64) []float32 {
	out := make([]float32, len(p))
	for i := range p {
		out[i] = float32(float64(p[i]) - lr*float64(g[i]))
	}
	return out
}

// Each rank replays the two-rank algorithm in one process and checks its
// own parameters against the replay: asgd, dpsgd and mavg follow the
// rules their doc comments state, step by step.
func testInconsistentRules(t *testing.T) {
	const lr, steps = 0.05, 5
	sim := newTinyNet(t, 11)
	init := sim.params(t)
	batch := func(r, k int) map[string]onnx.Value { return halfBatch(t, sim, r, k) }
	replay := map[string]func() [2][]float32{
		"asgd": func() [2][]float32 {
			server, worker := init, init
			for k := 0; k < steps; k++ {
				g1 := gradAt(t, sim, worker, batch(1, k))
				server = sgdStep(server, gradAt(t, sim, server, batch(0, k)), lr)
				server = sgdStep(server, g1, lr)
				worker = server
			}
			return [2][]float32{server, worker}
		},
		"dpsgd": func() [2][]float32 {
			x := [2][]float32{init, init}
			for k := 0; k < steps; k++ {
				g0, g1 := gradAt(t, sim, x[0], batch(0, k)), gradAt(t, sim, x[1], batch(1, k))
				m := make([]float32, len(init))
				for i := range m {
					m[i] = (x[0][i] + x[1][i]) * 0.5
				}
				x = [2][]float32{sgdStep(m, g0, lr), sgdStep(m, g1, lr)}
			}
			return x
		},
		"mavg": func() [2][]float32 {
			x := [2][]float32{init, init}
			for k := 0; k < steps; k++ {
				for r := range 2 {
					x[r] = sgdStep(x[r], gradAt(t, sim, x[r], batch(r, k)), lr)
				}
				if (k+1)%2 == 0 {
					m := make([]float32, len(init))
					for i := range m {
						m[i] = (x[0][i] + x[1][i]) * 0.5
					}
					x = [2][]float32{m, m}
				}
			}
			return x
		},
	}
	for _, scheme := range []string{"asgd", "dpsgd", "mavg"} {
		want := replay[scheme]()[world.Rank()]
		got := run(t, scheme, rule(t, "sgd"), steps, nil)
		d := maxAbsDiff(got, want)
		must(t, d < 1e-6, "%s on rank %d differs from its replay by %g", scheme, world.Rank(), d)
		must(t, maxAbsDiff(got, init) > 1e-3, "%s: the parameters did not move", scheme)
	}
}

// asgd ends, lowers the loss on the whole data a lot, and two runs give
// the same bits.
func testASGDConverges(t *testing.T) {
	data := tinyData(64)
	lossOf := func(p []float32) float64 {
		tn := newTinyNet(t, 11)
		setParams(t, tn, p)
		b := tn.rows(t, data, 0, 64)
		out, err := tn.net.Inference(b)
		mustOK(t, err)
		l, err := network.LossValue(out, tn.loss)
		mustOK(t, err)
		return l
	}
	train := func() []float32 {
		tn := newTinyNet(t, 11)
		o, err := New("asgd", world, tn.net, tn.loss, rule(t, "sgd"), Options{})
		mustOK(t, err)
		for epoch := 0; epoch < 10; epoch++ {
			for k := 0; k < 8; k++ {
				_, err := o.Step(halfBatch(t, tn, world.Rank(), k))
				mustOK(t, err)
			}
		}
		return tn.params(t)
	}
	before := lossOf(newTinyNet(t, 11).params(t))
	a, b := train(), train()
	must(t, maxAbsDiff(a, b) == 0, "two asgd runs differ by %g", maxAbsDiff(a, b))
	after := lossOf(a)
	must(t, after < before/2, "asgd: loss on all data %g → %g after 80 steps, want at least halved", before, after)
	t.Logf("rank %d: asgd loss on all 64 samples %.4f → %.4f in 80 steps", world.Rank(), before, after)
}

// Three ranks: the ring has distinct left and right neighbours, dpsgd
// mixes three parameter sets, and asgd's server takes two workers'
// gradients in whatever order they arrive.
func TestThreeRanks(t *testing.T) {
	if world == nil {
		out, err := launch(t, "TestThreeRanks", 3)
		if err != nil {
			t.Fatalf("mpirun -np 3: %v\n%s", err, out)
		}
		if n := strings.Count(out, "--- PASS: TestThreeRanks "); n != 3 {
			t.Fatalf("TestThreeRanks passed on %d ranks, want 3:\n%s", n, out)
		}
		return
	}
	must(t, world.Size() == 3, "run with 3 ranks, got %d", world.Size())
	r := world.Rank()

	l, rt := make([]float32, 1), make([]float32, 1)
	mustOK(t, world.RingExchange([]float32{float32(10 * r)}, l, rt))
	must(t, l[0] == float32(10*((r+2)%3)) && rt[0] == float32(10*((r+1)%3)), "rank %d heard %v from the left, %v from the right", r, l, rt)
	buf := []float32{float32(r)}
	mustOK(t, world.AllReduceMean(buf))
	must(t, buf[0] == 1, "mean of 0, 1, 2: %v", buf)

	// dpsgd against its replay: x_i ← (x_{i-1} + x_i + x_{i+1})/3 − lr·g_i(x_i).
	const lr, steps = 0.05, 4
	sim := newTinyNet(t, 11)
	init := sim.params(t)
	batch := func(rank, k int) map[string]onnx.Value {
		from := k*12 + rank*4
		return sim.rows(t, tinyData(64), from, from+4)
	}
	x := [3][]float32{init, init, init}
	for k := 0; k < steps; k++ {
		var next [3][]float32
		for i := range 3 {
			g := gradAt(t, sim, x[i], batch(i, k))
			m := make([]float32, len(init))
			for j := range m {
				m[j] = (x[(i+2)%3][j] + x[i][j] + x[(i+1)%3][j]) / 3
			}
			next[i] = sgdStep(m, g, lr)
		}
		x = next
	}
	tn := newTinyNet(t, 11)
	o, err := New("dpsgd", world, tn.net, tn.loss, rule(t, "sgd"), Options{})
	mustOK(t, err)
	for k := 0; k < steps; k++ {
		_, err := o.Step(tn.rows(t, tinyData(64), k*12+r*4, k*12+r*4+4))
		mustOK(t, err)
	}
	d := maxAbsDiff(tn.params(t), x[r])
	must(t, d < 1e-6, "dpsgd on rank %d of 3 differs from its replay by %g", r, d)

	// The consistent schemes stay identical on three ranks.
	for _, scheme := range []string{"pssgd", "dsgd", "allreduce"} {
		tn := newTinyNet(t, 11)
		o, err := New(scheme, world, tn.net, tn.loss, rule(t, "adam"), Options{})
		mustOK(t, err)
		for k := 0; k < steps; k++ {
			_, err := o.Step(tn.rows(t, tinyData(64), k*12+r*4, k*12+r*4+4))
			mustOK(t, err)
			must(t, sameOnAllRanks(t, tn.params(t)), "%s: ranks differ after step %d", scheme, k+1)
		}
	}

	// asgd with two workers ends (every worker is served once per step)
	// and lowers the loss of rank 0's model on all the data.
	tn = newTinyNet(t, 11)
	o, err = New("asgd", world, tn.net, tn.loss, rule(t, "sgd"), Options{})
	mustOK(t, err)
	all := tn.rows(t, tinyData(64), 0, 64)
	lossOf := func() float64 {
		out, err := tn.net.Inference(all)
		mustOK(t, err)
		l, err := network.LossValue(out, tn.loss)
		mustOK(t, err)
		return l
	}
	before := lossOf()
	for epoch := 0; epoch < 15; epoch++ {
		for k := 0; k < 5; k++ {
			_, err := o.Step(tn.rows(t, tinyData(64), k*12+r*4, k*12+r*4+4))
			mustOK(t, err)
		}
	}
	if r == 0 {
		after := lossOf()
		must(t, after < before/2, "asgd on 3 ranks: loss %g → %g after 75 steps, want at least halved", before, after)
	}
	mustOK(t, world.Barrier())
}

// newBNNet is x [N, 2, 3] → BatchNormalization (training mode) → Flatten
// → Dense 3, with softmax cross-entropy: a model with running statistics.
func newBNNet(t *testing.T) (network.Network, string, []network.RunningStat) {
	t.Helper()
	b := models.NewBuilder("bn", models.DefaultOpset)
	b.SetSeed(5)
	x := b.Input("x", onnx.Float, -1, 2, 3)
	b.Output(b.Dense(b.Flatten(b.BatchNorm(x)), 3), "y")
	m, err := b.Model()
	mustOK(t, err)
	stats, err := network.BatchNormTraining(m)
	mustOK(t, err)
	loss, err := network.AppendClassLoss(m, network.LossSoftmaxCrossEntropy, "y", "")
	mustOK(t, err)
	net, err := backend.New("native", m, backend.Options{Threads: 1, Frozen: runner.BatchNormStats(m.Graph)})
	mustOK(t, err)
	t.Cleanup(func() { net.Close() })
	return net, loss, stats
}

// The consistent schemes make the ranks agree on BatchNormalization's
// running statistics too: after a step on different batches, each rank's
// updated statistics are replaced by their mean over the ranks, through
// the runner's StatsSyncer hook.
func testRunningStatsAgree(t *testing.T) {
	for _, scheme := range []string{"pssgd", "dsgd", "allreduce"} {
		net, loss, stats := newBNNet(t)
		o, err := New(scheme, world, net, loss, sgd(t, 0.1), Options{})
		mustOK(t, err)
		syncer, ok := o.(runner.StatsSyncer)
		must(t, ok, "%s does not sync running statistics", scheme)
		// Every rank its own data: different batch statistics.
		data, _ := runner.Synthetic(runner.SyntheticConfig{Classes: 3, Shape: []int{2, 3}, N: 16, Seed: uint64(20 + world.Rank())})
		s, err := runner.NewOrdered(data, runner.SamplerOptions{BatchSize: 8})
		mustOK(t, err)
		x, y, _, err := s.Next()
		mustOK(t, err)
		_, err = o.Step(map[string]onnx.Value{"x": x, "labels": y})
		mustOK(t, err)
		_, err = network.CopyRunningStats(net, stats, nil)
		mustOK(t, err)
		var names []string
		var local []float32
		for _, st := range stats {
			names = append(names, st.Param)
			v, err := network.FetchTensor(net, st.Param)
			mustOK(t, err)
			local = append(local, v.Float32s()...)
		}
		must(t, !sameOnAllRanks(t, local), "%s: the ranks' batch statistics did not differ", scheme)
		want := append([]float32(nil), local...)
		mustOK(t, world.AllReduceMean(want))
		mustOK(t, syncer.SyncStats(names))
		var got []float32
		for _, name := range names {
			v, err := network.FetchTensor(net, name)
			mustOK(t, err)
			got = append(got, v.Float32s()...)
		}
		must(t, maxAbsDiff(got, want) == 0, "%s: running statistics %v, want the ranks' mean %v", scheme, got, want)
		must(t, sameOnAllRanks(t, got), "%s: running statistics differ between ranks", scheme)
	}
}
