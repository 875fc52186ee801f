# Spillway: `make demo` and `make test` work on a fresh machine with only the toolchains.
# The virtualenv lives in .venv at the repo root (part of the contract).

VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
EXT    := $(VENV)/.built
RUST_SRC := $(shell find crates -name '*.rs' -o -name 'Cargo.toml') Cargo.toml pyproject.toml \
            $(wildcard crates/spillway-core/data/cdf/*)

.PHONY: demo test setup build lint fmt bench reference clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "maturin>=1.5,<2" "numpy>=1.24" "pyarrow>=14" "pytest>=7" "ruff>=0.5"
	touch $(STAMP)

# Release build of the extension, installed into .venv (editable: python/ is used in place).
$(EXT): $(STAMP) $(RUST_SRC)
	$(VENV)/bin/maturin develop --release -q
	touch $(EXT)

build: $(EXT)

demo: $(EXT)
	$(VENV)/bin/spillway run examples/incast.toml --out out/demo
	@echo
	@echo "Results are in out/demo/ (flows.parquet, queries.parquet, summary.json, scenario.toml)."

test: $(EXT)
	cargo test --workspace --exclude spillway-py
	$(PY) -m pytest -q

lint: $(STAMP)
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings
	$(VENV)/bin/ruff check python tests

fmt:
	cargo fmt --all
	$(VENV)/bin/ruff check --fix python tests

bench: $(EXT)
	$(VENV)/bin/spillway bench

reference: $(EXT)
	$(VENV)/bin/spillway reference --out docs/reference.md

clean:
	rm -rf $(VENV) target out
