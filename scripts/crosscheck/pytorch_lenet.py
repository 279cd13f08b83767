#!/usr/bin/python3
"""Trains the LeNet preset in PyTorch exactly as `d500 train` did and
compares the two runs step by step.

Both start from the same weights (the initializers of the ONNX file
`d500 model lenet` wrote, whose names are PyTorch's state_dict keys), see
the same batches (Fashion-MNIST in file order, `d500 train --no-shuffle`),
normalised the same way, and use Adam with the same hyperparameters. The
first steps must agree to float rounding; later ones drift apart slowly,
as two float32 implementations do, so the report also gives the test
accuracy of both.

usage: pytorch_lenet.py INIT.onnx D500.csv [--steps N] [--tolerance T]
"""
import argparse
import csv
import gzip
import struct
import sys

import numpy as np
import onnx
from onnx import numpy_helper
import torch
import torch.nn as nn
import torch.nn.functional as F

from torch_blas import blas_in_use

DATA = "/usr/share/datasets/fashion-mnist/"
# Fashion-MNIST's per-channel statistics, as d500's --normalize uses them.
MEAN, STD = np.float32(0.2860), np.float32(0.3530)


def read_idx(name):
    with gzip.open(DATA + name) as f:
        raw = f.read()
    rank = struct.unpack(">I", raw[:4])[0] & 0xFF
    dims = struct.unpack(">" + "I" * rank, raw[4:4 + 4 * rank])
    return np.frombuffer(raw[4 + 4 * rank:], dtype=np.uint8).reshape(dims)


def images(name):
    x = read_idx(name).astype(np.float32) / 255
    return torch.from_numpy((x - MEAN) / STD).unsqueeze(1)


class LeNet(nn.Module):
    """The layers of models.buildLeNet, with the same names."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(400, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = F.relu(self.fc1(x.flatten(1)))
        return self.fc3(F.relu(self.fc2(x)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("init")
    ap.add_argument("csv")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--agree-steps", type=int, default=20,
                    help="steps whose losses must agree within --tolerance")
    ap.add_argument("--tolerance", type=float, default=1e-4)
    args = ap.parse_args()
    torch.set_num_threads(1)

    net = LeNet()
    weights = {i.name: torch.from_numpy(numpy_helper.to_array(i).copy())
               for i in onnx.load(args.init).graph.initializer}
    net.load_state_dict(weights)  # strict: every name and shape must match

    rows = list(csv.DictReader(open(args.csv)))
    d500_loss = [float(r["loss"]) for r in rows if r["loss"]]
    d500_acc = [float(r["test_accuracy"]) for r in rows if r["test_accuracy"]]

    xtr, ytr = images("train-images-idx3-ubyte.gz"), torch.from_numpy(read_idx("train-labels-idx1-ubyte.gz").astype(np.int64))
    xte, yte = images("t10k-images-idx3-ubyte.gz"), torch.from_numpy(read_idx("t10k-labels-idx1-ubyte.gz").astype(np.int64))
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    losses = []
    for start in range(0, len(xtr), args.batch):
        if len(losses) == len(d500_loss):
            break
        x, y = xtr[start:start + args.batch], ytr[start:start + args.batch]
        opt.zero_grad()
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    with torch.no_grad():
        acc = (net(xte).argmax(1) == yte).float().mean().item()

    rel = [abs(a - b) / abs(b) for a, b in zip(d500_loss, losses)]
    print("steps compared: %d" % len(rel))
    for k in [1, 2, 5, 10, 20, 50, 100, 200, 500, len(rel)]:
        if k <= len(rel):
            print("step %4d  loss d500 %.6f  pytorch %.6f  rel. diff %.2e" % (k, d500_loss[k - 1], losses[k - 1], rel[k - 1]))
    worst = max(rel[:args.agree_steps])
    print("largest relative loss difference over the first %d steps: %.2e (tolerance %.0e)" % (args.agree_steps, worst, args.tolerance))
    print("test accuracy  d500 %.4f  pytorch %s %.4f" % (d500_acc[-1] if d500_acc else float("nan"), torch.__version__, acc))
    print("pytorch BLAS: %s" % blas_in_use())
    if worst > args.tolerance:
        print("FAIL: d500 and PyTorch disagree within the first %d steps" % args.agree_steps)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
