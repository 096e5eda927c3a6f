# xdp-pp: a thin dispatcher over scripts/. `make help` lists the targets.
# Settings come from the environment: KDIR, BASE, CACHE, JOBS, OUT, ...

SHELL := /bin/bash
S := scripts

.PHONY: all demo test test-base test-rt stress check upstream smoke bench bench-nic build setup unsetup export prep send shell clean help

all: demo

demo: ## apply + build + boot + redirect-map egress-drop demo with page_pool stats
	$(S)/demo.sh

test: ## gates, build the series debug kernel; in the VM: kselftests, short stress, KUnit
	$(S)/test.sh series

test-base: ## the unpatched base: KUnit (expect=base), net/bench; no gates, drv-net test, stress
	$(S)/test.sh base

test-rt: ## the series on PREEMPT_RT: KUnit (RT's rules asserted), bench, reproducer
	$(S)/test.sh rt

stress: ## debug kernel: XDP drop paths under topology churn (~1 h; STRESS_SHORT=1: ~11 min)
	$(S)/stress.sh

check: ## all gates: fast ones, per-patch build, W=1, drivers gate, upstream's tests; hours cold
	$(S)/check.sh

upstream: ## upstream's XDP/NAPI tests (test_progs, drivers/net, busy_poll) base vs series: same verdicts
	$(S)/upstream.sh

smoke: ## seconds: every target starts (--help), every make X in the README is a target
	$(S)/smoke.sh

bench: ## base vs RFC vs series benchmark under QEMU icount; tables, plot, target verdicts
	$(S)/bench/bench.sh

bench-nic: ## real NIC, running kernel: NETIF= REMOTE= REMOTE_IF= (see --help)
	$(S)/bench/bench-nic.sh

build: ## build the series kernel only
	$(S)/build.sh series

setup: ## install host packages (root, apt pins) and the guest root
	$(S)/setup-host.sh
	$(S)/guest-root.sh

unsetup: ## undo setup's apt changes (xdp-pp sources + pin file); packages stay
	$(S)/setup-host.sh --remove

export: ## regenerate patches/NN-name/, one dir per unit of net-core/covers/ (WORK=...)
	$(S)/export.sh

prep: ## each unit ready to post: prefix, cover, To/Cc, you (KDIR= UNITS= VERSION=)
	$(S)/prep.sh

send: ## dry run of posting what make prep made, per unit (never sends)
	$(S)/send.sh

shell: ## interactive VM on the series kernel (the repo, NICs, the variant root mounted)
	$(S)/shell.sh

clean: ## remove the worktrees and branches the harness made (KDIR too)
	$(S)/clean.sh

help: ## this list
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | \
		awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'
