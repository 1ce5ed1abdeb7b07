# vegaslab: every install step lives here (and in scripts/), so a fresh machine needs only
# `make reproduce` (the main job) or `make test` (the whole suite).

VENV    ?= .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
SOURCES := $(shell find crates python -name '*.rs' -o -name '*.py' -o -name 'Cargo.toml' 2>/dev/null)
REPORT  ?= report
# `make test` installs ns-2 and Chromium first, so their tests must run, not skip.
REQUIRE_NS2 ?= 1
REQUIRE_CHROMIUM ?= 1
REQUIRE_BPF ?= 1
REQUIRE_TSHARK ?= 1

.PHONY: setup reproduce reproduce-all test test-rust test-python wheel-check ns2 chromium bpf tshark gallery testbed-accuracy testbed-envelope compare-kernel bench robustness publish-robustness publish-numbers bench-scale bench-memory bench-sweep fuzz limits docs clean

## setup: Python venv with vegaslab built from source (maturin compiles the Rust core)
setup: $(STAMP)

$(PY):
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

# compileall: an editable install compiles nothing, and with PYTHONDONTWRITEBYTECODE set (as on
# this project's machines) no import writes a .pyc either, so every command would compile the
# package's sources again (30-40 ms of each `vegaslab` command's start). A stale .pyc is only
# slower: Python checks it against its source.
# Cargo.toml: the workspace's version is the package's (pyproject.toml declares it dynamic).
$(STAMP): pyproject.toml Cargo.toml Cargo.lock $(SOURCES) | $(PY)
	$(PY) -m pip install -q -e '.[test]'
	$(PY) -m compileall -q python/vegaslab
	touch $@

## reproduce: reproduce every experiment of the Vegas-A paper into report/index.html
reproduce: setup
	$(VENV)/bin/vegaslab reproduce vegas-a --out $(REPORT)
	@echo "report: $(REPORT)/index.html (and $(REPORT)/summary.md)"

## reproduce-all: every experiment of the five papers; the command's wall time, CPU time, peak memory, the machine and its load go to $(REPORT)/measured.json
reproduce-all: setup
	$(PY) scripts/publish_numbers.py measure $(REPORT)/measured.json -- $(VENV)/bin/vegaslab reproduce --all --out $(REPORT)

## test: every test, Rust and Python, including the differential tests against ns-2, and the wheel check
test: setup ns2 chromium bpf tshark test-rust test-python wheel-check

test-rust:
	VEGASLAB_REQUIRE_BPF=$(REQUIRE_BPF) cargo test --workspace --exclude vegaslab-py

test-python: setup
	VEGASLAB_REQUIRE_NS2=$(REQUIRE_NS2) VEGASLAB_REQUIRE_CHROMIUM=$(REQUIRE_CHROMIUM) VEGASLAB_REQUIRE_BPF=$(REQUIRE_BPF) VEGASLAB_REQUIRE_TSHARK=$(REQUIRE_TSHARK) $(PY) -m pytest

## wheel-check: build the release wheel (maturin, manylinux tag), install it into a fresh venv without Rust on PATH, run `vegaslab reproduce va-reroute` from another directory (~3 min after setup)
wheel-check:
	bash scripts/check-wheel.sh

## ns2: install ns-2.35 from Debian if missing (the reference for the differential tests)
ns2:
	bash scripts/install-ns2.sh

## tshark: install Wireshark's tshark if missing (reads the pcap packet traces in the tests)
tshark:
	bash scripts/install-tshark.sh

## chromium: install Debian's Chromium if missing (the report's headless-browser test)
chromium:
	bash scripts/install-chromium.sh

## bpf: the BPF congestion controls, their loader and the decision-vector replay (kernel/; installs clang, libbpf-dev, bpftool if missing)
bpf: setup
	bash scripts/install-bpf.sh
	$(MAKE) -s -C kernel PYTHON=$(abspath $(PY))

## testbed-accuracy: measure, never assert, how accurate the testbed is on this host (root; ~2 min): the delay line's RTT and its spread idle and under load, when a delay change takes effect, the bottleneck's rate and the gaps between its departures, bulk TCP's goodput, the queues of the kernel's Vegas, RoVegas and reno, RoVegas's stamps against the queue; each number beside its target in docs/testbed.md, all of them in out/testbed-accuracy.jsonl
ACCURACY_REPORT := out/testbed-accuracy.jsonl
testbed-accuracy: setup bpf
	mkdir -p out && rm -f $(ACCURACY_REPORT)
	VEGASLAB_MEASURE_ACCURACY=1 VEGASLAB_ACCURACY_REPORT=$(ACCURACY_REPORT) $(PY) -m pytest -q -s -p no:cacheprovider -m accuracy tests/test_testbed_network.py tests/test_testbed_run.py tests/test_kernel_rovegas.py
	$(PY) tests/accuracy.py $(ACCURACY_REPORT)

## testbed-envelope: measure the highest bottleneck rate the testbed holds on this host (root; ~4 min): a step search over 10-500 Mbit/s under a bulk load, written with the machine to out/testbed-envelope.json, which every testbed run checks its bottleneck's rate against
testbed-envelope: setup bpf tshark
	$(PY) -m vegaslab testbed envelope --out out/testbed-envelope.json

## compare-kernel: the comparison suite of simulator against kernel, every case of examples/kernel/suite/cases.toml 5 times on the kernel (root; ~35 min): report and stored kernel runs in out/compare/
compare-kernel: setup bpf
	$(VENV)/bin/vegaslab compare --suite -v --out out/compare

## gallery: every kind of figure (run, report, sweep) on one page, out/gallery/index.html, and its screenshot in headless Chromium, out/gallery/gallery.png (~15 s)
gallery: setup chromium
	$(PY) scripts/gallery.py out/gallery

## bench: the speed benchmark (bench/grids-net2), side by side with ns-2 when installed: seven interleaved rounds, medians (~2 min; BENCH_ARGS="--repeat 1"); $(BENCH_OUT)/bench.json, and the machine and its load in $(BENCH_OUT)/measured.json
BENCH_OUT ?= out/bench
bench: setup ns2
	$(PY) scripts/publish_numbers.py measure $(BENCH_OUT)/measured.json -- $(VENV)/bin/vegaslab bench --repeat 7 --out $(BENCH_OUT) $(BENCH_ARGS)

## robustness: every robustness study (docs/robustness-format.md) into $(REPORT), beside the reproduction's report, its ns-2.35 checks included; the command's time, CPU time and memory go to $(REPORT)/robustness-measured.json
robustness: setup ns2
	$(PY) scripts/publish_numbers.py measure $(REPORT)/robustness-measured.json -- $(VENV)/bin/vegaslab robustness --out $(REPORT)

## publish-robustness: the studies' verdicts from the latest `make robustness` ($(REPORT)) into docs/numbers.json, then every numbers block rendered
publish-robustness: setup
	$(PY) scripts/publish_numbers.py publish-robustness --report $(REPORT)

## publish-numbers: docs/numbers.json from the latest `make reproduce-all` ($(REPORT)) and `make bench` ($(BENCH_OUT)), then every numbers block of README.md and docs/ rendered from it (tests/test_numbers.py checks them)
publish-numbers: setup
	$(PY) scripts/publish_numbers.py publish --report $(REPORT) --bench $(BENCH_OUT)

## bench-scale: ns per packet-hop, set-up time and peak memory from 50 to 100,000 flows (BENCH_SCALE_ARGS="--sizes 50,500,5000")
bench-scale: setup
	$(PY) scripts/bench_scale.py --out out/bench-scale.json $(BENCH_SCALE_ARGS)

## bench-memory: the machine's memory latency by working-set size, one miss at a time and four overlapped (what a packet-hop's cache miss costs at many flows; ~1 min)
bench-memory:
	mkdir -p out && $(CC) -O2 -o out/memory-latency scripts/memory_latency.c
	out/memory-latency
	out/memory-latency --chains 4 2048 8192 32768 131072

## bench-sweep: the sweep engine's scale benchmark: 2 workers vs 1, overhead per run, a 10,000-run sweep and reading it into pandas (~13 min; BENCH_SWEEP_ARGS=--quick for ~20 s)
bench-sweep: setup
	$(PY) scripts/bench_sweep.py $(BENCH_SWEEP_ARGS)

## fuzz: the long fuzz run (10,000 cases: mutated scenarios, 15% planted output directories, 5% study files; FUZZ_CASES=, FUZZ_SEED= to change); failures in out/fuzz/
fuzz: setup
	$(PY) scripts/fuzz.py --cases $${FUZZ_CASES:-10000} --seed $${FUZZ_SEED:-0} --jobs 2 --out out/fuzz

## limits: each documented input limit probed one past its value: exit status, time and peak memory of the refusal (out/limits.json; LIMITS_ARGS=--at-limit also times the 1,000,000-run sweep plans)
limits: setup
	$(PY) scripts/limits_table.py --out out/limits.json $(LIMITS_ARGS)

## docs: regenerate the tables of docs/scenario-format.md from the core (tests/test_docs.py checks them)
docs: setup
	$(PY) scripts/gen_docs.py

clean:
	rm -rf $(VENV) target out $(REPORT)
