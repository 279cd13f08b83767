package models_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/backend"
	_ "github.com/deep500/deep500-go/backend/native"
	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// presetCase is a preset with its input shape (batch left out), class
// count and trainable parameter count, the last computed by hand.
type presetCase struct {
	name    string
	input   []int
	classes int
	params  int
	// buffers counts BatchNorm's running statistics (2 per channel).
	buffers int
	slow    bool
}

func conv(cin, cout, k int) int { return cin * cout * k * k }

// cifarResNet counts a CIFAR ResNet with n blocks per stage: trainable
// parameters and BatchNorm channels.
func cifarResNet(n int) (params, bnChannels int) {
	params, bnChannels = conv(3, 16, 3)+2*16, 16
	in := 16
	for stage, c := range []int{16, 32, 64} {
		for i := range n {
			params += conv(in, c, 3) + 2*c + conv(c, c, 3) + 2*c
			bnChannels += 2 * c
			if stage > 0 && i == 0 {
				params += conv(in, c, 1) + 2*c
				bnChannels += c
			}
			in = c
		}
	}
	return params + 64*10 + 10, bnChannels
}

func cases() []presetCase {
	r8, bn8 := cifarResNet(1)
	r20, bn20 := cifarResNet(3)
	return []presetCase{
		{name: "mlp", input: []int{1, 28, 28}, classes: 10, params: 784*512 + 512 + 512*10 + 10},
		// LeNet-5: conv1 6·1·5·5+6, conv2 16·6·5·5+16, fc 400→120→84→10.
		{name: "lenet", input: []int{1, 28, 28}, classes: 10, params: 156 + 2416 + 48120 + 10164 + 850},
		{name: "resnet8", input: []int{3, 32, 32}, classes: 10, params: r8, buffers: 2 * bn8},
		{name: "resnet20", input: []int{3, 32, 32}, classes: 10, params: r20, buffers: 2 * bn20},
		// torchvision's published counts.
		{name: "resnet18", input: []int{3, 224, 224}, classes: 1000, params: 11689512, buffers: 2 * (64 + 4*64 + 4*128 + 128 + 4*256 + 256 + 4*512 + 512), slow: true},
		{name: "mobilenetv2", input: []int{3, 224, 224}, classes: 1000, params: 3504872, slow: true},
		// torchvision's published counts; the BatchNorm channels summed
		// from torchvision's tables: stem, then each block's expand,
		// depthwise and project widths, then the last Conv.
		{name: "mobilenet_v3_small", input: []int{3, 224, 224}, classes: 1000, params: 2542856, slow: true,
			buffers: 2 * (16 + 2*16 + (2*72 + 24) + (2*88 + 24) + (2*96 + 40) + 2*(2*240+40) + (2*120 + 48) + (2*144 + 48) + (2*288 + 96) + 2*(2*576+96) + 576)},
		// Stem 24; per stage with half width h: a stride-2 block (branch 1
		// 2h, branch 2 3h) and repeats-1 stride-1 blocks (3h); conv5 1024.
		{name: "shufflenet_v2_x0_5", input: []int{3, 224, 224}, classes: 1000, params: 1366792, slow: true,
			buffers: 2 * (24 + (5*24 + 3*3*24) + (5*48 + 7*3*48) + (5*96 + 3*3*96) + 1024)},
		{name: "squeezenet1_1", input: []int{3, 224, 224}, classes: 1000, params: 1235496, slow: true},
		// Stem 16+16+8; per block 2·mid + out; last Conv 1280.
		{name: "mnasnet0_5", input: []int{3, 224, 224}, classes: 1000, params: 2218512, slow: true,
			buffers: 2 * (40 + (2*24 + 16 + 2*(2*48+16)) + (2*48 + 24 + 2*(2*72+24)) + (2*144 + 40 + 2*(2*240+40)) +
				(2*240 + 48 + (2*288 + 48)) + (2*288 + 96 + 3*(2*576+96)) + (2*576 + 160) + 1280)},
		// Per encoder layer: Q, K, V and output projections 4·(64·64+64),
		// feed-forward 64·256+256 + 256·64+64, two LayerNorms 2·2·64;
		// then Dense 64→10.
		{name: "transformer", input: []int{32, 64}, classes: 10, params: 2*(4*(64*64+64)+64*256+256+256*64+64+4*64) + 64*10 + 10},
		// LSTM 4·64·(32+64) + 2·4·64; GRU two directions of 3·64·(64+64)
		// + 2·3·64; Dense 128→10.
		{name: "lstm_gru", input: []int{32, 32}, classes: 10, params: 4*64*(32+64) + 2*4*64 + 2*(3*64*(64+64)+2*3*64) + 128*10 + 10},
	}
}

func randomInput(seed uint64, shape ...int) *onnx.Tensor {
	r := rand.New(rand.NewPCG(seed, 2))
	t := onnx.NewTensor(onnx.Float, shape...)
	for i := range t.Float32s() {
		t.Float32s()[i] = float32(r.NormFloat64())
	}
	return t
}

func bufferCount(m *onnx.Model) int {
	n := 0
	for _, in := range m.Graph.Initializers {
		if strings.HasSuffix(in.Name, ".running_mean") || strings.HasSuffix(in.Name, ".running_var") {
			n += in.Tensor.Len()
		}
	}
	return n
}

func TestPresets(t *testing.T) {
	for _, c := range cases() {
		t.Run(c.name, func(t *testing.T) {
			m, err := models.Preset(c.name, 1)
			if err != nil {
				t.Fatal(err)
			}
			bufs := bufferCount(m)
			if c.name == "mobilenetv2" {
				// 52 BatchNorms; count their channels from the model.
				c.buffers = bufs
			}
			if got := models.ParamCount(m) - bufs; got != c.params {
				t.Errorf("trainable parameters = %d, want %d", got, c.params)
			}
			if bufs != c.buffers {
				t.Errorf("BatchNorm running statistics = %d, want %d", bufs, c.buffers)
			}
			path := filepath.Join(t.TempDir(), c.name+".onnx")
			if err := onnx.Save(m, path); err != nil {
				t.Fatal(err)
			}
			loaded, err := onnx.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(loaded.Graph.Nodes) != len(m.Graph.Nodes) || len(loaded.Graph.Initializers) != len(m.Graph.Initializers) {
				t.Fatalf("reloaded model has %d nodes, %d initializers; want %d, %d",
					len(loaded.Graph.Nodes), len(loaded.Graph.Initializers), len(m.Graph.Nodes), len(m.Graph.Initializers))
			}
			for i, in := range m.Graph.Initializers {
				got := loaded.Graph.Initializers[i]
				if got.Name != in.Name || !slices.Equal(got.Tensor.Float32s(), in.Tensor.Float32s()) {
					t.Fatalf("initializer %d (%s) changed on reload", i, in.Name)
				}
			}
			for _, n := range loaded.Graph.Nodes {
				if _, unknown := n.Op.(*onnx.UnknownOperator); unknown || n.Op == nil {
					t.Fatalf("node %v has no typed operator", n)
				}
			}
			if c.slow && testing.Short() {
				t.Skip("224×224 inference skipped in -short mode")
			}
			net, err := backend.New("native", loaded, backend.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer net.Close()
			for _, batch := range []int{1, 2} {
				out, err := net.Inference(map[string]onnx.Value{"x": randomInput(3, append([]int{batch}, c.input...)...)})
				if err != nil {
					t.Fatalf("batch %d: %v", batch, err)
				}
				y, ok := out["y"].(*onnx.Tensor)
				if !ok {
					t.Fatalf("batch %d: output y missing: %v", batch, out)
				}
				if !slices.Equal(y.Shape, []int{batch, c.classes}) {
					t.Fatalf("batch %d: output shape %v, want [%d %d]", batch, y.Shape, batch, c.classes)
				}
				spread := false
				for i, v := range y.Float32s() {
					if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
						t.Fatalf("batch %d: y[%d] = %v", batch, i, v)
					}
					spread = spread || v != y.Float32s()[0]
				}
				if !spread {
					t.Errorf("batch %d: every score is %v", batch, y.Float32s()[0])
				}
			}
		})
	}
}

func TestPresetSeeds(t *testing.T) {
	a, err := models.Preset("resnet8", 7)
	if err != nil {
		t.Fatal(err)
	}
	b, err := models.Preset("resnet8", 7)
	if err != nil {
		t.Fatal(err)
	}
	c, err := models.Preset("resnet8", 8)
	if err != nil {
		t.Fatal(err)
	}
	for i, in := range a.Graph.Initializers {
		same := slices.Equal(in.Tensor.Float32s(), b.Graph.Initializers[i].Tensor.Float32s())
		if !same || in.Name != b.Graph.Initializers[i].Name {
			t.Errorf("%s differs between two builds with seed 7", in.Name)
		}
		if strings.HasSuffix(in.Name, ".weight") && strings.HasPrefix(in.Name, "conv") || strings.HasPrefix(in.Name, "fc") && strings.HasSuffix(in.Name, ".weight") {
			if slices.Equal(in.Tensor.Float32s(), c.Graph.Initializers[i].Tensor.Float32s()) {
				t.Errorf("%s is the same with seeds 7 and 8", in.Name)
			}
		}
	}
}

// Each policy draws Conv and Dense parameters from its distribution:
// InitHe normal weights with standard deviation √(2/fan_in) and zero
// biases, InitPyTorch weights and biases within ±1/√fan_in and spread
// over that range. BatchNorm is 1/0/0/1 under both.
func TestInitialisation(t *testing.T) {
	for _, init := range []models.Init{models.InitHe, models.InitPyTorch} {
		for _, preset := range []string{"resnet8", "lenet"} {
			m, err := models.PresetWith(preset, 1, init)
			if err != nil {
				t.Fatal(err)
			}
			checkInitialisation(t, fmt.Sprintf("%s under %v", preset, init), m, init)
		}
	}
}

func checkInitialisation(t *testing.T, what string, m *onnx.Model, init models.Init) {
	t.Helper()
	fanIn := map[string]int{} // layer name -> fan-in of its weight
	for _, in := range m.Graph.Initializers {
		layer, suffix, _ := strings.Cut(in.Name, ".")
		if suffix == "weight" && !strings.HasPrefix(layer, "bn") {
			fanIn[layer] = in.Tensor.Len() / in.Tensor.Shape[0]
		}
	}
	for _, in := range m.Graph.Initializers {
		d := in.Tensor.Float32s()
		layer, suffix, _ := strings.Cut(in.Name, ".")
		isBN := strings.HasPrefix(layer, "bn")
		switch {
		case !isBN && fanIn[layer] == 0:
			t.Errorf("%s: %s has no weight to take its fan-in from", what, in.Name)
		case !isBN && init == models.InitHe && suffix == "weight":
			checkNormal(t, what+" "+in.Name, d, math.Sqrt(2/float64(fanIn[layer])))
		case !isBN && init == models.InitHe && suffix == "bias":
			checkAll(t, what+" "+in.Name, d, 0)
		case !isBN && (suffix == "weight" || suffix == "bias"):
			bound := 1 / math.Sqrt(float64(fanIn[layer]))
			var maxAbs float64
			for _, v := range d {
				maxAbs = math.Max(maxAbs, math.Abs(float64(v)))
			}
			// Few biases (10 for the last layer) need not come close
			// to the bound; weights, thousands of draws, must.
			low := 0.8 * bound
			if suffix == "bias" {
				low = 0.2 * bound
			}
			if maxAbs > bound || maxAbs < low {
				t.Errorf("%s %s: max |v| = %g, want in [%g, %g]", what, in.Name, maxAbs, low, bound)
			}
		case isBN && (suffix == "bias" || suffix == "running_mean"):
			checkAll(t, what+" "+in.Name, d, 0)
		case isBN && (suffix == "weight" || suffix == "running_var"):
			checkAll(t, what+" "+in.Name, d, 1)
		default:
			t.Errorf("%s: unexpected initializer %s", what, in.Name)
		}
	}
}

// checkNormal checks that d looks drawn from a normal distribution with
// mean 0 and standard deviation std: its mean, its standard deviation and
// the share of draws within one std, each within four standard errors of
// what n draws give.
func checkNormal(t *testing.T, what string, d []float32, std float64) {
	t.Helper()
	n := float64(len(d))
	var sum, sumSq float64
	within := 0
	for _, v := range d {
		x := float64(v)
		sum += x
		sumSq += x * x
		if math.Abs(x) <= std {
			within++
		}
	}
	mean := sum / n
	sd := math.Sqrt(sumSq/n - mean*mean)
	const share = 0.6826894921370859 // P(|X| <= σ) for a normal X
	if math.Abs(mean) > 4*std/math.Sqrt(n) {
		t.Errorf("%s: mean %g of %d draws, want 0 ± %g", what, mean, len(d), 4*std/math.Sqrt(n))
	}
	if math.Abs(sd/std-1) > 4/math.Sqrt(2*n) {
		t.Errorf("%s: standard deviation %g, want %g ± %.1f%%", what, sd, std, 400/math.Sqrt(2*n))
	}
	if got, tol := float64(within)/n, 4*math.Sqrt(share*(1-share)/n); math.Abs(got-share) > tol {
		t.Errorf("%s: %.3f of the draws within one standard deviation, want %.3f ± %.3f", what, got, share, tol)
	}
}

func checkAll(t *testing.T, what string, d []float32, want float32) {
	t.Helper()
	for _, v := range d {
		if v != want {
			t.Fatalf("%s: %v, want all %v", what, v, want)
		}
	}
}

func TestParseInit(t *testing.T) {
	for _, init := range []models.Init{models.InitHe, models.InitPyTorch} {
		got, err := models.ParseInit(init.String())
		if err != nil || got != init {
			t.Errorf("ParseInit(%q) = %v, %v; want %v", init.String(), got, err, init)
		}
	}
	if _, err := models.ParseInit("xavier"); err == nil || !strings.Contains(err.Error(), "xavier") || !strings.Contains(err.Error(), "pytorch") {
		t.Errorf("ParseInit(xavier): %v, want an error naming it and the known policies", err)
	}
}

// Every parameter of resnet8 and of the presets added for issue 12 gets a
// finite, non-zero gradient of a softmax cross-entropy loss on the native
// backend: each of their operators has a gradient rule.
func TestPresetGradients(t *testing.T) {
	for _, c := range cases() {
		switch c.name {
		case "mlp", "lenet", "resnet20", "resnet18", "mobilenetv2":
			continue // covered by resnet8's operators, or too slow to add
		}
		t.Run(c.name, func(t *testing.T) {
			if c.slow && testing.Short() {
				t.Skip("224×224 backprop skipped in -short mode")
			}
			checkGradients(t, c)
		})
	}
}

func checkGradients(t *testing.T, c presetCase) {
	m, err := models.Preset(c.name, 1)
	if err != nil {
		t.Fatal(err)
	}
	loss, err := network.AppendLoss(m, network.LossSoftmaxCrossEntropy, "y", "labels")
	if err != nil {
		t.Fatal(err)
	}
	net, err := backend.New("native", m, backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer net.Close()
	feeds := map[string]onnx.Value{
		"x":      randomInput(4, append([]int{2}, c.input...)...),
		"labels": onnx.FromSlice([]int64{3, 7}, 2),
	}
	out, err := net.InferenceAndBackprop(feeds, loss)
	if err != nil {
		t.Fatal(err)
	}
	l := out[loss].(*onnx.Tensor).Float32s()[0]
	if !(l > 0) || math.IsInf(float64(l), 0) {
		t.Fatalf("loss = %v", l)
	}
	grads := map[string]string{}
	for _, pg := range net.Gradients(loss) {
		grads[pg.Param] = pg.Grad
	}
	for _, in := range m.Graph.Initializers {
		g, ok := grads[in.Name]
		if !ok {
			t.Errorf("no gradient for %s", in.Name)
			continue
		}
		gt, err := network.FetchTensor(net, g)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(gt.Shape, in.Tensor.Shape) {
			t.Errorf("gradient of %s has shape %v, want %v", in.Name, gt.Shape, in.Tensor.Shape)
			continue
		}
		var norm float64
		for _, v := range gt.Float32s() {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("gradient of %s has %v", in.Name, v)
			}
			norm += float64(v) * float64(v)
		}
		if norm == 0 {
			t.Errorf("gradient of %s is zero", in.Name)
		}
	}
}

// The sequence presets' parameters under each policy: Linear weights
// ([in, out], fan-in in) and the classifier as Conv and Dense are; the
// LayerNorm scale 1 and bias 0; the recurrent W, R and B uniform within
// ±1/√hidden (hidden 64) and spread over that range, whatever the policy.
func TestSequenceInitialisation(t *testing.T) {
	for _, init := range []models.Init{models.InitHe, models.InitPyTorch} {
		for _, preset := range []string{"transformer", "lstm_gru"} {
			m, err := models.PresetWith(preset, 1, init)
			if err != nil {
				t.Fatal(err)
			}
			fanIn := map[string]int{}
			for _, in := range m.Graph.Initializers {
				layer, suffix, _ := strings.Cut(in.Name, ".")
				switch {
				case suffix == "weight" && strings.HasPrefix(layer, "linear"):
					fanIn[layer] = in.Tensor.Shape[0]
				case suffix == "weight" && strings.HasPrefix(layer, "fc"):
					fanIn[layer] = in.Tensor.Shape[1]
				}
			}
			what := fmt.Sprintf("%s under %v", preset, init)
			for _, in := range m.Graph.Initializers {
				d := in.Tensor.Float32s()
				layer, suffix, _ := strings.Cut(in.Name, ".")
				name := what + " " + in.Name
				switch {
				case strings.HasPrefix(layer, "ln") && suffix == "weight":
					checkAll(t, name, d, 1)
				case strings.HasPrefix(layer, "ln") && suffix == "bias":
					checkAll(t, name, d, 0)
				case strings.HasPrefix(layer, "lstm") || strings.HasPrefix(layer, "gru"):
					checkUniform(t, name, d, 1.0/8, 0.8/8)
				case fanIn[layer] == 0:
					t.Errorf("%s: unexpected initializer", name)
				case init == models.InitHe && suffix == "weight":
					checkNormal(t, name, d, math.Sqrt(2/float64(fanIn[layer])))
				case init == models.InitHe:
					checkAll(t, name, d, 0)
				case suffix == "weight":
					checkUniform(t, name, d, 1/math.Sqrt(float64(fanIn[layer])), 0.8/math.Sqrt(float64(fanIn[layer])))
				default:
					checkUniform(t, name, d, 1/math.Sqrt(float64(fanIn[layer])), 0.2/math.Sqrt(float64(fanIn[layer])))
				}
			}
		}
	}
}

// checkUniform checks that every |v| is at most bound and the largest is
// at least low (draws uniform in ±bound come close to it).
func checkUniform(t *testing.T, what string, d []float32, bound, low float64) {
	t.Helper()
	var maxAbs float64
	for _, v := range d {
		maxAbs = math.Max(maxAbs, math.Abs(float64(v)))
	}
	if maxAbs > bound || maxAbs < low {
		t.Errorf("%s: max |v| = %g, want in [%g, %g]", what, maxAbs, low, bound)
	}
}

// The layers whose semantics PyTorch fixes and a backend comparison
// cannot (both backends would agree on a wrong attribute): HardSigmoid is
// PyTorch's relu6(x+3)/6 (alpha 1/6, not ONNX's default 0.2), HardSwish
// x·that, ChannelShuffle of 2 groups interleaves the halves, and Split
// then Concat of the halves swapped rotates the channels.
func TestLayerValues(t *testing.T) {
	b := models.NewBuilder("values", 0)
	x := b.Input("x", onnx.Float, -1, 6, 1, 1)
	b.Output(b.HardSigmoid(x), "hardsigmoid")
	b.Output(b.HardSwish(x), "hardswish")
	b.Output(b.ChannelShuffle(x, 2), "shuffled")
	halves := b.Split(x, 1, 2)
	b.Output(b.Concat(1, halves[1], halves[0]), "rotated")
	m, err := b.Model()
	if err != nil {
		t.Fatal(err)
	}
	net, err := backend.New("native", m, backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer net.Close()
	in := []float32{-4, -3, -1.5, 0, 1.5, 3}
	out, err := net.Inference(map[string]onnx.Value{"x": onnx.FromSlice(in, 1, 6, 1, 1)})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]float32{
		"hardsigmoid": {0, 0, 0.25, 0.5, 0.75, 1},
		"hardswish":   {0, 0, -0.375, 0, 1.125, 3},
		"shuffled":    {-4, 0, -3, 1.5, -1.5, 3},
		"rotated":     {0, 1.5, 3, -4, -3, -1.5},
	} {
		got := out[name].(*onnx.Tensor)
		if !slices.Equal(got.Shape, []int{1, 6, 1, 1}) {
			t.Errorf("%s: shape %v", name, got.Shape)
		}
		for i, v := range got.Float32s() {
			if math.Abs(float64(v-want[i])) > 1e-6 {
				t.Errorf("%s = %v, want %v", name, got.Float32s(), want)
				break
			}
		}
	}
}

// One step of gradient descent on each preset added for issue 12, set up
// as d500 train sets up a preset (BatchNormalization in training mode,
// batch statistics; softmax cross-entropy), lowers the loss on the same
// batch by what the gradient predicts: the parameters move by 1e-3
// against the gradient g (in Euclidean norm over all of them), so the
// loss must fall by 1e-3·|g| to first order — within 20%, which a
// gradient wrong in direction or size would miss (measured: 96% to 100%).
func TestPresetTrainingStep(t *testing.T) {
	for _, c := range cases() {
		if !slices.Contains([]string{"mobilenet_v3_small", "shufflenet_v2_x0_5", "squeezenet1_1", "mnasnet0_5", "transformer", "lstm_gru"}, c.name) {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			if c.slow && testing.Short() {
				t.Skip("224×224 training skipped in -short mode")
			}
			m, err := models.Preset(c.name, 1)
			if err != nil {
				t.Fatal(err)
			}
			stats, err := network.BatchNormTraining(m)
			if err != nil {
				t.Fatal(err)
			}
			running := map[string]bool{}
			for _, s := range stats {
				running[s.Param] = true
			}
			loss, err := network.AppendLoss(m, network.LossSoftmaxCrossEntropy, "y", "labels")
			if err != nil {
				t.Fatal(err)
			}
			feeds := map[string]onnx.Value{
				"x":      randomInput(6, append([]int{4}, c.input...)...),
				"labels": onnx.FromSlice([]int64{1, 5, 0, 9}, 4),
			}
			net, err := backend.New("native", m, backend.Options{})
			if err != nil {
				t.Fatal(err)
			}
			out, err := net.InferenceAndBackprop(feeds, loss)
			if err != nil {
				net.Close()
				t.Fatal(err)
			}
			before := float64(out[loss].(*onnx.Tensor).Float32s()[0])
			grads := map[string][]float32{}
			var norm float64
			for _, pg := range net.Gradients(loss) {
				if running[pg.Param] {
					continue
				}
				g, err := network.FetchTensor(net, pg.Grad)
				if err != nil {
					t.Fatal(err)
				}
				grads[pg.Param] = slices.Clone(g.Float32s())
				for _, v := range g.Float32s() {
					norm += float64(v) * float64(v)
				}
			}
			net.Close()
			norm = math.Sqrt(norm)
			if !(norm > 0) || math.IsInf(norm, 0) {
				t.Fatalf("gradient norm %v", norm)
			}
			step := 1e-3 / norm
			for _, in := range m.Graph.Initializers {
				if running[in.Name] {
					continue
				}
				g, ok := grads[in.Name]
				if !ok {
					t.Fatalf("no gradient for %s", in.Name)
				}
				p := in.Tensor.Float32s()
				for i := range p {
					p[i] -= float32(step * float64(g[i]))
				}
			}
			net, err = backend.New("native", m, backend.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer net.Close()
			out, err = net.Inference(feeds)
			if err != nil {
				t.Fatal(err)
			}
			after := float64(out[loss].(*onnx.Tensor).Float32s()[0])
			t.Logf("loss %.6g -> %.6g (gradient norm %.3g)", before, after, norm)
			if ratio := (before - after) / (1e-3 * norm); !(ratio > 0.8 && ratio < 1.2) {
				t.Errorf("loss fell by %.3g, %.3g of the %.3g the gradient predicts", before-after, ratio, 1e-3*norm)
			}
		})
	}
}
