package runner

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/onnx"
)

func idxBytes(dims []int, data []byte) []byte {
	b := []byte{0, 0, 0x08, byte(len(dims))}
	for _, d := range dims {
		b = binary.BigEndian.AppendUint32(b, uint32(d))
	}
	return append(b, data...)
}

func writeFile(t *testing.T, path string, data []byte, gz bool) {
	t.Helper()
	if gz {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		w.Write(data)
		w.Close()
		data = buf.Bytes()
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeMNIST writes n images of 2×3 pixels (pixel p of image i is
// 10*i+p) and labels i%10, train and test alike.
func writeMNIST(t *testing.T, dir string, n int, gz bool) {
	img := make([]byte, n*6)
	lab := make([]byte, n)
	for i := 0; i < n; i++ {
		for p := 0; p < 6; p++ {
			img[i*6+p] = byte(10*i + p)
		}
		lab[i] = byte(i % 10)
	}
	sfx := ""
	if gz {
		sfx = ".gz"
	}
	for _, pre := range []string{"train", "t10k"} {
		writeFile(t, filepath.Join(dir, pre+"-images-idx3-ubyte"+sfx), idxBytes([]int{n, 2, 3}, img), gz)
		writeFile(t, filepath.Join(dir, pre+"-labels-idx1-ubyte"+sfx), idxBytes([]int{n}, lab), gz)
	}
}

func TestIDXReadBack(t *testing.T) {
	for _, gz := range []bool{false, true} {
		dir := t.TempDir()
		writeMNIST(t, dir, 4, gz)
		for _, spec := range []string{"mnist:" + dir, "idx:" + dir, "fashion-mnist:" + dir} {
			train, test, err := ParseSpec(spec)
			if err != nil {
				t.Fatalf("gz=%v %s: %v", gz, spec, err)
			}
			for _, ds := range []Dataset{train, test} {
				x, y, err := All(ds)
				if err != nil {
					t.Fatal(err)
				}
				if !equalInts(x.Shape, []int{4, 1, 2, 3}) || !equalInts(y.Shape, []int{4}) {
					t.Fatalf("shapes %v %v", x.Shape, y.Shape)
				}
				for i := 0; i < 4; i++ {
					if y.Int64s()[i] != int64(i) {
						t.Errorf("label %d = %d", i, y.Int64s()[i])
					}
					for p := 0; p < 6; p++ {
						if got, want := x.Float32s()[i*6+p], float32(10*i+p)/255; got != want {
							t.Errorf("gz=%v pixel %d,%d = %v, want %v", gz, i, p, got, want)
						}
					}
				}
			}
		}
	}
}

func TestIDXBadFiles(t *testing.T) {
	dir := t.TempDir()
	cases := map[string][]byte{
		"magic":     append([]byte{1, 2, 8, 1}, 0, 0, 0, 1, 5),
		"type":      {0, 0, 0x0D, 1, 0, 0, 0, 1, 5},
		"truncated": idxBytes([]int{3, 2, 2}, make([]byte, 11)),
		"header":    {0, 0, 8, 3, 0, 0},
	}
	for name, data := range cases {
		for _, gz := range []bool{false, true} {
			p := filepath.Join(dir, name)
			if gz {
				p += ".gz"
			}
			writeFile(t, p, data, gz)
			_, err := ReadIDX(p)
			if err == nil || !strings.Contains(err.Error(), p) {
				t.Errorf("%s gz=%v: error %v does not name the file", name, gz, err)
			}
		}
	}
	// A missing file is named.
	writeMNIST(t, dir, 2, true)
	os.Remove(filepath.Join(dir, "t10k-labels-idx1-ubyte.gz"))
	_, _, err := ParseSpec("mnist:" + dir)
	if err == nil || !strings.Contains(err.Error(), "t10k-labels-idx1-ubyte") {
		t.Errorf("missing file: %v", err)
	}
}

func cifarRecordBytes(label byte, seed int) []byte {
	r := make([]byte, cifarRecord)
	r[0] = label
	for j := 1; j < cifarRecord; j++ {
		r[j] = byte(seed*7 + j)
	}
	return r
}

func TestCIFAR10(t *testing.T) {
	dir := t.TempDir()
	for b := 1; b <= 5; b++ {
		var data []byte
		for k := 0; k < 2; k++ {
			data = append(data, cifarRecordBytes(byte((b+k)%10), b*2+k)...)
		}
		writeFile(t, filepath.Join(dir, "data_batch_"+string(rune('0'+b))+".bin"), data, false)
	}
	writeFile(t, filepath.Join(dir, "test_batch.bin"), cifarRecordBytes(3, 99), false)
	train, test, err := ParseSpec("cifar10:" + dir)
	if err != nil {
		t.Fatal(err)
	}
	if train.Len() != 10 || test.Len() != 1 {
		t.Fatalf("lengths %d %d", train.Len(), test.Len())
	}
	x, y, err := All(train)
	if err != nil {
		t.Fatal(err)
	}
	if !equalInts(x.Shape, []int{10, 3, 32, 32}) {
		t.Fatalf("shape %v", x.Shape)
	}
	for i := 0; i < 10; i++ {
		b, k := i/2+1, i%2
		if y.Int64s()[i] != int64((b+k)%10) {
			t.Errorf("label %d = %d", i, y.Int64s()[i])
		}
		want := cifarRecordBytes(0, b*2+k)
		for _, j := range []int{0, 1, 1024, 3071} {
			if got := x.Float32s()[i*3072+j]; got != float32(want[1+j])/255 {
				t.Errorf("sample %d pixel %d = %v, want %v", i, j, got, float32(want[1+j])/255)
			}
		}
	}
	// Truncated and bad-label files name the file.
	p := filepath.Join(dir, "test_batch.bin")
	writeFile(t, p, cifarRecordBytes(3, 1)[:100], false)
	if _, _, err := ParseSpec("cifar10:" + dir); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("truncated: %v", err)
	}
	writeFile(t, p, cifarRecordBytes(12, 1), false)
	if _, _, err := ParseSpec("cifar10:" + dir); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("bad label: %v", err)
	}
	os.Remove(p)
	if _, _, err := ParseSpec("cifar10:" + dir); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("missing: %v", err)
	}
}

func TestTensorsDataset(t *testing.T) {
	dir := t.TempDir()
	sizes := []int{3, 3, 2}
	v := float32(0)
	for k, b := range sizes {
		xs := make([]float32, b*2)
		ys := make([]int64, b)
		for i := range xs {
			xs[i] = v
			v++
		}
		for i := range ys {
			ys[i] = int64(k*10 + i)
		}
		if err := onnx.WriteValue(filepath.Join(dir, "x_"+string(rune('0'+k))+".pb"), "x", onnx.FromSlice(xs, b, 2)); err != nil {
			t.Fatal(err)
		}
		if err := onnx.WriteValue(filepath.Join(dir, "y_"+string(rune('0'+k))+".pb"), "y", onnx.FromSlice(ys, b)); err != nil {
			t.Fatal(err)
		}
	}
	train, test, err := ParseSpec("tensors:" + dir)
	if err != nil {
		t.Fatal(err)
	}
	if test != nil {
		t.Errorf("test set without DIR/test: %v", test)
	}
	if got := train.(*Tensors).BatchSizes; !equalInts(got, sizes) {
		t.Errorf("batch sizes %v", got)
	}
	s, err := NewOrdered(train, SamplerOptions{BatchSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	v = 0
	for k, b := range sizes {
		x, y, _, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		if x.Shape[0] != b || y.Shape[0] != b {
			t.Fatalf("batch %d shape %v", k, x.Shape)
		}
		for _, got := range x.Float32s() {
			if got != v {
				t.Fatalf("batch %d value %v, want %v", k, got, v)
			}
			v++
		}
		for i, l := range y.Int64s() {
			if l != int64(k*10+i) {
				t.Errorf("batch %d label %d = %d", k, i, l)
			}
		}
	}
	os.Remove(filepath.Join(dir, "y_1.pb"))
	if _, _, err := ParseSpec("tensors:" + dir); err == nil || !strings.Contains(err.Error(), "y_1.pb") {
		t.Errorf("missing y_1.pb: %v", err)
	}
}

func TestSyntheticDeterministic(t *testing.T) {
	spec := "synthetic:classes=3,shape=2x4,n=50,test=20,seed=7"
	a, at, err := ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	b, bt, _ := ParseSpec(spec)
	c, _, _ := ParseSpec("synthetic:classes=3,shape=2x4,n=50,test=20,seed=8")
	if a.Len() != 50 || at.Len() != 20 || !equalInts(a.SampleShape(), []int{2, 4}) {
		t.Fatalf("len %d %d shape %v", a.Len(), at.Len(), a.SampleShape())
	}
	ax, ay, _ := All(a)
	bx, by, _ := All(b)
	cx, _, _ := All(c)
	for i := range ax.Float32s() {
		if ax.Float32s()[i] != bx.Float32s()[i] {
			t.Fatal("same seed, different data")
		}
	}
	for i := range ay.Int64s() {
		if ay.Int64s()[i] != by.Int64s()[i] || ay.Int64s()[i] < 0 || ay.Int64s()[i] >= 3 {
			t.Fatal("labels differ or out of range")
		}
	}
	if ax.Float32s()[0] == cx.Float32s()[0] {
		t.Error("different seeds, same data")
	}
	atx, _, _ := All(at)
	btx, _, _ := All(bt)
	if atx.Float32s()[5] != btx.Float32s()[5] {
		t.Error("test set not deterministic")
	}
	// Separable: nearest class mean (from the training set) classifies
	// the test set almost perfectly.
	tr, te := Synthetic(SyntheticConfig{Classes: 10, N: 1000, TestN: 300, Seed: 1})
	d := 784
	means := make([]float64, 10*d)
	counts := make([]int, 10)
	for i := 0; i < tr.Len(); i++ {
		c := tr.Y[i]
		counts[c]++
		for j := 0; j < d; j++ {
			means[int(c)*d+j] += float64(tr.X[i*d+j])
		}
	}
	correct := 0
	for i := 0; i < te.Len(); i++ {
		best, bd := -1, 0.0
		for c := 0; c < 10; c++ {
			var s float64
			for j := 0; j < d; j++ {
				e := float64(te.X[i*d+j]) - means[c*d+j]/float64(max(counts[c], 1))
				s += e * e
			}
			if best < 0 || s < bd {
				best, bd = c, s
			}
		}
		if int64(best) == te.Y[i] {
			correct++
		}
	}
	if correct < 297 {
		t.Errorf("nearest-mean accuracy %d/300", correct)
	}
}

func TestParseSpecErrors(t *testing.T) {
	for _, spec := range []string{"nope", "mnist", "cifar10", "tensors", "synthetic:n=0", "synthetic:shape=2xa", "synthetic:foo=1", "mnist:/nonexistent/dir"} {
		if _, _, err := ParseSpec(spec); err == nil {
			t.Errorf("%q: no error", spec)
		}
	}
}

func TestFashionMNISTInstalled(t *testing.T) {
	if _, err := os.Stat(filepath.Join(FashionMNISTDir, "train-images-idx3-ubyte.gz")); err != nil {
		t.Skipf("Fashion-MNIST not installed in %s (Debian package dataset-fashion-mnist; make setup installs it)", FashionMNISTDir)
	}
	train, test, err := ParseSpec("fashion-mnist")
	if err != nil {
		t.Fatal(err)
	}
	if train.Len() != 60000 || test.Len() != 10000 || !equalInts(train.SampleShape(), []int{1, 28, 28}) {
		t.Fatalf("lengths %d %d shape %v", train.Len(), test.Len(), train.SampleShape())
	}
	if n := train.(Classes).NumClasses(); n != 10 {
		t.Errorf("classes %d", n)
	}
	x := make([]float32, 784)
	counts := make([]int, 10)
	for i := 0; i < train.Len(); i++ {
		l, err := train.Sample(i, x)
		if err != nil {
			t.Fatal(err)
		}
		counts[l]++
	}
	for c, n := range counts {
		if n != 6000 {
			t.Errorf("class %d has %d training samples, want 6000", c, n)
		}
	}
	for _, v := range x {
		if v < 0 || v > 1 {
			t.Fatalf("pixel %v outside [0,1]", v)
		}
	}
}

// A synthetic dataset's memory is known before it is made, and one past
// the limit is refused naming the spec and the bytes.
func TestSyntheticBytesAndLimit(t *testing.T) {
	c := SyntheticConfig{Classes: 3, Shape: []int{2, 4}, N: 50, TestN: 20}
	got, err := c.Bytes()
	if want := int64((3+50+20)*8*4 + 8*70); err != nil || got != want {
		t.Errorf("Bytes = %d, %v; want %d", got, err, want)
	}
	if _, err := (SyntheticConfig{Shape: []int{1 << 40, 1 << 30}}).Bytes(); err == nil {
		t.Error("no error for an overflowing shape")
	}
	if _, _, err := ParseSpecWithin("synthetic:shape=1x1000x1000,n=100", 1<<20); err == nil || !strings.Contains(err.Error(), "needs") {
		t.Errorf("over the limit: %v", err)
	}
	if tr, _, err := ParseSpecWithin("synthetic:shape=2x4,n=50", 1<<20); err != nil || tr.Len() != 50 {
		t.Errorf("within the limit: %v", err)
	}
}
