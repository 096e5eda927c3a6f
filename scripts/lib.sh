# lib.sh - shared settings and helpers for the harness scripts (sourced).
# shellcheck shell=bash

# Pinned base: Debian's linux-source-7.3 from trixie-backports. When the
# archive no longer has the pinned version, scripts/setup-host.sh takes the
# newest linux-source-7.3 (and virtme-ng >= VIRTME_NG_MIN) and says so.
LINUX_SOURCE_SERIES=7.3
LINUX_SOURCE_PINNED=7.3.4-1~bpo13+1
LINUX_SOURCE_VERSION=${LINUX_SOURCE_VERSION:-$LINUX_SOURCE_PINNED}
LINUX_SOURCE_TARBALL=${LINUX_SOURCE_TARBALL:-/usr/src/linux-source-$LINUX_SOURCE_SERIES.tar.xz}
LINUX_SOURCE_DATE=2026-11-15T22:30:00Z
# the base commit LINUX_SOURCE_PINNED's tarball gives (scripts/base.sh
# checks it; another version gives another commit)
LINUX_SOURCE_COMMIT=659e46f62b0dc2d4cad1ceebe94df79cb10cc612
VIRTME_NG_VERSION=${VIRTME_NG_VERSION:-1.41-1}
VIRTME_NG_MIN=1.41

# linux_source_installed: the installed linux-source-7.3's version (dpkg),
# empty when none (or not a dpkg host).
linux_source_installed() {
	dpkg-query -W -f='${db:Status-Abbrev}${Version}\n' \
		"linux-source-$LINUX_SOURCE_SERIES" 2>/dev/null | sed -n 's/^ii *//p' || true
}
# base_made_version REPO: the linux-source version REPO's base tag was made
# from (scripts/base.sh writes it in the commit's subject).
base_made_version() {
	git -C "$1" log -1 --format=%s base 2>/dev/null |
		sed -n 's/^Linux \(.*\) (Debian linux-source-.*)$/\1/p' || true
}
# base_version: which base a run used, one line for its results:
# "Debian linux-source-7.3 VERSION, base COMMIT" or "KDIR PATH at COMMIT".
base_version() {
	local c
	if [ -n "${KDIR:-}" ]; then
		c=$(git -C "$KDIR" rev-parse --short=12 "${BASE:-HEAD}" 2>/dev/null || echo '?')
		echo "KDIR $KDIR at $c"
	else
		c=$(git -C "$BASE_REPO" rev-parse --short=12 "${BASE:-base}" 2>/dev/null || echo '?')
		echo "Debian linux-source-$LINUX_SOURCE_SERIES $(base_made_version "$BASE_REPO"), base $c"
	fi
}
# QEMU 7.2's TCG Oopses on int3 at live-patched kernel text (scripts/setup-host.sh)
QEMU_MIN_MAJOR=10

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Everything built lives outside the repo.
CACHE=${CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/xdp-pp}
O=${O:-$CACHE/build}
# The cache layout, in one place (everything the harness writes but out/):
#   $BASE_REPO            the Debian base as a git repository (base.sh)
#   <vroot>/<w>/src       git worktrees, w in WORKTREES (tree.sh, check.sh;
#                         clean.sh removes them), vroot = $CACHE,
#                         or $CACHE/kdir-<hash> for a KDIR (variant_root)
#   <vroot>/{base,rfc,series}[-debug]/build   kernel builds (build.sh; rfc:
#                         base + net-core/rfc/*.patch, perf flavour, for
#                         make bench)
#   <vroot>/<v>/pp_bench  the series' page_pool bench module built for
#                         variant v's kernel (bench/bench.sh)
#   <vroot>/check/{build,ok,drv}          per-patch build gates (check.sh)
#   <vroot>/prep/clone    prep.sh's scratch clone (git clone --shared of the
#                         kernel repository: it writes nothing there)
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
# (prep: prep.sh's worktree before its scratch clone; clean.sh still removes it)
WORKTREES=(base rfc series check prep)
JOBS=${JOBS:-$(nproc)}

# Kernel config fragments, in the order scripts/config.sh applies them.
# FLAVOUR=debug (what `make test` boots) adds selftests/config.debug (and
# config.upstream: what make upstream's tests need) and
# leaves out the NIC drivers' fragments: no such NIC in the VM, and the
# W=1 gates build them in the check config (with them, 128 of the 2301
# objects of a cold KASAN build were theirs, and mvneta's COMPILE_TEST
# built ~30 more for other architectures' hardware); FLAVOUR=perf (the
# benchmark kernels, default) has the drivers; FLAVOUR=check (the build
# gates) adds the other drivers the series touches; FLAVOUR=rt (make
# test-rt's PREEMPT_RT kernel) has no NIC driver and adds selftests/config.rt.
FLAVOUR=${FLAVOUR:-perf}
config_fragments() {
	echo "$REPO/selftests/config.trim" "$REPO/net-core/config"
	[ "$FLAVOUR" = debug ] || [ "$FLAVOUR" = rt ] ||
		echo "$REPO/drivers-mlx5/config" "$REPO/drivers-i40e/config" \
			"$REPO/drivers-mvneta/config"
	echo "$REPO/selftests/config"
	[ "$FLAVOUR" != debug ] ||
		echo "$REPO/selftests/config.debug" "$REPO/selftests/config.upstream"
	[ "$FLAVOUR" != check ] || echo "$REPO/net-core/config.drivers"
	[ "$FLAVOUR" != rt ] || echo "$REPO/selftests/config.rt"
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
	case $FLAVOUR in
	debug|rt) echo "$1/$2-$FLAVOUR" ;;
	*) echo "$1/$2" ;;
	esac
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

# ---- the series as units ----
# The series is posted as units, one per tree and purpose, each with its
# own cover letter; they apply in NN order. A unit's cover source is
# net-core/covers/NN-name.txt (COVERS=): header lines
#   Prefix: PATCH net        the subject prefix, no version ("PATCH
#                            net-next", "PATCH iwl-net", "RFC PATCH bpf-next")
#   Patches: N               its N consecutive commits of the work branch
#   Depends: <free text>     optional: what it needs first
#   Subject: <cover subject>
# then a blank line and the cover's body. scripts/export.sh writes each unit
# to patches/NN-name/ (0000-cover-letter.patch, 0001-...); prep.sh and
# send.sh work per unit.
COVERS=${COVERS:-$REPO/net-core/covers}

# unit_covers: the cover sources, in the order the units apply
unit_covers() {
	compgen -G "$COVERS/[0-9][0-9]-*.txt" | LC_ALL=C sort || true
}

# cover_read FILE: U_NAME (NN-name), U_PREFIX, U_PATCHES, U_DEPENDS,
# U_SUBJECT and U_BODY from a cover source; dies naming FILE and what is
# wrong with it.
cover_read() {
	local f=$1 line key val hdr=1 body=() where
	where="cover ${f#"$REPO"/}"
	U_NAME=$(basename "$f" .txt) U_PREFIX='' U_PATCHES='' U_DEPENDS='' U_SUBJECT='' U_BODY=''
	[[ "$U_NAME" =~ ^[0-9][0-9]-[A-Za-z0-9][A-Za-z0-9._-]*$ ]] ||
		die "$where: the name is not NN-name.txt"
	[ -f "$f" ] || die "$where: no such file"
	while IFS= read -r line || [ -n "$line" ]; do
		if [ "$hdr" = 1 ]; then
			[ -n "$line" ] || { hdr=0; continue; }
			[[ "$line" =~ ^([A-Za-z-]+):\ *(.*)$ ]] ||
				die "$where: header line '$line' is not 'Key: value' (a blank line ends the header)"
			key=${BASH_REMATCH[1]} val=${BASH_REMATCH[2]}
			val=${val%"${val##*[![:space:]]}"}
			case $key in
			Prefix) [ -z "$U_PREFIX" ] || die "$where: two Prefix: lines"; U_PREFIX=$val ;;
			Patches) [ -z "$U_PATCHES" ] || die "$where: two Patches: lines"; U_PATCHES=$val ;;
			Depends) [ -z "$U_DEPENDS" ] || die "$where: two Depends: lines"; U_DEPENDS=$val ;;
			Subject) [ -z "$U_SUBJECT" ] || die "$where: two Subject: lines"; U_SUBJECT=$val ;;
			*) die "$where: unknown header '$key:' (Prefix, Patches, Depends, Subject)" ;;
			esac
		else
			body+=("$line")
		fi
	done < "$f"
	[[ "$U_PREFIX" =~ ^(RFC\ )?PATCH\ [a-z][a-z0-9-]*$ ]] ||
		die "$where: Prefix: '$U_PREFIX' is not '[RFC ]PATCH <tree>' (no version: make prep's VERSION= adds one)"
	[[ "$U_PATCHES" =~ ^[1-9][0-9]*$ ]] || die "$where: Patches: '$U_PATCHES' is not a count"
	[ -n "$U_SUBJECT" ] || die "$where: no Subject:"
	U_BODY=$(printf '%s\n' ${body[@]+"${body[@]}"})
	# strip leading blank lines ($(...) took the trailing ones)
	U_BODY=${U_BODY#"${U_BODY%%[![:space:]]*}"}
	[ -n "$U_BODY" ] || die "$where: no body after the header's blank line"
}

# unit_tree PREFIX: the tree of a subject prefix ("RFC PATCH bpf-next" ->
# bpf-next); unit_fixes TREE: 0 when TREE takes fixes (net, bpf, *-net:
# each patch needs a Fixes: tag), 1 for a -next tree (none may have one)
unit_tree() { echo "${1##* }"; }
unit_fixes() { case $1 in net|bpf|*-net) return 0 ;; *) return 1 ;; esac; }

# unit_change_id NAME: the unit's b4 change-id: trailer, stable across
# exports and versions (export.sh, prep.sh)
unit_change_id() {
	echo "20251107-xdp-pp-${1#[0-9][0-9]-}-$(printf '%s' "$1" | sha256sum | cut -c1-6)"
}

# unit_dirs [DIR]: the unit directories NN-name of a patch directory
# (default PATCHES, else patches/), in order
unit_dirs() {
	local d=${1:-${PATCHES:-$REPO/patches}}
	compgen -G "$d/[0-9][0-9]-*/" | sed 's|/$||' | LC_ALL=C sort || true
}

# unit_patches DIR: DIR's patches in order, its cover letter (0000-*) left
# out: every NNNN-*.patch but 0000-*
unit_patches() {
	compgen -G "$1/[0-9][0-9][0-9][0-9]-*.patch" | grep -v '/0000-[^/]*$' | LC_ALL=C sort || true
}

# series_patches: the series' patches in the order they apply, cover
# letters left out: every unit dir's patches (unit_patches) in NN order. A
# directory without unit dirs (PATCHES=, e.g. the first N patches for make
# bench) gives its own NNNN-*.patch. Everything that reads the series
# (tree.sh, check.sh, prep.sh, smoke.sh, ...) goes through here.
series_patches() {
	local d=${PATCHES:-$REPO/patches} u
	if compgen -G "$d/[0-9][0-9]-*/" >/dev/null; then
		while IFS= read -r u; do unit_patches "$u"; done < <(unit_dirs "$d")
	else
		unit_patches "$d"
	fi
}

# patch_label FILE: "NN-name/NNNN-subject.patch", a patch named in messages
patch_label() {
	local d=${1%/*}
	echo "${d##*/}/${1##*/}"
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
# scripts/forensics/qemu-check.sh)
suite_stress() {
	if [ "$1" = series ] && [ "${TEST_STRESS:-1}" = 1 ]; then echo 1; else echo 0; fi
}

# suite_cmd BUILD EXPECT [STRESS]: set the array SUITE to the guest command
# of make test's VM run (scripts/test.sh; scripts/forensics/qemu-check.sh
# WORKLOAD=suite runs the same): scripts/guest/run-tests.sh with KUnit's
# expectation EXPECT (base|series), the kselftests and the drv-net cases,
# and with STRESS=1 the short stress (scripts/guest/stress.sh --short) in
# the same boot, before KUnit (whose hard IRQ case turns lockdep off); and
# SUITE_TIMEOUT to the VM timeout it needs.
# The drv-net test has 7 cases, ~2 min on the debug kernel under TCG:
# all run; XRD_CASES (ksft -t patterns) picks some.
suite_cmd() {
	local tests="net/bench:test_bench_page_pool.sh" v stress=()
	if [ -f "$(dirname "$1")/kselftest/drivers/net/hw/xdp_redirect_drop.py" ]; then
		tests="drivers/net/hw:xdp_redirect_drop.py $tests"
	fi
	if [ -f "$(dirname "$1")/kselftest/net/veth_xdp_pp.py" ]; then
		tests="net:veth_xdp_pp.py $tests"
	fi
	if [ "${3:-0}" = 1 ]; then
		# the caller's STRESS_* settings go to the guest's stress.sh
		stress=(TEST_STRESS=1)
		for v in $(compgen -v STRESS_ || true); do stress+=("$v=${!v}"); done
	fi
	SUITE=(env EXPECT="$2" KSFT_TESTS="${KSFT_TESTS:-$tests}" PP_BENCH_LOOPS=100000
	       XRD_CASES="${XRD_CASES:-all}" ${stress[@]+"${stress[@]}"}
	       bash /xdp-pp/scripts/guest/run-tests.sh)
	# suite ~10 min, short stress ~6 min here idle; CI's machine took
	# 1.4-2x as long
	SUITE_TIMEOUT=1800
	[ "${3:-0}" != 1 ] || SUITE_TIMEOUT=3600
}

# ensure_worktree REPO DIR BASE: DIR is a detached git worktree of REPO
# (added at BASE when missing); tree.sh and check.sh make theirs so.
ensure_worktree() {
	[ ! -e "$2/.git" ] || return 0
	git -C "$1" worktree prune
	git -C "$1" worktree add -q --detach "$2" "$3" ||
		die "cannot add a worktree of $1 at $2"
}

# ---- one run at a time; locks that say who holds them; preflight ----
# (scripts/test.sh, demo.sh, build.sh, tree.sh, guest-root.sh)
#   $RUN_LOCK    one run that builds or boots at a time (run_lock)
#   $TREE_LOCK   one tree.sh (and so one base unpack) at a time
RUN_LOCK=$CACHE/run.lock
TREE_LOCK=$CACHE/tree.lock

# lock_who FILE: the holder of lock FILE, as it wrote itself there
lock_who() {
	local who
	who=$(head -n 1 "$1" 2>/dev/null || true)
	echo "${who:-another process (it did not say which)}"
}

# lock_take FD FILE NAME LABEL: flock FD (opened with >> on FILE, so that
# nobody's open truncates the holder's line); when busy, first one line
# saying whom it waits for. Then FILE names the holder: "LABEL (pid N)
# since HH:MM:SS". Released when the last process with FD open ends.
lock_take() {
	if ! flock -n "$1"; then
		log "waiting for the $3 lock held by $(lock_who "$2")"
		flock "$1"
	fi
	printf '%s (pid %s) since %s\n' "$4" "$$" "$(date +%T)" > "$2"
}

# run_lock TARGET COMMAND: one run that builds or boots at a time. The
# entry script (make test, make / demo, make bench, make stress, make
# shell, make build) takes $RUN_LOCK for its whole life, named "make
# TARGET" under make, else COMMAND, and exports XDP_PP_RUN_LOCKED
# (its pid) and XDP_PP_RUN (that name): the scripts it calls skip the lock
# (no deadlock) and name the run in their own lock lines. Busy: one line
# ("busy: make test (pid N) since HH:MM:SS; wait for it or stop it") and
# exit 1; RUN_LOCK_WAIT=1 waits, saying so. Children inherit the lock's fd:
# the run is over when its last process is; the entry script stops its
# children on Ctrl-C (INT) and TERM.
run_lock() {
	local holder=${XDP_PP_RUN_LOCKED:-} label pid pg stop
	if [ -n "$holder" ] && kill -0 "$holder" 2>/dev/null; then return 0; fi
	if [ -n "${MAKELEVEL:-}" ]; then label="make $1"; else label=$2; fi
	mkdir -p "$CACHE"
	exec {RUN_LOCK_FD}>>"$RUN_LOCK"
	if ! flock -n "$RUN_LOCK_FD"; then
		holder=$(lock_who "$RUN_LOCK")
		pid=$(sed -n 's/.*(pid \([0-9]*\)).*/\1/p' <<<"$holder")
		stop=$(sed -n 2p "$RUN_LOCK" 2>/dev/null || true)
		if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
			# a process it left holds the lock: name them (not us)
			exec {RUN_LOCK_FD}>&-
			pid=$(fuser "$RUN_LOCK" 2>/dev/null | xargs || true)
			holder+="; that pid is gone, its processes ${pid:-?} still hold the lock"
			stop="kill ${pid:-them}"
			exec {RUN_LOCK_FD}>>"$RUN_LOCK"
		fi
		if [ "${RUN_LOCK_WAIT:-0}" != 1 ]; then
			echo "busy: $holder; wait for it or stop it (${stop:-kill ${pid:-it}}); RUN_LOCK_WAIT=1 waits" >&2
			exit 1
		fi
		log "waiting for the run lock held by $holder (RUN_LOCK_WAIT=1)"
		flock "$RUN_LOCK_FD"
	fi
	# how to stop the run: its process group when that is the run's own
	# (make's under an interactive shell), else its entry script
	pg=$(ps -o pgid= -p $$ 2>/dev/null | tr -d ' ' || true)
	if [ -n "$pg" ] && { [ "$pg" = $$ ] || [ "$pg" = "$PPID" ]; }; then
		stop="kill -TERM -- -$pg"
	else
		stop="kill $$"
	fi
	printf '%s (pid %s) since %s\n%s\n' "$label" $$ "$(date +%T)" "$stop" > "$RUN_LOCK"
	export XDP_PP_RUN_LOCKED=$$ XDP_PP_RUN=$label
}

# stop_children: SIGTERM to every child of this script and their
# descendants (kill_tree): an entry script's INT/TERM/EXIT trap, so that
# Ctrl-C leaves no background job (a debootstrap, a build) running with
# the locks it holds.
stop_children() {
	local c
	for c in $(pgrep -P $$ 2>/dev/null); do kill_tree "$c"; done
}

# debian_archive_uri: the Debian archive of the machine's apt sources:
# deb822 /etc/apt/sources.list.d/debian.sources (its first URIs:), else a
# one-line /etc/apt/sources.list `deb` line for bookworm (a standard
# installer's). Fails (no output) when there is none. scripts/setup-host.sh
# and scripts/guest-root.sh take the archive from here.
debian_archive_uri() {
	local src=/etc/apt/sources.list.d/debian.sources uri=''
	if [ -f "$src" ]; then
		uri=$(awk '/^URIs:/{print $2; exit}' "$src")
	fi
	if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
		uri=$(awk '$1=="deb" && $0 ~ /bookworm/ {for(i=2;i<=NF;i++) if ($i ~ /^[a-z]+:\/\//) {print $i; exit}}' /etc/apt/sources.list)
	fi
	[ -n "$uri" ] && echo "$uri"
}

# archive_reachable URI SUITE: 0 when URI's dists/SUITE/Release answers
# within ~20 s (wget, what debootstrap fetches with; else curl; else
# apt's own downloader). A URI that is not http(s) is not probed.
archive_reachable() {
	local url=$1/dists/$2/Release tmp rc=0
	case $1 in http://*|https://*) ;; *) return 0 ;; esac
	if command -v wget >/dev/null 2>&1; then
		wget -q --spider -T 20 -t 1 "$url"
	elif command -v curl >/dev/null 2>&1; then
		curl -fsSL -m 20 -o /dev/null "$url" 2>/dev/null
	elif [ -x /usr/lib/apt/apt-helper ]; then
		tmp=$(mktemp)
		timeout 30 /usr/lib/apt/apt-helper download-file "$url" "$tmp" >/dev/null 2>&1 || rc=$?
		rm -f "$tmp"
		return "$rc"
	fi
}

# host_ready: the host packages (scripts/setup-host.sh --check), installed
# when missing; before apt runs, the archive must answer (a machine without
# network fails here in seconds, not in apt's retries).
host_ready() {
	"$REPO/scripts/setup-host.sh" --check >/dev/null 2>&1 && return 0
	if [ "$(id -u)" = 0 ]; then
		local uri
		uri=$(debian_archive_uri) ||
			die "host: packages missing and no Debian archive in /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list (fix: add a bookworm source)"
		archive_reachable "$uri" bookworm ||
			die "host: packages missing and the Debian archive $uri does not answer (fix: the network or proxy; scripts/setup-host.sh --check lists what is missing)"
	fi
	"$REPO/scripts/setup-host.sh"
}

# Disk a cold run writes in $CACHE, GiB, with margin. Measured, cold make
# test of the 27-patch series (du, 2026-12-03): the base repository 2.1 GB
# (unpacked tree + git objects), the series worktree 1.8 GB, the debug
# build dir 4.0 GB (objects 1.0, vmlinux.o 0.8, .tmp_vmlinux1 0.7,
# vmlinux.unstripped 0.7, vmlinux 0.3; modules, kselftests), the ccache it
# filled 0.33 GB, the check worktree 1.8 GB + its W=1 build, the guest
# root 0.26 GB: ~11 GB in all. preflight_disk asks ~17 GiB of a cold run
# (1 GiB more for results and logs).
DISK_BASE_GIB=3
DISK_TREE_GIB=2
DISK_BUILD_GIB=6
DISK_CCACHE_GIB=1
DISK_CHECK_GIB=3
DISK_GUEST_GIB=1

# cache_vroot: variant_root of the kernel repository without making it
# (kernel_repo unpacks the base): $CACHE, or KDIR's own root.
cache_vroot() {
	if [ -n "${KDIR:-}" ]; then variant_root "$KDIR"; else echo "$CACHE"; fi
}

# need_disk GIB WHAT: die unless GIB GiB are free in $CACHE.
need_disk() {
	local avail
	mkdir -p "$CACHE"
	avail=$(df -Pk "$CACHE" | awk 'NR == 2 {print int($4 / 1048576)}')
	[ "$avail" -ge "$1" ] ||
		die "$2 needs ~$1 GiB free in $CACHE, which has $avail GiB (fix: free space, or set CACHE=<dir on a bigger disk>)"
}

# preflight_disk VARIANT [w1]: the space a run of VARIANT's $FLAVOUR kernel
# still has to write in $CACHE (what is there already is not counted; w1:
# and make test's W=1 gate), checked before anything is written.
preflight_disk() {
	local vroot need=1 what=''
	vroot=$(cache_vroot)
	_need() { need=$((need + $1)); what+="${what:+, }$2"; }
	[ -n "${KDIR:-}" ] || [ -d "$BASE_REPO/.git" ] || _need "$DISK_BASE_GIB" base
	[ -e "$vroot/$1/src/.git" ] || _need "$DISK_TREE_GIB" "$1 tree"
	[ -f "$(flavour_root "$vroot" "$1")/build/arch/x86/boot/bzImage" ] ||
		_need $((DISK_BUILD_GIB + DISK_CCACHE_GIB)) "$FLAVOUR build + ccache"
	[ "${2:-}" != w1 ] || [ -e "$vroot/check/src/.git" ] ||
		_need "$DISK_CHECK_GIB" "check tree + W=1 build"
	compgen -G "$CACHE/guest-*/.xdp-pp-ready" >/dev/null || _need "$DISK_GUEST_GIB" "guest root"
	need_disk "$need" "this run (${what:-results}${what:+ to make})"
}
