# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# vroce top-level build.
#   make            module (vroce.ko), provider (libvroce-rdmav34.so), tests
#                   (with tests/kmod/vroce_ktest.ko, a kernel-verbs checker)
#   make install    install them (honours DESTDIR), then depmod
#   make check      every test: host unit tests, provider tests, a 60 s
#                   fuzzer smoke run, VM tests
#   make fuzz       a long run of the packet parser's fuzzer (tests/fuzz):
#                   FUZZ_RUNS inputs (12,000,000) or FUZZ_TIME seconds
#   make demo       boot two VMs, load vroce, create vroce0, print
#                   ibv_devinfo, run ibv_rc_pingpong and ib_write_bw
#   make bench      rdma_rxe and vroce side by side: on the two-VM wire
#                   (the main table), then in one VM (scripts/bench)
#
# KDIR defaults to the newest installed /lib/modules/*/build.

KDIR ?= $(shell ls -d /lib/modules/*/build 2>/dev/null | sort -V | tail -n 1)
BUILD ?= $(CURDIR)/build
export BUILD

.PHONY: all deps module ktest user unit provider-tests progs install check demo bench \
	check-unit check-vm fuzz clean

all: module ktest user unit provider-tests progs

deps:
	@scripts/deps

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

check: all
	scripts/check

check-unit: unit provider-tests
	scripts/check --host-only

check-vm: all
	scripts/run-vm-tests

fuzz: deps
	$(MAKE) -C tests/fuzz O=$(BUILD)/fuzz run

demo: all
	scripts/vm --pair scripts/demo

bench: all
	scripts/bench

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	-$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/kmod clean
	rm -rf $(BUILD)
