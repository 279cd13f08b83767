package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/deep500/deep500-go/models"
	"github.com/deep500/deep500-go/onnx"
)

const modelSynopsis = "PRESET -o FILE.onnx [--seed N] [--init he|pytorch]"

// cmdModel writes one of the model presets as an ONNX file.
func cmdModel(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("model", modelSynopsis, stderr)
	out := fs.String("o", "", "write the model to `FILE.onnx`")
	seed := fs.Uint64("seed", 1, "seed of the parameters' initialisation")
	initName := addInitFlag(fs)
	rest, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	switch {
	case len(rest) != 1:
		return usageError(fs, stderr, "want one PRESET (%s)", strings.Join(models.PresetNames(), ", "))
	case *out == "":
		return usageError(fs, stderr, "-o FILE.onnx is required")
	}
	policy, err := models.ParseInit(*initName)
	if err != nil {
		return usageError(fs, stderr, "--init: %v", err)
	}
	m, err := models.PresetWith(rest[0], *seed, policy)
	if err != nil {
		return usageError(fs, stderr, "%v", err)
	}
	if code := checkOutputs(fs, stderr, fileOut("o", *out)); code >= 0 {
		return code
	}
	if err := onnx.Save(m, *out); err != nil {
		fmt.Fprintf(stderr, "d500 model: %v\n", err)
		return exitFail
	}
	fmt.Fprintf(stdout, "%s: %d parameters, written to %s\n", rest[0], models.ParamCount(m), *out)
	return exitOK
}
