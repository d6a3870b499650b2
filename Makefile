# bcachefs userspace tools (on-disk format of May 2018, superblock version 9)
#
#   make            build ./bcachefs (and mkfs.bcachefs, fsck.bcachefs, mount.bcachefs links)
#   make deps       install the Debian packages the build and tests need
#   make demo       deps + build + format, show-super, list and fsck a demo image
#   make check      every test (unit, command, golden), then those that can find more under
#                   ASan/UBSan and TSan, and the fuzz smoke (the total time at the end)
#   make check-fast the tests once, without the sanitizer build
#   make check-asan the tests of ASAN_TESTS under AddressSanitizer + UndefinedBehaviorSanitizer
#   make check-tsan the mount tests under ThreadSanitizer
#   make check-fuzz the fuzz regression inputs and a short run of each fuzz target
#   make fuzz       every fuzz target for FUZZ_TIME seconds (tests/fuzz/README.md)
#   make fuzz-save  keep what the campaigns found (tests/fuzz/campaign.tar.zst)
#   make bench      benchmarks (bench/)
#   make install    PREFIX=/usr/local DESTDIR=

CC	?= gcc
PREFIX	?= /usr/local
DESTDIR	?=
INITRAMFS_HOOKS ?= /usr/share/initramfs-tools/hooks
BUILD	?= build
OPT	?= -O2 -g

PKGS	:= blkid uuid libsodium liblz4 libzstd zlib fuse3
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)

CFLAGS	+= $(OPT) -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter \
	   -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -Ilibbcachefs -I. $(PKG_CFLAGS) $(SAN)
# The probing, codec, crypto and FUSE libraries are linked statically when their
# archive is installed (the Debian -dev packages ship it): loading and
# relocating ~10 shared libraries was a third of the start-up of a command
# (`fsck -n` of a small filesystem). Without the archive: the shared library.
STATIC_LIBS := blkid uuid sodium lz4 zstd z scrypt keyutils fuse3
lib_or_archive = $(or $(filter /%,$(shell $(CC) -print-file-name=lib$(1).a 2>/dev/null)),-l$(1))
LINK_LIBS := $(foreach l,$(STATIC_LIBS),$(call lib_or_archive,$(l)))
LDLIBS	+= $(LINK_LIBS) -lpthread -ldl $(SAN)
LDFLAGS	+= $(SAN)
# The bcachefs binary takes the C library statically too when its archive is
# installed (not under a sanitizer, whose runtime needs the shared one): no
# dynamic loader, no relocation of libc, only the libc code it uses mapped.
# `fsck` of a small filesystem is mostly start-up: about 0.4 ms and 0.9 MiB
# of peak memory less (bench/10-fsck.sh). The linker warns that libfuse's
# dlopen() (its -o modules= option, which the mount does not use) would
# need the shared C library at run time. (-static-pie: still loaded at a
# random address.)
have_file = $(filter /%,$(shell $(CC) -print-file-name=$(1) 2>/dev/null))
STATIC_LIBC := $(if $(SAN),,$(if $(and $(call have_file,libc.a),$(call have_file,rcrt1.o)),-static-pie))

LIB_SRCS := $(sort $(wildcard libbcachefs/*.c libbcachefs/*/*.c))
CMD_SRCS := bcachefs.c $(sort $(wildcard cmd_*.c))
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))

LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
CMD_OBJS := $(CMD_SRCS:%.c=$(BUILD)/%.o)
UNIT_BINS := $(UNIT_SRCS:%.c=$(BUILD)/%)

BIN	:= $(BUILD)/bcachefs

.PHONY: all deps demo check check-fast check-asan check-tsan check-fuzz fuzz fuzz-build fuzz-bins fuzz-save unit bench install clean print-asan-tests
all: bcachefs mkfs.bcachefs fsck.bcachefs mount.bcachefs

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/libbcachefs.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(CMD_OBJS) $(BUILD)/libbcachefs.a
	$(CC) $(LDFLAGS) $(STATIC_LIBC) -o $@ $(CMD_OBJS) $(BUILD)/libbcachefs.a $(LDLIBS)

$(BUILD)/tests/unit/%: tests/unit/%.c $(BUILD)/libbcachefs.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -o $@ $< $(BUILD)/libbcachefs.a $(LDLIBS) -lcmocka

# the corruption planter of the fsck corpus (tests/fsck/make-corpus.sh)
$(BUILD)/tests/plant: tests/fsck/plant.c $(BUILD)/libbcachefs.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -o $@ $< $(BUILD)/libbcachefs.a $(LDLIBS)

# the random btree-node damager of the convergence test (tests/fsck/test_fsck_converge.sh)
$(BUILD)/tests/damage: tests/fsck/damage.c $(BUILD)/libbcachefs.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -o $@ $< $(BUILD)/libbcachefs.a $(LDLIBS)

# the read-write test tools (tests/rw/): the POSIX-semantics suite and the
# fsx-style random-operation tester; plain programs, no library (and not its
# include path: they use only the system headers)
RW_CFLAGS := $(OPT) -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter -D_GNU_SOURCE \
	-D_FILE_OFFSET_BITS=64 $(SAN)
RW_TOOLS := $(BUILD)/tests/posix $(BUILD)/tests/fsx
$(BUILD)/tests/posix: tests/rw/posix.c
	@mkdir -p $(dir $@)
	$(CC) $(RW_CFLAGS) -MMD -MP -o $@ $<
$(BUILD)/tests/fsx: tests/rw/fsx.c
	@mkdir -p $(dir $@)
	$(CC) $(RW_CFLAGS) -MMD -MP -o $@ $<

# the write-log replayer of the crash tests (tests/crash/)
$(BUILD)/tests/replay: tests/crash/replay.c $(BUILD)/libbcachefs.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -o $@ $< $(BUILD)/libbcachefs.a $(LDLIBS)

# libFuzzer targets (tests/fuzz/): clang, in their own BUILD dir (see fuzz-build).
# The control-request decoder of the online commands joins this list (and
# tests/fuzz/run.sh's) when it exists: tests/fuzz/README.md.
FUZZ_TARGETS := super node journal extent strhash image ctl mount
FUZZ_BINS := $(FUZZ_TARGETS:%=$(BUILD)/tests/fuzz/fuzz_%)
$(BUILD)/tests/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(BUILD)/libbcachefs.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fsanitize=fuzzer -MMD -MP -o $@ $< $(BUILD)/libbcachefs.a $(LDLIBS)
fuzz-bins: $(FUZZ_BINS)
# the same targets without libFuzzer, for the normal and ASan builds
# (tests/fuzz/test_fuzz_replay.sh runs the corpus and regression inputs)
REPLAY_BINS := $(FUZZ_TARGETS:%=$(BUILD)/tests/fuzz/replay_%)
$(BUILD)/tests/fuzz/replay_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c tests/fuzz/fuzz.h $(BUILD)/libbcachefs.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -o $@ $< tests/fuzz/replay.c $(BUILD)/libbcachefs.a $(LDLIBS)

# the seed maker of the fuzz corpus (tests/fuzz/make-corpus.sh), normal build
$(BUILD)/tests/mkseeds: tests/fuzz/mkseeds.c tests/fuzz/fuzz.h $(BUILD)/libbcachefs.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -o $@ $< $(BUILD)/libbcachefs.a $(LDLIBS)

bcachefs: $(BIN)
	cp $(BIN) $@.tmp && mv -f $@.tmp $@
mkfs.bcachefs fsck.bcachefs mount.bcachefs: bcachefs
	ln -sf bcachefs $@

unit: $(UNIT_BINS) $(REPLAY_BINS)

deps:
	@sh tests/deps.sh

demo: deps all
	@sh tests/demo.sh

# The tests: unit tests, command tests and golden-image tests, with a
# closing line "N passed, N failed, N skipped" and the wall time.
# tests/run.sh runs TEST_JOBS of them at once (make's -jN, else 2), the
# longest first (tests/durations.txt; tests/durations-asan.txt for the
# sanitizer builds); the golden and corpus images are decompressed once
# for all the runs of `make check`, in build/test-cache (tests/lib.sh: unzst).
TEST_JOBS ?= $(or $(patsubst -j%,%,$(filter -j%,$(MAKEFLAGS))),2)
# the builds of the sanitizer trees: parallel too when make was given no -j
SUBMAKE_J = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(TEST_JOBS))
RUN_TESTS = TEST_JOBS=$(TEST_JOBS) TEST_CACHE=$(CURDIR)/build/test-cache sh tests/run.sh
SAN_DURATIONS = $(CURDIR)/$(firstword $(wildcard tests/durations-asan.txt) tests/durations.txt)

check-fast: all unit $(BUILD)/tests/plant $(BUILD)/tests/damage $(RW_TOOLS) $(BUILD)/tests/replay
	@BCACHEFS=$(CURDIR)/bcachefs UNITDIR=$(CURDIR)/$(BUILD)/tests/unit $(RUN_TESTS)

# What the ASan/UBSan pass runs (TEST_QUICK=1; tests/run.sh globs, !GLOB
# leaves out). What it finds that the normal pass cannot is a memory or
# undefined-behaviour error on a line that runs without a visible failure,
# so it takes every test that runs code no other test runs, measured with
# gcov (sh tests/asan-coverage.sh: the lines of libbcachefs/, cmd_*.c and
# bcachefs.c each test runs under TEST_QUICK=1): the unit tests, the fuzz
# replay, fsck (corpus, damage, scan, interrupt), crash, mount, online,
# rw on the mount, format, extract, list, dump, key, migrate... Left out:
#  - rw/test_*_tmpfs: fsx, the POSIX suite and stress-ng against tmpfs (the
#    reference runs of the test tools): no bcachefs code at all;
#  - the comparisons with what the 2018 tools printed or wrote for the
#    golden images (show-super, list, dump, bch_fs_initialize() on each
#    format): their lines are run by the other tests (fsck -n of every
#    golden image, show-super --json, the list and dump tests), and
#    test_init_golden_fmt's driver links the normal build's library anyway.
# Measured (asan-coverage.sh, 115 tests): the tests below run all the 19065
# lines the whole suite runs; the four comparisons ran 0 lines of their own,
# the tmpfs runs none at all; the seven took 55 of the 374 CPU seconds of
# the suite under TEST_QUICK (gcov build, -O1).
ASAN_TESTS ?= * !rw/test_*_tmpfs !super/test_show_super_golden !list/test_list_golden \
	!dump/test_dump_2018 !init/test_init_golden_fmt
print-asan-tests:
	@echo '$(ASAN_TESTS)'

SAN_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 LSAN_OPTIONS=exitcode=134 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:abort_on_error=1
check-asan:
	$(MAKE) $(SUBMAKE_J) BUILD=build-asan OPT="-O1 -g -fno-omit-frame-pointer" \
		SAN="-fsanitize=address,undefined -fno-sanitize-recover=all" build-asan/bcachefs unit \
		build-asan/tests/replay
	@$(SAN_ENV) BCACHEFS=$(CURDIR)/build-asan/bcachefs UNITDIR=$(CURDIR)/build-asan/tests/unit \
		TEST_QUICK=1 TEST_DURATIONS=$(SAN_DURATIONS) $(RUN_TESTS) $(foreach g,$(ASAN_TESTS),'$(g)')

# the threads of the mount (the read-ahead worker, the control socket, data
# jobs) under ThreadSanitizer: the mount tests, the control socket's thread
# and a data job's two threads, the read-ahead worker's unit test
check-tsan:
	$(MAKE) $(SUBMAKE_J) BUILD=build-tsan OPT="-O1 -g" SAN="-fsanitize=thread" build-tsan/bcachefs \
		build-tsan/tests/unit/test_io_read
	@TSAN_OPTIONS=halt_on_error=1:exitcode=66 BCACHEFS=$(CURDIR)/build-tsan/bcachefs \
		UNITDIR=$(CURDIR)/build-tsan/tests/unit TEST_QUICK=1 \
		TEST_DURATIONS=$(SAN_DURATIONS) \
		$(RUN_TESTS) 'mount/*' 'online/test_online_refusals' 'unit/test_io_read' \
		'fsck/test_fsck_read_ahead'

# The fuzz targets: clang with libFuzzer, ASan and UBSan, and the
# checksum bypass of fuzz builds (FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION).
FUZZ_SAN := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all \
	-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
fuzz-build:
	$(MAKE) BUILD=build-fuzz CC=clang OPT="-O1 -g -fno-omit-frame-pointer" \
		SAN="$(FUZZ_SAN)" fuzz-bins

# make fuzz: every target for FUZZ_TIME seconds (default 60) from its corpus,
# new inputs kept in build-fuzz/corpus/; crashes in build-fuzz/crashes/.
FUZZ_TIME ?= 60
fuzz: fuzz-build
	@FUZZ_TIME=$(FUZZ_TIME) FUZZDIR=$(CURDIR)/build-fuzz/tests/fuzz sh tests/fuzz/run.sh campaign

# keep what the campaigns found: tests/fuzz/campaign.tar.zst (commit it)
fuzz-save: fuzz-build
	@FUZZDIR=$(CURDIR)/build-fuzz/tests/fuzz sh tests/fuzz/run.sh save

# CI: every regression input once, then a short seeded run of each target
# (skipped with a note where clang is not installed: make deps installs it)
check-fuzz:
	@if ! command -v clang > /dev/null; then \
		echo "skip fuzz/*: clang not installed (make deps)"; \
	else \
		$(MAKE) -s $(SUBMAKE_J) fuzz-build && \
		FUZZDIR=$(CURDIR)/build-fuzz/tests/fuzz sh tests/fuzz/run.sh smoke; \
	fi

# every phase, one after the other (a phase that fails does not stop the
# others), then the time of each and of all
check:
	@t0=$$(date +%s); rc=0; times=""; 	for p in fast asan tsan fuzz; do 		t=$$(date +%s); 		$(MAKE) --no-print-directory $(SUBMAKE_J) check-$$p || rc=1; 		times="$$times$${times:+, }$$p $$(( $$(date +%s) - t ))s"; 	done; 	echo "make check: $$(( $$(date +%s) - t0 ))s in all ($$times)"; 	exit $$rc

bench: all
	@sh bench/run.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(PREFIX)/share/man/man8
	install -m 0755 bcachefs $(DESTDIR)$(PREFIX)/sbin/bcachefs
	ln -sf bcachefs $(DESTDIR)$(PREFIX)/sbin/mkfs.bcachefs
	ln -sf bcachefs $(DESTDIR)$(PREFIX)/sbin/fsck.bcachefs
	ln -sf bcachefs $(DESTDIR)$(PREFIX)/sbin/mount.bcachefs
	install -m 0644 man/bcachefs.8 $(DESTDIR)$(PREFIX)/share/man/man8/bcachefs.8
	install -d $(DESTDIR)$(INITRAMFS_HOOKS)
	sed 's|@SBINDIR@|$(PREFIX)/sbin|' initramfs/hook > $(DESTDIR)$(INITRAMFS_HOOKS)/bcachefs
	chmod 0755 $(DESTDIR)$(INITRAMFS_HOOKS)/bcachefs

clean:
	rm -rf build build-asan build-tsan build-fuzz build-cov bcachefs mkfs.bcachefs fsck.bcachefs mount.bcachefs

-include $(LIB_OBJS:.o=.d) $(CMD_OBJS:.o=.d) $(UNIT_BINS:=.d) $(FUZZ_BINS:=.d) $(REPLAY_BINS:=.d)
