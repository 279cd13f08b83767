#!/usr/bin/env bash
# Installs the ONNX Runtime shared library the onnxruntime backend loads at
# run time. The library comes from npm's onnxruntime-node package, which
# ships a prebuilt Linux x64 build; we take only the .so out of the packed
# tarball (npm pack runs no install scripts).
#
#   ORT_VERSION   onnxruntime-node version (default 1.30.0)
#   ORT_LIB       where to install it
#                 (default /usr/local/lib/deep500/libonnxruntime.so.1, the
#                 backend's default path)
#
# ONNX Runtime's StringNormalizer builds the en_US.UTF-8 locale (its
# default), so the locale is generated too (Debian's locales package).
#
# Idempotent: each step first checks whether it is needed.
set -euo pipefail

if ! locale -a 2>/dev/null | grep -qix 'en_US.utf-\?8'; then
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup-onnxruntime: need root or sudo to generate the en_US.UTF-8 locale" >&2; exit 1; }
    sudo=(sudo)
  fi
  if ! command -v locale-gen >/dev/null; then
    "${sudo[@]}" apt-get update
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends locales
  fi
  echo "setup: generating the en_US.UTF-8 locale"
  "${sudo[@]}" sed -i 's/^# *en_US.UTF-8 UTF-8/en_US.UTF-8 UTF-8/' /etc/locale.gen
  grep -q '^en_US.UTF-8 UTF-8' /etc/locale.gen || echo 'en_US.UTF-8 UTF-8' | "${sudo[@]}" tee -a /etc/locale.gen >/dev/null
  "${sudo[@]}" locale-gen >/dev/null
fi

version=${ORT_VERSION:-1.30.0}
dest=${ORT_LIB:-/usr/local/lib/deep500/libonnxruntime.so.1}
member=package/bin/napi-v6/linux/x64/libonnxruntime.so.1

if [ -s "$dest" ]; then
  exit 0
fi
command -v npm >/dev/null || { echo "setup-onnxruntime: npm is needed to fetch onnxruntime-node@$version (apt-get install npm)" >&2; exit 1; }
case "$(uname -sm)" in
  "Linux x86_64") ;;
  *) echo "setup-onnxruntime: onnxruntime-node ships $member only for Linux x86_64, not $(uname -sm)" >&2; exit 1 ;;
esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "setup: fetching onnxruntime-node@$version for $dest"
(cd "$tmp" && npm pack --silent "onnxruntime-node@$version" >/dev/null)
tarball=$(ls "$tmp"/onnxruntime-node-*.tgz)
tar -xzf "$tarball" -C "$tmp" "$member"
mkdir -p "$(dirname "$dest")"
install -m 0644 "$tmp/$member" "$dest.tmp"
mv "$dest.tmp" "$dest"
echo "setup: installed $dest"
