#!/usr/bin/env bash
# Installs what building and testing Deep500-Go needs. Idempotent, and fast
# when everything is already there: each step first checks whether it is
# needed.
#
#   Debian packages  protobuf-compiler (protoc), libonnx-dev (onnx.proto),
#                    libonnx-testdata (ONNX's conformance cases),
#                    dataset-fashion-mnist (the IDX files of Fashion-MNIST),
#                    openmpi-bin libopenmpi-dev pkgconf (MPI for -tags mpi),
#                    bash-completion (the functions d500's bash completion
#                    script calls, and its test)
#   Go modules       go mod download
#   protoc-gen-go    v1.36.12, the version the committed bindings name
set -euo pipefail
cd "$(dirname "$0")/.."

debs=(protobuf-compiler libonnx-dev libonnx-testdata dataset-fashion-mnist openmpi-bin libopenmpi-dev pkgconf bash-completion)
protoc_gen_go_version=v1.36.12

scripts/apt-install.sh "${debs[@]}"

go mod download

gobin=$(go env GOBIN)
[ -n "$gobin" ] || gobin="$(go env GOPATH)/bin"
have=""
if [ -x "$gobin/protoc-gen-go" ]; then
  have=$("$gobin/protoc-gen-go" --version 2>/dev/null | awk '{print $2}')
fi
if [ "$have" != "$protoc_gen_go_version" ]; then
  echo "setup: installing protoc-gen-go $protoc_gen_go_version"
  go install "google.golang.org/protobuf/cmd/protoc-gen-go@$protoc_gen_go_version"
fi

# The ONNX Runtime shared library of the onnxruntime backend.
scripts/setup-onnxruntime.sh
