# Two entry points for a fresh machine (each makes its own virtualenv and installs what it needs):
#   make run   — the main job: the service and web page with the shipped model, http://127.0.0.1:8000/
#   make test  — ruff and the whole test suite (what CI runs)
#   make test-fast — ruff and the tests not marked slow (a few minutes on two cores): run it before each commit
# Also: make demo (the CLI pipeline on the sample photos), make bench (the benchmarks).
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

$(BIN)/python:
	$(PY) -m venv $(VENV) || python3 -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# Runtime only: numpy, OpenCV, onnxruntime, FastAPI (no torch).
$(VENV)/.installed-run: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
	touch $@

# Tests also train a model for one epoch (the `train` extra) and drive a real browser.
$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e ".[dev,train,render]"
	touch $@ $(VENV)/.installed-run

chromium:
	@command -v chromium >/dev/null || (apt-get update -q && apt-get install -y -q chromium) \
		|| echo "chromium could not be installed: the browser test (tests/api/test_web.py) will skip"

# CJK fonts for the procedural tile styles (datasets/styles.py); without them tests use the CC0 artwork alone.
FONTS := fonts-noto-cjk fonts-arphic-ukai fonts-arphic-uming fonts-wqy-zenhei fonts-wqy-microhei fonts-lxgw-wenkai
fonts:
	@dpkg -s $(FONTS) >/dev/null 2>&1 || (apt-get update -q && apt-get install -y -q $(FONTS)) \
		|| echo "the CJK fonts could not be installed: tests/datasets/test_views.py uses the CC0 artwork alone"

# More fonts for the randx-N training styles (datasets/styles.py MORE_FONTS): only to build training scenes.
MORE_FONTS := fonts-arphic-bkai00mp fonts-arphic-bsmi00lp fonts-cwtex-fs fonts-cwtex-heib fonts-cwtex-kai \
	fonts-cwtex-ming fonts-cwtex-yen fonts-cns11643-kai fonts-cns11643-sung fonts-aoyagi-soseki fonts-kouzan-mouhitsu \
	fonts-kiloji fonts-hanazono fonts-horai-umefont fonts-ipafont-mincho fonts-ipafont-gothic
fonts-more: fonts
	@dpkg -s $(MORE_FONTS) >/dev/null 2>&1 || (apt-get update -q && apt-get install -y -q $(MORE_FONTS))

# The table tests run on SQLite and on a throwaway PostgreSQL server they start themselves (tests/tables).
postgresql:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || (apt-get update -q && apt-get install -y -q postgresql) \
		|| echo "postgresql could not be installed: the PostgreSQL cases of tests/tables will skip"

# The deployment test (tests/deploy) runs Debian's nginx in front of two replicas and a throwaway PostgreSQL.
nginx:
	@command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || (apt-get update -q && apt-get install -y -q nginx-light) \
		|| echo "nginx could not be installed: the deployment test (tests/deploy) will skip"

run: $(VENV)/.installed-run
	$(BIN)/zhuoji serve --host $(HOST) --port $(PORT)

demo: $(VENV)/.installed-run
	$(BIN)/zhuoji detect datasets/samples/sample_02.jpg datasets/samples/sample_03.jpg
	$(BIN)/zhuoji hand 1112345678999m
	$(BIN)/zhuoji hand 2m3m4m5s6s7s8p8p8p3m3m6m7m --win 5m
	$(BIN)/zhuoji settle tests/data/tables/e1.json

test: $(VENV)/.installed-dev chromium postgresql nginx fonts
	$(BIN)/ruff check .
	$(BIN)/python -m pytest

test-fast: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -m "not slow" -q

bench: $(VENV)/.installed-dev
	$(BIN)/python benchmarks/bench_waits.py
	$(BIN)/python benchmarks/bench_layout.py
	$(BIN)/python benchmarks/bench_detector.py
	$(BIN)/python benchmarks/bench_classifier.py
	$(BIN)/python benchmarks/bench_real_hands.py
	$(BIN)/python -m benchmarks.bench_tables

.PHONY: run demo test test-fast bench chromium postgresql nginx fonts fonts-more
