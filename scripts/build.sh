#!/usr/bin/env bash
# build.sh - configure and build a variant's kernel (bzImage + modules), the
# out-of-tree test module and the kselftests, in an O= dir outside the repo.
#
# Cached by content: the stamp covers the tree's commit, the config
# fragments and the test sources; with nothing changed, nothing runs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

usage() {
	cat <<'U'
usage: scripts/build.sh base|rfc|series

Builds $CACHE/<variant>/build (O=) from the tree made by scripts/tree.sh
(rfc: base + net-core/rfc/*.patch, the upstream RFC reconstructed, the
third kernel of make bench):
  - .config from scripts/config.sh (defconfig + virtme-ng + fragments)
  - bzImage and modules (ccache, -j$JOBS)
  - selftests/pp_decide (out-of-tree KUnit module)
  - kselftests: net/bench (page_pool bench module) and drivers/net,
    installed to $CACHE/<variant>/kselftest
FLAVOUR=debug builds the debug kernel (KASAN, lockdep, ...: what
`make test` boots) into $CACHE/<variant>-debug; the default FLAVOUR=perf
is the benchmark kernel.
Builds reproducibly (KBUILD_BUILD_TIMESTAMP from the tree's HEAD author
date; user, host and build count fixed) and writes the kernel's content
id to <variant root>/build.id ("bzImage X modules Y", the first 16 hex
digits of their sha256), which scripts/forensics/qemu-check.sh prints
and its BUILD_ID checks.
Prints the build dir. One build at a time ($CACHE/build.lock: the tree,
the stamp test and the build under it; a waiting build says for whom);
on its own (make build) it also takes the run lock of make test & co
(busy: one line, exit 1; RUN_LOCK_WAIT=1 waits). Environment: KDIR, BASE,
JOBS, CACHE, FLAVOUR, PATCHES (series), RFC_PATCHES (rfc),
KBUILD_BUILD_TIMESTAMP, RUN_LOCK_WAIT.
U
}
case "${1:-}" in
-h|--help) usage; exit 0 ;;
base|rfc|series) variant=$1 ;;
*) usage >&2; exit 1 ;;
esac

need_tool ccache "sudo scripts/setup-host.sh"
need_tool pahole "sudo scripts/setup-host.sh (dwarves, for BTF)"
# on its own (make build) one run at a time; under make test, make bench,
# ... their run lock is already held (lib.sh run_lock)
run_lock build "scripts/build.sh $variant"
# one build at a time, the tree, the stamp and the build all under the
# lock: another run's build.sh waits here (saying for whom), then finds
# the stamp current
mkdir -p "$CACHE"
exec 9>>"$BUILD_LOCK"
lock_take 9 "$BUILD_LOCK" build "scripts/build.sh $variant ($FLAVOUR)${XDP_PP_RUN:+ for $XDP_PP_RUN}"
src=$("$here/tree.sh" "$variant")
repo=$(kernel_repo)
root=$(flavour_root "$(variant_root "$repo")" "$variant")
O=$root/build
read -r -a frags <<<"$(config_fragments | tr '\n' ' ')"
mkdir -p "$O"

stamp=$( { git -C "$src" rev-parse HEAD; hash_paths "${frags[@]}" \
	"$REPO"/selftests/pp_decide/*.c "$REPO/selftests/pp_decide/Kbuild" \
	"$REPO/selftests/pp_decide/Makefile" "$REPO/scripts/build.sh" \
	"$REPO/scripts/config.sh"; } | sha256sum | cut -c1-16)
if [ -f "$root/build.stamp" ] && [ "$(cat "$root/build.stamp")" = "$stamp" ]; then
	log "build: $variant up to date ($stamp)"
	echo "$O"
	exit 0
fi

# a cold build dir and the ccache it fills (lib.sh DISK_*; the tree is
# made); a warm one rewrites what changed
if [ -f "$O/arch/x86/boot/bzImage" ]; then
	need_disk 2 "build: a rebuild of $variant ($FLAVOUR)"
else
	need_disk $((DISK_BUILD_GIB + DISK_CCACHE_GIB)) "build: a cold $variant ($FLAVOUR) kernel build"
fi
cfg_stamp=$(hash_paths "${frags[@]}" "$REPO/scripts/config.sh")
if [ ! -f "$O/.config" ] || [ "$(cat "$O/.config.stamp" 2>/dev/null)" != "$cfg_stamp" ]; then
	SRC=$src O=$O "$here/config.sh"
	echo "$cfg_stamp" > "$O/.config.stamp"
fi

# Reproducible (Documentation/kbuild/reproducible-builds.rst): the build
# stamps no clock, user, host or build count into the kernel, so one tree
# and config give the same bzImage and modules on every machine of this
# kind: same compiler and binutils, same pahole (< 1.26 encodes BTF on one
# thread; 1.26 with -j is not reproducible, 1.27+ is), same $CACHE path
# (the modules' debug info holds the build dir). ccache always rewrites
# paths under $CACHE to relative ones (a compile without it would name
# its source file differently in WARN strings). Runs on two machines, or
# before and after a cold rebuild, can then say they booted the same
# kernel: build.id names it (the test modules and kselftests, built below
# outside $O, are not part of it).
# The time stamp is the tree's HEAD author date, taken from the patch.
stamp_date=$(git -C "$src" log -1 --format=%aD HEAD)
export KBUILD_BUILD_TIMESTAMP=${KBUILD_BUILD_TIMESTAMP:-$stamp_date}
export KBUILD_BUILD_USER=${KBUILD_BUILD_USER:-xdp-pp}
export KBUILD_BUILD_HOST=${KBUILD_BUILD_HOST:-xdp-pp}
export KBUILD_BUILD_VERSION=${KBUILD_BUILD_VERSION:-1}
export CCACHE_BASEDIR=$CACHE
unset CCACHE_DISABLE
log "build: $variant kernel in $O (-j$JOBS, ccache; cold ~25 min, warm ~1-3 min)"
t0=$(date +%s)
make -C "$src" O="$O" -j"$JOBS" CC="ccache gcc" bzImage modules \
	> "$root/build.log" 2>&1 &
mk=$!
# a progress line every 60 s: elapsed time and the last object built.
# Ctrl-C or a TERM stops make (which passes TERM on to its jobs) and this
# script.
trap 'kill "$mk" 2>/dev/null || true' EXIT
trap 'kill "$mk" 2>/dev/null || true; exit 130' INT
trap 'kill "$mk" 2>/dev/null || true; exit 143' TERM HUP
while ! wait_for "$mk" 60; do
	last=$(grep -E '^  [A-Z]+ ' "$root/build.log" | tail -1 | awk '{print $NF}')
	log "build: $variant ($FLAVOUR) $(( ($(date +%s) - t0) / 60 )) min, at ${last:-...}"
done
trap - EXIT INT TERM HUP
if ! wait "$mk"; then
	grep -E 'error|Error' "$root/build.log" | head -20 >&2
	die "build: kernel build failed (log: $root/build.log)"
fi
log "build: kernel done in $(( $(date +%s) - t0 )) s"
build_id "$O" > "$root/build.id"
log "build: $(cat "$root/build.id")"

# Out-of-tree test module, built against this tree.
mod=$root/pp_decide
rm -rf "$mod"
cp -r "$REPO/selftests/pp_decide" "$mod"
make -s -C "$src" O="$O" M="$mod" CC="ccache gcc" modules > "$root/pp_decide.log" 2>&1 ||
	{ tail -20 "$root/pp_decide.log" >&2; die "build: selftests/pp_decide failed (log: $root/pp_decide.log)"; }

# kselftests the series touches or adds (net/bench has the page_pool bench
# module; drivers/net/hw has the redirect-map drop tests; net has the veth
# page_pool owner test).
ks=$root/kselftest
rm -rf "$ks"
make -s -C "$src" O="$O" headers > "$root/headers.log" 2>&1 ||
	die "build: make headers failed (log: $root/headers.log)"
# drivers/net through the kselftest Makefiles (built inside the variant's
# own worktree). net/bench is installed by hand below: its module build
# (lib.mk gen_mods_dir) cannot follow an O= kernel build.
if ! make -s -C "$src/tools/testing/selftests" \
	KHDR_INCLUDES="-isystem $O/usr/include" \
	TARGETS="drivers/net" INSTALL_PATH="$ks" \
	CC=gcc -j"$JOBS" install > "$root/kselftest.log" 2>&1; then
	tail -30 "$root/kselftest.log" >&2
	die "build: kselftests failed (log: $root/kselftest.log)"
fi
# drivers/net/hw: only the redirect-map drop test and what it needs. The
# whole hw install also builds ncdevmem and friends, whose YNL C code
# generation takes more than 20 CPU minutes here.
hw=$src/tools/testing/selftests/drivers/net/hw
if [ -f "$hw/xdp_redirect_drop.py" ]; then
	hwo=$root/hw
	rm -rf "$hwo"
	mkdir -p "$hwo" "$ks/drivers/net/hw/lib/py"
	hwgen=(xdp_redirect_drop.bpf.o)
	make -s -C "$hw" KHDR_INCLUDES="-isystem $O/usr/include" CC=gcc \
		OUTPUT="$hwo" "${hwgen[@]/#/$hwo/}" >> "$root/kselftest.log" 2>&1 ||
		{ tail -30 "$root/kselftest.log" >&2;
		  die "build: drivers/net/hw/xdp_redirect_drop failed (log: $root/kselftest.log)"; }
	cp "${hwgen[@]/#/$hwo/}" "$hw/xdp_redirect_drop.py" "$ks/drivers/net/hw/"
	cp "$hw/lib/py/__init__.py" "$ks/drivers/net/hw/lib/py/"
	echo "drivers/net/hw:xdp_redirect_drop.py" >> "$ks/kselftest-list.txt"
fi
# net/veth_xdp_pp.py (unit 10): needs only net/lib, which the drivers/net
# install brings (xdp_native.bpf.o, lib/py)
if [ -f "$src/tools/testing/selftests/net/veth_xdp_pp.py" ]; then
	cp "$src/tools/testing/selftests/net/veth_xdp_pp.py" "$ks/net/"
	echo "net:veth_xdp_pp.py" >> "$ks/kselftest-list.txt"
fi
bench=$src/tools/testing/selftests/net/bench
if [ -f "$bench/test_bench_page_pool.sh" ]; then
	rm -rf "$root/bench_page_pool"
	cp -r "$bench/page_pool" "$root/bench_page_pool"
	make -s -C "$src" O="$O" M="$root/bench_page_pool" CC="ccache gcc" modules \
		>> "$root/kselftest.log" 2>&1 ||
		die "build: page_pool bench module failed (log: $root/kselftest.log)"
	mkdir -p "$ks/net/bench/page_pool"
	cp "$bench/test_bench_page_pool.sh" "$ks/net/bench/"
	cp "$root/bench_page_pool/bench_page_pool.ko" "$ks/net/bench/page_pool/"
	echo "net/bench:test_bench_page_pool.sh" >> "$ks/kselftest-list.txt"
fi
# The selftests Makefile skips a target that failed to build: check.
need=(drivers/net/lib/py/__init__.py)
if git -C "$src" cat-file -e HEAD:tools/testing/selftests/net/bench/page_pool/bench_page_pool_simple.c 2>/dev/null; then
	need+=(net/bench/page_pool/bench_page_pool.ko)
fi
if git -C "$src" cat-file -e HEAD:tools/testing/selftests/net/veth_xdp_pp.py 2>/dev/null; then
	need+=(net/veth_xdp_pp.py net/lib/xdp_native.bpf.o net/lib/py/__init__.py)
fi
if git -C "$src" cat-file -e HEAD:tools/testing/selftests/drivers/net/hw/xdp_redirect_drop.py 2>/dev/null; then
	need+=(drivers/net/hw/xdp_redirect_drop.py drivers/net/hw/xdp_redirect_drop.bpf.o
	       net/lib/xdp_helper)
fi
for f in "${need[@]}"; do
	[ -e "$ks/$f" ] || { grep -iE 'error' "$root/kselftest.log" | head -10 >&2;
		die "build: kselftest install lacks $f (log: $root/kselftest.log)"; }
done
echo "$stamp" > "$root/build.stamp"
echo "$O"
