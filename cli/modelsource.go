package cli

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/onnx"
	flag "github.com/spf13/pflag"
)

// modelSource is where a command's model comes from: an ONNX file, or a
// preset whose parameters are drawn from seed under init.
type modelSource struct {
	spec string // ONNX file or preset name
	seed uint64
	init models.Init
}

// load reads the ONNX file or builds the preset (a name without ".onnx"
// that is not an existing file; a folder of the preset's name does not
// hide it). Each call builds a fresh model, so callers may change it.
func (s modelSource) load() (*onnx.Model, error) {
	if s.isFile() {
		return onnx.Load(s.spec)
	}
	return models.PresetWith(s.spec, s.seed, s.init)
}

// check says why the spec names nothing, before any work: a file that
// does not exist, or a name that is no preset — bad usage, as an unknown
// optimizer or dataset is.
func (s modelSource) check() error {
	if s.isFile() {
		if _, err := os.Stat(s.spec); err != nil {
			return fmt.Errorf("--model %s: %w", s.spec, err)
		}
		return nil
	}
	if !slices.Contains(models.PresetNames(), s.spec) {
		return fmt.Errorf("--model %q is neither a file nor a model preset (known: %s)", s.spec, strings.Join(models.PresetNames(), ", "))
	}
	return nil
}

// isFile reports whether the spec names an ONNX file rather than a preset.
func (s modelSource) isFile() bool {
	fi, err := os.Stat(s.spec)
	return err == nil && !fi.IsDir() || strings.HasSuffix(s.spec, ".onnx")
}

// addInitFlag declares --init, the initialisation of a preset's
// parameters; parse its value with models.ParseInit.
func addInitFlag(fs *flag.FlagSet) *string {
	return fs.String("init", models.InitHe.String(), "initialisation of a preset's parameters: "+
		"he (He et al.: weights normal with std √(2/fan_in), biases 0) or "+
		"pytorch (PyTorch's default: weights and biases uniform in ±1/√fan_in); an ONNX file keeps its own")
}
