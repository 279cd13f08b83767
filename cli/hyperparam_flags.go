package cli

import (
	"github.com/deep500/deep500-go/optimizer"
	flag "github.com/spf13/pflag"
)

// hyperparamFlags are the optimizer's hyperparameters a command takes
// (train, export-training); one left out keeps the optimizer's default.
type hyperparamFlags struct {
	lr, momentum, beta1, beta2, eps, alpha, wd *optionalFloat
}

func addHyperparamFlags(fs *flag.FlagSet) *hyperparamFlags {
	return &hyperparamFlags{
		lr:       optionalFloatFlag(fs, "lr", "learning rate, a number `F` ≥ 0 (default: the optimizer's, as torch.optim's)"),
		momentum: optionalFloatFlag(fs, "momentum", "momentum, a number `F` ≥ 0 (default: the optimizer's; 0.9 for momentum and nesterov)"),
		beta1:    optionalFloatFlag(fs, "beta1", "Adam's beta1, a number `F` in [0, 1) (default 0.9)"),
		beta2:    optionalFloatFlag(fs, "beta2", "Adam's beta2, a number `F` in [0, 1) (default 0.999)"),
		eps:      optionalFloatFlag(fs, "eps", "epsilon, a number `F` ≥ 0 (default: the optimizer's)"),
		alpha:    optionalFloatFlag(fs, "alpha", "RMSprop's smoothing constant, a number `F` ≥ 0 (default 0.99)"),
		wd:       optionalFloatFlag(fs, "weight-decay", "weight decay, a number `F` ≥ 0 (default: the optimizer's)"),
	}
}

// resolve returns the named optimizer's defaults with the values given
// on the command line. A value given replaces the default whatever it is;
// optimizer.New then refuses those out of range (a negative rate, a beta
// of 1), as torch.optim does.
func (f *hyperparamFlags) resolve(name string) (optimizer.Hyperparams, error) {
	hp, err := optimizer.Defaults(name)
	if err != nil {
		return hp, err
	}
	for _, o := range []struct {
		v   *optionalFloat
		dst *float64
	}{{f.lr, &hp.LR}, {f.momentum, &hp.Momentum}, {f.beta1, &hp.Beta1}, {f.beta2, &hp.Beta2}, {f.eps, &hp.Eps}, {f.alpha, &hp.Alpha}, {f.wd, &hp.WeightDecay}} {
		if o.v.set {
			*o.dst = o.v.v
		}
	}
	return hp, nil
}
