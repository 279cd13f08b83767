package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/deep500/deep500-go/internal/memlimit"
)

// FashionMNISTDir is where the Debian package dataset-fashion-mnist puts
// the Fashion-MNIST IDX files (*-ubyte.gz).
const FashionMNISTDir = "/usr/share/datasets/fashion-mnist"

// ParseSpec opens the training and test sets a --dataset SPEC names:
//
//	fashion-mnist[:DIR]  IDX files, default folder FashionMNISTDir
//	mnist:DIR, idx:DIR   IDX files train-images-idx3-ubyte[.gz] etc.
//	cifar10:DIR          CIFAR-10 binary: data_batch_{1..5}.bin, test_batch.bin
//	tensors:DIR          recorded batches DIR/x_K.pb, DIR/y_K.pb; the test
//	                     set is DIR/test/ in the same layout, nil if absent
//	synthetic[:k=v,...]  Gaussian blobs; keys classes, shape (e.g. 1x28x28),
//	                     n, test, seed, sep, noise (see SyntheticConfig)
//
// Errors name the missing or bad file. A synthetic dataset larger than the
// machine's memory is refused before it is made (ParseSpecWithin).
func ParseSpec(spec string) (train, test Dataset, err error) {
	return ParseSpecWithin(spec, memlimit.Machine())
}

// ParseSpecWithin is ParseSpec with the most memory a dataset it
// generates may take (0: no limit): a synthetic:shape=1x1000000x1000000
// is then an error naming the dataset and the bytes it needs, not the
// runtime's fatal "out of memory".
func ParseSpecWithin(spec string, limit int64) (train, test Dataset, err error) {
	kind, arg, _ := strings.Cut(spec, ":")
	switch kind {
	case "fashion-mnist", "mnist", "idx":
		dir := arg
		if dir == "" {
			if kind != "fashion-mnist" {
				return nil, nil, fmt.Errorf("dataset %q: want %s:DIR", spec, kind)
			}
			dir = FashionMNISTDir
			if _, err := os.Stat(dir); err != nil {
				return nil, nil, fmt.Errorf("dataset fashion-mnist: folder %s not found (install the Debian package dataset-fashion-mnist, e.g. with make setup)", dir)
			}
		}
		tr, te, err := LoadIDXDir(dir)
		if err != nil {
			return nil, nil, err
		}
		return tr, te, nil
	case "cifar10":
		if arg == "" {
			return nil, nil, fmt.Errorf("dataset %q: want cifar10:DIR", spec)
		}
		tr, te, err := LoadCIFAR10Dir(arg)
		if err != nil {
			return nil, nil, err
		}
		return tr, te, nil
	case "tensors":
		if arg == "" {
			return nil, nil, fmt.Errorf("dataset %q: want tensors:DIR", spec)
		}
		tr, err := LoadTensors(arg)
		if err != nil {
			return nil, nil, err
		}
		td := filepath.Join(arg, "test")
		if _, err := os.Stat(td); err != nil {
			return tr, nil, nil
		}
		te, err := LoadTensors(td)
		if err != nil {
			return nil, nil, err
		}
		return tr, te, nil
	case "synthetic":
		cfg, err := parseSynthetic(arg)
		if err != nil {
			return nil, nil, fmt.Errorf("dataset %q: %w", spec, err)
		}
		need, err := cfg.Bytes()
		if err != nil {
			return nil, nil, fmt.Errorf("dataset %q: %w", spec, err)
		}
		if err := memlimit.Check(fmt.Sprintf("dataset %q", spec), need, limit); err != nil {
			return nil, nil, err
		}
		tr, te := Synthetic(cfg)
		return tr, te, nil
	}
	return nil, nil, fmt.Errorf("unknown dataset %q (want fashion-mnist, mnist:DIR, idx:DIR, cifar10:DIR, tensors:DIR or synthetic:...)", spec)
}

func parseSynthetic(arg string) (SyntheticConfig, error) {
	var c SyntheticConfig
	if arg == "" {
		return c, nil
	}
	for _, kv := range strings.Split(arg, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return c, fmt.Errorf("%q is not key=value", kv)
		}
		var err error
		switch k {
		case "classes":
			c.Classes, err = positive(v)
		case "n":
			c.N, err = positive(v)
		case "test":
			c.TestN, err = positive(v)
		case "seed":
			c.Seed, err = strconv.ParseUint(v, 10, 64)
		case "sep":
			c.Sep, err = strconv.ParseFloat(v, 64)
		case "noise":
			c.Noise, err = strconv.ParseFloat(v, 64)
		case "shape":
			for _, d := range strings.Split(v, "x") {
				n, e := positive(d)
				if e != nil {
					err = fmt.Errorf("shape %q: %w", v, e)
					break
				}
				c.Shape = append(c.Shape, n)
			}
		default:
			return c, fmt.Errorf("unknown key %q (want classes, shape, n, test, seed, sep, noise)", k)
		}
		if err != nil {
			return c, fmt.Errorf("%s: %w", k, err)
		}
	}
	return c, nil
}

func positive(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, err
	}
	if n <= 0 {
		return 0, fmt.Errorf("%d is not positive", n)
	}
	return n, nil
}
