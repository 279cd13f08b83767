#!/usr/bin/env bash
# lenet_seeds.sh D500 SEEDS OUTDIR trains LeNet on Fashion-MNIST for one
# epoch (Adam, lr 0.001, batch 64) for every seed in SEEDS (as "1-5"), under
# both initialisations, first with d500 and then with PyTorch alone
# (pytorch_lenet_seeds.py: its own draws and shuffling), and prints the
# test accuracy of each run and, per initialisation, the mean, the smallest
# and the largest. Each d500 run's CSV and output go to OUTDIR.
set -euo pipefail
d500=$1 seeds=$2 out=$3
here=$(dirname "$0")
mkdir -p "$out"
summary() { awk -v what="$1" '{ s += $1; if (NR == 1 || $1 < lo) lo = $1; if ($1 > hi) hi = $1 }
  END { printf "%s  seeds %d  mean %.4f  min %.4f  max %.4f\n", what, NR, s / NR, lo, hi }'; }
for init in he pytorch; do
  accs=()
  for s in $(seq "${seeds%-*}" "${seeds#*-}"); do
    "$d500" train --model lenet --dataset fashion-mnist --epochs 1 --optimizer adam --lr 0.001 --batch 64 \
      --seed "$s" --init "$init" --csv "$out/d500-$init-$s.csv" > "$out/d500-$init-$s.log"
    # The last evaluation row's test_accuracy (the seventh column).
    acc=$(awk -F, 'NR > 1 && $7 != "" { a = $7 } END { print a }' "$out/d500-$init-$s.csv")
    printf "d500  init %s  seed %d  test accuracy %.4f\n" "$init" "$s" "$acc"
    accs+=("$acc")
  done
  printf "%s\n" "${accs[@]}" | summary "d500 init $init"
done
for init in he pytorch; do
  /usr/bin/python3 "$here/pytorch_lenet_seeds.py" --init "$init" --seeds "$seeds"
done
