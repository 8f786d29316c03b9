# etmkit top-level driver.  CMake does the building; this file gives the short commands.
#   make          build build/etmkit
#   make demo     install what is missing, build, and run the main job on a bundled example
#   make install  build, then install under PREFIX (default /usr/local), staged under DESTDIR
#   make test     install what is missing, build (normal + ASan/UBSan), run every test
#   make bench    performance comparison against OpenCSD's trc_pkt_lister and perf
#   make fuzz     run every libFuzzer target for FUZZ_SECONDS each
JOBS        ?= $(shell nproc 2>/dev/null || echo 2)
BUILD       ?= build
ASAN_BUILD  ?= build-asan
FUZZ_SECONDS ?= 60
PREFIX      ?= /usr/local
DESTDIR     ?=
# The test suite is configured when cmocka is there (AUTO), so that a build needs only the build
# packages; `make test` installs the test packages and asks for it (TESTS=ON).
TESTS       ?=
CMAKE_TESTS := $(if $(TESTS),-DETMKIT_TESTS=$(TESTS))

# Debian packages the build and the tests need (checked one by one, installed when missing).
BUILD_DEPS := cmake make gcc pkg-config libelf-dev libdw-dev libzstd-dev libcapstone-dev clang lld llvm \
              help2man
# workload-real (etmkit gen) reads Debian's AArch64 libc and libgomp at run time: its tests and
# the real-code benchmark need the cross packages (the build does not); the BOLT end-to-end
# tests (tests/scripts/bolt_e2e.sh, export_bolt_e2e.sh) run llvm-bolt-16/perf2bolt and the
# program under qemu; the AutoFDO one (tests/scripts/export_autofdo_clang.sh) create_llvm_prof,
# clang-16, llvm-profgen-16; the flame graph's (tests/scripts/flame_svg.sh) drives its SVG in
# headless chromium
TEST_DEPS  := libcmocka-dev python3 xz-utils clang lld llvm linux-perf libopencsd-bin time \
              man-db bash-completion libc6-arm64-cross libgomp1-arm64-cross bolt-16 qemu-user \
              autofdo clang-16 llvm-16 python3-distributed chromium
BENCH_DEPS := libopencsd-bin linux-perf time libc6-arm64-cross libgomp1-arm64-cross python3-distributed

.PHONY: all build quiet-build asan deps test-deps bench-deps demo install test bench fuzz clean \
        format

all: build

build:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_TESTS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# The build as `make demo` and `make install` show it: one line; cmake's output goes to
# $(BUILD)/build.log, which is shown (without its progress lines) when the build fails.
quiet-build:
	@mkdir -p $(BUILD)
	@if { cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo && \
	      cmake --build $(BUILD) -j $(JOBS); } >$(BUILD)/build.log 2>&1; then \
	    echo "built $(BUILD)/etmkit"; \
	else \
	    grep -v '^\[ *[0-9]*%\]' $(BUILD)/build.log; \
	    echo "etmkit: the build failed; cmake's output: $(BUILD)/build.log" >&2; \
	    exit 1; \
	fi

asan:
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DETMKIT_SANITIZE=ON $(CMAKE_TESTS) >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)

deps:
	@scripts/ensure-packages $(BUILD_DEPS)

test-deps:
	@scripts/ensure-packages $(BUILD_DEPS) $(TEST_DEPS)

bench-deps:
	@scripts/ensure-packages $(BUILD_DEPS) $(BENCH_DEPS)

demo: deps
	@$(MAKE) --no-print-directory quiet-build
	@scripts/demo $(BUILD)/etmkit

# GNU conventions: make install PREFIX=/usr DESTDIR=/tmp/stage (see cmake/install.cmake)
install: deps
	@$(MAKE) --no-print-directory quiet-build
	@DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(PREFIX)"

test: test-deps
	@$(MAKE) --no-print-directory build TESTS=ON
	@$(MAKE) --no-print-directory asan TESTS=ON
	@scripts/run-tests $(BUILD) $(ASAN_BUILD)

bench: bench-deps
	@$(MAKE) --no-print-directory build
	@bench/run-all $(BUILD)/etmkit

fuzz:
	@scripts/ensure-packages clang libclang-rt-14-dev $(BUILD_DEPS)
	@fuzz/run-all $(FUZZ_SECONDS)

format:
	@find src include tools tests fuzz bench -name '*.[ch]' | xargs clang-format -i

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) build-fuzz
