#!/usr/bin/python3
"""Trains the LeNet preset in PyTorch alone, one epoch per seed, with
PyTorch's own initialisation and shuffling, and prints the test accuracy
of each seed and their mean.

This is the distribution d500's `train --model lenet --seed S --init I`
should fall in: the same network, data, normalisation and Adam settings,
with weights drawn by PyTorch's initialisers (he: kaiming_normal_ with
fan_in and the Relu gain, zero biases; pytorch: nn.Conv2d's and
nn.Linear's defaults). d500's draws and batch order differ from PyTorch's,
so seeds are compared as a whole, not one by one.

usage: pytorch_lenet_seeds.py --init he|pytorch [--seeds 1-5] [--batch 64] [--lr 0.001]
"""
import argparse
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from pytorch_lenet import LeNet, images, read_idx
from torch_blas import blas_in_use


def seed_range(spec):
    lo, _, hi = spec.partition("-")
    return range(int(lo), int(hi or lo) + 1)


def he_init(net):
    for m in net.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
            nn.init.zeros_(m.bias)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--init", choices=["he", "pytorch"], required=True)
    ap.add_argument("--seeds", type=seed_range, default=seed_range("1-5"))
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    args = ap.parse_args()

    xtr, ytr = images("train-images-idx3-ubyte.gz"), torch.from_numpy(read_idx("train-labels-idx1-ubyte.gz").astype(np.int64))
    xte, yte = images("t10k-images-idx3-ubyte.gz"), torch.from_numpy(read_idx("t10k-labels-idx1-ubyte.gz").astype(np.int64))
    accs = []
    for seed in args.seeds:
        torch.manual_seed(seed)
        net = LeNet()  # PyTorch's default initialisation
        if args.init == "he":
            he_init(net)
        opt = torch.optim.Adam(net.parameters(), lr=args.lr)
        order = torch.randperm(len(xtr))
        for start in range(0, len(xtr), args.batch):
            idx = order[start:start + args.batch]
            opt.zero_grad()
            F.cross_entropy(net(xtr[idx]), ytr[idx]).backward()
            opt.step()
        with torch.no_grad():
            acc = (net(xte).argmax(1) == yte).float().mean().item()
        accs.append(acc)
        print("pytorch %s  init %s  seed %d  test accuracy %.4f" % (torch.__version__, args.init, seed, acc), flush=True)
    print("pytorch init %s  seeds %d  mean %.4f  min %.4f  max %.4f" % (args.init, len(accs), np.mean(accs), min(accs), max(accs)))
    print("pytorch BLAS: %s" % blas_in_use())
    return 0


if __name__ == "__main__":
    sys.exit(main())
