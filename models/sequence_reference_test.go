package models_test

import (
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/network"
	"github.com/deep500/deep500-go/onnx"
)

// The transformer preset computes nn.TransformerEncoder's formula: a
// direct float64 evaluation from its initializers (PyTorch's
// multi-head attention written out with loops: per head h the columns
// h·16..h·16+15 of Q, K and V, softmax(Q_h·K_hᵀ/4)·V_h, the heads side by
// side, post-norm LayerNorms) agrees with the native backend's output.
// This pins what a backend comparison cannot: which dimensions the
// graph's Reshapes and Transposes split into heads.
func TestTransformerMatchesReference(t *testing.T) {
	m, err := models.Preset("transformer", 5)
	if err != nil {
		t.Fatal(err)
	}
	params := map[string]*onnx.Tensor{}
	for _, in := range m.Graph.Initializers {
		params[in.Name] = in.Tensor
	}
	const n, steps, width, heads = 2, 32, 64, 4
	x := randomInput(9, n, steps, width)
	net, err := backend.New("native", m, backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer net.Close()
	out, err := net.Inference(map[string]onnx.Value{"x": x})
	if err != nil {
		t.Fatal(err)
	}
	got := out["y"].(*onnx.Tensor).Float32s()

	linearCount, lnCount := 0, 0
	// linear applies the next Linear layer (weight [in, out]) to rows.
	linear := func(rows [][]float64) [][]float64 {
		linearCount++
		name := "linear" + strconv.Itoa(linearCount)
		w, bias := params[name+".weight"], params[name+".bias"].Float32s()
		in, outW := w.Shape[0], w.Shape[1]
		res := make([][]float64, len(rows))
		for r, row := range rows {
			res[r] = make([]float64, outW)
			for o := range outW {
				s := float64(bias[o])
				for i := range in {
					s += row[i] * float64(w.Float32s()[i*outW+o])
				}
				res[r][o] = s
			}
		}
		return res
	}
	layerNorm := func(rows [][]float64) [][]float64 {
		lnCount++
		name := "ln" + strconv.Itoa(lnCount)
		g, bias := params[name+".weight"].Float32s(), params[name+".bias"].Float32s()
		for _, row := range rows {
			var mean, variance float64
			for _, v := range row {
				mean += v / float64(len(row))
			}
			for _, v := range row {
				variance += (v - mean) * (v - mean) / float64(len(row))
			}
			for i := range row {
				row[i] = (row[i]-mean)/math.Sqrt(variance+1e-5)*float64(g[i]) + float64(bias[i])
			}
		}
		return rows
	}
	add := func(a, b [][]float64) [][]float64 {
		for r := range a {
			for i := range a[r] {
				a[r][i] += b[r][i]
			}
		}
		return a
	}
	for sample := range n {
		h := make([][]float64, steps)
		for s := range steps {
			h[s] = make([]float64, width)
			for i := range width {
				h[s][i] = float64(x.Float32s()[(sample*steps+s)*width+i])
			}
		}
		for range 2 {
			q, k, v := linear(h), linear(h), linear(h)
			att := make([][]float64, steps)
			for s := range steps {
				att[s] = make([]float64, width)
			}
			const hd = width / heads
			for head := range heads {
				for s := range steps {
					scores := make([]float64, steps)
					var maxScore, sum float64 = math.Inf(-1), 0
					for u := range steps {
						for i := head * hd; i < (head+1)*hd; i++ {
							scores[u] += q[s][i] * k[u][i] / math.Sqrt(hd)
						}
						maxScore = math.Max(maxScore, scores[u])
					}
					for u := range steps {
						scores[u] = math.Exp(scores[u] - maxScore)
						sum += scores[u]
					}
					for u := range steps {
						for i := head * hd; i < (head+1)*hd; i++ {
							att[s][i] += scores[u] / sum * v[u][i]
						}
					}
				}
			}
			h = layerNorm(add(h, linear(att)))
			hidden := linear(h)
			for _, row := range hidden {
				for i := range row {
					row[i] = math.Max(row[i], 0)
				}
			}
			h = layerNorm(add(h, linear(hidden)))
		}
		linearCount, lnCount = linearCount-12, lnCount-4 // the next sample reuses the layers
		w, bias := params["fc1.weight"], params["fc1.bias"].Float32s()
		for class := range 10 {
			want := float64(bias[class])
			for i := range width {
				var mean float64
				for s := range steps {
					mean += h[s][i] / steps
				}
				want += mean * float64(w.Float32s()[class*width+i])
			}
			if g := float64(got[sample*10+class]); math.Abs(g-want) > 1e-4*(1+math.Abs(want)) {
				t.Errorf("y[%d][%d] = %.6g, reference %.6g", sample, class, g, want)
			}
		}
	}
}

// The lstm_gru preset classifies the last step of the GRU's batch-first
// output, forward state then backward state, as PyTorch's
// output[:, -1, :] of a bidirectional batch_first GRU: y equals Dense 10
// applied to gru1's Y[T-1, 0, n, :] followed by Y[T-1, 1, n, :].
func TestRecurrentClassifiesLastStep(t *testing.T) {
	m, err := models.Preset("lstm_gru", 5)
	if err != nil {
		t.Fatal(err)
	}
	net, err := backend.New("native", m, backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer net.Close()
	const n, steps, hidden = 3, 32, 64
	out, err := net.Inference(map[string]onnx.Value{"x": randomInput(11, n, steps, 32)})
	if err != nil {
		t.Fatal(err)
	}
	got := out["y"].(*onnx.Tensor).Float32s()
	gru, err := network.FetchTensor(net, "gru1")
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{steps, 2, n, hidden}; !slices.Equal(gru.Shape, want) {
		t.Fatalf("gru1 has shape %v, want %v", gru.Shape, want)
	}
	var w, bias []float32
	for _, in := range m.Graph.Initializers {
		switch in.Name {
		case "fc1.weight":
			w = in.Tensor.Float32s()
		case "fc1.bias":
			bias = in.Tensor.Float32s()
		}
	}
	y := gru.Float32s()
	for sample := range n {
		features := make([]float64, 0, 2*hidden)
		for dir := range 2 {
			at := ((steps-1)*2+dir)*n*hidden + sample*hidden
			for _, v := range y[at : at+hidden] {
				features = append(features, float64(v))
			}
		}
		for class := range 10 {
			want := float64(bias[class])
			for i, f := range features {
				want += f * float64(w[class*2*hidden+i])
			}
			if g := float64(got[sample*10+class]); math.Abs(g-want) > 1e-5*(1+math.Abs(want)) {
				t.Errorf("y[%d][%d] = %.6g, want %.6g from the last step", sample, class, g, want)
			}
		}
	}
}
