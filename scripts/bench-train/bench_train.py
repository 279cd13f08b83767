#!/usr/bin/python3
"""One training step of d500's native backend against PyTorch, side by side.

For every preset and thread count, `d500 train --impl native` and PyTorch
(in this process) train the same ONNX file (`d500 model PRESET`, its
initializers as the initial weights) on the same recorded batches
(`tensors:DIR`, replayed in order) with the same optimizer (momentum SGD,
lr 0.01, momentum 0.9) and the same loss (softmax cross-entropy). Each
run's per-step times after the warm-up steps give its median; the ratio
is native / PyTorch (below 1: native is faster).

The first step's loss must agree between the two (same weights, same
batch): that is what shows they ran the same network, so a case whose
losses disagree fails loudly instead of reporting a ratio. Steps 2 and 3,
which also depend on the gradients and the update, are held to a looser
tolerance.

The machine is a shared VM whose speed drifts by tens of percent from one
minute to the next, so the runs are interleaved: every round runs every
case once in both frameworks, one right after the other (which one goes
first alternates between rounds), and each round gives a ratio of its own.
The table shows the median of those ratios and their spread. Each run also
records how many cores other processes kept busy meanwhile; rows measured
under such load are marked (on 2 cores it is what decides the 2-thread
figures), and --quiet S waits up to S seconds for a quiet machine before
each pair of runs.

usage: bench_train.py --d500 BIN --out DIR [--models LIST] [--threads LIST]
       [--rounds R] [--steps SPEC] [--warmup SPEC] [--batch SPEC] [--batches K]
       [--data-seed S] [--tolerance F] [--later-tolerance F] [--quiet S]

SPEC is a number for every model, or model=N pairs, or both ("20,resnet18=8").
Writes DIR/bench-train.md, DIR/bench-train.json, and the models, datasets
and d500's CSV/JSON of every run under DIR/bench-train/.
Exit status: 0 all cases passed; 1 a case failed (loss mismatch, a d500 run
failed, an operator the translation lacks); 2 bad usage; 130 interrupted.
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


class CaseFailed(Exception):
    """A case cannot give a fair figure; the message says why."""


class LossMismatch(CaseFailed):
    """The two frameworks' losses disagree; result holds the figures."""

    def __init__(self, msg, result):
        super().__init__(msg)
        self.result = result


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

    def fail(self, msg):
        if self.error is None:
            self.error = msg
        bar = "!" * 78
        print("\n%s\nFAIL %s (batch %d): %s\n%s\n" % (bar, self.model, self.batch, msg, bar), file=sys.stderr, flush=True)


def run(cmd, what):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        tail = "\n".join(p.stderr.strip().splitlines()[-20:]) or "(no output on stderr)"
        raise CaseFailed("%s failed (exit status %d)\n  command: %s\n  stderr:\n%s" % (
            what, p.returncode, " ".join(cmd), "\n".join("    " + line for line in tail.splitlines())))
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


def run_d500(case, d500, threads, runs, rnd):
    stem = os.path.join(runs, "%s-t%d-r%d" % (case.model, threads, rnd))
    csv_path, json_path = stem + ".csv", stem + ".json"
    for p in (csv_path, json_path):
        if os.path.exists(p):
            os.remove(p)
    cmd = [d500, "train", "--model", case.path, "--dataset", "tensors:" + case.data,
           "--steps", str(case.steps), "--batch", str(case.batch), "--threads", str(threads),
           "--optimizer", "momentum", "--lr", str(LR), "--momentum", str(MOMENTUM),
           "--impl", "native", "--no-shuffle", "--csv", csv_path, "--json", json_path]
    load = Load.snapshot()
    run(cmd, "d500 train (%s, %d threads)" % (case.model, threads))
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


def check_losses(case, nat, pt, tol, later_tol):
    """The first-step loss (and, looser, steps 2-3) of both runs; raises
    CaseFailed when they disagree."""
    first = rel(nat["losses"][0], pt["losses"][0])
    later = [rel(a, b) for a, b in zip(nat["losses"][1:3], pt["losses"][1:3])]
    every = [rel(a, b) for a, b in zip(nat["losses"], pt["losses"])]
    res = {"d500": nat["losses"][0], "pytorch": pt["losses"][0], "rel": first,
           "steps_2_3_rel": later, "largest_rel_all_steps": max(every), "ok": True}
    if not first <= tol:
        res["ok"] = False
        raise LossMismatch("first-step loss differs: d500 %.8g, PyTorch %.8g, relative %.2e > %.0e: the two "
                           "frameworks did not run the same network on the same batch" % (
                               nat["losses"][0], pt["losses"][0], first, tol), res)
    bad = [(i + 2, r) for i, r in enumerate(later) if not r <= later_tol]
    if bad:
        res["ok"] = False
        step, r = bad[0]
        raise LossMismatch("loss of step %d differs: d500 %.8g, PyTorch %.8g, relative %.2e > %.0e: the "
                           "gradients or the update differ" % (
                               step, nat["losses"][step - 1], pt["losses"][step - 1], r, later_tol), res)
    return res


def timed(run, warmup):
    ms = run["step_ms"][warmup:]
    return median(ms)


# ---------------------------------------------------------------- reports


def summarize(case, threads):
    recs = case.rounds.get(threads, [])
    ratios = [r["ratio"] for r in recs]
    allocs = [r["native_allocs_per_step"] for r in recs if r["native_allocs_per_step"] is not None]
    return {
        "rounds": len(recs),
        "pytorch_ms": median([r["pytorch_ms"] for r in recs]),
        "native_ms": median([r["native_ms"] for r in recs]),
        "ratio": median(ratios),
        "ratio_min": min(ratios) if ratios else float("nan"),
        "ratio_max": max(ratios) if ratios else float("nan"),
        "allocs_per_step": median(allocs) if allocs else None,
        # per round, the busier of its two runs
        "others_cores": median([max(r[k]["others_cores"] or 0 for k in ("native_load", "pytorch_load")) for r in recs]),
    }


def write_reports(out, cases, threads_list, env, settings, status):
    rows, flagged = [], False
    for c in cases:
        for t in threads_list:
            s = summarize(c, t)
            if c.error and not s["rounds"]:
                rows.append("| %s | %d | %d | — | — | FAILED | — |" % (c.model, c.batch, t))
                continue
            allocs = "n/a" if s["allocs_per_step"] is None else "%.0f" % s["allocs_per_step"]
            ratio = "%.2f (%.2f–%.2f)" % (s["ratio"], s["ratio_min"], s["ratio_max"])
            if s["others_cores"] >= BUSY:
                ratio += " †"
                flagged = True
            if c.error:
                ratio += " FAILED"
            rows.append("| %s | %d | %d | %s | %s | %s | %s |" % (
                c.model, c.batch, t, fmt_ms(s["pytorch_ms"]), fmt_ms(s["native_ms"]), ratio, allocs))

    checks = []
    for c in cases:
        recs = [r for t in threads_list for r in c.rounds.get(t, [])]
        res = [r["loss_check"] for r in recs if r.get("loss_check")] + c.info.get("failed_checks", [])
        if not res:
            checks.append("| %s | — | — | — | — | %s |" % (c.model, "FAILED" if c.error else "not run"))
            continue
        worst = max(res, key=lambda r: r["rel"])
        later = max((x for r in res for x in r["steps_2_3_rel"]), default=float("nan"))
        checks.append("| %s | %.7f | %.7f | %.1e | %.1e | %s |" % (
            c.model, worst["d500"], worst["pytorch"], worst["rel"], later,
            "FAILED" if c.error else "ok (%d runs)" % len(res)))

    tc = env["torch"]
    steps = ", ".join("%s %d (warm-up %d)" % (c.model, c.steps, c.warmup) for c in cases)
    md = [
        "# One training step: d500 native vs PyTorch",
        "",
        "Forward, softmax cross-entropy, backward and a momentum-SGD update (lr %g, momentum %g), "
        "both frameworks from the same ONNX file and initial weights on the same %d recorded batches. "
        "ms/step is the median step after the warm-up, then the median over rounds; ratio = native / PyTorch "
        "per round (below 1: native faster), its median and (min–max) over the rounds." % (
            LR, MOMENTUM, settings["batches"]),
        "",
        "| model | batch | threads | PyTorch ms/step | native ms/step | ratio median (min–max) | native allocs/step |",
        "|---|---:|---:|---:|---:|---|---:|",
    ] + rows + ([
        "",
        "† measured while other processes kept %.2g or more cores busy (median over its rounds): on 2 cores "
        "that slows either framework, and PyTorch's OpenMP threads on 2 threads most, so the ratio says more "
        "about the machine than about the frameworks; rerun on a quiet machine." % BUSY,
    ] if flagged else []) + [
        "",
        "First-step loss, same weights and batch (tolerance: relative %.0e; steps 2–3: %.0e); the run "
        "with the largest difference is shown:" % (settings["tolerance"], settings["later_tolerance"]),
        "",
        "| model | d500 loss | PyTorch loss | rel. diff step 1 | rel. diff steps 2–3 | check |",
        "|---|---:|---:|---:|---:|---|",
    ] + checks + [
        "",
        "PyTorch %s (BLAS_INFO=%s, CPU capability %s, %s), BLAS: %s; libblas.so.3 alternative: %s. "
        "PyTorch threads: torch.set_num_threads(T) and openblas_set_num_threads(T) (the former does not "
        "reach OpenBLAS). CPU: %s, %d cores. %s. %d round(s), d500 first in odd rounds; steps per run: %s. "
        "d500: %s." % (
            tc["version"], tc.get("blas_info", "?"), tc.get("cpu_capability", "?"), tc.get("onednn", "no oneDNN"),
            blas_name(env), env["blas_alternative"], env["cpu"], env["cores"], env["date"],
            settings["rounds_done"], steps, env["d500_version"].splitlines()[0] if env["d500_version"] else "?"),
    ]
    loads = [r[k]["others_cores"] for c in cases for t in threads_list for r in c.rounds.get(t, [])
             for k in ("native_load", "pytorch_load") if r[k]["others_cores"] is not None]
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
                error=c.error, info=c.info, summary=summarize(c, t), rounds=c.rounds.get(t, [])))
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
            d500_first = rnd % 2 == 1
            for c in cases:
                if c.error:
                    continue
                for t in threads_list:
                    if c.error:
                        break
                    waited = wait_quiet(args.quiet)
                    try:
                        if d500_first:
                            nat = run_d500(c, d500, t, runs, rnd)
                            pt = run_torch(c, t, openblas)
                        else:
                            pt = run_torch(c, t, openblas)
                            nat = run_d500(c, d500, t, runs, rnd)
                    except CaseFailed as e:
                        c.fail(str(e))
                        break
                    try:
                        check = check_losses(c, nat, pt, args.tolerance, args.later_tolerance)
                    except LossMismatch as e:
                        c.info.setdefault("failed_checks", []).append(e.result)
                        c.fail(str(e))
                        break
                    nat_ms, pt_ms = timed(nat, c.warmup), timed(pt, c.warmup)
                    rec = {"round": rnd, "first": "d500" if d500_first else "pytorch",
                           "native_ms": nat_ms, "pytorch_ms": pt_ms, "ratio": nat_ms / pt_ms,
                           "native_allocs_per_step": nat["allocs_per_step"], "loss_check": check,
                           "native_step_ms": nat["step_ms"], "pytorch_step_ms": pt["step_ms"],
                           "native_losses": nat["losses"], "pytorch_losses": pt["losses"],
                           "pytorch_threads": pt["torch_threads"], "openblas_threads": pt["openblas_threads"],
                           "native_load": nat["load"], "pytorch_load": pt["load"], "quiet_wait_s": waited,
                           "d500_csv": nat["csv"], "d500_json": nat["json"]}
                    c.rounds.setdefault(t, []).append(rec)
                    # d500's own account of the machine (its kernels' CPU
                    # features, commit), once.
                    env.setdefault("d500_environment", nat["environment"])
                    busy = max(x["load"]["others_cores"] or 0 for x in (nat, pt))
                    print("round %d/%d  %-9s b%-3d t%d: PyTorch %8s ms  native %8s ms  ratio %5.2f  "
                          "loss step 1: d500 %.6f PyTorch %.6f (rel %.1e)%s" % (
                              rnd, args.rounds, c.model, c.batch, t, fmt_ms(pt_ms), fmt_ms(nat_ms), nat_ms / pt_ms,
                              check["d500"], check["pytorch"], check["rel"],
                              "  [others busy: %.1f cores]" % busy if busy >= 0.2 else ""), flush=True)
            settings["rounds_done"] = rnd
            write_reports(out, cases, threads_list, clean_nan(env), settings, "")
    except KeyboardInterrupt:
        status = "interrupted after %d of %d rounds" % (settings["rounds_done"], args.rounds)
        print("\nbench-train: " + status, file=sys.stderr)
    failed = [c for c in cases if c.error]
    if failed and not status:
        status = "FAILED: " + "; ".join("%s: %s" % (c.model, c.error.splitlines()[0]) for c in failed)
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
