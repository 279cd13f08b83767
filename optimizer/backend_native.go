package optimizer

import "github.com/deep500/deep500-go/network"

// BackendOptimizers is implemented by a Network whose backend brings
// optimizers of its own (Gorgonia's solvers, for instance). `--impl
// native` then uses them instead of running the reference update rules
// inside the backend through network.ParamUpdater.
type BackendOptimizers interface {
	// NativeOptimizer returns the backend's optimizer of that name (one of
	// Names) with hp, for the loss named loss. A name or hyperparameter the
	// backend cannot honour gives an error wrapping network.ErrUnsupported.
	NativeOptimizer(name string, hp Hyperparams, loss string) (TunableOptimizer, error)
}

// TunableOptimizer is an Optimizer whose live hyperparameters a caller
// (a learning-rate schedule) may read and change between steps.
type TunableOptimizer interface {
	Optimizer
	Tunable
}

// NewNativeFor returns the native optimizer of that name for net: the
// backend's own when net implements BackendOptimizers, otherwise NewNative.
func NewNativeFor(name string, hp Hyperparams, net network.Network, loss string) (TunableOptimizer, error) {
	if b, ok := net.(BackendOptimizers); ok {
		return b.NativeOptimizer(name, hp, loss)
	}
	nat, err := NewNative(name, hp, net, loss)
	if err != nil {
		return nil, err
	}
	return nat, nil
}

// Hyperparameters implements Tunable with the update rule's own
// hyperparameters (nil when the rule is not Tunable).
func (o *Native) Hyperparameters() *Hyperparams {
	if t, ok := o.Rule.(Tunable); ok {
		return t.Hyperparameters()
	}
	return nil
}
