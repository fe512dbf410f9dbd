# Tidal build, test and demo entry points. `make demo` and `make test` work on a fresh machine:
# `deps` installs what is missing from Debian's packages; Rust crates come from crates.io and
# Java artifacts (Hadoop 2.7.7 included) from Maven Central on first use.

SHELL := /bin/bash
CARGO ?= cargo
MVN ?= mvn -B -ntp
NATIVE_DIR := $(CURDIR)/target/release
MVN_NATIVE := -Dtidal.native.dir=$(NATIVE_DIR)
# The Hadoop line of make demo-yarn and the docker cluster: 3.4.3 (default) or 2.7.7, and the
# integration-test module that holds it.
HADOOP ?= 3.4.3
CLUSTER_MODULE_2.7.7 := it-tests
CLUSTER_MODULE_3.4.3 := it-tests/hadoop3
CLUSTER_MODULE = $(or $(CLUSTER_MODULE_$(HADOOP)),$(error HADOOP must be 3.4.3 or 2.7.7, not '$(HADOOP)'))

.PHONY: all deps browser-deps native jar build test lint-rust test-rust test-java test-conformance test-it test-it-references test-it-hadoop3 test-docker demo demo-yarn demo-sim sls bench-sls bench bench-rust bench-jni bench-rm bench-sim fuzz cluster-image cluster-up cluster-down cluster-run replay-tools sim-vs-real replay-benchmarks cloudlab-venv cloudlab-bundle cloudlab-ssh test-cloudlab cloudlab-local clean

all: build

deps:
	@command -v $(CARGO) >/dev/null || { echo "cargo not found: install Rust (rustup or Debian's cargo)"; exit 1; }
	@if ! command -v mvn >/dev/null || ! command -v javac >/dev/null; then \
	  echo "installing Maven and a JDK 17 from Debian packages"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq maven openjdk-17-jdk-headless; \
	fi

native: deps
	$(CARGO) build --release -p tidal-jni

# The scheduler's jar, and tidal-replay's (java/replay: workloads replayed as Tez DAGs).
jar: native
	$(MVN) -q -f java/pom.xml -DskipTests $(MVN_NATIVE) install
	$(MVN) -q -f java/replay/pom.xml -DskipTests install

build: jar

test: test-rust test-java test-conformance test-it-hadoop3 test-it test-cloudlab test-docker

# Formatting and lints gate the Rust tests; rustup installs the components where missing.
lint-rust: deps
	@if ! $(CARGO) fmt --version >/dev/null 2>&1 || ! $(CARGO) clippy --version >/dev/null 2>&1; then \
	  rustup component add rustfmt clippy; \
	fi
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets --release -- -D warnings

test-rust: lint-rust
	$(CARGO) test --workspace --release

test-java: native
	$(MVN) -f java/pom.xml $(MVN_NATIVE) install
	$(MVN) -f java/replay/pom.xml install

# Hadoop 2.7.7's own ResourceManager tests (its published test jar) under the stock scheduler and
# under Tidal, with a comparison that fails on a test only Tidal fails (it-tests/conformance).
test-conformance: jar
	$(MVN) -f it-tests/conformance/pom.xml $(MVN_NATIVE) verify

# The dashboard's browser test needs Chromium (Debian's package, installed when root) and
# Playwright's driver library from the npm registry; without them it skips and says why.
browser-deps:
	@if ! command -v chromium >/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing Chromium from Debian packages"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	  else echo "no chromium and not root: the dashboard browser test will be skipped"; fi; \
	fi
	@if command -v npm >/dev/null; then \
	  cd it-tests/browser && npm ci --no-audit --no-fund --loglevel=error; \
	else echo "no npm: the dashboard browser test will be skipped"; fi

test-it: jar browser-deps
	$(MVN) -f it-tests/pom.xml $(MVN_NATIVE) verify

# Hadoop 2.7.7's FairScheduler through the parameterized integration tests that make test runs
# under Tidal (two queues, RM restart, RM failover): the reference that checks the harness itself
# rather than Tidal (some 5 minutes).
test-it-references: jar
	$(MVN) -f it-tests/pom.xml $(MVN_NATIVE) verify -Dit.schedulers=FAIR \
	  -Dit.test='TwoQueueSchedulerIT,RmRestartIT,RmFailoverIT' -Dit.namespace.skip=true -Dtest=none \
	  -Dsurefire.failIfNoSpecifiedTests=false -Dfailsafe.failIfNoSpecifiedTests=false

# Tidal's Hadoop 3 adapter on a Hadoop 3.4.3 mini cluster: a MapReduce job and a Tez 0.10.4 DAG
# in two queues at once under DRF, a job in an admitted LQ under BoPF, GPUs as a resource type,
# a work-preserving RM restart, anti-affinity through the placement processor and Hadoop's own
# tools (scheduler page, REST, yarn queue -status, JMX) during a burst (some 4 minutes).
test-it-hadoop3: jar
	$(MVN) -f it-tests/hadoop3/pom.xml $(MVN_NATIVE) verify

# The docker cluster of the line most clusters run (Hadoop 3.4.3, GPUs declared): image, cluster,
# cluster-run with an RM restart and its checks (some 4-5 minutes). Root only; last, because the
# docker engine it starts rewrites the host's firewall rules.
test-docker: jar
	HADOOP=3.4.3 docker/cluster-test.sh

demo: demo-yarn demo-sim

# The embedded YARN mini-cluster under Tidal and under the stock schedulers, side by side: on
# Hadoop 3.4.3 (the default, with CapacityScheduler too) or, with HADOOP=2.7.7, on 2.7.7.
demo-yarn: jar
	$(MVN) -q -f $(CLUSTER_MODULE)/pom.xml $(MVN_NATIVE) test-compile exec:exec@demo

# A paper check on the simulator with generated workloads (no external data needed).
demo-sim: deps
	$(CARGO) run --release -q -p tidal-sim -- experiment bopf-table4 --scale small --out target/sim-demo

# Hadoop 2.7.7's Scheduler Load Simulator on one trace under Tidal and under FairScheduler at once,
# with SLS's web views on ports 10001 (Tidal) and 10002 (FairScheduler) while they run; SLS's
# outputs go to it-tests/target/sls/{tidal,fair}, then a summary per scheduler. Without SLS_INPUT
# the synthetic trace; SLS_INPUT=-rumen the same trace as a Rumen job trace; else e.g.
# SLS_INPUT="-inputrumen /path/to/2jobs2min-rumen-jh.json" or "-inputsls FILE".
# SLS_HTML=<hadoop-2.7.7>/share/hadoop/tools/sls/html gives the web view its charts' scripts.
SLS_INPUT ?=
SLS_HTML ?=
sls: jar
	$(MVN) -q -f it-tests/pom.xml $(MVN_NATIVE) test-compile exec:exec@sls \
	  -Dsls.input="$(SLS_INPUT)" -Dsls.html="$(SLS_HTML)"

# SLS at scale, Tidal against FairScheduler (and CapacityScheduler on Hadoop 3) on the same
# synthetic traces with 1 s heartbeats: a saturated cluster, and the same with a BoPF LQ bursting
# on top (it-tests/shared/.../slsbench). Runs go one after another, BENCH_SLS_SECONDS of simulated
# time each (the first BENCH_SLS_WARMUP left out); prints one table and writes BENCH_SLS_CSV.
BENCH_SLS_NODES ?= 2000 5000 10000
BENCH_SLS_LINES ?= hadoop2 hadoop3
BENCH_SLS_TRACES ?= saturated lq-burst
BENCH_SLS_SECONDS ?= 75
BENCH_SLS_WARMUP ?= 15
BENCH_SLS_CSV ?= $(BENCH_OUT)/sls.csv
BENCH_SLS_MODULE_hadoop2 := it-tests
BENCH_SLS_MODULE_hadoop3 := it-tests/hadoop3
bench-sls: jar
	$(BENCH_LOAD)
	rm -f $(BENCH_SLS_CSV)
	@for line in $(BENCH_SLS_LINES); do \
	  case $$line in hadoop2) module=$(BENCH_SLS_MODULE_hadoop2);; hadoop3) module=$(BENCH_SLS_MODULE_hadoop3);; \
	    *) echo "BENCH_SLS_LINES: hadoop2 or hadoop3, not $$line"; exit 2;; esac; \
	  $(MVN) -q -f $$module/pom.xml $(MVN_NATIVE) test-compile exec:exec@sls-bench \
	    -Dbench.sls.csv=$(BENCH_SLS_CSV) -Dbench.sls.nodes="$(BENCH_SLS_NODES)" \
	    -Dbench.sls.traces="$(BENCH_SLS_TRACES)" -Dbench.sls.seconds=$(BENCH_SLS_SECONDS) \
	    -Dbench.sls.warmup=$(BENCH_SLS_WARMUP) || exit 1; \
	done

# Every benchmark, then the README's benchmark table and docs/benchmarks.md's generated tables
# from their results: each stage leaves CSV files in BENCH_OUT (and the load average as it
# started in load.csv); bench-docs gathers criterion's medians there, copies the files to
# docs/results/bench and rewrites the tables (`cargo test` checks that they agree).
BENCH_OUT := $(CURDIR)/target/bench
BENCH_LOAD = @mkdir -p $(BENCH_OUT); test -s $(BENCH_OUT)/load.csv || echo stage,load1,load5,load15 > $(BENCH_OUT)/load.csv; \
  echo "$@,$$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' ,)" >> $(BENCH_OUT)/load.csv
bench:
	rm -rf $(BENCH_OUT)
	$(MAKE) bench-rust bench-jni bench-rm bench-sim bench-sls
	$(CARGO) run --release -q -p tidal-sim -- bench-docs --criterion $${CARGO_TARGET_DIR:-target}/criterion --from $(BENCH_OUT)

# BENCH_RUST_ARGS picks benches, e.g. "--bench heartbeat --bench carbyne --bench admission" (the
# ones the README's table reports); empty: every bench of the core.
BENCH_RUST_ARGS ?=
bench-rust: deps
	$(BENCH_LOAD)
	$(CARGO) bench -p tidal-core $(BENCH_RUST_ARGS)

bench-sim: deps
	$(BENCH_LOAD)
	$(CARGO) run --release -q -p tidal-sim -- bench all huge huge-saturated --csv $(BENCH_OUT)/sim.csv

# The JNI and RM benchmarks run on each Hadoop line's adapter (java/common/src/bench).
BENCH_LINES ?= hadoop2 hadoop3

bench-jni: native
	$(BENCH_LOAD)
	@for line in $(BENCH_LINES); do echo "== $$line"; \
	  $(MVN) -f java/$$line/pom.xml $(MVN_NATIVE) -Pbench verify -Dbench.out=$(BENCH_OUT) || exit 1; done

# Tidal vs FairScheduler and CapacityScheduler inside a MockRM on the same event stream, on each
# Hadoop line, with the floor (Hadoop's bookkeeping of the containers Tidal started, no decision);
# BENCH_RM_ARGS picks scales and repetitions (see
# java/common/src/bench/java/org/tidal/yarn/bench/RmSchedulerBench.java). Besides the tables, the
# figures go to $(BENCH_OUT)/rm-<line>.csv.
BENCH_RM_ARGS ?= small large 2
bench-rm: native
	$(BENCH_LOAD)
	@for line in $(BENCH_LINES); do echo "== $$line"; \
	  $(MVN) -f java/$$line/pom.xml $(MVN_NATIVE) -Pbench test-compile exec:exec@rm-benchmark \
	    -Dbench.rm.args="$(BENCH_RM_ARGS)" -Dbench.out=$(BENCH_OUT) || exit 1; done

# The fuzz targets of rust/fuzz under libFuzzer, FUZZ_SECONDS each (`make test` runs them for a
# second each on random inputs). Needs a nightly toolchain; cargo-bolero is installed into
# target/ from crates.io. Corpora and crashes stay in target/fuzz/.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= queue_file queue_element dag_hints scheduler_events
FUZZ_TOOLS := $(CURDIR)/target/fuzz-tools
BOLERO_VERSION := 0.13.5

fuzz: deps
	@rustup run nightly rustc --version >/dev/null 2>&1 || rustup toolchain install nightly --profile minimal
	@test -x $(FUZZ_TOOLS)/bin/cargo-bolero || $(CARGO) install --locked --root $(FUZZ_TOOLS) \
	  --no-default-features --features libfuzzer cargo-bolero --version $(BOLERO_VERSION)
	@for t in $(FUZZ_TARGETS); do \
	  echo "== fuzzing $$t for $(FUZZ_SECONDS) s"; \
	  PATH="$(FUZZ_TOOLS)/bin:$$PATH" $(CARGO) bolero test -p tidal-fuzz --toolchain nightly --sanitizer NONE \
	    -T $(FUZZ_SECONDS)s --corpus-dir target/fuzz/corpus/$$t --crashes-dir target/fuzz/crashes/$$t $$t || exit 1; \
	done

# The docker cluster (docker/): one RM, three NodeManagers and a client host of a Hadoop image with
# Tidal installed as the README says, for either line: HADOOP=3.4.3 (default; NodeManagers
# advertise a GPU each as yarn.io/gpu) or HADOOP=2.7.7. The image's HADOOP_HOME is assembled from
# that line's integration-test class path; BASE_IMAGE is pulled, or built locally from Debian's
# packages when no registry is reachable (docker/base-image.sh).
BASE_IMAGE ?= debian:bookworm-slim
CLUSTER := it-tests/cluster/cluster.sh
CLUSTER_BUILD = docker/build/$(HADOOP)
# Hadoop 2.7.7's NodeManagers are the tests' ResyncSafeNodeManager (it-tests), as in the
# namespace cluster: the stock one can stop heartbeating after an RM restart's resync.
CLUSTER_NM_2.7.7 := NODEMANAGER_CLASS=org.tidal.it.ResyncSafeNodeManager \
  NODEMANAGER_CLASSPATH=/opt/hadoop/share/tez/tidal-it-workloads.jar

cluster-image: jar
	@docker info >/dev/null 2>&1 || { echo "docker is not running (start dockerd, or install Debian's docker.io)"; exit 1; }
	$(MVN) -q -f $(CLUSTER_MODULE)/pom.xml $(MVN_NATIVE) test-compile
	it-tests/cluster/layout.sh $(CURDIR)/$(CLUSTER_MODULE)/target/cluster.classpath $(NATIVE_DIR)/libtidal_jni.so \
	  hadoop-conf/tidal-queues.xml $(CLUSTER_BUILD)/hadoop copy
	# What make cluster-run submits besides MapReduce, for clients only: Tez and the test DAG (on
	# 2.7, its containers take tidal-replay's system class loader).
	mkdir -p $(CLUSTER_BUILD)/hadoop/share/tez
	tr ':' '\n' <$(CLUSTER_MODULE)/target/cluster.classpath | grep '/org/apache/tez/' | xargs -r cp -t $(CLUSTER_BUILD)/hadoop/share/tez
	jar cf $(CLUSTER_BUILD)/hadoop/share/tez/tidal-it-workloads.jar -C $(CLUSTER_MODULE)/target/test-classes org/tidal
	cp java/replay/target/tidal-replay.jar $(CLUSTER_BUILD)/hadoop/share/tez/
	base=$$(docker/base-image.sh $(BASE_IMAGE)) && \
	  docker build -q --network host --build-arg BASE_IMAGE=$$base -t tidal-hadoop:$(HADOOP) -f docker/Dockerfile $(CLUSTER_BUILD)

cluster-up: cluster-image
	TIDAL_IMAGE=tidal-hadoop:$(HADOOP) $(CLUSTER_NM_$(HADOOP)) CLUSTER_BACKEND=docker $(CLUSTER) start

cluster-down:
	CLUSTER_BACKEND=docker $(CLUSTER) stop

# A MapReduce job in each of two queues and a Tez DAG in the second, at once, on whichever line
# the cluster runs (on Hadoop 3 the first queue's maps ask for a GPU each); prints their times
# and Tidal's view of the queues. CLUSTER_RUN_ARGS=--restart-rm restarts the RM while they run.
cluster-run:
	docker/cluster-run.sh $(CLUSTER_RUN_ARGS)

# tidal-sim, tidal-replay and the namespace cluster's class path (it-tests/target/cluster.classpath).
replay-tools: jar
	$(CARGO) build --release -p tidal-sim
	$(MVN) -q -f it-tests/pom.xml $(MVN_NATIVE) generate-test-resources

# Simulation against reality (root: the namespace cluster): rust/sim/experiments/sim-vs-real.toml
# under BoPF, DRF and strict priority, replayed with tidal-replay and simulated; prints per-class
# JCTs side by side and writes target/sim-vs-real/sim-vs-real.csv. CLUSTER_LOCK: see the script.
sim-vs-real: replay-tools
	it-tests/cluster/sim-vs-real.sh target/sim-vs-real

# tidal-replay on the namespace cluster under BoPF and DRF: TPC-H queries from the shared Spark
# trace (skipped with a message when absent) and generated BigBench jobs, time-scaled.
REPLAY_SPECS ?= replay-tpch replay-bigbench
REPLAY_TIME_SCALE ?= 0.25
replay-benchmarks: replay-tools
	it-tests/cluster/replay-benchmarks.sh target/replay-benchmarks $(REPLAY_TIME_SCALE) $(REPLAY_SPECS)

# CloudLab (it-tests/cloudlab): the profile, the inventory and the deployment playbook. Their
# tools (ansible-core, geni-lib, pytest from PyPI) go into a virtual environment under target/.
# The bundle is what the playbook pushes to every node, tidal-replay's jars included;
# BUNDLE_EXTRA_JARS adds other client jars. test-cloudlab checks the profile's RSpecs and the
# inventory, and as root deploys to three stand-in hosts (network namespaces with sshd) and
# replays a two-job workload there with tidal-replay;
# cloudlab-local runs only that, with Ansible's output.
CLOUDLAB_DIR := it-tests/cloudlab
CLOUDLAB_VENV := $(CURDIR)/target/cloudlab-venv
CLOUDLAB_PYTEST := PYTHONDONTWRITEBYTECODE=1 $(CLOUDLAB_VENV)/bin/pytest -p no:cacheprovider
BUNDLE_EXTRA_JARS ?=

cloudlab-venv: $(CLOUDLAB_VENV)/.installed

$(CLOUDLAB_VENV)/.installed: $(CLOUDLAB_DIR)/requirements.txt $(CLOUDLAB_DIR)/geni_py3.py
	@python3 -c 'import ensurepip' 2>/dev/null || { \
	  echo "installing python3-venv from Debian packages"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv; }
	python3 -m venv $(CLOUDLAB_VENV)
	$(CLOUDLAB_VENV)/bin/pip install -q -r $(CLOUDLAB_DIR)/requirements.txt
	$(CLOUDLAB_VENV)/bin/python $(CLOUDLAB_DIR)/geni_py3.py
	touch $@

cloudlab-bundle: jar
	$(MVN) -q -f it-tests/pom.xml $(MVN_NATIVE) test-compile
	$(CLOUDLAB_DIR)/bundle.sh $(CURDIR)/it-tests/target/cluster.classpath $(NATIVE_DIR)/libtidal_jni.so \
	  hadoop-conf/tidal-queues.xml target/cloudlab/tidal-bundle.tar $(BUNDLE_EXTRA_JARS)

# The stand-in hosts' sshd and the client tools, from Debian's packages (as root; the test skips
# otherwise).
cloudlab-ssh:
	@if [ "$$(id -u)" = 0 ] && ! { [ -x /usr/sbin/sshd ] && command -v ssh-keyscan curl >/dev/null; }; then \
	  echo "installing openssh-server, openssh-client and curl from Debian packages"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-server openssh-client curl; \
	fi

test-cloudlab: cloudlab-venv cloudlab-bundle cloudlab-ssh
	cd $(CLOUDLAB_DIR) && $(CLOUDLAB_PYTEST) test_profile.py test_inventory.py test_playbook.py test_local_deploy.py

cloudlab-local: cloudlab-venv cloudlab-bundle cloudlab-ssh
	cd $(CLOUDLAB_DIR) && CLOUDLAB_VERBOSE=1 $(CLOUDLAB_PYTEST) -v -s test_local_deploy.py

clean:
	$(CARGO) clean
	rm -rf java/*/target it-tests/target it-tests/hadoop3/target docker/build
