# Two entry points for a fresh machine: `make demo` (the main job, with the shipped model) and `make test`.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin

$(BIN)/python:
	$(PY) -m venv $(VENV) || python3 -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e ".[dev,train]"
	touch $@

install: $(VENV)/.installed

test: install
	command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium) \
		|| echo "chromium could not be installed: the browser test (tests/test_web.py) will skip"
	$(BIN)/ruff check .
	$(BIN)/python -m pytest

demo: install
	$(BIN)/zhuoji demo

.PHONY: install test demo
