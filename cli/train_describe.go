package cli

import (
	"fmt"
	"strings"

	"github.com/deep500/deep500-go/runner"
)

// runDescription is what `d500 train` prints before its first step: every
// choice the run's figures depend on, so that a log or a pasted figure
// says how to get it again.
type runDescription struct {
	source              modelSource // its seed is also the shuffle's
	backend             string
	dataset             string
	train, test         runner.Dataset // test may be nil
	optimizer, impl     string
	lr                  float64
	batch, epochs, step int // step: the --steps bound (0: epochs bound the run)
	perEpoch            int // optimizer steps in an epoch
	shuffle             bool
	scheme              string // distributed scheme, with ranks > 1
	ranks               int
}

func (d runDescription) String() string {
	var b strings.Builder
	if !d.source.isFile() {
		fmt.Fprintf(&b, "training preset %s (seed %d, --init %v)", d.source.spec, d.source.seed, d.source.init)
	} else {
		fmt.Fprintf(&b, "training %s", d.source.spec)
	}
	fmt.Fprintf(&b, " on %s: %s, %d training samples", d.backend, d.dataset, d.train.Len())
	if d.test != nil {
		fmt.Fprintf(&b, " and %d test samples", d.test.Len())
	}
	order := "in order"
	if d.shuffle {
		order = fmt.Sprintf("shuffled with seed %d", d.source.seed)
	}
	fmt.Fprintf(&b, " (%s); %s (%s) with lr %g, batch %d, ", order, d.optimizer, d.impl, d.lr, d.batch)
	switch {
	case d.step > 0:
		fmt.Fprintf(&b, "%d steps", d.step)
	case d.epochs == 1:
		fmt.Fprintf(&b, "1 epoch of %d steps", d.perEpoch)
	default:
		fmt.Fprintf(&b, "%d epochs of %d steps", d.epochs, d.perEpoch)
	}
	if d.ranks > 1 {
		fmt.Fprintf(&b, "; %s over %d ranks (the sample counts are this rank's)", d.scheme, d.ranks)
	}
	return b.String()
}
