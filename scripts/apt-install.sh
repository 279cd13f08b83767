#!/usr/bin/env bash
# apt-install.sh PACKAGE... installs the Debian packages that are not
# installed yet (as root, or through sudo), and nothing when all are: the
# set-up scripts call it for what they need.
set -euo pipefail
missing=()
for p in "$@"; do
  # dpkg -s succeeds for removed-but-configured packages too; ask for the
  # installed state explicitly.
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
((${#missing[@]})) || exit 0
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root or sudo to install ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
echo "setup: installing ${missing[*]}"
"${sudo[@]}" apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
