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
	$(PY) -m pip install -q "maturin>=1.5,<2"
	touch $(STAMP)

# Release build of the extension, installed into .venv with its dependencies from
# pyproject.toml (editable: python/ is used in place).
$(EXT): $(STAMP) $(RUST_SRC)
	$(VENV)/bin/maturin develop --release -q --extras dev,dask
	touch $(EXT)

build: $(EXT)

demo: $(EXT)
	$(VENV)/bin/spillway reproduce incast --quick --out out/demo
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

clean:
	rm -rf $(VENV) target out
