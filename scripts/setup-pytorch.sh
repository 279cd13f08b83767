#!/usr/bin/env bash
# Installs what `make crosscheck-pytorch` and `make bench-train` need
# beyond the project's own set-up: Debian's PyTorch and ONNX Python
# packages (about 1 GB, so only for those targets), and OpenBLAS: Debian's
# torch calls whatever libblas.so.3 the alternatives system points at,
# which without libopenblas0-pthread is the reference BLAS, about 20x
# slower on matrix products; a PyTorch timed on it is an unfair baseline.
# Idempotent.
set -euo pipefail
exec "$(dirname "$0")/apt-install.sh" python3-torch python3-onnx python3-numpy libopenblas0-pthread
