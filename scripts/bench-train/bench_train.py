#!/usr/bin/python3
"""One training step of d500 (native and ONNX Runtime) against PyTorch, side by side.

For every preset and thread count, `d500 train --impl native` on the
native backend, the same on the onnxruntime backend (the training graph of
transform/autodiff with the optimizer's update written as ONNX, one ONNX
Runtime run per step), and PyTorch (in this process) train the same ONNX
file (`d500 model PRESET`, its initializers as the initial weights) on the
same recorded batches (`tensors:DIR`, replayed in order) with the same
optimizer (momentum SGD, lr 0.01, momentum 0.9) and the same loss (softmax
cross-entropy). Each run's per-step times after the warm-up steps give its
median; the ratios are native / PyTorch and ONNX Runtime / PyTorch (below
1: d500 is faster).

The first step's loss must agree between each d500 backend and PyTorch
(same weights, same batch): that is what shows they ran the same network.
A case whose native loss disagrees fails loudly instead of reporting a
ratio. ONNX Runtime's training graph is newer and still growing, so its
disagreement marks its row (and fails the exit status) but leaves the
native and PyTorch figures, and the other cases, running. Steps 2 and 3,
which also depend on the gradients and the update, are held to a looser
tolerance.

A d500 backend that cannot train a preset (its error says "unsupported":
an operator without a gradient rule or kernel) is left out of that case:
its columns show "—" and a note under the table gives d500's reason; the
other backend and PyTorch go on. On ONNX Runtime that is expected while
gradient rules are being added, and does not fail the exit status; on
native, which trains every preset, it does, as does any other failure of
either backend.

The machine is a shared VM whose speed drifts by tens of percent from one
minute to the next, so the runs are interleaved: every round runs every
case once in each framework, one right after the other (which one goes
first rotates between rounds: native, ONNX Runtime, PyTorch in round 1;
ONNX Runtime, PyTorch, native in round 2; ...), and each round gives
ratios of its own against that round's PyTorch run. The table shows the
median of those ratios and their spread. Each run also records how many
cores other processes kept busy meanwhile; rows measured under such load
are marked (on 2 cores it is what decides the 2-thread figures), and
--quiet S waits up to S seconds for a quiet machine before each round of
a case.

usage: bench_train.py --d500 BIN --out DIR [--models LIST] [--threads LIST]
       [--rounds R] [--steps SPEC] [--warmup SPEC] [--batch SPEC] [--batches K]
       [--data-seed S] [--tolerance F] [--later-tolerance F] [--quiet S]

SPEC is a number for every model, or model=N pairs, or both ("20,resnet18=8").
Writes DIR/bench-train.md, DIR/bench-train.json, and the models, datasets
and d500's CSV/JSON of every run under DIR/bench-train/.
Exit status: 0 all cases passed (ONNX Runtime's "unsupported" presets
aside); 1 a case failed (loss mismatch, a d500 run failed, an operator the
translation to PyTorch lacks); 2 bad usage; 130 interrupted.
"""
import argparse
import csv
import ctypes
import datetime
import gc
import json
import os
import platform
import re
import shutil
import signal
import random
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
# Importing onnx_torch from here would leave a __pycache__ folder in the
# source tree, which nothing ignores.
sys.dont_write_bytecode = True

try:
    import numpy as np
    import onnx
    from onnx import numpy_helper
    import torch
    import torch.nn.functional as F
except ImportError as e:
    sys.exit("bench-train: %s is missing for %s (%s): run scripts/setup-pytorch.sh, which installs Debian's "
             "python3-torch, python3-onnx, python3-numpy and libopenblas0-pthread, and run this script with "
             "/usr/bin/python3 (the interpreter those packages belong to)" % (e.name or "a module", sys.executable, e))

from onnx_torch import OnnxModule, UnsupportedGraph  # noqa: E402  (needs the path above)

LR = 0.01
MOMENTUM = 0.9
# Per-model defaults: batch sizes as the task fixes them; steps and
# warm-up chosen so that a default run (5 rounds, 1 and 2 threads) takes
# under 10 minutes at the speeds measured when this was written (native
# resnet20 ~300-400 ms/step, resnet18 at batch 8 ~1.5 s; PyTorch 1.2-4x
# faster): 7.5 minutes then. The warm-up covers allocation of the step's
# buffers, oneDNN's primitive creation, and native's thread policy trying
# serial runs of a small network (its first four runs on two threads).
# ONNX Runtime's training step, when it joined, took 7-20x PyTorch's on
# the ResNets (resnet18 at batch 8: 12-17 s), which made a 3-round run 27
# minutes; these steps were left as they were so that native's figures
# stay comparable with earlier runs.
DEFAULTS = {
    "mlp": {"batch": 64, "steps": 40, "warmup": 5},
    "lenet": {"batch": 64, "steps": 40, "warmup": 5},
    "resnet8": {"batch": 64, "steps": 20, "warmup": 4},
    "resnet20": {"batch": 64, "steps": 14, "warmup": 4},
    "resnet18": {"batch": 8, "steps": 10, "warmup": 3},
}
OTHER = {"batch": 64, "steps": 20, "warmup": 4}  # any other preset


# Other processes' load (cores) from which a table row is flagged.
BUSY = 0.25

# The d500 backends timed against PyTorch, and the prefix of their figures
# in a round's record. Native's keys are the ones this script wrote before
# ONNX Runtime joined (native_ms, ratio, loss_check, d500_csv), so older
# JSON reads the same.
D500_BACKENDS = ("native", "onnxruntime")
KEY = {"native": "native", "onnxruntime": "ort"}
LABEL = {"native": "native", "onnxruntime": "ORT", "pytorch": "PyTorch"}
LOAD_KEYS = ("native_load", "ort_load", "pytorch_load")


def ratio_key(backend):
    return "ratio" if backend == "native" else KEY[backend] + "_ratio"


def check_key(backend):
    return "loss_check" if backend == "native" else KEY[backend] + "_loss_check"


class CaseFailed(Exception):
    """A case cannot give a fair figure; the message says why."""


class LossMismatch(CaseFailed):
    """The two frameworks' losses disagree; result holds the figures."""

    def __init__(self, msg, result):
        super().__init__(msg)
        self.result = result


class RunFailed(CaseFailed):
    """A command exited with an error; stderr is all it said, where the
    reason (an "unsupported" operator, say) is found."""

    def __init__(self, msg, stderr):
        super().__init__(msg)
        self.stderr = stderr


def unsupported_reason(err):
    """d500's own line saying what it does not support, when err is a run
    that failed for that reason; else None."""
    if not isinstance(err, RunFailed):
        return None
    lines = [ln.strip() for ln in err.stderr.splitlines() if "unsupported" in ln]
    if not lines:
        return None
    line = lines[-1]
    return line[len("d500 train: "):] if line.startswith("d500 train: ") else line


def usage(msg):
    print("bench-train: " + msg, file=sys.stderr)
    sys.exit(2)


def per_model(spec, name):
    """Parses SPEC ("20", "resnet18=8", "20,resnet18=8") into (default or
    None, {model: value})."""
    default, pairs = None, {}
    for tok in filter(None, (t.strip() for t in spec.split(","))):
        key, eq, val = tok.partition("=")
        try:
            v = int(val if eq else key)
        except ValueError:
            usage("--%s %r: want N or MODEL=N, comma-separated" % (name, spec))
        if v < (0 if name == "warmup" else 1):
            usage("--%s %r: %d is out of range" % (name, spec, v))
        if eq:
            pairs[key.strip()] = v
        else:
            default = v
    return default, pairs


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def median_ci95(xs, resamples=2000):
    """The 95% percentile-bootstrap interval of the median of xs, from a
    fixed seed so that a report reproduces (d500's own figures use gonum's
    statistics; this script has only Python's)."""
    if len(xs) < 2:
        return [float("nan"), float("nan")]
    rng = random.Random(1)
    meds = sorted(statistics.median(rng.choices(xs, k=len(xs))) for _ in range(resamples))
    return [meds[int(0.025 * resamples)], meds[int(0.975 * resamples) - 1]]


def cv(xs):
    """The coefficient of variation, stdev / mean."""
    return statistics.stdev(xs) / statistics.mean(xs) if len(xs) >= 2 and statistics.mean(xs) else float("nan")


def fmt_ms(ms):
    if ms != ms:
        return "—"
    return "%.2f" % ms if ms < 10 else "%.1f" % ms if ms < 100 else "%.0f" % ms


# ---------------------------------------------------------------- machine


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def loaded_libraries(words):
    """The shared libraries mapped into this process whose file names
    contain one of words: what the dynamic linker really resolved."""
    found = set()
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 6 and parts[5].startswith("/"):
                    base = os.path.basename(parts[5])
                    if any(w in base for w in words):
                        found.add(parts[5])
    except OSError:
        pass
    return sorted(found)


class OpenBLAS:
    """The OpenBLAS that torch loaded (through libblas.so.3), if any.

    Debian's torch is built against the generic BLAS interface
    (BLAS_INFO=generic): torch.set_num_threads sets OpenMP's threads (its
    own kernels and oneDNN's convolutions) but not OpenBLAS's pthread
    pool, which keeps one thread per core. PyTorch at "1 thread" would then
    still run its matrix products on 2, so the benchmark sets both."""

    def __init__(self, libs):
        self.lib = None
        for path in libs:
            try:
                lib = ctypes.CDLL(path)
                lib.openblas_set_num_threads
                lib.openblas_get_num_threads
            except (OSError, AttributeError):
                continue
            lib.openblas_get_config.restype = ctypes.c_char_p
            lib.openblas_get_corename.restype = ctypes.c_char_p
            self.lib, self.path = lib, path
            break
        self.default_threads = self.threads() if self.lib else None

    def threads(self):
        return self.lib.openblas_get_num_threads() if self.lib else None

    def set_threads(self, n):
        if self.lib:
            self.lib.openblas_set_num_threads(n)

    def describe(self):
        if not self.lib:
            return None
        return {"library": self.path, "config": self.lib.openblas_get_config().decode(),
                "core": self.lib.openblas_get_corename().decode(), "default_threads": self.default_threads}


def torch_config():
    show = torch.__config__.show()
    info = {"version": torch.__version__, "config": show}
    for line in show.splitlines():
        line = line.strip()
        if line.startswith("- CPU capability usage:"):
            info["cpu_capability"] = line.split(":", 1)[1].strip()
        elif "MKL-DNN" in line or "oneDNN" in line:
            v = re.search(r"v(\d[\d.]*)", line)
            info["onednn"] = "oneDNN " + (v.group(1) if v else "(version unknown)")
    m = re.search(r"BLAS_INFO=([^,\s]+)", show)
    if m:
        info["blas_info"] = m.group(1)
    info["default_threads"] = torch.get_num_threads()
    info["mkldnn_enabled"] = bool(torch.backends.mkldnn.is_available() and torch.backends.mkldnn.enabled)
    return info


def machine(d500, openblas):
    alt = "/etc/alternatives/libblas.so.3-x86_64-linux-gnu"
    blas_alt = os.path.realpath(alt) if os.path.lexists(alt) else None
    try:
        version = subprocess.run([d500, "version"], capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError) as e:
        version = "unknown (%s)" % e
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "usable_cores": len(os.sched_getaffinity(0)),
        "os": platform.platform(),
        "python": sys.executable + " " + platform.python_version(),
        "torch": torch_config(),
        "numpy": np.__version__,
        "onnx": onnx.__version__,
        "blas_alternative": blas_alt,
        "blas_loaded": loaded_libraries(("blas", "lapack")),
        "openblas": openblas.describe(),
        "d500": d500,
        "d500_version": version,
    }


def blas_name(env):
    ob = env["openblas"]
    if ob:
        return "OpenBLAS (%s, core %s)" % (ob["config"].split(" NO_")[0].split(" DYNAMIC")[0], ob["core"])
    alt = env["blas_alternative"] or "?"
    return "not OpenBLAS: %s" % alt


# ------------------------------------------------------------------ cases


class Case:
    def __init__(self, model, batch, steps, warmup):
        self.model, self.batch, self.steps, self.warmup = model, batch, steps, warmup
        self.error = None       # why the case failed, once it has
        self.proto = None       # the ONNX model, loaded once
        self.batches = []       # [(x, y)] as torch tensors, in file order
        self.rounds = {}        # threads -> [per-round record]
        self.info = {}
        # d500 backend -> {"reason", "unsupported"}: left out of this case
        # from its first failed run on (an operator it lacks does not
        # appear in a later round).
        self.dropped = {}
        # d500 backend -> the first loss disagreement with PyTorch, for a
        # backend that is timed on regardless (ONNX Runtime).
        self.mismatch = {}

    def fail(self, msg):
        if self.error is None:
            self.error = msg
        bar = "!" * 78
        print("\n%s\nFAIL %s (batch %d): %s\n%s\n" % (bar, self.model, self.batch, msg, bar), file=sys.stderr, flush=True)

    def drop(self, backend, err):
        """Leaves backend out of this case after err; the others go on."""
        why = unsupported_reason(err)
        reason = why
        if reason is None:
            # The message's first line names the run; d500's last words
            # on stderr say what went wrong.
            reason = str(err).splitlines()[0]
            last = [ln.strip() for ln in getattr(err, "stderr", "").splitlines() if ln.strip()]
            if last:
                reason += ": " + last[-1]
        self.dropped[backend] = {"reason": reason, "unsupported": why is not None, "detail": str(err)}
        bar = "!" * 78
        print("\n%s\n%s %s on %s (batch %d), left out of this case: %s\n%s\n" % (
            bar, "UNSUPPORTED" if why else "FAIL", backend, self.model, self.batch, why or err, bar),
            file=sys.stderr, flush=True)

    def order(self, rnd):
        """The frameworks still in this case, in round rnd's order: the
        list rotated by one each round, so each goes first in turn."""
        fws = [b for b in D500_BACKENDS if b not in self.dropped] + ["pytorch"]
        k = (rnd - 1) % len(fws)
        return fws[k:] + fws[:k]

    def failures(self):
        """Why this case fails the exit status, if it does: its own error,
        a backend dropped other than for ONNX Runtime's unsupported
        operators (the training graph's rules are still being written),
        a loss disagreement."""
        out = [self.error] if self.error else []
        for b, d in self.dropped.items():
            if not (b == "onnxruntime" and d["unsupported"]):
                out.append("%s: %s" % (b, d["reason"].splitlines()[0]))
        out += ["%s: %s" % (b, m) for b, m in self.mismatch.items()]
        return out


def run(cmd, what):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        tail = "\n".join(p.stderr.strip().splitlines()[-20:]) or "(no output on stderr)"
        raise RunFailed("%s failed (exit status %d)\n  command: %s\n  stderr:\n%s" % (
            what, p.returncode, " ".join(cmd), "\n".join("    " + line for line in tail.splitlines())), p.stderr)
    return p


def prepare(case, d500, work, nbatches, data_seed):
    """Writes the preset's ONNX file and its dataset; loads both for PyTorch."""
    path = os.path.join(work, case.model + ".onnx")
    run([d500, "model", case.model, "--seed", "1", "-o", path], "d500 model %s" % case.model)
    case.path = path
    case.proto = onnx.load(path)
    graph = case.proto.graph
    try:
        probe = OnnxModule(case.proto)  # refuses unsupported operators, naming them
    except UnsupportedGraph as e:
        raise CaseFailed("%s: %s" % (path, e))
    if len(probe.input_names) != 1:
        raise CaseFailed("%s: expected one data input, the graph has %s" % (path, probe.input_names))
    vi = next(i for i in graph.input if i.name == probe.input_names[0])
    tt = vi.type.tensor_type
    if tt.elem_type != onnx.TensorProto.FLOAT:
        raise CaseFailed("%s: input %r is not float32" % (path, vi.name))
    dims = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
    if len(dims) < 2 or any(d is None for d in dims[1:]):
        raise CaseFailed("%s: input %r has shape %s; all but the batch axis must be known" % (path, vi.name, dims))
    shape = [case.batch] + dims[1:]
    # The number of classes: the first output's last axis, as declared or,
    # failing that, as a forward pass shows it.
    out = graph.output[0].type.tensor_type.shape.dim
    classes = out[-1].dim_value if out and out[-1].HasField("dim_value") else None
    if not classes:
        with torch.no_grad():
            classes = probe(torch.zeros([2] + dims[1:])).shape[-1]
    case.info = {"input": vi.name, "input_shape": shape, "classes": classes,
                 "parameters": sum(p.numel() for p in probe.parameters()),
                 "ops": sorted({n.op_type for n in graph.node})}

    # The dataset: nbatches batches of standard normal images and uniform
    # labels from a fixed seed, so every run of the benchmark (and both
    # frameworks) sees the same numbers. Old files go first: d500 reads
    # every x_K.pb in the folder, and a longer earlier run would leave more.
    data = os.path.join(work, "data-" + case.model)
    shutil.rmtree(data, ignore_errors=True)
    os.makedirs(data)
    rng = np.random.default_rng(data_seed)
    for k in range(nbatches):
        x = rng.standard_normal(shape, dtype=np.float32)
        y = rng.integers(0, classes, size=case.batch, dtype=np.int64)
        for name, arr in (("x", x), ("y", y)):
            with open(os.path.join(data, "%s_%d.pb" % (name, k)), "wb") as f:
                f.write(numpy_helper.from_array(arr, name).SerializeToString())
    # PyTorch trains on what d500 reads: the files, read back.
    for k in range(nbatches):
        x = numpy_helper.to_array(onnx.load_tensor(os.path.join(data, "x_%d.pb" % k))).copy()
        y = numpy_helper.to_array(onnx.load_tensor(os.path.join(data, "y_%d.pb" % k))).copy()
        case.batches.append((torch.from_numpy(x), torch.from_numpy(y)))
    case.data = data


def run_d500(case, d500, backend, threads, runs, rnd):
    stem = os.path.join(runs, "%s-%s-t%d-r%d" % (case.model, backend, threads, rnd))
    csv_path, json_path = stem + ".csv", stem + ".json"
    for p in (csv_path, json_path):
        if os.path.exists(p):
            os.remove(p)
    cmd = [d500, "train", "--model", case.path, "--dataset", "tensors:" + case.data,
           "--steps", str(case.steps), "--batch", str(case.batch), "--threads", str(threads),
           "--optimizer", "momentum", "--lr", str(LR), "--momentum", str(MOMENTUM),
           "--backend", backend, "--impl", "native", "--no-shuffle", "--csv", csv_path, "--json", json_path]
    load = Load.snapshot()
    run(cmd, "d500 train --backend %s (%s, %d threads)" % (backend, case.model, threads))
    load = Load.since(load)
    with open(csv_path) as f:
        rows = [r for r in csv.DictReader(f) if r.get("loss")]
    if len(rows) != case.steps:
        raise CaseFailed("%s: %d step rows, expected %d" % (csv_path, len(rows), case.steps))
    # seconds is cumulative since training began: a step's time is the
    # difference from the previous row.
    secs = [float(r["seconds"]) for r in rows]
    step_ms = [1000 * (b - a) for a, b in zip([0.0] + secs[:-1], secs)]
    with open(json_path) as f:
        rep = json.load(f)
    allocs = rep.get("allocs_per_step")
    return {"step_ms": step_ms, "losses": [float(r["loss"]) for r in rows], "allocs_per_step": allocs,
            "csv": csv_path, "json": json_path, "load": load, "environment": rep.get("environment")}


def run_torch(case, threads, openblas):
    torch.set_num_threads(threads)
    openblas.set_threads(threads)
    if torch.get_num_threads() != threads:
        raise CaseFailed("torch.set_num_threads(%d) left %d threads" % (threads, torch.get_num_threads()))
    torch.manual_seed(0)  # nothing here draws random numbers; for certainty
    net = OnnxModule(case.proto)  # fresh from the file: the initial weights
    net.train()
    opt = torch.optim.SGD(net.parameters(), lr=LR, momentum=MOMENTUM)
    gc.collect()  # the previous run's garbage is not this run's time
    step_ms, losses = [], []
    load = Load.snapshot()
    for k in range(case.steps):
        x, y = case.batches[k % len(case.batches)]
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        # d500 reads its loss every step too (for the CSV).
        value = loss.item()
        step_ms.append(1000 * (time.perf_counter() - t0))
        losses.append(value)
    load = Load.since(load)
    return {"step_ms": step_ms, "losses": losses, "torch_threads": torch.get_num_threads(),
            "openblas_threads": openblas.threads(), "load": load}


class Load:
    """How much of the machine other processes took while a run went on.

    The VM is shared (other people's builds and tests run beside the
    benchmark), and a run on 2 threads that loses a core to them is slowed
    far more than its share: PyTorch's OpenMP threads wait at every
    barrier for the one that was descheduled. Each run records the cores
    busy outside this process and its children (d500), and the
    hypervisor's steal time, so a figure can be told apart from noise."""

    HZ = os.sysconf("SC_CLK_TCK")

    @staticmethod
    def snapshot():
        try:
            with open("/proc/stat") as f:
                v = [int(x) for x in f.readline().split()[1:9]]
        except (OSError, ValueError):
            return None
        user, nice, system, idle, iowait, irq, softirq, steal = v + [0] * (8 - len(v))
        t = os.times()
        return {"busy": (user + nice + system + irq + softirq) / Load.HZ, "steal": steal / Load.HZ,
                "own": t.user + t.system + t.children_user + t.children_system, "wall": time.monotonic()}

    @staticmethod
    def since(a):
        b = Load.snapshot()
        if a is None or b is None or b["wall"] <= a["wall"]:
            return {"others_cores": None, "steal_cores": None}
        wall = b["wall"] - a["wall"]
        others = (b["busy"] - a["busy"]) - (b["own"] - a["own"])
        return {"others_cores": round(max(0.0, others / wall), 3), "steal_cores": round((b["steal"] - a["steal"]) / wall, 3)}


def wait_quiet(limit):
    """Waits (at most limit seconds, in half-second looks) until other
    processes leave the cores alone; returns the seconds waited. With 0 it
    returns at once: the interleaving alone has to cope with the noise."""
    if limit <= 0:
        return 0.0
    start = time.monotonic()
    while time.monotonic() - start < limit:
        a = Load.snapshot()
        time.sleep(0.5)
        busy = Load.since(a)["others_cores"]
        if busy is None or busy < BUSY:
            break
    return round(time.monotonic() - start, 1)


def rel(a, b):
    return abs(a - b) / max(abs(b), 1e-30)


def check_losses(backend, nat, pt, tol, later_tol):
    """The first-step loss (and, looser, steps 2-3) of a d500 run on
    backend and PyTorch's; raises LossMismatch when they disagree."""
    first = rel(nat["losses"][0], pt["losses"][0])
    later = [rel(a, b) for a, b in zip(nat["losses"][1:3], pt["losses"][1:3])]
    every = [rel(a, b) for a, b in zip(nat["losses"], pt["losses"])]
    res = {"backend": backend, "d500": nat["losses"][0], "pytorch": pt["losses"][0], "rel": first,
           "steps_2_3_rel": later, "largest_rel_all_steps": max(every), "ok": True}
    if not first <= tol:
        res["ok"] = False
        raise LossMismatch("first-step loss differs: d500 on %s %.8g, PyTorch %.8g, relative %.2e > %.0e: the two "
                           "did not run the same network on the same batch" % (
                               backend, nat["losses"][0], pt["losses"][0], first, tol), res)
    bad = [(i + 2, r) for i, r in enumerate(later) if not r <= later_tol]
    if bad:
        res["ok"] = False
        step, r = bad[0]
        raise LossMismatch("loss of step %d differs: d500 on %s %.8g, PyTorch %.8g, relative %.2e > %.0e: the "
                           "gradients or the update differ" % (
                               step, backend, nat["losses"][step - 1], pt["losses"][step - 1], r, later_tol), res)
    return res


def timed(run, warmup):
    ms = run["step_ms"][warmup:]
    return median(ms)


# ---------------------------------------------------------------- reports


def summarize(case, threads):
    recs = case.rounds.get(threads, [])
    s = {"rounds": len(recs), "pytorch_ms": median([r["pytorch_ms"] for r in recs])}
    # Every timed step of every round (after the warm-up), pooled: the
    # median's interval and the spread of one step's time.
    steps = [x for r in recs for x in r["pytorch_step_ms"][case.warmup:]]
    s["pytorch_ms_ci95"], s["pytorch_ms_cv"] = median_ci95(steps), cv(steps)
    for b in D500_BACKENDS:
        k = KEY[b]
        # A backend left out after some rounds has figures from those
        # rounds only; one left out from the start has none.
        got = [r for r in recs if r.get(k + "_ms") is not None]
        ratios = [r[ratio_key(b)] for r in got]
        allocs = [r[k + "_allocs_per_step"] for r in got if r.get(k + "_allocs_per_step") is not None]
        s[k + "_rounds"] = len(got)
        s[k + "_ms"] = median([r[k + "_ms"] for r in got])
        s[ratio_key(b)] = median(ratios)
        s[ratio_key(b) + "_min"] = min(ratios) if ratios else float("nan")
        s[ratio_key(b) + "_max"] = max(ratios) if ratios else float("nan")
        s[ratio_key(b) + "_ci95"] = median_ci95(ratios)
        steps = [x for r in got for x in (r.get(k + "_step_ms") or [])[case.warmup:]]
        s[k + "_ms_ci95"], s[k + "_ms_cv"] = median_ci95(steps), cv(steps)
        s[k + "_allocs_per_step"] = median(allocs) if allocs else None
        checks = [r[check_key(b)] for r in got if r.get(check_key(b))]
        s[k + "_loss_mismatches"] = sum(1 for x in checks if not x["ok"])
    # native's, under the name it had before ONNX Runtime joined
    s["allocs_per_step"] = s["native_allocs_per_step"]
    # per round, the busiest of its runs
    s["others_cores"] = median([max(r[k]["others_cores"] or 0 for k in LOAD_KEYS if r.get(k)) for r in recs])
    return s


def cv_note(v):
    return "" if v != v else " (CV %.0f%%)" % (100 * v)


def write_reports(out, cases, threads_list, env, settings, status):
    rows, flagged, disagreed = [], False, False
    for c in cases:
        for t in threads_list:
            s = summarize(c, t)
            if not s["rounds"]:
                rows.append("| %s | %d | %d | — | — | — | %s | — | — |" % (
                    c.model, c.batch, t, "FAILED" if c.error else "—"))
                continue
            busy = s["others_cores"] >= BUSY
            flagged = flagged or busy
            cells = {}
            for b in D500_BACKENDS:
                k, rk = KEY[b], ratio_key(b)
                if not s[k + "_rounds"]:
                    cells[b] = ("—", "—")
                    continue
                ratio = "%.2f (%.2f–%.2f)" % (s[rk], s[rk + "_min"], s[rk + "_max"])
                if busy:
                    ratio += " †"
                if s[k + "_loss_mismatches"]:
                    ratio += " ≠"
                    disagreed = True
                if c.error or (b in c.dropped and not c.dropped[b]["unsupported"]):
                    ratio += " FAILED"
                cells[b] = (fmt_ms(s[k + "_ms"]) + cv_note(s[k + "_ms_cv"]), ratio)
            allocs = "n/a" if s["native_allocs_per_step"] is None else "%.0f" % s["native_allocs_per_step"]
            rows.append("| %s | %d | %d | %s | %s | %s | %s | %s | %s |" % (
                c.model, c.batch, t, fmt_ms(s["pytorch_ms"]) + cv_note(s["pytorch_ms_cv"]), cells["native"][0], cells["onnxruntime"][0],
                cells["native"][1], cells["onnxruntime"][1], allocs))

    # Why a column shows "—": d500's own words, one line per backend and
    # preset (a backend is left out of every thread count of the case).
    notes = []
    for c in cases:
        for b in D500_BACKENDS:
            d = c.dropped.get(b)
            if d:
                notes.append("- %s, %s: %s" % (c.model, LABEL[b], d["reason"].splitlines()[0]))
        if c.error and not any(c.rounds.values()):
            notes.append("- %s: FAILED: %s" % (c.model, c.error.splitlines()[0]))

    checks = []
    for c in cases:
        for b in D500_BACKENDS:
            recs = [r for t in threads_list for r in c.rounds.get(t, [])]
            res = [r[check_key(b)] for r in recs if r.get(check_key(b))] + [
                x for x in c.info.get("failed_checks", []) if x.get("backend", "native") == b]
            if not res:
                d = c.dropped.get(b)
                why = ("unsupported" if d["unsupported"] else "FAILED") if d else "FAILED" if c.error else "not run"
                checks.append("| %s | %s | — | — | — | — | %s |" % (c.model, LABEL[b], why))
                continue
            worst = max(res, key=lambda r: r["rel"])
            later = max((x for r in res for x in r["steps_2_3_rel"]), default=float("nan"))
            bad = sum(1 for r in res if not r["ok"])
            if bad:
                verdict = "DISAGREES (%d of %d runs)" % (bad, len(res))
            elif c.error and b == "native":
                verdict = "FAILED"
            else:
                verdict = "ok (%d runs)" % len(res)
            checks.append("| %s | %s | %.7f | %.7f | %.1e | %.1e | %s |" % (
                c.model, LABEL[b], worst["d500"], worst["pytorch"], worst["rel"], later, verdict))

    tc = env["torch"]
    steps = ", ".join("%s %d (warm-up %d)" % (c.model, c.steps, c.warmup) for c in cases)
    md = [
        "# One training step: d500 native and ONNX Runtime vs PyTorch",
        "",
        "Forward, softmax cross-entropy, backward and a momentum-SGD update (lr %g, momentum %g), "
        "all three from the same ONNX file and initial weights on the same %d recorded batches: d500 train "
        "--impl native on the native backend and on onnxruntime (ORT: transform/autodiff's training graph with "
        "the update written as ONNX, one ONNX Runtime run per step), and PyTorch. "
        "ms/step is the median step after the warm-up, then the median over rounds, with the coefficient of "
        "variation of all timed steps (bench-train.json adds each median's 95%% bootstrap interval); a ratio is d500 / PyTorch "
        "per round against that round's PyTorch run (below 1: d500 faster), its median and (min–max) over "
        "the rounds." % (LR, MOMENTUM, settings["batches"]),
        "",
        "| model | batch | threads | PyTorch ms/step | native ms/step | ORT ms/step "
        "| native/PyTorch ratio median (min–max) | ORT/PyTorch ratio median (min–max) | native allocs/step |",
        "|---|---:|---:|---:|---:|---:|---|---|---:|",
    ] + rows + ([
        "",
        "Not measured (—), in d500's words:",
        "",
    ] + notes if notes else []) + ([
        "",
        "† measured while other processes kept %.2g or more cores busy (median over its rounds): on 2 cores "
        "that slows every framework, and PyTorch's OpenMP threads on 2 threads most, so the ratio says more "
        "about the machine than about the frameworks; rerun on a quiet machine." % BUSY,
    ] if flagged else []) + ([
        "",
        "≠ the first-step (or step 2–3) loss of this backend disagreed with PyTorch's in some rounds (see "
        "below): it did not train the same network, so its time is not a fair comparison.",
    ] if disagreed else []) + [
        "",
        "First-step loss, same weights and batch, each d500 backend against PyTorch (tolerance: relative "
        "%.0e; steps 2–3: %.0e); the run with the largest difference is shown:" % (
            settings["tolerance"], settings["later_tolerance"]),
        "",
        "| model | backend | d500 loss | PyTorch loss | rel. diff step 1 | rel. diff steps 2–3 | check |",
        "|---|---|---:|---:|---:|---:|---|",
    ] + checks + [
        "",
        "PyTorch %s (BLAS_INFO=%s, CPU capability %s, %s), BLAS: %s; libblas.so.3 alternative: %s. "
        "PyTorch threads: torch.set_num_threads(T) and openblas_set_num_threads(T) (the former does not "
        "reach OpenBLAS). CPU: %s, %d cores. %s. %d round(s), the order rotated each round (native, ORT, "
        "PyTorch in round 1; ORT, PyTorch, native in round 2; ...); steps per run: %s. d500: %s." % (
            tc["version"], tc.get("blas_info", "?"), tc.get("cpu_capability", "?"), tc.get("onednn", "no oneDNN"),
            blas_name(env), env["blas_alternative"], env["cpu"], env["cores"], env["date"],
            settings["rounds_done"], steps, env["d500_version"].splitlines()[0] if env["d500_version"] else "?"),
    ]
    loads = [r[k]["others_cores"] for c in cases for t in threads_list for r in c.rounds.get(t, [])
             for k in LOAD_KEYS if r.get(k) and r[k]["others_cores"] is not None]
    if loads:
        md += ["", "Other processes on the machine used a median %.2f cores (most %.2f) during the timed runs "
                   "(per run in bench-train.json: a round whose runs shared the cores shows in the spread)." % (
                       median(loads), max(loads))]
    if status:
        md += ["", "**%s**" % status]
    if not env["openblas"]:
        md += ["", "**Warning: PyTorch is not using OpenBLAS, so its matrix products run on the reference "
                   "BLAS (about 20x slower): an unfair baseline. Run scripts/setup-pytorch.sh.**"]
    tmp = os.path.join(out, "bench-train.md.tmp")
    with open(tmp, "w") as f:
        f.write("\n".join(md) + "\n")
    os.replace(tmp, os.path.join(out, "bench-train.md"))

    doc = {"environment": env, "settings": settings, "status": status or "ok", "cases": []}
    for c in cases:
        for t in threads_list:
            doc["cases"].append(dict(
                model=c.model, batch=c.batch, threads=t, steps=c.steps, warmup=c.warmup,
                error=c.error, dropped=c.dropped, loss_mismatch=c.mismatch, info=c.info,
                summary=summarize(c, t), rounds=c.rounds.get(t, [])))
    tmp = os.path.join(out, "bench-train.json.tmp")
    with open(tmp, "w") as f:
        json.dump(clean_nan(doc), f, indent=1, allow_nan=False)
    os.replace(tmp, os.path.join(out, "bench-train.json"))


def clean_nan(o):
    """JSON has no NaN: medians of nothing become null."""
    if isinstance(o, float) and o != o:
        return None
    if isinstance(o, dict):
        return {k: clean_nan(v) for k, v in o.items()}
    if isinstance(o, list):
        return [clean_nan(v) for v in o]
    return o


# ------------------------------------------------------------------- main


def main():
    env_default = lambda name, d: os.environ.get("BENCH_TRAIN_" + name, d)  # noqa: E731
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--d500", default=env_default("D500", "bin/d500"), help="the d500 binary (default bin/d500)")
    ap.add_argument("--out", default=env_default("OUT", "out"), help="output folder (default out)")
    ap.add_argument("--models", default=env_default("MODELS", ",".join(DEFAULTS)),
                    help="comma-separated presets (default %(default)s)")
    ap.add_argument("--threads", default=env_default("THREADS", "1,2"), help="comma-separated thread counts")
    ap.add_argument("--rounds", type=int, default=int(env_default("ROUNDS", "5")), help="interleaved rounds")
    ap.add_argument("--steps", default=env_default("STEPS", ""), help="steps per run: N or MODEL=N,...")
    ap.add_argument("--warmup", default=env_default("WARMUP", ""), help="untimed first steps: N or MODEL=N,...")
    ap.add_argument("--batch", default=env_default("BATCH", ""), help="batch size: N or MODEL=N,...")
    ap.add_argument("--batches", type=int, default=int(env_default("BATCHES", "4")),
                    help="recorded batches in each dataset, replayed in order")
    ap.add_argument("--data-seed", type=int, default=1, help="numpy seed of the synthetic data")
    ap.add_argument("--tolerance", type=float, default=1e-4, help="relative first-step loss tolerance")
    ap.add_argument("--later-tolerance", type=float, default=1e-3, help="relative tolerance of steps 2 and 3")
    ap.add_argument("--quiet", type=float, default=float(env_default("QUIET", "0")),
                    help="before each pair of runs, wait up to this many seconds for other processes to leave "
                         "the cores idle (default 0: do not wait)")
    args = ap.parse_args()

    d500 = args.d500
    if not (os.path.isfile(d500) and os.access(d500, os.X_OK)):
        print("bench-train: %s not found or not executable: build it first (make build, or "
              "go build -o bin/d500 ./cmd/d500)" % d500, file=sys.stderr)
        return 2
    d500 = os.path.abspath(d500)
    if args.rounds < 1 or args.batches < 1:
        print("bench-train: --rounds and --batches must be at least 1", file=sys.stderr)
        return 2
    try:
        threads_list = [int(t) for t in args.threads.split(",") if t.strip()]
    except ValueError:
        threads_list = []
    if not threads_list or min(threads_list) < 1:
        print("bench-train: --threads %r: want positive numbers, comma-separated" % args.threads, file=sys.stderr)
        return 2
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    if not models:
        print("bench-train: --models is empty", file=sys.stderr)
        return 2
    specs = {k: per_model(getattr(args, k), k) for k in ("steps", "warmup", "batch")}
    cases = []
    for m in models:
        conf = dict(DEFAULTS.get(m, OTHER))
        for k, (default, pairs) in specs.items():
            conf[k] = pairs.get(m, default if default is not None else conf[k])
        if conf["warmup"] >= conf["steps"]:
            print("bench-train: %s: warm-up %d leaves none of its %d steps to time" % (m, conf["warmup"], conf["steps"]),
                  file=sys.stderr)
            return 2
        cases.append(Case(m, conf["batch"], conf["steps"], conf["warmup"]))

    out = args.out
    work = os.path.join(out, "bench-train")
    runs = os.path.join(work, "runs")
    os.makedirs(runs, exist_ok=True)
    openblas = OpenBLAS(loaded_libraries(("blas",)))
    env = machine(d500, openblas)
    settings = {"rounds": args.rounds, "rounds_done": 0, "threads": threads_list, "lr": LR, "momentum": MOMENTUM,
                "batches": args.batches, "data_seed": args.data_seed, "tolerance": args.tolerance,
                "later_tolerance": args.later_tolerance, "quiet_wait_limit_s": args.quiet,
                "cases": {c.model: {"batch": c.batch, "steps": c.steps, "warmup": c.warmup} for c in cases}}
    print("PyTorch %s with %s; torch's default threads %d%s; CPU %s" % (
        torch.__version__, blas_name(env), env["torch"]["default_threads"],
        ", OpenBLAS's %d" % openblas.default_threads if openblas.lib else "", env["cpu"]), flush=True)
    if not openblas.lib:
        print("bench-train: WARNING: PyTorch is not using OpenBLAS (libblas.so.3 is %s): its matrix products "
              "run on the reference BLAS, an unfair baseline. Run scripts/setup-pytorch.sh." % env["blas_alternative"],
              file=sys.stderr, flush=True)

    # SIGTERM stops like ^C, with the reports written.
    def on_term(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_term)
    status = ""
    try:
        for c in cases:
            try:
                prepare(c, d500, work, args.batches, args.data_seed)
                print("%s: batch %d, input %s, %d classes, %d trained parameters; %d steps (warm-up %d)" % (
                    c.model, c.batch, "x".join(map(str, c.info["input_shape"])), c.info["classes"],
                    c.info["parameters"], c.steps, c.warmup), flush=True)
            except CaseFailed as e:
                c.fail(str(e))
        for rnd in range(1, args.rounds + 1):
            for c in cases:
                for t in threads_list:
                    # A case stops when it fails, or when no d500 backend
                    # is left to compare with PyTorch.
                    if c.error or all(b in c.dropped for b in D500_BACKENDS):
                        break
                    order = c.order(rnd)
                    waited = wait_quiet(args.quiet)
                    res = {}
                    for fw in order:
                        try:
                            if fw == "pytorch":
                                res[fw] = run_torch(c, t, openblas)
                            else:
                                res[fw] = run_d500(c, d500, fw, t, runs, rnd)
                        except CaseFailed as e:
                            if fw == "pytorch":
                                c.fail(str(e))
                                break
                            # The other backend and PyTorch still make a
                            # comparison.
                            c.drop(fw, e)
                    if c.error:
                        break
                    ran = [b for b in D500_BACKENDS if b in res]
                    if not ran:
                        continue
                    pt = res["pytorch"]
                    checks = {}
                    try:
                        for b in ran:
                            try:
                                checks[b] = check_losses(b, res[b], pt, args.tolerance, args.later_tolerance)
                            except LossMismatch as e:
                                if b == "native":
                                    raise
                                # ONNX Runtime's time is kept, its row marked.
                                checks[b] = e.result
                                c.mismatch.setdefault(b, str(e))
                                bar = "!" * 78
                                print("\n%s\nLOSS MISMATCH %s on %s (batch %d, %d threads, round %d), its row is "
                                      "marked: %s\n%s\n" % (bar, b, c.model, c.batch, t, rnd, e, bar),
                                      file=sys.stderr, flush=True)
                    except LossMismatch as e:
                        c.info.setdefault("failed_checks", []).append(e.result)
                        c.fail(str(e))
                        break
                    pt_ms = timed(pt, c.warmup)
                    rec = {"round": rnd, "order": order, "first": "d500" if order[0] != "pytorch" else "pytorch",
                           "pytorch_ms": pt_ms, "pytorch_step_ms": pt["step_ms"], "pytorch_losses": pt["losses"],
                           "pytorch_threads": pt["torch_threads"], "openblas_threads": pt["openblas_threads"],
                           "pytorch_load": pt["load"], "quiet_wait_s": waited}
                    for b in D500_BACKENDS:
                        k, r = KEY[b], res.get(b)
                        ms = timed(r, c.warmup) if r else None
                        rec.update({
                            k + "_ms": ms, ratio_key(b): ms / pt_ms if r else None, check_key(b): checks.get(b),
                            k + "_allocs_per_step": r["allocs_per_step"] if r else None,
                            k + "_step_ms": r["step_ms"] if r else None, k + "_losses": r["losses"] if r else None,
                            k + "_load": r["load"] if r else None,
                            ("d500" if b == "native" else k) + "_csv": r["csv"] if r else None,
                            ("d500" if b == "native" else k) + "_json": r["json"] if r else None})
                    c.rounds.setdefault(t, []).append(rec)
                    # d500's own account of the machine (its kernels' CPU
                    # features, commit), once.
                    env.setdefault("d500_environment", res[ran[0]]["environment"])
                    busy = max(x["load"]["others_cores"] or 0 for x in res.values())
                    figs = "  ".join("%s %8s ms" % (LABEL[fw], fmt_ms(timed(res[fw], c.warmup))) for fw in order
                                     if fw in res)
                    ratios = "  ".join("%s/PyTorch %5.2f" % (LABEL[b], rec[ratio_key(b)]) for b in ran)
                    losses = "  ".join("%s %.6f" % (LABEL[fw], res[fw]["losses"][0]) for fw in ran + ["pytorch"])
                    worst = max(checks[b]["rel"] for b in ran)
                    print("round %d/%d  %-9s b%-3d t%d: %s  %s  loss step 1: %s (rel %.1e)%s%s" % (
                        rnd, args.rounds, c.model, c.batch, t, figs, ratios, losses, worst,
                        "  LOSS MISMATCH" if any(not checks[b]["ok"] for b in ran) else "",
                        "  [others busy: %.1f cores]" % busy if busy >= 0.2 else ""), flush=True)
            settings["rounds_done"] = rnd
            write_reports(out, cases, threads_list, clean_nan(env), settings, "")
    except KeyboardInterrupt:
        status = "interrupted after %d of %d rounds" % (settings["rounds_done"], args.rounds)
        print("\nbench-train: " + status, file=sys.stderr)
    failed = [c for c in cases if c.failures()]
    if failed and not status:
        status = "FAILED: " + "; ".join("%s: %s" % (c.model, "; ".join(f.splitlines()[0] for f in c.failures()))
                                        for c in failed)
    write_reports(out, cases, threads_list, clean_nan(env), settings, status)
    print()
    with open(os.path.join(out, "bench-train.md")) as f:
        print(f.read())
    print("Results in %s and %s" % (os.path.join(out, "bench-train.md"), os.path.join(out, "bench-train.json")))
    if status.startswith("interrupted"):
        return 130
    if failed:
        print("bench-train: %d case(s) failed: %s" % (len(failed), ", ".join(c.model for c in failed)), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
