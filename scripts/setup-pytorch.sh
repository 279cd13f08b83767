#!/usr/bin/env bash
# Installs what `make crosscheck-pytorch` needs beyond the project's own
# set-up: Debian's PyTorch and ONNX Python packages (about 1 GB, so only
# for that target). Idempotent.
set -euo pipefail
exec "$(dirname "$0")/apt-install.sh" python3-torch python3-onnx python3-numpy
