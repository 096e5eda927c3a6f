# lib.sh - shared settings and helpers for the harness scripts (sourced).
# shellcheck shell=bash

# Pinned base: Debian's linux-source-7.3 from trixie-backports.
LINUX_SOURCE_SERIES=7.3
LINUX_SOURCE_VERSION=${LINUX_SOURCE_VERSION:-7.3.4-1~bpo13+1}
LINUX_SOURCE_TARBALL=/usr/src/linux-source-$LINUX_SOURCE_SERIES.tar.xz
LINUX_SOURCE_DATE=2026-11-15T22:30:00Z
# the base commit that tarball gives (scripts/base.sh checks it)
LINUX_SOURCE_COMMIT=659e46f62b0dc2d4cad1ceebe94df79cb10cc612
VIRTME_NG_VERSION=${VIRTME_NG_VERSION:-1.41-1}
# QEMU 7.2's TCG Oopses on int3 at live-patched kernel text (scripts/setup-host.sh)
QEMU_MIN_MAJOR=10

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Everything built lives outside the repo.
CACHE=${CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/xdp-pp}
O=${O:-$CACHE/build}
# The cache layout, in one place (everything the harness writes but out/):
#   $BASE_REPO            the Debian base as a git repository (base.sh)
#   <vroot>/<w>/src       git worktrees, w in WORKTREES (tree.sh, check.sh,
#                         prep.sh; clean.sh removes them), vroot = $CACHE,
#                         or $CACHE/kdir-<hash> for a KDIR (variant_root)
#   <vroot>/{base,rfc,series}[-debug]/build   kernel builds (build.sh; rfc:
#                         base + net-core/rfc/*.patch, perf flavour, for
#                         make bench)
#   <vroot>/<v>/pp_bench  the series' page_pool bench module built for
#                         variant v's kernel (bench.sh)
#   <vroot>/check/{build,ok,drv}          per-patch build gates (check.sh)
#   $CACHE/guest-<hash>   the guest root (guest-root.sh); $CACHE/ccache
#   $TOOLS                host-built tools the VM sees at /tools
#   $OUTS/<job>           results of each job (test, bench, check, prep, ...)
#   $BUILD_LOCK           one kernel build at a time
#   $GUEST_LOCK           one guest root debootstrap at a time
BASE_REPO=$CACHE/linux
TOOLS=${VM_TOOLS:-$CACHE/tools}
OUTS=$CACHE/out
BUILD_LOCK=$CACHE/build.lock
GUEST_LOCK=$CACHE/guest.lock
WORKTREES=(base rfc series check prep)
JOBS=${JOBS:-$(nproc)}

# Kernel config fragments, in the order scripts/config.sh applies them.
# FLAVOUR=debug (what `make test` boots) adds selftests/config.debug and
# leaves out the NIC drivers' fragments: no such NIC in the VM, and the
# W=1 gates build them in the check config (with them, 128 of the 2301
# objects of a cold KASAN build were theirs, and mvneta's COMPILE_TEST
# built ~30 more for other architectures' hardware); FLAVOUR=perf (the
# benchmark kernels, default) has the drivers; FLAVOUR=check (the build
# gates) adds the other drivers the series touches.
FLAVOUR=${FLAVOUR:-perf}
config_fragments() {
	echo "$REPO/selftests/config.trim" "$REPO/net-core/config"
	[ "$FLAVOUR" = debug ] ||
		echo "$REPO/drivers-mlx5/config" "$REPO/drivers-i40e/config" \
			"$REPO/drivers-mvneta/config"
	echo "$REPO/selftests/config"
	[ "$FLAVOUR" != debug ] || echo "$REPO/selftests/config.debug"
	[ "$FLAVOUR" != check ] || echo "$REPO/net-core/config.drivers"
}

# Driver object dirs the drivers gate builds with W=1 at every patch that
# touches them (scripts/check.sh); FLAVOUR=check configures them.
DRIVER_DIRS=(drivers/net/ethernet/marvell/ drivers/net/ethernet/intel/i40e/
	     drivers/net/ethernet/intel/ice/
	     drivers/net/ethernet/mellanox/mlx5/core/
	     drivers/net/ethernet/aquantia/ drivers/net/ethernet/engleder/
	     drivers/net/ethernet/freescale/ drivers/net/ethernet/mediatek/
	     drivers/net/ethernet/pensando/ drivers/net/ethernet/sfc/
	     drivers/net/ethernet/socionext/ drivers/net/ethernet/stmicro/
	     drivers/net/ethernet/ti/)
# The same as a path pattern for a patch's "+++ b/" lines.
DRIVER_RE='^\+\+\+ b/drivers/net/ethernet/(marvell|intel/i40e|intel/ice|mellanox/mlx5|aquantia|engleder|freescale|mediatek|pensando|sfc|socionext|stmicro|ti)/'
# The build root of a variant (base|rfc|series) in this flavour.
flavour_root() { # vroot variant
	if [ "$FLAVOUR" = debug ]; then echo "$1/$2-debug"; else echo "$1/$2"; fi
}

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }
skip() { printf 'skip: %s\n' "$*" >&2; exit 4; }

# wait_for PID SECONDS: 0 once PID has exited, 1 if it still runs after
# SECONDS (its exit status is left for `wait PID`).
wait_for() {
	local i
	for ((i = 0; i < $2; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 1
	done
	! kill -0 "$1" 2>/dev/null
}

# need_tool TOOL FIX: fail with a message naming the fix.
need_tool() {
	command -v "$1" >/dev/null 2>&1 || die "missing tool '$1' (fix: $2)"
}

# build_id O: which kernel the build dir O holds, by content (build.sh
# builds reproducibly): the first 16 hex digits of the sha256 of its
# bzImage, and of its modules' names and contents (those of
# modules.order: a module left over from an earlier config is not one).
build_id() {
	local k m
	k=$(sha256sum < "$1/arch/x86/boot/bzImage" | cut -c1-16)
	m=$(cd "$1" && sed -n 's|^\(.*\)\.o$|./\1.ko|p' modules.order | LC_ALL=C sort |
		xargs -r sha256sum | sha256sum | cut -c1-16)
	echo "bzImage $k modules $m"
}

# content hash of files/dirs given (sorted, stable).
hash_paths() {
	local p
	for p in "$@"; do
		if [ -d "$p" ]; then
			find "$p" -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum
		elif [ -e "$p" ]; then
			sha256sum "$p"
		else
			echo "absent $p"
		fi
	done | sed "s|$REPO/||" | sha256sum | cut -c1-16
}

# The kernel git repository: $KDIR (a user's tree) or the cached Debian base.
kernel_repo() {
	if [ -n "${KDIR:-}" ]; then
		[ -d "$KDIR" ] || die "KDIR=$KDIR does not exist"
		[ -f "$KDIR/Makefile" ] && [ -f "$KDIR/net/core/page_pool.c" ] ||
			die "KDIR=$KDIR is not a kernel source tree (no Makefile / net/core/page_pool.c)"
		git -C "$KDIR" rev-parse --git-dir >/dev/null 2>&1 ||
			die "KDIR=$KDIR is not a git tree; the series is applied with git am on a new branch"
		if [ -n "$(git -C "$KDIR" status --porcelain --untracked-files=no)" ]; then
			die "KDIR=$KDIR has uncommitted changes; commit or stash them first (nothing was touched)"
		fi
		(cd "$KDIR" && pwd)
	else
		"$REPO/scripts/base.sh"
	fi
}

# The base commit in a kernel repository.
base_commit() {
	local ref=${BASE:-}
	if [ -z "$ref" ]; then
		if [ -n "${KDIR:-}" ]; then ref=HEAD; else ref=base; fi
	fi
	git -C "$1" rev-parse --verify -q "$ref^{commit}" || die "base '$ref' not found in $1"
}

# Where a repository's variant trees and build dirs live.
variant_root() {
	if [ -n "${KDIR:-}" ]; then
		echo "$CACHE/kdir-$(realpath "$1" | sha256sum | cut -c1-12)"
	else
		echo "$CACHE"
	fi
}

# patches/*.patch in order (the cover letter is not matched by the glob).
series_patches() {
	local d=${PATCHES:-$REPO/patches}
	compgen -G "$d/*.patch" | LC_ALL=C sort || true
}

# net-core/rfc/*.patch in order: the rfc variant (the upstream RFC's
# change, reconstructed on the base; make bench's third kernel).
rfc_patches() {
	local d=${RFC_PATCHES:-$REPO/net-core/rfc}
	compgen -G "$d/*.patch" | LC_ALL=C sort || true
}

export CCACHE_DIR=${CCACHE_DIR:-$CACHE/ccache}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$CACHE}
export CCACHE_NOHASHDIR=1
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-10G}

# napi_cost_build OUTDIR [-DPLAIN] FN...: net-core/bench/napi_cost.bpf.c,
# one object per function (OUTDIR/napi_cost-FN.o).
napi_cost_build() {
	local out=$1 plain='' fn
	shift
	[ "${1:-}" = -DPLAIN ] && { plain=-DPLAIN; shift; }
	for fn in "$@"; do
		clang -O2 -g -target bpf $plain -DPOLL_FN="$fn" \
			-c "$REPO/net-core/bench/napi_cost.bpf.c" -o "$out/napi_cost-$fn.o" ||
			die "napi_cost: clang -target bpf failed for $fn"
	done
}

# kill_tree PID: SIGTERM to PID's descendants (deepest first), then PID.
# vm.sh traps TERM and takes its QEMU session down with it.
kill_tree() {
	local c
	for c in $(pgrep -P "$1" 2>/dev/null); do kill_tree "$c"; done
	kill -TERM "$1" 2>/dev/null || true
}

# vng_args BUILD OUT TOOLS GUEST: set the array VNG to the virtme-ng command
# line of the harness's VM (scripts/vm.sh, scripts/shell.sh): the guest
# root, two virtio NICs wired back to back, this repo at /xdp-pp, BUILD's
# variant root at /variant, OUT at /out, TOOLS at /tools.
# no5lvl: TCG's CPU model offers LA57; with 5-level paging a KASAN kernel
# reports a wild-memory-access when an interrupt arrives while
# identify_cpu() clears the capability bits (pgtable_l5_enabled() reads
# false for a moment, so the direct map looks out of range). Not the
# series; seen at 0.006 s of boot, before any networking.
vng_args() {
	local qopt=''
	[ "${VM_ICOUNT:-0}" = 1 ] && qopt+=" -icount shift=0"
	[ -n "${VM_QEMU_DATA:-}" ] && qopt+=" -L $VM_QEMU_DATA"
	# VM_QEMU_OPTS: more QEMU options (e.g. a TCG -plugin for make bench)
	[ -n "${VM_QEMU_OPTS:-}" ] && qopt+=" $VM_QEMU_OPTS"
	VNG=(vng --run "$1/arch/x86/boot/bzImage" --root "$4" --disable-microvm
	     --disable-kvm --force-9p --verbose)
	[ -z "${VM_QEMU:-}" ] || VNG+=(--qemu "$VM_QEMU")
	VNG+=(--cpus "${VM_CPUS:-2}" --memory "${VM_MEM:-2G}" --network loop
	      --append root=/dev/root
	      --append "nokaslr norandmaps log_buf_len=8M no5lvl ${VM_APPEND:-}"
	      --rodir /xdp-pp="$REPO" --rodir /variant="$(dirname "$1")"
	      --rwdir /out="$2" --rodir /tools="$3")
	[ -z "$qopt" ] || VNG+=(--qemu-opts="${qopt# }")
}

# suite_stress VARIANT: 1 when make test's VM run of VARIANT takes the short
# stress (the series, unless TEST_STRESS=0), else 0 (scripts/test.sh,
# scripts/qemu-check.sh)
suite_stress() {
	if [ "$1" = series ] && [ "${TEST_STRESS:-1}" = 1 ]; then echo 1; else echo 0; fi
}

# suite_cmd BUILD EXPECT [STRESS]: set the array SUITE to the guest command
# of make test's VM run (scripts/test.sh; scripts/qemu-check.sh
# WORKLOAD=suite runs the same): scripts/guest/run-tests.sh with KUnit's
# expectation EXPECT (base|series), the kselftests and the drv-net cases,
# and with STRESS=1 the short stress (scripts/guest/stress.sh --short) in
# the same boot, before KUnit (whose hard IRQ case turns lockdep off); and
# SUITE_TIMEOUT to the VM timeout it needs.
# The drv-net test has 34 cases, 30-70 s each on the debug kernel under TCG.
# make test runs each drop path once with the exact witness, and the owner
# contexts where the series changes the decision (threaded NAPI, busy
# poll, AF_XDP copy mode) and a page_pool destroyed with pages in flight
# (veth); XRD_CASES=all runs them all (~20 min).
suite_cmd() {
	local tests="net/bench:test_bench_page_pool.sh" v stress=()
	if [ -f "$(dirname "$1")/kselftest/drivers/net/hw/xdp_redirect_drop.py" ]; then
		tests="drivers/net/hw:xdp_redirect_drop.py $tests"
	fi
	local xrd_cases=(test_devmap_egress.softirq_drop test_devmap_egress.threaded_drop
		test_devmap_egress.busypoll_drop test_devmap_egress.mb_drop
		test_devmap_xmit_fail.threaded test_devmap_bcast.softirq_egress_drop
		test_devmap_bcast.softirq_no_dst test_cpumap.softirq_devmap
		test_xdp_tx.threaded test_xdp_tx.busypoll test_xsk_copy.threaded
		test_xsk_copy.busypoll test_veth_pool_release)
	if [ "${3:-0}" = 1 ]; then
		# the caller's STRESS_* settings go to the guest's stress.sh
		stress=(TEST_STRESS=1)
		for v in $(compgen -v STRESS_ || true); do stress+=("$v=${!v}"); done
	fi
	SUITE=(env EXPECT="$2" KSFT_TESTS="${KSFT_TESTS:-$tests}" PP_BENCH_LOOPS=100000
	       XRD_CASES="${XRD_CASES:-${xrd_cases[*]}}" ${stress[@]+"${stress[@]}"}
	       bash /xdp-pp/scripts/guest/run-tests.sh)
	# suite ~10 min, short stress ~6 min here idle; CI's machine took
	# 1.4-2x as long
	SUITE_TIMEOUT=1800
	[ "${3:-0}" != 1 ] || SUITE_TIMEOUT=3600
	# every drv-net case, KUnit and the bench take ~25 min idle: more room
	[ "${XRD_CASES:-}" != all ] || SUITE_TIMEOUT=$(( SUITE_TIMEOUT + 1800 ))
}

# ensure_worktree REPO DIR BASE: DIR is a detached git worktree of REPO
# (added at BASE when missing); tree.sh, check.sh and prep.sh make theirs so.
ensure_worktree() {
	[ ! -e "$2/.git" ] || return 0
	git -C "$1" worktree prune
	git -C "$1" worktree add -q --detach "$2" "$3" ||
		die "cannot add a worktree of $1 at $2"
}

# leading_fixes REPO RANGE: how many of RANGE's commits, from the oldest,
# carry a Fixes: tag before the first that does not (the net fixes that
# go first; export.sh and prep.sh split the series there).
leading_fixes() {
	local c n=0
	for c in $(git -C "$1" rev-list --reverse "$2"); do
		git -C "$1" log -1 --format=%B "$c" | grep -q '^Fixes: ' || break
		n=$((n + 1))
	done
	echo "$n"
}
