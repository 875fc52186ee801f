# Spillway: `make demo` and `make test` work on a fresh machine with only the toolchains.
# The virtualenv lives in .venv at the repo root (part of the contract).

VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
EXT    := $(VENV)/.built
RUST_SRC := $(shell find crates -name '*.rs' -o -name 'Cargo.toml') Cargo.toml pyproject.toml \
            $(wildcard crates/spillway-core/data/cdf/* crates/spillway-core/data/bench/*)

.PHONY: demo test setup build lint fmt bench reference clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "maturin>=1.5,<2"
	touch $(STAMP)

# Profile-guided optimisation (docs/performance.md § Build): the extension is built
# instrumented, runs the benchmarks and every example briefly, and is built again with
# that profile (3-6% more packet-hops/s). `make build PGO=0` skips it; without rustup's
# llvm-tools (added here when the registry is reachable), or if any step of it fails,
# the build goes on without it.
PGO       ?= 1
PGO_DIR   := target/pgo
EXT_DIR   := target/ext
SYSROOT    = $(shell rustc --print sysroot)
HOST       = $(shell rustc -vV | sed -n 's/^host: //p')
PROFTOOL   = $(SYSROOT)/lib/rustlib/$(HOST)/bin/llvm-profdata
TRAIN_RUNS := $(wildcard examples/*.toml examples/*/*.toml)
MATURIN    = CARGO_TARGET_DIR=$(EXT_DIR) $(VENV)/bin/maturin develop --release -q --extras dev,dask

# Release build of the extension, installed into .venv with its dependencies from
# pyproject.toml (editable: python/ is used in place). Its own target directory: the
# profile flags would otherwise make it and `cargo test` rebuild each other's crates.
$(EXT): $(STAMP) $(RUST_SRC) $(TRAIN_RUNS)
	rm -rf $(PGO_DIR) && mkdir -p $(PGO_DIR)
	@if [ "$(PGO)" = 1 ] && { [ -x "$(PROFTOOL)" ] || rustup component add llvm-tools >/dev/null 2>&1; } \
	    && [ -x "$(PROFTOOL)" ]; then \
	  echo "PGO: instrumented build and training runs" && \
	  RUSTFLAGS="-Cprofile-generate=$(abspath $(PGO_DIR))/raw" $(MATURIN) && \
	  $(PY) -c "import sys; from spillway import _core; \
	    [_core.bench(n) for n, _ in _core.bench_names() if not n.startswith('fattree16')]; \
	    runs = [(f, []) for f in sys.argv[1:]] + [('examples/websearch.toml', o) for o in \
	      (['transport.kind=cubic'], ['transport.kind=dctcp', 'switch.ecn=threshold'], \
	       ['switch.ecn=codel'], ['topology.k=16'])]; \
	    sims = [_core.Simulation(open(f).read(), o + ['run.duration=5ms'], \
	      f.rsplit('/', 1)[0]) for f, o in runs]; \
	    [s.step(10**9) for s in sims]" $(TRAIN_RUNS) && \
	  "$(PROFTOOL)" merge -o $(PGO_DIR)/spillway.profdata $(PGO_DIR)/raw && \
	  echo "PGO: optimised build" && \
	  RUSTFLAGS="-Cprofile-use=$(abspath $(PGO_DIR))/spillway.profdata" $(MATURIN) \
	  || { echo "PGO: failed, building without it"; $(MATURIN); }; \
	else echo "PGO: off (PGO=$(PGO), llvm-profdata: $(PROFTOOL))"; $(MATURIN); fi
	touch $(EXT)

build: $(EXT)

demo: $(EXT)
	$(VENV)/bin/spillway reproduce showdown --quick --out out/demo
	@echo
	@echo "Report: out/demo/report.md (figures and data beside it)."

test: $(EXT)
	cargo test --workspace --exclude spillway-py
	$(PY) -m pytest -q

lint: $(EXT)
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings
	$(VENV)/bin/ruff check python tests

fmt: $(EXT)
	cargo fmt --all
	$(VENV)/bin/ruff check --fix python tests

bench: $(EXT)
	$(VENV)/bin/spillway bench

reference: $(EXT)
	$(VENV)/bin/spillway reference --out docs/reference.md
	$(VENV)/bin/spillway reference --outputs docs/outputs.md

clean:
	rm -rf $(VENV) target out
