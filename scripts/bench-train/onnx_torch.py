"""Turns an ONNX graph into a torch.nn.Module that trains as `d500 train`
trains the same file.

The training benchmark (bench_train.py) has to time PyTorch on exactly the
network d500 runs. Writing each preset again by hand in PyTorch would
prove nothing about that, so this module reads the very ONNX file d500
loads: the same nodes in the same order, the same attributes, and the
initializers as the initial weights. The first-step loss check in
bench_train.py then shows the two agree.

Only the operators d500's CNN/MLP presets use are translated (Conv,
BatchNormalization, Relu, Add, MaxPool, GlobalAveragePool, Flatten, Gemm).
Anything else, including an attribute of those operators that the
translation does not know, is refused with an error that names the node:
a silently wrong translation would make the timing comparison meaningless.

Each node becomes a closure over its parsed attributes when the module is
built, so a forward pass does no more Python work per node than a
hand-written module's forward would: look its inputs up and call one
torch.nn.functional op.
"""
import math
import re

import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import numpy_helper

SUPPORTED = ("Add", "BatchNormalization", "Conv", "Flatten", "Gemm", "GlobalAveragePool", "MaxPool", "Relu")


class UnsupportedGraph(Exception):
    """The graph uses something this translation cannot reproduce exactly."""


def _attrs(node, allowed):
    """The node's attributes as Python values; an attribute outside
    `allowed` is an error, since ignoring it could change the result."""
    out = {}
    for a in node.attribute:
        if a.name not in allowed:
            raise UnsupportedGraph("node %r (%s): attribute %r is not supported by the PyTorch translation"
                                   % (node.name, node.op_type, a.name))
        # onnx.helper.get_attribute_value would do, but only INT, INTS,
        # FLOAT and STRING occur in these operators; reading them directly
        # keeps the failure for any other kind explicit.
        if a.type == a.INT:
            out[a.name] = a.i
        elif a.type == a.INTS:
            out[a.name] = list(a.ints)
        elif a.type == a.FLOAT:
            out[a.name] = a.f
        elif a.type == a.STRING:
            out[a.name] = a.s.decode()
        else:
            raise UnsupportedGraph("node %r (%s): attribute %r has a type the translation does not read"
                                   % (node.name, node.op_type, a.name))
    return out


def _same_pads(x, kernel, strides, dilations, upper):
    """ONNX's SAME_UPPER/SAME_LOWER padding for input x, as the F.pad list
    (last spatial axis first). It depends on the input's size, so it is
    worked out per call."""
    spec = []
    for i in reversed(range(len(kernel))):
        size = x.shape[2 + i]
        out = -(-size // strides[i])
        total = max(0, (out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - size)
        small = total // 2
        spec += [small, total - small] if upper else [total - small, small]
    return spec


def _pad_spec(pads, rank):
    """ONNX pads [b1, b2, ..., e1, e2, ...] as the F.pad list."""
    spec = []
    for i in reversed(range(rank)):
        spec += [pads[i], pads[rank + i]]
    return spec


def _spatial_padding(node, a, kernel, strides, dilations, pad_value, limit):
    """How a Conv or MaxPool node pads: (fixed torch padding, None) when
    torch's own symmetric padding argument reproduces it, else
    (zeros, fn) where fn(x) pads x explicitly with pad_value. limit(i, p)
    says whether torch accepts padding p on axis i."""
    rank = len(kernel)
    auto = a.get("auto_pad", "NOTSET")
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        upper = auto == "SAME_UPPER"
        return [0] * rank, lambda x: F.pad(x, _same_pads(x, kernel, strides, dilations, upper), value=pad_value)
    if auto == "VALID":
        return [0] * rank, None
    if auto != "NOTSET":
        raise UnsupportedGraph("node %r (%s): auto_pad %r is not an ONNX value" % (node.name, node.op_type, auto))
    pads = a.get("pads", [0] * (2 * rank))
    if len(pads) != 2 * rank:
        raise UnsupportedGraph("node %r (%s): pads %s do not fit a %d-d kernel" % (node.name, node.op_type, pads, rank))
    begin, end = pads[:rank], pads[rank:]
    if begin == end and all(limit(i, p) for i, p in enumerate(begin)):
        return list(begin), None
    spec = _pad_spec(pads, rank)
    return [0] * rank, lambda x: F.pad(x, spec, value=pad_value)


_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
_MAXPOOL = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}


def _conv(node, init_shapes):
    a = _attrs(node, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"})
    if len(node.input) < 2 or node.input[1] not in init_shapes:
        raise UnsupportedGraph("node %r (Conv): the weight must be an initializer" % node.name)
    kernel = init_shapes[node.input[1]][2:]
    rank = len(kernel)
    if rank not in _CONV:
        raise UnsupportedGraph("node %r (Conv): %d-d convolution is not supported" % (node.name, rank))
    if "kernel_shape" in a and list(a["kernel_shape"]) != list(kernel):
        raise UnsupportedGraph("node %r (Conv): kernel_shape %s differs from the weight's %s"
                               % (node.name, a["kernel_shape"], kernel))
    strides = a.get("strides", [1] * rank)
    dilations = a.get("dilations", [1] * rank)
    groups = a.get("group", 1)
    padding, pre = _spatial_padding(node, a, kernel, strides, dilations, 0.0, lambda i, p: True)
    conv = _CONV[rank]
    has_bias = len(node.input) > 2 and node.input[2] != ""

    if pre is None:
        if has_bias:
            return lambda x, w, b: conv(x, w, b, strides, padding, dilations, groups)
        return lambda x, w: conv(x, w, None, strides, padding, dilations, groups)
    if has_bias:
        return lambda x, w, b: conv(pre(x), w, b, strides, padding, dilations, groups)
    return lambda x, w: conv(pre(x), w, None, strides, padding, dilations, groups)


def _batchnorm(node, init_shapes):
    # training_mode is accepted but not followed: d500 train (with its
    # default --batchnorm batch) always normalises with the batch's
    # statistics and updates the running ones, as PyTorch's train mode.
    a = _attrs(node, {"epsilon", "momentum", "training_mode", "spatial"})
    if a.get("spatial", 1) != 1:
        raise UnsupportedGraph("node %r (BatchNormalization): spatial=0 is not supported" % node.name)
    if any(o for o in node.output[1:]):
        raise UnsupportedGraph("node %r (BatchNormalization): the running-statistics outputs are not supported" % node.name)
    if len(node.input) != 5 or any(n not in init_shapes for n in node.input[1:]):
        raise UnsupportedGraph("node %r (BatchNormalization): scale, bias, mean and variance must be initializers" % node.name)
    eps = a.get("epsilon", 1e-5)
    # ONNX: running = m*running + (1-m)*batch; PyTorch's momentum is the
    # weight of the batch, so it is 1-m.
    momentum = 1.0 - a.get("momentum", 0.9)
    return lambda x, scale, bias, mean, var: F.batch_norm(x, mean, var, scale, bias, True, momentum, eps)


def _maxpool(node, init_shapes):
    a = _attrs(node, {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"})
    if any(o for o in node.output[1:]):
        raise UnsupportedGraph("node %r (MaxPool): the Indices output is not supported" % node.name)
    if "kernel_shape" not in a:
        raise UnsupportedGraph("node %r (MaxPool): kernel_shape is required" % node.name)
    kernel = a["kernel_shape"]
    rank = len(kernel)
    if rank not in _MAXPOOL:
        raise UnsupportedGraph("node %r (MaxPool): %d-d pooling is not supported" % (node.name, rank))
    strides = a.get("strides", [1] * rank)
    dilations = a.get("dilations", [1] * rank)
    ceil = bool(a.get("ceil_mode", 0))
    # torch refuses padding above half the kernel; ONNX allows it, and an
    # explicit pad with -inf (what ONNX pads pooling with) gives the same.
    padding, pre = _spatial_padding(node, a, kernel, strides, dilations, -math.inf,
                                    lambda i, p: p <= kernel[i] // 2)
    pool = _MAXPOOL[rank]
    if pre is None:
        return lambda x: pool(x, kernel, strides, padding, dilations, ceil)
    return lambda x: pool(pre(x), kernel, strides, padding, dilations, ceil)


def _gemm(node, init_shapes):
    a = _attrs(node, {"alpha", "beta", "transA", "transB"})
    alpha, beta = a.get("alpha", 1.0), a.get("beta", 1.0)
    ta, tb = a.get("transA", 0), a.get("transB", 0)
    has_c = len(node.input) > 2 and node.input[2] != ""
    # The fully connected layer (transB, a 1-d bias, no scaling) is
    # nn.Linear's own call, so PyTorch gets its usual fused addmm.
    if not ta and tb and alpha == 1.0 and (not has_c or beta == 1.0):
        if has_c:
            return lambda x, w, c: F.linear(x, w, c)
        return lambda x, w: F.linear(x, w)

    def general(x, w, c=None):
        x = x.t() if ta else x
        w = w.t() if tb else w
        y = torch.matmul(x, w)
        if alpha != 1.0:
            y = y * alpha
        if c is not None:
            y = y + (c if beta == 1.0 else c * beta)
        return y
    return general


def _flatten(node, init_shapes):
    a = _attrs(node, {"axis"})
    axis = a.get("axis", 1)

    def flatten(x):
        k = axis + x.dim() if axis < 0 else axis
        outer = 1
        for d in x.shape[:k]:
            outer *= d
        return x.reshape(outer, -1)
    return flatten


def _global_average_pool(node, init_shapes):
    _attrs(node, set())

    def gap(x):
        # adaptive_avg_pool2d(1) is what torchvision's ResNets call.
        if x.dim() == 4:
            return F.adaptive_avg_pool2d(x, 1)
        return x.mean(dim=tuple(range(2, x.dim())), keepdim=True)
    return gap


def _relu(node, init_shapes):
    _attrs(node, set())
    return F.relu


def _add(node, init_shapes):
    _attrs(node, set())
    return torch.add


_BUILDERS = {
    "Add": _add, "BatchNormalization": _batchnorm, "Conv": _conv, "Flatten": _flatten, "Gemm": _gemm,
    "GlobalAveragePool": _global_average_pool, "MaxPool": _maxpool, "Relu": _relu,
}
assert set(_BUILDERS) == set(SUPPORTED)


def check_ops(graph):
    """Raises UnsupportedGraph naming every operator of graph (and a node
    of each) that the translation lacks."""
    missing = {}
    for n in graph.node:
        if n.domain not in ("", "ai.onnx") or n.op_type not in _BUILDERS:
            missing.setdefault((n.domain or "ai.onnx") + "." + n.op_type, n.name)
    if missing:
        raise UnsupportedGraph("unsupported ONNX operator(s): %s (the PyTorch translation knows %s)" % (
            ", ".join("%s (e.g. node %r)" % kv for kv in sorted(missing.items())), ", ".join(SUPPORTED)))


class OnnxModule(nn.Module):
    """The ONNX graph as a module. Floating-point initializers are
    parameters, except BatchNormalization's running mean and variance,
    which are buffers (they are not trained, only updated by the forward
    pass in training mode); other initializers are buffers too. The graph's
    inputs that are not initializers are forward's arguments, in order;
    forward returns the graph's first output when it has one, else a tuple.
    """

    def __init__(self, model):
        super().__init__()
        graph = model.graph
        check_ops(graph)
        stats = set()
        for n in graph.node:
            if n.op_type == "BatchNormalization":
                stats.update(n.input[3:5])
        self._attr_of = {}  # ONNX initializer name -> attribute name
        init_shapes = {}
        for init in graph.initializer:
            # Module attribute names cannot contain dots, which ONNX names
            # from PyTorch-style layer names do.
            attr = "t_" + re.sub(r"\W", "_", init.name)
            while hasattr(self, attr):
                attr += "_"
            value = torch.from_numpy(numpy_helper.to_array(init).copy())
            if value.is_floating_point() and init.name not in stats:
                self.register_parameter(attr, nn.Parameter(value))
            else:
                self.register_buffer(attr, value)
            self._attr_of[init.name] = attr
            init_shapes[init.name] = list(init.dims)
        self.input_names = [i.name for i in graph.input if i.name not in self._attr_of]
        self.output_names = [o.name for o in graph.output]

        known = set(self._attr_of) | set(self.input_names)
        self._steps = []
        for n in graph.node:
            for name in n.input:
                if name and name not in known:
                    raise UnsupportedGraph("node %r (%s): input %r is produced by no earlier node "
                                           "(the graph must be in topological order)" % (n.name, n.op_type, name))
            fn = _BUILDERS[n.op_type](n, init_shapes)
            args = [name for name in n.input if name]
            self._steps.append((fn, args, n.output[0]))
            known.add(n.output[0])
        for name in self.output_names:
            if name not in known:
                raise UnsupportedGraph("graph output %r is produced by no node" % name)

    def forward(self, *inputs):
        if len(inputs) != len(self.input_names):
            raise TypeError("the graph takes %d inputs (%s), got %d" % (
                len(self.input_names), ", ".join(self.input_names), len(inputs)))
        env = {name: getattr(self, attr) for name, attr in self._attr_of.items()}
        env.update(zip(self.input_names, inputs))
        for fn, args, out in self._steps:
            env[out] = fn(*[env[a] for a in args])
        outs = tuple(env[name] for name in self.output_names)
        return outs[0] if len(outs) == 1 else outs
