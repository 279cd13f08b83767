// Package models builds ONNX models in Go and holds the project's model
// presets.
//
// A Builder appends layers one at a time and tracks every value's static
// shape (the batch dimension is symbolic, "N"), so that a layer knows its
// input width without being told:
//
//	b := models.NewBuilder("lenet", models.DefaultOpset)
//	b.SetSeed(1)
//	x := b.Input("x", onnx.Float, -1, 1, 28, 28)
//	h := b.Relu(b.Conv(x, 6, 5, 1, 2))
//	h = b.MaxPool(h, 2, 2, 0)
//	h = b.Dense(b.Flatten(h), 10)
//	b.Output(h, "y")
//	m, err := b.Model()
//
// Errors (a bad shape, an unknown operator) are recorded at the first layer
// that meets them and returned by Model, so a model reads as a straight
// sequence of calls.
//
// Parameters are initializers, drawn from a seeded generator in the order
// the layers are added, so one seed gives one set of weights:
//   - Conv and Dense (Gemm) parameters follow the builder's Init policy.
//     The default, InitHe, is He et al.'s initialisation for Relu
//     networks: weights normal with standard deviation √(2/fan_in),
//     biases 0, with fan_in = input channels / groups × kernel area
//     (input features for Dense). InitPyTorch is PyTorch's default for
//     Conv2d and Linear: weights and biases uniform in [-1/√fan_in,
//     1/√fan_in];
//   - BatchNormalization's scale (gamma) is 1, its bias (beta) 0, its
//     running mean 0 and running variance 1; LayerNormalization's scale is
//     1 and its bias 0;
//   - Linear (MatMul and Add, for inputs of any rank, the weight stored
//     transposed as [in, out]) follows the Init policy as Dense does;
//   - the weights and biases of LSTM and GRU are uniform in ±1/√hidden
//     under every policy, PyTorch's default for its recurrent layers.
//
// Names are unique and PyTorch-like: a node and its output value are named
// after the layer kind and a counter ("conv3", "bn3", "fc1"), and its
// parameters after the node ("conv3.weight", "bn3.running_var").
// Constants that are not parameters (Clip bounds, Reshape's target shape,
// Squeeze's axes, Gather's index, the attention scale) are Constant nodes,
// so they are not mistaken for trainable initializers.
//
// Models import the ai.onnx opset given to NewBuilder; DefaultOpset is 17,
// the opset of PyTorch's default exporter for a long time, which every
// operator the builder emits is defined in. Every node gets its typed
// operator from the registry of package ops (imported here), as loading a
// model does.
//
// BatchNormalization is emitted in inference form (training_mode 0): it
// normalises with its running statistics, which the presets start at mean
// 0 and variance 1. Set Builder.BatchNormTraining before adding layers to
// emit training_mode 1 (batch statistics) instead. `d500 train` keeps the
// presets in inference form and switches a copy to training mode with
// network.BatchNormTraining, so that evaluation and the saved model use
// the running statistics training updated.
//
// Preset builds the named models: mlp, lenet, resnet8, resnet20, resnet18,
// mobilenetv2, torchvision's mobilenet_v3_small, shufflenet_v2_x0_5,
// squeezenet1_1 and mnasnet0_5 (layer for layer, with torchvision's
// parameter counts), a Transformer encoder (transformer) and a recurrent
// net (lstm_gru); PresetWith builds them under another initialisation.
package models
