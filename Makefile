# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# vroce top-level build.
#   make            module (vroce.ko), providers (libvroce-rdmavN.so, one per
#                   libibverbs private ABI), tests
#                   (with tests/kmod/vroce_ktest.ko, a kernel-verbs checker)
#   make install    install them (honours DESTDIR), then depmod
#   make deb        Debian packages in build/deb (scripts/deb): vroce-dkms
#                   (DKMS builds the module for every kernel) and libvroce1
#                   (the provider)
#   make check-deb  the VM test that installs them (tests/vm/99-deb-dkms.sh:
#                   DKMS compiles under emulation, about 15 min; make check
#                   only checks their contents on the host, tests/host/deb.sh)
#   make check      every test: host unit tests, provider tests, a 60 s
#                   fuzzer smoke run, VM tests
#   make check-debug  the VM tests on a debug kernel (KASAN, lockdep,
#                   kmemleak, KFENCE) built from Debian's linux-source:
#                   scripts/debug-kernel, then scripts/run-vm-tests with
#                   VROCE_VM_KERNEL etc.; DEBUG_TESTS picks tests (default:
#                   all); reports land in build/debug-kernel/reports.
#                   Slow (see README.md); not part of `make check`.
#   make fuzz       a long run of the packet parser's fuzzer (tests/fuzz):
#                   FUZZ_RUNS inputs (12,000,000) or FUZZ_TIME seconds
#   make demo       boot two VMs, load vroce, create vroce0, print
#                   ibv_devinfo, run ibv_rc_pingpong and ib_write_bw
#   make bench      rdma_rxe and vroce side by side: on the two-VM wire
#                   (the main table), then in one VM (scripts/bench)
#
#   make check-612  the whole VM suite on Debian's 6.12 kernel (make
#                   check runs a core subset of it there, see scripts/check;
#                   make deps-612 installs that kernel and its headers)
#
# vroce.ko is built against KDIR: /lib/modules/KVER/build if KVER is set;
# else the running kernel's headers if installed; else the newest Debian
# 6.1 kernel's; else the newest installed.

KVER ?=
ifneq ($(KVER),)
KDIR ?= /lib/modules/$(KVER)/build
endif
newest_kdir = $(shell ls -d $(1) 2>/dev/null | sort -V | tail -n 1)
KDIR ?= $(or $(wildcard /lib/modules/$(shell uname -r)/build), \
	$(call newest_kdir,/lib/modules/6.1.*/build), \
	$(call newest_kdir,/lib/modules/*/build))
BUILD ?= $(CURDIR)/build
export BUILD

.PHONY: all deps deps-612 module ktest user unit provider-tests progs install deb check \
	demo bench soak check-unit check-vm check-debug check-612 check-deb fuzz clean

all: module ktest user unit provider-tests progs

deps:
	@scripts/deps

deps-612:
	@scripts/deps 6.12

module: deps
	@test -n "$(KDIR)" || { echo "make: no kernel headers; set KDIR" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

ktest: deps
	@test -n "$(KDIR)" || { echo "make: no kernel headers; set KDIR" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/kmod modules

user: deps
	$(MAKE) -C user O=$(BUILD)/user

unit: deps
	$(MAKE) -C tests/unit O=$(BUILD)/unit

progs: deps
	$(MAKE) -C tests/progs O=$(BUILD)/progs

provider-tests: user
	$(MAKE) -C tests/provider O=$(BUILD)/provider

install: all
	scripts/install

deb: deps
	scripts/deb

check-deb: deb
	scripts/run-vm-tests --logs $(BUILD)/vm/logs-deb 99-deb-dkms

check: all deb
	scripts/check

check-unit: unit provider-tests deb
	scripts/check --host-only

check-vm: all
	scripts/run-vm-tests

# The debug kernel is rebuilt only when scripts/debug-kernel.config
# changes; vroce.ko and vroce_ktest.ko for it are built in a copy under
# build/debug-kernel/vroce, so the repo's vroce.ko is left alone. Guests get
# VROCE_VM_MEM_ADD more MB and VROCE_VM_TIMEOUT_SCALE times the time.
# DEBUG_APPEND is the guest kernel's extra command line. It has no5lvl:
# QEMU's "max" CPU has 5-level paging, and while identify_cpu() rebuilds
# the boot CPU's feature bits, LA57 reads as off for a moment; an
# interrupt in that window makes KASAN take a direct-map address for a
# wild one (a false "wild-memory-access" report in handle_edge_irq, one
# boot in a few). With 4-level paging there is no such window. Under
# KASAN and lockdep in TCG, ACPI's _PRT method also runs into the AML loop
# timeout three times (30 s each) at every boot; acpi=noirq avoids that
# (PCI interrupts then come from the BIOS's routing table, which QEMU's
# i440FX has).
DEBUG_TESTS ?=
DEBUG_MEM_ADD ?= 1024
DEBUG_TIMEOUT_SCALE ?= 3
DEBUG_APPEND ?= no5lvl acpi=noirq
# Every report is also collected into build/debug-kernel/reports.
check-debug: user progs provider-tests
	scripts/debug-kernel --env >$(BUILD)/debug-kernel.env
	VROCE_ROOTS=$(BUILD)/roots scripts/abi-roots trixie || \
		echo "check-debug: no trixie root: 89-smbd-pair will skip"
	rm -rf $(BUILD)/debug-kernel/logs $(BUILD)/debug-kernel/reports
	@rc=0; \
	env $$(cat $(BUILD)/debug-kernel.env) \
		VROCE_VM_MEM_ADD=$(DEBUG_MEM_ADD) \
		VROCE_VM_TIMEOUT_SCALE=$(DEBUG_TIMEOUT_SCALE) \
		VROCE_VM_APPEND="$(DEBUG_APPEND)" \
		scripts/run-vm-tests --logs $(BUILD)/debug-kernel/logs $(DEBUG_TESTS) || rc=$$?; \
	if ! scripts/debug-reports $(BUILD)/debug-kernel/logs $(BUILD)/debug-kernel/reports; then \
		echo "check-debug: kernel reports collected in the files above"; rc=1; \
	fi; \
	exit $$rc

# The newest Debian 6.12 kernel installed (make deps-612), every VM test.
KVER_612 ?= $(notdir $(patsubst %/build,%,$(call newest_kdir,/lib/modules/6.12.*/build)))
check-612: user progs provider-tests
	@test -n "$(KVER_612)" || { echo "make: no 6.12 kernel; make deps-612" >&2; exit 1; }
	scripts/kernel-ko --env $(KVER_612) >$(BUILD)/kernel-612.env
	env $$(cat $(BUILD)/kernel-612.env) scripts/run-vm-tests \
		--logs $(BUILD)/vm/logs-612

fuzz: deps
	$(MAKE) -C tests/fuzz O=$(BUILD)/fuzz run

demo: all
	scripts/vm --pair scripts/demo

bench: all
	scripts/bench

soak: all
	scripts/soak

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	-$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/kmod clean
	rm -rf $(BUILD)
