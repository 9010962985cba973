# conform: reference-plus-optimized conformance harness for bilinear-sampling operators.
# `make conformance` and `make test` work from a clean clone on a fresh Debian machine:
# the deps target installs what is missing (as root) or says the exact command to run.

CC      ?= cc
BUILD   ?= build
PKGS     = gsl criterion libcjson
DEB_PKGS = libgsl-dev libcriterion-dev libcjson-dev pkg-config python3
THREADS ?= 2
# the one Python interpreter of every target and document (Debian's; PYTHON=... for another)
PYTHON  ?= /usr/bin/python3

WARN     = -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-unused-parameter -Wno-format-truncation
OPT      = -O2 -g
# the harness's rooms (docs/architecture.md): every folder is on the include path, so a file
# names a header by its own name wherever it lives
HAR_DIRS = harness $(sort $(dir $(wildcard harness/*/*.c harness/*/*.h harness/ops/*/*.c)))
HAR_INC  = $(patsubst %/,%,$(HAR_DIRS:%=-I%))
# Each folder sees only the headers it may use, so a wall is a compile error: reference/ its own,
# optimized/ its own, the harness (and tests/, tools/, fuzz/) all of them and the packages'
# (tools/check_walls.py checks the same from the sources, in make test)
INC_reference = -Ireference
INC_optimized = -Ioptimized
INC_HAR = -Ireference -Ioptimized $(HAR_INC) $(PKG_CFLAGS)
# the include flags of the source $<, by its top folder
INC = $(or $(INC_$(firstword $(subst /, ,$<))),$(INC_HAR))
BASE_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) $(OPT) -fopenmp
SAN_FLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

ifeq ($(SANITIZE),1)
BUILD   := build-san
OPT      = -O1 -g
BASE_CFLAGS += $(SAN_FLAGS)
LDSAN    = $(SAN_FLAGS)
endif

# pkg-config is only asked once the deps are in place (deps runs first in every entry point).
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs gsl libcjson 2>/dev/null)
CRIT_LIBS  = $(shell pkg-config --libs criterion 2>/dev/null)
CFLAGS  = $(BASE_CFLAGS)
LDLIBS  = $(PKG_LIBS) -lm -fopenmp $(LDSAN)

# reference/plain/: the plain golden, the spec's loops the fast golden is held to (make check-golden)
REF_SRC  = $(wildcard reference/*.c reference/plain/*.c)
# optimized/: the drivers (one per op family) and isa.c; optimized/ukernels/: the microkernels,
# <dtype>_<op>[_<dir>]__<isa>.c, each built with its ISA's flags
OPT_SRC  = $(wildcard optimized/*.c) $(wildcard optimized/ukernels/*__scalar.c)
AVX2_SRC = $(wildcard optimized/ukernels/*__avx2.c)
AVX512_SRC = $(wildcard optimized/ukernels/*__avx512.c)
# what each ISA's microkernels may use, for every build of them (isa.c checks the same at run time)
AVX2_FLAGS   = -mavx2 -mfma
AVX512_FLAGS = -mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx512cd -mfma
HAR_SRC  = $(wildcard harness/*/*.c harness/ops/*/*.c)
TEST_SRC = $(wildcard tests/*.c)

REF_OBJ  = $(REF_SRC:%.c=$(BUILD)/%.o)
OPT_OBJ  = $(OPT_SRC:%.c=$(BUILD)/%.o) $(AVX2_SRC:%.c=$(BUILD)/%.o) $(AVX512_SRC:%.c=$(BUILD)/%.o)
HAR_OBJ  = $(HAR_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ = $(TEST_SRC:%.c=$(BUILD)/%.o)

LIBREF   = $(BUILD)/libconform_ref.a
LIBOPT   = $(BUILD)/libconform_opt.a
CONFORM  = $(BUILD)/conform
TESTS    = $(BUILD)/conform_tests
# the tests run the plugins of their own build (build-san's under test-san, which builds no build/)
$(TEST_OBJ): CFLAGS += -DTEST_BUILD='"$(BUILD)"'
CHECK_GOLDEN = $(BUILD)/check_golden

# the example plugin and the deliberately faulty ones the tests run suites through
FAULTY   = $(foreach f,wrong crash hang overflow abi supports unwritten scribble overread,$(BUILD)/plugins/faulty_$(f).so)
PLUGINS  = $(BUILD)/plugins/plugin_roi_align.so $(FAULTY) \
           $(BUILD)/plugins/plugin_roi_align_v2.so $(BUILD)/plugins/plugin_roi_align_v2_f64.so \
           $(BUILD)/plugins/faulty_v2_aligned.so $(BUILD)/plugins/faulty_v2_aligned_f64.so
FAULT_wrong = 0
FAULT_crash = 1
FAULT_hang = 2
FAULT_overflow = 3
FAULT_abi = 4
FAULT_supports = 5
FAULT_unwritten = 6
FAULT_scribble = 7
FAULT_overread = 8
PLUGIN_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) -O2 -fPIC -shared -Iharness

# the zoo of faulty kernels (tests/zoo/zoo_bugs.h, one line per bug): one plugin per bug and the
# bug-free build none.so; `make zoo` (part of `make test`) runs the default suite against each
ZOO_IDS = $(shell grep -o '^ZOO_BUG.[a-z0-9_]*' tests/zoo/zoo_bugs.h | cut -c9-)
ZOO_PLUGINS = $(BUILD)/zoo/none.so $(ZOO_IDS:%=$(BUILD)/zoo/%.so)

.PHONY: forms-wide ascend-plugin ascend-standin all build-all build-test test-browser deps deps-test test zoo zoo-docs zoo-mutants zoo-mutants-docs zoo-mutants-list models device-torch test-unit test-san conformance verify bench bench-contention bench-scaling bench-bound clean install install-check package-check package-check-full fuzz fuzz-ci fuzz-build deps-fuzz test-valgrind check-ops check-walls check-golden check-golden-full check-golden-planted hunt hunt-long bench-hunt hunt-mutants
# the builds run in parallel on every core unless the caller gave -j itself (the jobserver is then
# in MAKEFLAGS, read when the recipe runs: at parse time it is not there yet)
BUILD_JOBS ?= $(shell nproc)
PAR = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(BUILD_JOBS))
all: deps
	@$(MAKE) --no-print-directory $(PAR) build-all
build-all: $(CONFORM) $(TESTS) $(PLUGINS) $(CHECK_GOLDEN)
	@:

# every package a target needs, through one install step (tools/apt_install.sh: apt-get as root,
# else the exact command)
APT_INSTALL = tools/apt_install.sh
deps:
	@$(APT_INSTALL) required "" $(DEB_PKGS)

# The compile rules of one build: $(1) its folder, $(2) the compiler and its flags (each source adds
# its folder's include flags, INC); the build and the fuzz build share them
define COMPILE_RULES
$(1)/optimized/ukernels/%__avx2.o: optimized/ukernels/%__avx2.c
	@mkdir -p $$(dir $$@)
	@echo "CC $$<"; $(2) $$(INC) -MMD -MP $$(AVX2_FLAGS) -c $$< -o $$@
$(1)/optimized/ukernels/%__avx512.o: optimized/ukernels/%__avx512.c
	@mkdir -p $$(dir $$@)
	@echo "CC $$<"; $(2) $$(INC) -MMD -MP $$(AVX512_FLAGS) -c $$< -o $$@
$(1)/%.o: %.c
	@mkdir -p $$(dir $$@)
	@echo "CC $$<"; $(2) $$(INC) -MMD -MP -c $$< -o $$@
endef
$(eval $(call COMPILE_RULES,$(BUILD),$$(CC) $$(CFLAGS)))

# every plugin: its first prerequisite compiled alone (the example's ABI 2 kernel in float, or in
# double for the _f64 ones: float64)
PLUGIN_CC = @mkdir -p $(dir $@); echo "CC $(notdir $@)"; $(CC) $(PLUGIN_CFLAGS) $(PLUGIN_DEFS) $< -o $@ -lm
PLUGIN_DEPS = examples/plugin_roi_align.c harness/conform_plugin.h
$(BUILD)/plugins/%_f64.so: PLUGIN_DEFS = -DEXAMPLE_REAL=double
$(BUILD)/plugins/plugin_roi_align.so: $(PLUGIN_DEPS)
	$(PLUGIN_CC)
$(BUILD)/plugins/plugin_roi_align_v2.so $(BUILD)/plugins/plugin_roi_align_v2_f64.so: examples/plugin_roi_align_v2.c $(PLUGIN_DEPS)
	$(PLUGIN_CC)
$(BUILD)/plugins/faulty_v2_aligned.so $(BUILD)/plugins/faulty_v2_aligned_f64.so: tests/plugins/plugin_faulty_v2.c \
  examples/plugin_roi_align_v2.c $(PLUGIN_DEPS)
	$(PLUGIN_CC)
$(FAULTY): $(BUILD)/plugins/faulty_%.so: tests/plugins/plugin_faulty.c $(PLUGIN_DEPS)
	$(PLUGIN_CC) -DFAULT=$(FAULT_$*)

# a bug outside the table, for conform hunt's tests only (docs/hunt.md): the deformable cell clamp
# taking W for H, made by editing a copy of tests/zoo/zoo_kernels.c (the source itself stays as the
# generated zoo measured it); the grep fails the build when the line is no longer there
$(BUILD)/zoo_hunt/cell_w_for_h.so: tests/zoo/zoo_kernels.c tests/zoo/zoo_bugs.h harness/conform_plugin.h
	@mkdir -p $(@D)
	@sed 's/s\.h0 = cell_of(s\.py, p->H);/s.h0 = cell_of(s.py, p->W);/' $< > $(@D)/cell_w_for_h.c
	@grep -q 's.h0 = cell_of(s.py, p->W);' $(@D)/cell_w_for_h.c
	@echo "CC zoo hunt cell_w_for_h"; $(CC) $(PLUGIN_CFLAGS) -Itests/zoo $(@D)/cell_w_for_h.c -o $@ -lm
$(BUILD)/zoo/%.so: tests/zoo/zoo_kernels.c tests/zoo/zoo_bugs.h harness/conform_plugin.h
	@mkdir -p $(dir $@)
	@echo "CC zoo $*"; $(CC) $(PLUGIN_CFLAGS) -Itests/zoo -DZOO_BUG_ID=ZOO_$* $< -o $@ -lm

$(LIBREF): $(REF_OBJ)
	@rm -f $@; ar rcs $@ $^
$(LIBOPT): $(OPT_OBJ)
	@rm -f $@; ar rcs $@ $^
$(CONFORM): $(BUILD)/harness/main.o $(HAR_OBJ) $(LIBOPT) $(LIBREF)
	@echo "LD $@"; $(CC) $(OPT) -o $@ $^ $(LDLIBS) -ldl
$(TESTS): $(TEST_OBJ) $(HAR_OBJ) $(LIBOPT) $(LIBREF)
	@echo "LD $@"; $(CC) $(OPT) -o $@ $^ $(LDLIBS) $(CRIT_LIBS) -ldl
# the fast golden against the plain one, bitwise, over suites (tools/check_golden.c)
$(CHECK_GOLDEN): $(BUILD)/tools/check_golden.o $(HAR_OBJ) $(LIBOPT) $(LIBREF)
	@echo "LD $@"; $(CC) $(OPT) -o $@ $^ $(LDLIBS) -ldl
# the golden's fingerprint per case (tools/golden_hash.sh compares two builds' with it)
$(BUILD)/golden_hash: $(BUILD)/tools/golden_hash.o $(HAR_OBJ) $(LIBOPT) $(LIBREF)
	@echo "LD $@"; $(CC) $(OPT) -o $@ $^ $(LDLIBS) -ldl

# the fuzz build's too: the two share the compile rules and their -MMD
-include $(shell find $(BUILD) build-fuzz -name '*.d' 2>/dev/null)

# Unit tests (Criterion), then the reference proofs and the smoke suite.
# numpy and pytest for the Python tests of make test (the helper, the conform package and its
# pytest integration, the float32 forms): installed when root; optional otherwise (those tests
# are skipped, saying so). torch is never installed here.
deps-test:
	@$(APT_INSTALL) optional "the numpy tests are skipped" python3-numpy
	@$(APT_INSTALL) optional "the pytest integration tests are skipped" python3-pytest

# the unit tests' OpenMP threads wait passively, as conform's do (harness/main.c: a spinning idle
# thread takes its core from the tests running beside it); the caller's policy, if any, stands
TESTS_RUN = OMP_WAIT_POLICY=$${OMP_WAIT_POLICY:-passive} $(TESTS) --jobs $(THREADS)

# one line per part with its time and count (tests/parts.sh; logs in $(BUILD)/test-logs), then
# "N passed, N failed" alone on the last line
# Everything the parts run is built first, in one parallel step (build-test, at the end of this file)
test: deps deps-test
	@$(MAKE) --no-print-directory $(PAR) build-test
	@tests/parts.sh $(BUILD)/test-logs \
	  "unit tests" "$(TESTS_RUN)" \
	  "install" "$(MAKE) --no-print-directory install-check" \
	  "python package" "$(MAKE) --no-print-directory package-check" \
	  "reference proofs" "$(CONFORM) verify" \
	  "smoke suite" "$(CONFORM) run cases/smoke.json --report-dir $(BUILD)/smoke-report --threads $(THREADS) --quiet" \
	  "python" "tests/python/run.sh $(CONFORM)" \
	  "ascend stand-in" "$(MAKE) --no-print-directory ascend-standin" \
	  "zoo" "$(MAKE) --no-print-directory zoo" \
	  "hunt" "$(MAKE) --no-print-directory hunt" \
	  "zoo mutants list" "$(PYTHON) tools/zoo_mutants.py --conform $(CONFORM) --check-list" \
	  "report rendering" "$(PYTHON) tests/reports_browser.py $(CONFORM) $(BUILD)/browser" \
	  "repository paths" "tests/repo_paths.sh" \
	  "walls" "$(PYTHON) tools/check_walls.py" \
	  "op obligations" "$(MAKE) --no-print-directory check-ops" \
	  "golden equality" "$(MAKE) --no-print-directory check-golden" \
	  "planted golden changes" "$(MAKE) --no-print-directory check-golden-planted"

# the fast golden (reference/) equals the plain one (reference/plain/, the spec's loops), values and
# the four bound arrays bitwise, on every case of the smoke suite (make test), and of the default and
# models suites at two seeds (check-golden-full: long, docs/architecture.md gives its time)
check-golden: $(CHECK_GOLDEN)
	$(CHECK_GOLDEN) --threads $(THREADS) cases/smoke.json
# a one-line change of each family's fast golden makes it fail (tests/check_golden_planted.sh)
check-golden-planted: $(CHECK_GOLDEN)
	@CC="$(CC)" CFLAGS="$(CFLAGS)" OPT="$(OPT)" LINK_OBJS="$(BUILD)/tools/check_golden.o $(HAR_OBJ) $(LIBOPT) $(LIBREF)" \
	  LDLIBS="$(LDLIBS) -ldl" tests/check_golden_planted.sh $(BUILD)/planted
GOLDEN_FULL_SEEDS ?= 1 2
check-golden-full: $(CHECK_GOLDEN)
	@set -e; for s in $(GOLDEN_FULL_SEEDS); do \
	  echo "check-golden-full: seed $$s"; \
	  $(CHECK_GOLDEN) --seed $$s --threads $(THREADS) cases/conformance.json cases/models.json; \
	done

# the float32 forms test (tests/python/test_float32_forms.py; make test runs it on the smoke suite)
# on the default and models suites over three seeds: a few minutes, so a target of its own
forms-wide: all
	FORMS_SUITES="cases/conformance.json cases/models.json" FORMS_SEEDS="1 2 3" \
	  $(PYTHON) tests/python/test_float32_forms.py $(CONFORM)

# the fast unit tests alone (Criterion), for iterating; make test runs them and everything else
test-unit: all
	$(TESTS_RUN)

# what every op of the table needs outside its C code (docs/ops page, suite cases, golden vectors,
# a zoo bug, a runner route or a stated reason): tools/check_ops.py names what is missing
check-ops: all $(CHECK_GOLDEN)
	$(PYTHON) tools/check_ops.py --conform $(CONFORM) --check-golden $(CHECK_GOLDEN)

# reference/ and optimized/ include only their own headers; no include cycle between files or
# rooms (tools/check_walls.py; make test runs it)
check-walls:
	$(PYTHON) tools/check_walls.py

# the reports' first screens in headless Chromium (tests/reports_browser.py; screenshots in
# $(BUILD)/browser/). make test runs it where chromium is installed and skips it, saying so,
# elsewhere: unlike numpy (a few MB), chromium is a download of about 100 MB and 300 MB installed,
# too much for every fresh CI machine. This target installs it (as root) and runs it.
test-browser: all
	@command -v chromium >/dev/null || $(APT_INSTALL) required "make test-browser" chromium
	$(PYTHON) tests/reports_browser.py $(CONFORM) $(BUILD)/browser

# conform hunt (docs/hunt.md): short fixed-seed hunts find and shrink a few zoo bugs, replayed with
# run; the bug-free build and the optimized path give nothing. hunt-long: longer hunts, for CI or by
# hand; bench-hunt: cases judged per second, in process and isolated
HUNT_ZOO = $(foreach b,none ra_aligned_ignored rb_batch_truncated dg_window_open rr_angle_degrees df_xy_swapped gf_reflect_once gb_grid_grad_xy_swapped,$(BUILD)/zoo/$(b).so) $(BUILD)/zoo_hunt/cell_w_for_h.so
hunt: all $(HUNT_ZOO)
	@tests/hunt.sh $(CONFORM) $(BUILD)/zoo
hunt-long: all $(HUNT_ZOO)
	SECONDS_EACH=30 tests/hunt.sh $(CONFORM) $(BUILD)/zoo
bench-hunt: all
	@tools/bench_hunt.sh $(CONFORM)

# every faulty kernel of the zoo fails its own op and no other; the bug-free build passes all
zoo: all
	@$(MAKE) --no-print-directory $(ZOO_PLUGINS)
	$(PYTHON) tools/zoo.py --conform $(CONFORM) --zoo-dir $(BUILD)/zoo --out $(BUILD)/zoo --jobs $(THREADS)

# the same for the default and the smoke suite, then their power tables into docs/zoo_power.json
# and docs/zoo.md (commit them)
zoo-docs: all
	@$(MAKE) --no-print-directory $(ZOO_PLUGINS)
	$(PYTHON) tools/zoo.py --conform $(CONFORM) --zoo-dir $(BUILD)/zoo --out $(BUILD)/zoo --jobs $(THREADS) --write-docs \
	  --suite cases/conformance.json --suite cases/smoke.json

# the generated zoo (tools/zoo_mutants.py, docs/zoo.md): every small fault of the zoo's kernels
# made mechanically, each its own plugin in $(BUILD)/zoo_mutants, the default suite's cases of its
# ops run against it, under nice; long (docs/zoo.md gives the time), so not part of make test
MUTANT_JOBS ?= $(THREADS)
zoo-mutants: all
	nice -n 10 $(PYTHON) tools/zoo_mutants.py --conform $(CONFORM) --out $(BUILD)/zoo_mutants --jobs $(MUTANT_JOBS)

# the same, then the table into docs/zoo_mutants.json, docs/zoo_power.json and docs/zoo.md (commit them)
zoo-mutants-docs: all
	nice -n 10 $(PYTHON) tools/zoo_mutants.py --conform $(CONFORM) --out $(BUILD)/zoo_mutants --jobs $(MUTANT_JOBS) --write-docs

# the hunt against the generated zoo's weakly killed mutants (docs/hunt.md, docs/hunt_mutants.json):
# every HUNT_MUTANTS_EVERY-th killed (mutant, op) pair's failing cases counted over the whole suite
# (cached in $(BUILD)/zoo_mutants/failing.json), then each pair killed by 1 to 11 cases hunted from
# seeds 1, 2 and 3 for 60 s each. Every pair by default (docs/hunt.md gives the time); the count's
# per-case timeout is 2 s: the bug-free build's slowest default case takes 15 ms of kernel time on
# one thread, so a case past 2 s is a mutant's hang (counted as not passing at 20 s too), and a
# mutant that hangs in every case of an op took 20 s a case at the tool's default
HUNT_MUTANTS_EVERY ?= 1
MUTANT_COUNT_TIMEOUT ?= 2
hunt-mutants: all $(BUILD)/zoo/none.so
	nice -n 10 $(PYTHON) tools/zoo_mutants.py --conform $(CONFORM) --out $(BUILD)/zoo_mutants --jobs $(MUTANT_JOBS) \
	  --count-failing --every $(HUNT_MUTANTS_EVERY) --timeout $(MUTANT_COUNT_TIMEOUT)
	nice -n 10 $(PYTHON) tools/hunt_zoo.py --conform $(CONFORM) --zoo-dir $(BUILD)/zoo --seconds 60 \
	  --mutants $(BUILD)/zoo_mutants/failing.json --json docs/hunt_mutants.json

# make test's fast part: the generator's list of mutants is the committed table's
zoo-mutants-list: all
	$(PYTHON) tools/zoo_mutants.py --conform $(CONFORM) --check-list

verify: all
	$(CONFORM) verify

test-san:
	@$(MAKE) --no-print-directory SANITIZE=1 all
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp OMP_WAIT_POLICY=$${OMP_WAIT_POLICY:-passive} build-san/conform_tests --jobs $(THREADS)
	build-san/conform verify
	build-san/conform run cases/smoke.json --report-dir build-san/smoke-report --threads $(THREADS) --quiet

# the smoke suite under valgrind memcheck, kernels in-process (valgrind has no AVX-512: auto picks AVX2);
# the wait policy given, so conform does not start itself again (the new image would run outside valgrind)
test-valgrind: all
	@command -v valgrind >/dev/null || $(APT_INSTALL) required "make test-valgrind" valgrind
	OMP_WAIT_POLICY=passive valgrind -q --error-exitcode=99 $(CONFORM) run cases/smoke.json --no-isolate --threads $(THREADS) --quiet \
	  --report-dir $(BUILD)/valgrind-report

conformance: all
	$(CONFORM) run cases/conformance.json --report-dir reports/latest --threads $(THREADS)

# the models suite (cases/models.json): the shapes published networks run these ops at, on every
# core (run --jobs and --threads default to sharing them); not part of make test. tools/models.sh prints
# the wall time, the slowest goldens and the slowest one alone at 1 and 2 threads. In CI, shards
# come from CI_NODE_INDEX/CI_NODE_TOTAL (docs/ci/gitlab-models.yml).
MODELS_REPORT ?= $(BUILD)/models-report
models: all
	tools/models.sh $(CONFORM) $(MODELS_REPORT)

bench: all
	tools/bench.sh $(CONFORM)

# the optimized kernels with one core held by a busy process: t(--threads cores) / t(--threads 1)
# per op (the goal: at most 1.3)
bench-contention: all
	tools/bench_contention.sh $(CONFORM)

# every bench problem at 1 and 2 threads with the bandwidth it achieves: bound by memory, or by
# its own work (docs/performance.md, round 6)
bench-scaling: all
	tools/bench_scaling.sh $(CONFORM)

# every bench problem beside a hot-cache estimate of its work (the same kernel at cut sizes that
# stay in cache, extrapolated): bound by its work, or by memory (docs/performance.md, "What bounds
# each op")
bench-bound: all
	tools/bench_bound.sh $(CONFORM)

# PyTorch as a device (README "Testing your own kernels"): export the default suite, run it with
# tools/torch_runner.py on TORCH_DEVICE, judge it with that device's waivers when there are some.
# Exit 1 while any case fails; the report is in reports/torch-<device>-<dtype>/.
TORCH_PYTHON ?= $(PYTHON)
TORCH_DEVICE ?= cpu
TORCH_DTYPE  ?= float32
TORCH_EXPORT  = $(BUILD)/torch-export-$(TORCH_DEVICE)-$(TORCH_DTYPE)
TORCH_WAIVERS = $(wildcard cases/waivers_pytorch_$(TORCH_DEVICE).json)
device-torch: all
	rm -rf $(TORCH_EXPORT)
	$(CONFORM) export cases/conformance.json --out $(TORCH_EXPORT) --dtype $(TORCH_DTYPE) $(if $(SEED),--seed $(SEED))
	$(TORCH_PYTHON) tools/torch_runner.py $(TORCH_EXPORT) --device $(TORCH_DEVICE) --threads $(THREADS) --quiet $(TORCH_RUNNER_ARGS)
	$(CONFORM) run cases/conformance.json --impl dir:$(TORCH_EXPORT) --threads $(THREADS) \
	  --report-dir reports/torch-$(TORCH_DEVICE)-$(TORCH_DTYPE) $(if $(TORCH_WAIVERS),--waivers $(TORCH_WAIVERS))

# The Ascend plugin (devices/ascend/conform_ascend.c, docs/ascend.md): aclnn and graph-op calls of
# the eight ops. `make ascend-plugin` builds it against the CANN toolkit that set_env.sh exported
# (ASCEND_TOOLKIT_HOME or ASCEND_HOME_PATH; CANN <= 8 ships libopapi, CANN 9 libopapi_cv and
# libopapi_nn: ASCEND_LIBS overrides). `make ascend-standin` (part of make test) builds it against
# the HOST STAND-IN tests/ascend_standin (not CANN: each kernel contract over conform's reference),
# runs the smoke suite through it, and requires every planted marshalling fault to fail.
ASCEND_HOME ?= $(or $(ASCEND_TOOLKIT_HOME),$(ASCEND_HOME_PATH))
ASCEND_LIBS ?= $(if $(wildcard $(ASCEND_HOME)/lib64/libopapi_cv.so),-lopapi_cv -lopapi_nn,-lopapi) -lnnopbase \
               $(if $(wildcard $(ASCEND_HOME)/lib64/libacl_rt.so),-lacl_rt,-lascendcl) -lacl_op_compiler
ascend-plugin:
	@[ -n "$(ASCEND_HOME)" ] && [ -d "$(ASCEND_HOME)/include/aclnnop" ] || { echo "error: no CANN toolkit: source \
	<install>/set_env.sh (it exports ASCEND_TOOLKIT_HOME and ASCEND_HOME_PATH), then make ascend-plugin" >&2; exit 2; }
	@mkdir -p $(BUILD)/ascend
	$(CC) $(PLUGIN_CFLAGS) -I$(ASCEND_HOME)/include devices/ascend/conform_ascend.c -o $(BUILD)/ascend/conform_ascend.so \
	  -L$(ASCEND_HOME)/lib64 -Wl,-rpath,$(ASCEND_HOME)/lib64 $(ASCEND_LIBS)
	@echo "built $(BUILD)/ascend/conform_ascend.so; run: $(CONFORM) run cases/conformance.json --impl plugin:$(BUILD)/ascend/conform_ascend.so"

STANDIN_DIR = $(BUILD)/ascend-standin
STANDIN_INC = -Itests/ascend_standin/include -Itests/ascend_standin
STANDIN_LIB = $(STANDIN_DIR)/libascend_standin.so
ASCEND_FAULTS = 1 2 3 4
STANDIN_PLUGINS = $(STANDIN_DIR)/conform_ascend.so $(STANDIN_DIR)/conform_ascend_aclop.so \
                  $(ASCEND_FAULTS:%=$(STANDIN_DIR)/conform_ascend_fault%.so)
$(STANDIN_LIB): $(wildcard tests/ascend_standin/*.c tests/ascend_standin/*.h tests/ascend_standin/include/*/*.h) $(REF_SRC)
	@mkdir -p $(dir $@)
	$(CC) $(PLUGIN_CFLAGS) -fopenmp $(STANDIN_INC) -Ireference $(wildcard tests/ascend_standin/*.c) $(REF_SRC) -o $@ -lm
STANDIN_PLUGIN_CC = $(CC) $(PLUGIN_CFLAGS) -DCONFORM_ASCEND_STANDIN $(STANDIN_INC) $< -o $@ -L$(STANDIN_DIR) -lascend_standin -Wl,-rpath,'$$ORIGIN'
$(STANDIN_DIR)/conform_ascend.so: devices/ascend/conform_ascend.c harness/conform_plugin.h $(STANDIN_LIB)
	$(STANDIN_PLUGIN_CC)
$(STANDIN_DIR)/conform_ascend_aclop.so: devices/ascend/conform_ascend.c harness/conform_plugin.h $(STANDIN_LIB)
	$(STANDIN_PLUGIN_CC) -DCONFORM_ASCEND_ROTATED_ACLOP
$(STANDIN_DIR)/conform_ascend_fault%.so: devices/ascend/conform_ascend.c harness/conform_plugin.h $(STANDIN_LIB)
	$(STANDIN_PLUGIN_CC) -DASCEND_FAULT=$*
ascend-standin: all
	@$(MAKE) --no-print-directory $(STANDIN_PLUGINS)
	tests/ascend_standin/check.sh $(CONFORM) $(STANDIN_DIR) "$(ASCEND_FAULTS)" $(THREADS)

# make install PREFIX=...: the tool, its data, the kernel libraries and the Python helper
#   bin/conform                     finds its data at ../share/conform (or $CONFORM_DATA)
#   share/conform/                  cases/ (suites, golden vectors, waivers, check examples),
#                                   docs/zoo_power.json (the suites' measured power)
#   lib/, include/conform/, lib/pkgconfig/   the two kernel libraries, headers, pkg-config files
#   bin/conform-torch               tools/torch_runner.py, run by the interpreter below
#   <site>/conform/ (the package), conform_check.py, conform_pytest.py, conform_hunt.py and a dist-info naming the
#   pytest plugins, where
#   <site> is the folder of PREFIX that $(PYTHON) already reads (/usr: /usr/lib/python3/dist-packages,
#   /usr/local: /usr/local/lib/python3.X/dist-packages); for any other PREFIX it is
#   PREFIX/lib/python3.X/site-packages, and PREFIX/bin/python3 is made that prefix's interpreter
#   (a pyvenv.cfg over $(PYTHON), with the system's packages): run it, no PYTHONPATH needed
PREFIX ?= /usr/local
# the one version, CONFORM_VERSION of harness/core/version.h
VERSION = $(shell sed -n 's/^\#define CONFORM_VERSION "\(.*\)"/\1/p' harness/core/version.h)
PY_SITE = $(shell $(PYTHON) tools/python_site.py $(PREFIX))
install: all
	@install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include/conform \
	  $(DESTDIR)$(PREFIX)/share/conform/docs
	@install -m 755 $(CONFORM) $(DESTDIR)$(PREFIX)/bin/conform
	@cp -R cases $(DESTDIR)$(PREFIX)/share/conform/
	@install -m 644 docs/zoo_power.json $(DESTDIR)$(PREFIX)/share/conform/docs/
	@install -m 644 $(LIBREF) $(LIBOPT) $(DESTDIR)$(PREFIX)/lib/
	@install -m 644 reference/conform_ref.h optimized/conform_opt.h harness/conform_plugin.h $(DESTDIR)$(PREFIX)/include/conform/
	@for p in conform-ref conform-opt; do \
	  sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' tools/pkgconfig/$$p.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/$$p.pc; \
	done
	@$(PYTHON) tools/python_site.py $(PREFIX) --install "$(DESTDIR)" --version $(VERSION) \
	  --command conform-torch=tools/torch_runner.py python/conform_check.py python/conform_pytest.py python/conform_hunt.py python/conform
	@echo "installed conform $(VERSION) into $(DESTDIR)$(PREFIX) (Python package conform and helper: $(PY_SITE))"
	@echo "put $(PREFIX)/bin on PATH for conform and conform-torch$(if $(filter /usr /usr/local,$(PREFIX)),, (its python3 imports the package))"

# an out-of-tree program built against an installed copy with pkg-config; the installed conform
# and Python helper used from another directory (tests/install_check.sh)
install-check: all
	@rm -rf $(BUILD)/prefix
	@$(MAKE) --no-print-directory install PREFIX=$(abspath $(BUILD)/prefix) >/dev/null
	@$(CC) -std=c11 $(WARN) examples/link_example.c \
	  $$(PKG_CONFIG_PATH=$(abspath $(BUILD)/prefix)/lib/pkgconfig pkg-config --cflags --libs conform-ref conform-opt) \
	  -o $(BUILD)/link_example
	@$(BUILD)/link_example >/dev/null
	@tests/install_check.sh $(abspath $(BUILD)/prefix)

# the conform Python package from a clean install, in another directory, with the prefix's
# interpreter (tests/python/test_conform_package.py): a numpy kernel, correct and with a planted
# bug, through the package and pytest; torchvision over the smoke suite where torch is installed.
# package-check-full: the same, torch over the default suite and the README's CPU device example.
package-check: all
	@rm -rf $(BUILD)/prefix-pkg
	@$(MAKE) --no-print-directory install PREFIX=$(abspath $(BUILD)/prefix-pkg) >/dev/null
	@if $(BUILD)/prefix-pkg/bin/python3 -c 'import numpy' 2>/dev/null; then \
	  $(PYTHON) tests/python/test_conform_package.py $(abspath $(BUILD)/prefix-pkg) $(PACKAGE_CHECK_ARGS); \
	else echo "SKIPPED conform package test: no numpy for $(BUILD)/prefix-pkg/bin/python3"; fi
package-check-full:
	@$(MAKE) --no-print-directory package-check PACKAGE_CHECK_ARGS=--full

# libFuzzer targets (clang), each run for FUZZ_SECONDS from its committed seed corpus; new
# inputs go to build-fuzz/corpus, crashes to build-fuzz/ (see fuzz/README.md)
FUZZ_TARGETS = npy suite attrs ops manifest
FUZZ_SECONDS ?= 20
FUZZ_CC = clang
# the project's warnings, as errors, under clang too; -O1 does not run the loop vectorizer that
# `omp simd` asks for, and gcc-only -W options are unknown to clang
FUZZ_WARN = $(WARN) -Wno-unknown-warning-option -Wno-pass-failed
FUZZ_FLAGS = -std=c11 -D_GNU_SOURCE -g -O1 -fopenmp -fsanitize=address,undefined -fno-sanitize-recover=all \
	-Wno-unused-command-line-argument $(FUZZ_WARN)
FUZZ_SRC = $(REF_SRC) $(OPT_SRC) $(HAR_SRC)
FUZZ_OBJ = $(FUZZ_SRC:%.c=build-fuzz/%.o) $(AVX2_SRC:%.c=build-fuzz/%.o) $(AVX512_SRC:%.c=build-fuzz/%.o)

deps-fuzz: deps
	@$(APT_INSTALL) required "make fuzz" clang libclang-rt-14-dev libomp-14-dev

$(eval $(call COMPILE_RULES,build-fuzz,$$(FUZZ_CC) $$(FUZZ_FLAGS) -fsanitize=fuzzer-no-link))
.SECONDARY: $(FUZZ_OBJ)
build-fuzz/fuzz_%: fuzz/fuzz_%.c $(FUZZ_OBJ)
	@echo "LINK $@"; $(FUZZ_CC) $(FUZZ_FLAGS) $(INC_HAR) -fsanitize=fuzzer $^ -o $@ $(PKG_LIBS) -lm -ldl

fuzz-build: deps-fuzz
	@$(MAKE) --no-print-directory $(FUZZ_TARGETS:%=build-fuzz/fuzz_%)

# one fuzz target's run, for fuzz and fuzz-ci: fuzz_one TARGET CORPUS_DIR "WHAT" LIBFUZZER_ARGS...
FUZZ_ONE = fuzz_one() { t=$$1 c=build-fuzz/$$2/$$1 w=$$3; shift 3; mkdir -p $$c; echo "fuzz_$$t: $$w"; \
	  build-fuzz/fuzz_$$t "$$@" -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix=build-fuzz/fuzz_$$t- \
	    $$c fuzz/corpus/$$t 2>build-fuzz/fuzz_$$t.log || { tail -40 build-fuzz/fuzz_$$t.log; exit 1; }; \
	  grep -E "stat::number_of_executed_units|stat::average_exec_per_sec" build-fuzz/fuzz_$$t.log | tr '\n' ' '; echo; }

fuzz: fuzz-build
	@$(FUZZ_ONE); $(foreach t,$(FUZZ_TARGETS),fuzz_one $(t) corpus "$(FUZZ_SECONDS) s" -max_total_time=$(FUZZ_SECONDS) -timeout=20 &&) :

# CI: a fixed number of runs from a fixed seed, so the run is the same every time (a time-boxed
# fuzz run explores differently on every machine and would make CI flaky); each from an empty corpus
FUZZ_RUNS_npy = 40000
FUZZ_RUNS_suite = 20000
FUZZ_RUNS_attrs = 60000
FUZZ_RUNS_ops = 1500
FUZZ_RUNS_manifest = 4000
fuzz-ci: fuzz-build
	@rm -rf build-fuzz/corpus-ci; $(FUZZ_ONE); \
	  $(foreach t,$(FUZZ_TARGETS),fuzz_one $(t) corpus-ci "$(FUZZ_RUNS_$(t)) runs, seed 1" -seed=1 -runs=$(FUZZ_RUNS_$(t)) -timeout=30 &&) :

# what make test runs, all of it built before its first part: all's, and the zoo's, the Ascend
# stand-in's and the hunt's plugins (here, below the lists it names)
build-test: build-all $(ZOO_PLUGINS) $(STANDIN_PLUGINS) $(HUNT_ZOO)
	@:

clean:
	rm -rf build build-san build-fuzz
