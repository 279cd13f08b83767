#!/usr/bin/env bash
# Installs what `make crosscheck-pytorch` needs beyond the project's own
# set-up: Debian's PyTorch and ONNX Python packages (about 1 GB, so only
# for that target). Idempotent.
set -euo pipefail
debs=(python3-torch python3-onnx python3-numpy)
missing=()
for p in "${debs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup-pytorch: need root or sudo to install ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
  fi
  echo "setup-pytorch: installing ${missing[*]}"
  "${sudo[@]}" apt-get update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi
