// Package native is Deep500-Go's pure-Go backend: it executes ONNX graphs
// with kernels written in Go, and is the reference other backends are
// compared with. Importing it registers the backend "native".
//
// # Build phase: compiling nodes into kernels
//
// New walks the graph's nodes (already in topological order) with a
// builder, an ops.Visitor that embeds ops.UnsupportedVisitor and overrides
// the method of every operator it implements. Each Visit method compiles its
// node once: it resolves the node's input and output names to integer slot
// indices, reads and checks the typed attributes (whose meaning may depend
// on op.SinceVersion(), e.g. Softmax's axis before and after version 13),
// and appends a kernel — a closure over those indices and a small state
// struct — to the plan. An operator without a Visit method makes New fail
// with the error of ops.Visit, which wraps network.ErrUnsupported and names
// the operator and version.
//
// # Run phase: slots and the plan
//
// Every value name of the graph has a slot holding an onnx.Value (a
// tensor, a sequence, an optional). Initializers are stored in their slots
// at build time; graph inputs are bound per run; each kernel reads its
// input slots and stores its outputs. Outputs are collected by name and
// copied, so callers never alias a kernel's buffers. A kernel's error is
// wrapped with its node; a panic in a kernel (a bug, never the intended
// error path) is recovered and reported the same way.
//
// # Kernels
//
// Tensors are flat typed slices. A kernel switches on the element type once
// per call and then runs a generic loop instantiated for that type, so there
// is no per-element interface call or reflection. Float16 and bfloat16 are
// widened to float32, computed, and rounded back once (reducedfloat.go).
// Each kernel keeps its output tensor between runs and reuses it when the
// type and size are unchanged (buffers.go).
//
// Broadcasting (broadcast.go) precomputes per-operand strides, merges
// dimensions that move together, and walks the output in rows, with
// dedicated loops for same-shape and scalar operands. Layout operators
// share one strided-copy primitive (layout.go).
//
// The math kernels live in packages of their own under internal/, which
// know nothing of ONNX, operators or tensors (as gonum's internal/asm and
// ONNX Runtime's MLAS know nothing of their callers); the operators here
// check attributes and shapes and call them:
//   - internal/gemm: the cache-blocked GEMM behind MatMul, Gemm, the
//     convolutions and the recurrent operators, with packed panels and
//     tiles of the output spread over goroutines. Its micro-kernels are
//     AVX-512 assembly generated with avo (6x64 float32, 6x32 float64,
//     storing edge blocks under column masks) or AVX2/FMA assembly (6x16,
//     6x8), whichever the CPU has, and a portable 4x4 loop elsewhere; a
//     product of at most four rows skips packing for vector axpy and dot
//     kernels. Batched MatMul spreads whole small products instead
//     (matmul.go).
//   - internal/vec: float32 vector kernels (Clip, Relu's gradient,
//     BatchNormalization's scale and shift, axpy, dot), the activations
//     (Exp, Sigmoid, Tanh, Erf, Gelu, HardSigmoid, HardSwish) and the rows
//     of Softmax, LogSoftmax and LayerNormalization, in AVX2 and AVX-512
//     assembly generated with avo (internal/vec/_asm), each with its error
//     against the math package stated and tested.
//   - internal/conv: im2col and col2im, the block writer with which a 2-D
//     convolution whose column matrix would not stay in cache writes it
//     one GEMM tile's block at a time, and the direct kernels of depthwise
//     and other thin convolutions, which skip the GEMM: 3×3 and 5×5
//     depthwise planes of stride 1 and 2 in AVX-512 and AVX2/FMA
//     assembly generated with avo (internal/conv/_asm), the rest by
//     axpy. Convolutions run as im2col followed by the GEMM (conv.go,
//     conv_depthwise.go).
//   - internal/fft: radix-2 and Bluestein FFT plans for DFT and STFT.
//   - internal/par: the parallel-for that splits large elementwise
//     outputs into chunks over goroutines.
//
// A kernel package with assembly (gemm, vec, conv) keeps each _amd64.s beside
// its _amd64.go declarations under the build constraint amd64 && !purego,
// with a _generic.go fallback otherwise (the pattern of Go's
// internal/bytealg). Its dispatch.go holds one table of implementations,
// filled once at init from the CPU's features (golang.org/x/sys/cpu), best
// first and the portable one last; the package's functions run the first.
// Implementations() lists every implementation the machine runs, and the
// tests compare each with the portable one; building with -tags purego
// leaves only the portable ones (make test runs the kernels both ways). A
// new instruction set is one more entry in the table. The thread count
// comes from backend.Options.Threads, or GOMAXPROCS when it is 0.
//
// # Threads
//
// An inference on more than one thread runs each parallel region either on
// the worker pool or, when the network has measured that to be faster,
// serially on the caller (thread_policy.go): a small network on a shared
// virtual machine can be faster on one core than on two for minutes at a
// time, when the host makes handing data between the cores three times as
// costly. The policy keeps the latest times of each mode per input shape,
// learns both in the first four runs of a shape, tries the pool again
// after 4 serial runs, then 8, 16, … up to every 64, and never tries a
// serial run of a network whose parallel run takes more than 10 ms. The results are the same bits
// either way. backend.Options.Settings["threads"] = "fixed" (d500's
// --backend-opt threads=fixed) always uses the pool; training always does.
//
// A kernel's element type is chosen by one type switch per call; static
// type inference at build time (to pick it once) is left for when the
// operator set needs it.
//
// # Epilogue fusion
//
// With backend.Options.Optimize, after package transform's passes, New
// plans fusions (fuse.go): a Conv, a Gemm, or a MatMul with an Add of a
// bias, whose result only an Add of a same-shape residual and/or an
// activation (Relu, Clip with constant bounds, LeakyRelu, HardSigmoid,
// HardSwish, Sigmoid) reads, compiles with them into one kernel. Its GEMM
// adds the bias and the residual and applies the activation to each tile
// of the output while the tile is in cache (gemm.Epilogue); the values
// between the nodes are never stored, and Fetch names them in an error.
// Every Conv's bias, fused or not, is added in that epilogue (or by the
// depthwise kernels, which also take a fused Relu or Relu6 as their
// clamp) rather than by filling the output first.
//
// The planner is here rather than a transform pass that would rewrite the
// chain to an operator of the project's own domain: which chains fuse
// follows from what this backend's kernels can apply in their epilogue,
// not from the graph, and a rewritten model would hold an operator no
// other backend runs. The graph stays the model's, so the unfused kernels
// serve as the fallback when a run's tensors do not fit the fused one (a
// broadcast residual, float16), and their errors name the model's nodes.
//
// An optimized network's Conv, Gemm and MatMul also keep a constant weight
// packed for the GEMM's micro-kernel (packed_weights.go, gemm.Packed),
// packed at the first run and again only after a Feed or UpdateParams
// changed it, instead of packing it at every product.
//
// # Adding an operator
//
// Put VisitX in the file of its family (arithmetic.go, activations.go,
// layout.go, matmul.go, passthrough.go, or a new one): resolve names with
// b.input, b.optionalInput, b.inputs and b.output, check the attributes
// and version differences once, and b.emit a kernel. Keep the arithmetic in
// a kernel struct with a compute method on tensors (testable without a
// graph) and adapt it with unaryTensorKernel where the operator has one
// input and one output, binaryTensorKernel for two required inputs, or
// tensorsKernel (with b.inputRefs) for several, some of them optional. Report a type or attribute value the kernel lacks
// with network.Unsupportedf, never with a wrong answer.
//
// # Supported operators
//
// Supports answers from the same source as dispatch: it builds the typed
// operator for the requested version with a stand-in node and asks the
// builder to compile it, so the list of supported operators cannot drift
// from the Visit methods.
//
// # Backpropagation
//
// InferenceAndBackprop runs the forward plan, which leaves every activation
// in its slot, then the backward plan of the loss (grad.go): the nodes on a
// path from a trainable value (a parameter that is not frozen, or a
// floating-point graph input) to the loss, in reverse order, each compiled
// once by gradBuilder — a second ops.Visitor — into a kernel that reads
// the gradients of the node's outputs and adds to those of its inputs.
// Inputs the schema marks non-differentiable, and integer values, get none.
// Gradients accumulate in per-slot buffers reused from step to step; Fetch
// and Feed address them by network.GradName. The rules live beside their
// forward kernels' families in grad_*.go and are checked against central
// differences (grad_check_test.go). An operator without a rule on the path
// makes InferenceAndBackprop fail with an error wrapping ErrUnsupported.
package native
