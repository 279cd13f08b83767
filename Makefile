# Deep500-Go. `make run` and `make test` are the two commands a new
# checkout needs; both set up what is missing first.

SHELL := /bin/bash
GO ?= go
# ONNX's conformance suites, from Debian's libonnx-testdata.
TESTDATA ?= /usr/share/libonnx-testdata/data
SUITES := $(addprefix $(TESTDATA)/,node pytorch-converted pytorch-operator simple)
BACKEND ?= native
# STRICT=1 makes `make run` fail when a conformance case fails.
STRICT ?=
FUZZTIME ?= 10s
OUT := out


.PHONY: all setup onnxruntime build build-mpi run test generate fuzz clean crosscheck-pytorch crosscheck-seeds bench bench-train bench-distributed report-screenshot

all: build

setup:
	@scripts/setup.sh

# The ONNX Runtime library of backend/onnxruntime (setup runs it too).
onnxruntime:
	@scripts/setup-onnxruntime.sh

build:
	$(GO) build -ldflags "$(VCS_LDFLAGS)" -o bin/d500 ./cmd/d500

# d500 with distributed training over Open MPI (cgo, -tags mpi).
build-mpi: setup
	$(GO) build -tags mpi -ldflags "$(VCS_LDFLAGS)" -o bin/d500-mpi ./cmd/d500

# The main job. First the conformance report of the $(BACKEND) backend
# over the four suites (out/conformance-$(BACKEND).{json,csv,log}); exit
# status 1 from d500 means "the run completed and some cases failed",
# which is reported (the known ones are listed in
# tests/testdata/native_not_passing.tsv) but fails make only with STRICT=1;
# any other failure (2: bad usage or missing data; a crash; no report)
# fails it. Then LeNet is trained on Fashion-MNIST for one epoch with
# reference Adam: the progress bar (on a terminal), the test accuracy, the
# per-step CSV, the figures and the trained model, all in out/.
run: setup build
	@mkdir -p $(OUT)
	@rm -f $(OUT)/conformance-$(BACKEND).json $(OUT)/conformance-$(BACKEND).csv
	@status=0; \
	bin/d500 conformance --backend $(BACKEND) \
		--json $(OUT)/conformance-$(BACKEND).json --csv $(OUT)/conformance-$(BACKEND).csv \
		$(SUITES) > $(OUT)/conformance-$(BACKEND).log || status=$$?; \
	if [ $$status -ne 0 ] && { [ $$status -ne 1 ] || [ ! -s $(OUT)/conformance-$(BACKEND).json ]; }; then \
		tail -n 5 $(OUT)/conformance-$(BACKEND).log; \
		echo "make run: d500 conformance failed (exit status $$status)" >&2; exit $$status; \
	fi; \
	echo "conformance ($(BACKEND)): $$(tail -n 1 $(OUT)/conformance-$(BACKEND).log)"; \
	if [ $$status -eq 1 ] && [ -n "$(STRICT)" ]; then exit 1; fi
	bin/d500 train --backend $(BACKEND) --model lenet --dataset fashion-mnist --epochs 1 \
		--optimizer adam --lr 0.001 --batch 64 \
		--csv $(OUT)/train-lenet-adam.csv --json $(OUT)/train-lenet-adam.json --plot $(OUT)/plots \
		--save-model $(OUT)/lenet-fashion-mnist.onnx
	bin/d500 report --out $(OUT)/report.html $(OUT)/conformance-$(BACKEND).json \
		$(OUT)/train-lenet-adam.csv $(OUT)/train-lenet-adam.json $(wildcard $(OUT)/bench.json)
	@echo
	@echo "Results in $(OUT)/:"
	@echo "  report.html                          all of it on one page: open it in a browser"
	@echo "  conformance-$(BACKEND).json, .csv, .log  every ONNX conformance case: status, reason, errors, seconds"
	@echo "  train-lenet-adam.csv, .json          one row per optimizer step and per evaluation; the run's summary"
	@echo "  plots/                               samples/time vs test accuracy and loss (PNG and SVG)"
	@echo "  lenet-fashion-mnist.onnx             the trained model"

# out/report.png: out/report.html (make run writes it) as Debian's
# Chromium draws it, headless, to look at the page as a reader would. It
# installs chromium (large) the first time.
report-screenshot:
	@test -s $(OUT)/report.html || { echo "no $(OUT)/report.html: run make run first" >&2; exit 1; }
	@scripts/apt-install.sh chromium
	chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1200,3200 \
		--screenshot=$(abspath $(OUT))/report.png file://$(abspath $(OUT))/report.html 2>/dev/null
	@echo "Screenshot in $(OUT)/report.png"

# gofmt is asked about the files of every package, including those behind
# build tags (mpi, cgo), and nothing else (not out/ or caches).
test: setup
	@unformatted=$$(gofmt -l $$($(GO) list -f '{{$$d := .Dir}}{{range .GoFiles}}{{$$d}}/{{.}} {{end}}{{range .TestGoFiles}}{{$$d}}/{{.}} {{end}}{{range .XTestGoFiles}}{{$$d}}/{{.}} {{end}}{{range .CgoFiles}}{{$$d}}/{{.}} {{end}}{{range .IgnoredGoFiles}}{{$$d}}/{{.}} {{end}}' ./...)); \
	if [ -n "$$unformatted" ]; then echo "gofmt -w needed on:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) test -timeout 45m ./...
	@# The native backend's kernels again without their assembly (the
	@# portable implementations alone, as on other architectures).
	$(GO) test -tags purego ./backend/native/...
	@# Distributed training: the mpi build, and its tests under mpirun -np 2.
	@# The tests/ ones build and run d500, which go test's cache cannot see
	@# change: -count=1 runs them every time.
	$(GO) vet -tags mpi ./distributed/ ./cli/ ./cmd/d500/ ./tests/
	$(GO) test -tags mpi -timeout 15m ./distributed/
	$(GO) test -tags mpi -timeout 15m -count=1 -run '^TestMPI' ./tests/

# Cross-framework check: LeNet trained for one epoch by d500 and by
# PyTorch (Debian's python3-torch) from the same weights on the same
# batches (file order); the per-step losses must agree over the first steps,
# and both test accuracies are reported (out/crosscheck/report.txt).
CROSSCHECK := $(OUT)/crosscheck
crosscheck-pytorch: setup build
	@scripts/setup-pytorch.sh
	@mkdir -p $(CROSSCHECK)
	bin/d500 model lenet --seed 1 -o $(CROSSCHECK)/lenet-init.onnx
	bin/d500 train --model $(CROSSCHECK)/lenet-init.onnx --dataset fashion-mnist --epochs 1 --no-shuffle \
		--optimizer adam --lr 0.001 --batch 64 --csv $(CROSSCHECK)/d500.csv
	/usr/bin/python3 scripts/crosscheck/pytorch_lenet.py $(CROSSCHECK)/lenet-init.onnx $(CROSSCHECK)/d500.csv \
		| tee $(CROSSCHECK)/report.txt

# LeNet's test accuracy after one epoch for every seed in SEEDS, under both
# initialisations (--init he and pytorch), in d500 and in PyTorch alone
# (out/crosscheck/seeds.txt): the spread a single seed's figure comes from.
SEEDS ?= 1-5
crosscheck-seeds: setup build
	@scripts/setup-pytorch.sh
	@mkdir -p $(CROSSCHECK)
	scripts/crosscheck/lenet_seeds.sh bin/d500 $(SEEDS) $(CROSSCHECK)/seeds | tee $(CROSSCHECK)/seeds.txt

generate: setup
	$(GO) generate ./...

fuzz: setup
	@FUZZTIME=$(FUZZTIME) scripts/fuzz.sh

# Inference latency of every model preset at batch 1 and 8 on 1 and 2
# threads, native against ONNX Runtime, interleaved in one process:
# out/bench.md (the table the README shows) and out/bench.json. The table
# is measured in BENCH_PASSES passes, one after the other, and each row's
# runs from all of them are pooled: on a shared machine a stretch of a
# minute in which the cores run slower then falls on one pass of a row,
# not on all of its runs, and the table says how far the passes' own
# ratios spread. Each row has BENCH_RUNS timed runs of each backend per
# pass, cut down to BENCH_MIN_RUNS where the warm-up says they would take
# longer than BENCH_BUDGET (the large networks at batch 8), so the whole
# table takes a few minutes on 2 cores. Each row's BENCH_WARMUP untimed
# runs cover native's thread policy learning whether a network runs
# faster on the pool or serially (its first four runs on two threads).
# The binary is stamped with the commit it was built from.
BENCH_PASSES ?= 5
BENCH_WARMUP ?= 5
BENCH_RUNS ?= 10
BENCH_MIN_RUNS ?= 1
BENCH_BUDGET ?= 2s
BENCH_FLAGS ?=
VCS_LDFLAGS = -X github.com/deep500/deep500-go/metrics.BuildCommit=$$(git rev-parse HEAD 2>/dev/null) \
	-X github.com/deep500/deep500-go/metrics.BuildModified=$$(git diff --quiet HEAD 2>/dev/null && echo false || echo true)
bench: setup build
	@mkdir -p $(OUT)
	bin/d500 bench --batch 1,8 --threads 1,2 --passes $(BENCH_PASSES) --warmup $(BENCH_WARMUP) --runs $(BENCH_RUNS) --min-runs $(BENCH_MIN_RUNS) --budget $(BENCH_BUDGET) \
		--compare onnxruntime --md $(OUT)/bench.md --json $(OUT)/bench.json $(BENCH_FLAGS)
	@echo "Results in $(OUT)/bench.md and $(OUT)/bench.json"

# One training step (forward, softmax cross-entropy, backward, momentum
# SGD) of the presets in BENCH_TRAIN_MODELS (resnet18 at batch 8, the rest
# at 64) on 1 and 2 threads, native against PyTorch (Debian's
# python3-torch on OpenBLAS), both from the same ONNX file and initial
# weights on the same recorded batches: out/bench-train.md and .json. The
# first step's loss must agree between the two (the proof that they ran the
# same network), or the case fails. The runs are interleaved over
# BENCH_TRAIN_ROUNDS rounds, native, ONNX Runtime (the training graph of
# transform/autodiff, --impl native) and PyTorch one after the other, and the
# table gives the median per-round ratio and its spread. BENCH_TRAIN_STEPS
# and BENCH_TRAIN_WARMUP are a number for every model or MODEL=N pairs
# (empty: each model's default; about 27 minutes with 3 rounds on 2 cores,
# almost all of it ONNX Runtime on the ResNets). Rows
# measured while other processes kept the cores busy are marked;
# BENCH_TRAIN_QUIET=S waits up to S seconds before each pair of runs for
# the machine to go quiet.
BENCH_TRAIN_MODELS ?= mlp,lenet,resnet8,resnet20,resnet18
BENCH_TRAIN_THREADS ?= 1,2
BENCH_TRAIN_ROUNDS ?= 5
BENCH_TRAIN_STEPS ?=
BENCH_TRAIN_WARMUP ?=
BENCH_TRAIN_QUIET ?= 0
bench-train: setup build
	@scripts/setup-pytorch.sh
	@mkdir -p $(OUT)
	/usr/bin/python3 scripts/bench-train/bench_train.py --d500 bin/d500 --out $(OUT) \
		--models $(BENCH_TRAIN_MODELS) --threads $(BENCH_TRAIN_THREADS) --rounds $(BENCH_TRAIN_ROUNDS) \
		--quiet $(BENCH_TRAIN_QUIET) \
		$(if $(BENCH_TRAIN_STEPS),--steps $(BENCH_TRAIN_STEPS)) $(if $(BENCH_TRAIN_WARMUP),--warmup $(BENCH_TRAIN_WARMUP))

# Samples per second of every distributed scheme at np=1 and np=2, with
# the communication fraction: out/bench-distributed.md (and .tsv).
bench-distributed: build-mpi
	@mkdir -p $(OUT)
	scripts/bench-distributed.sh bin/d500-mpi $(OUT)

clean:
	rm -rf bin $(OUT)
