#!/usr/bin/env bash
# Layer-2 benchmark: samples per second of every distributed scheme at
# np=1 and np=2 on one model (the mlp preset on synthetic 1x28x28 data),
# with the fraction of the optimizer's time spent communicating, from the
# per-step CSVs that rank 0 writes. MODEL (default mlp; lenet also fits
# the 1x28x28 data), STEPS, BATCH and REPEATS may be set. One backend thread per rank, so np=2
# uses the machine's two cores and np=1 one of them.
#
#   scripts/bench-distributed.sh BIN OUTDIR
#
# BIN is a d500 built with -tags mpi. Writes OUTDIR/bench-distributed.md
# (a markdown table) and .tsv, and the runs' CSVs under
# OUTDIR/bench-distributed/.
set -euo pipefail
bin=${1:?usage: bench-distributed.sh BIN OUTDIR}
out=${2:?usage: bench-distributed.sh BIN OUTDIR}
model=${MODEL:-mlp}
steps=${STEPS:-40}
repeats=${REPEATS:-3}
batch=${BATCH:-64}
schemes=(pssgd asgd dsgd mavg dpsgd allreduce)
runs="$out/bench-distributed"
mkdir -p "$runs"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
train=(train --model "$model" --dataset synthetic:n=8192,test=64 --batch "$batch" --steps "$steps"
  --optimizer momentum --lr 0.01 --threads 1)

# rate CSV NP: samples/s over all ranks, the communication fraction and
# rank 0's megabytes sent plus received per step, over the step rows
# after the first (which also pays start-up costs).
rate() {
  awk -F, -v np="$2" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $col["loss"] == "" { next }   # evaluation rows
    { n++ }
    n == 1 { s0 = $col["samples"]; t0 = $col["seconds"]; next }
    { s1 = $col["samples"]; t1 = $col["seconds"]; m++
      if ("comm_seconds" in col) {
        comm += $col["comm_seconds"]; comp += $col["compute_seconds"]
        bytes += $col["bytes_sent"] + $col["bytes_received"]
      } }
    END {
      if (t1 <= t0) { print "- - -"; exit }
      frac = (comm + comp > 0) ? comm / (comm + comp) : 0
      printf "%.1f %.3f %.2f\n", np * (s1 - s0) / (t1 - t0), frac, bytes / m / 1e6
    }' "$1"
}

# Every configuration runs $repeats times, the repeats interleaved (all
# configurations once, then again), and the median run counts: the
# machine may be shared, and a burst of someone else's load then spoils
# one run of several configurations rather than every run of one.
configs=("single 1")
for s in "${schemes[@]}"; do configs+=("$s 1" "$s 2"); done
for i in $(seq "$repeats"); do
  for c in "${configs[@]}"; do
    read -r s np <<< "$c"
    echo "run $i/$repeats: $s, np=$np"
    if [ "$s" = single ]; then
      "$bin" "${train[@]}" --csv "$runs/single-$i.csv" > /dev/null
    else
      mpirun -np "$np" --oversubscribe "$bin" "${train[@]}" --distributed "$s" --average-every 4 \
        --csv "$runs/$s-np$np-$i.csv" > /dev/null
    fi
  done
done
printf 'scheme\tnp\tsamples_per_s\tcomm_fraction\tmb_per_step\n' > "$out/bench-distributed.tsv"
for c in "${configs[@]}"; do
  read -r s np <<< "$c"
  name=$s-np$np
  [ "$s" = single ] && name=single
  read -r r f mb < <(for i in $(seq "$repeats"); do rate "$runs/$name-$i.csv" "$np"; done |
    sort -g | awk '{ line[NR] = $0 } END { print line[int((NR + 1) / 2)] }')
  [ "$s" = single ] && s=none
  printf '%s\t%s\t%s\t%s\t%s\n' "$s" "$np" "$r" "$f" "$mb" >> "$out/bench-distributed.tsv"
done

{
  echo "$model on synthetic 1x28x28 data, batch $batch per rank, momentum SGD, $steps steps, 1 thread per rank; mavg averages every 4 steps."
  echo "samples/s counts every rank's samples (rank 0's × np) over steps 2..$steps, median of $repeats runs; comm fraction = time in MPI calls (waiting included) / time in the optimizer's steps, on rank 0; MB/step = rank 0's megabytes sent + received per step at np=2."
  echo
  echo "| scheme | samples/s np=1 | samples/s np=2 | speed-up | comm fraction np=1 | comm fraction np=2 | MB/step np=2 |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
  awk -F'\t' 'NR > 1 { r[$1, $2] = $3; f[$1, $2] = $4; mb[$1, $2] = $5; if (!seen[$1]++) order[++n] = $1 }
    END {
      for (i = 1; i <= n; i++) {
        s = order[i]
        if (s == "none") { printf "| single process | %s | | | %s | | |\n", r[s, 1], f[s, 1]; continue }
        printf "| %s | %s | %s | %.2f | %s | %s | %s |\n", s, r[s, 1], r[s, 2], r[s, 2] / r[s, 1], f[s, 1], f[s, 2], mb[s, 2]
      }
    }' "$out/bench-distributed.tsv"
} > "$out/bench-distributed.md"
cat "$out/bench-distributed.md"
