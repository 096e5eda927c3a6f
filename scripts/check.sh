#!/usr/bin/env bash
# check.sh - NIPA-style series gates, one function per check, each with a
# one-line verdict. --fast runs the cheap ones (used by `make test`).
#
#   format      net fixes (Fixes: tags) first, then bpf-next; <= 15 patches
#               and a cover letter (when > 2) per series
#   signoff     every patch has a Signed-off-by
#   checkpatch  checkpatch.pl --strict per patch: 0 errors, 0 warnings, 0 checks
#   kdoc        scripts/kernel-doc -none on touched files: no new warnings
#   build       every patch builds on its own (cached per prefix)
#   w1          W=1 on touched .c files: no new warnings against the base
#   drivers     the touched NIC drivers (DRIVER_DIRS in lib.sh: mvneta,
#               i40e, mlx5, and the drivers of the fixes and conversions)
#               built with W=1 at every patch that touches them: no warning
#               above the base's (cached per prefix); DRIVERS_PER_PATCH=0
#               (make test) only at the end of the series
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

usage() {
	cat <<'U'
usage: scripts/check.sh [--fast] [CHECK...]

Checks: format signoff checkpatch kdoc build w1 drivers (default: all;
--fast: format signoff checkpatch kdoc; `make test` adds drivers). Environment: KDIR, BASE, PATCHES.
checkpatch ignores UNKNOWN_COMMIT_ID (the Debian base tarball has no
history, so a cited upstream commit cannot be looked up) and
FILE_PATH_CHANGES, which is replaced by a get_maintainer.pl check that every
added file already has a maintainer.
Exit: 0 all checks ok, 1 a check failed.
U
}
checks=()
fast=0
for a in "$@"; do
	case "$a" in
	-h|--help) usage; exit 0 ;;
	--fast) fast=1 ;;
	format|signoff|checkpatch|kdoc|build|w1|drivers) checks+=("$a") ;;
	*) usage >&2; exit 1 ;;
	esac
done
if [ ${#checks[@]} -eq 0 ]; then
	checks=(format signoff checkpatch kdoc)
	[ "$fast" = 1 ] || checks+=(build w1 drivers)
fi

mapfile -t patches < <(series_patches)
repo=$(kernel_repo)
base=$(base_commit "$repo")
vroot=$(variant_root "$repo")
series_src=""
series_tree() { [ -n "$series_src" ] || series_src=$("$here/tree.sh" series); echo "$series_src"; }
# files touched by the series (kernel files, not tools/)
touched() {
	local src
	src=$(series_tree)
	git -C "$src" diff --name-only "$base" HEAD -- ':!tools' ':!Documentation'
}

verdict() { printf '%-11s %s\n' "$1:" "$2"; }

check_format() {
	# patches/ holds the net fixes (subject "[PATCH net ...]", Fixes: tags)
	# followed by the bpf-next series: NIPA's limits per series
	local d=${PATCHES:-$REPO/patches} p net=0 next=0 seen_next=0 bad=0
	for p in "${patches[@]}"; do
		if grep -q '^Subject: \[PATCH net ' "$p"; then
			net=$((net + 1))
			[ "$seen_next" = 0 ] || { echo "  $(basename "$p"): a net fix after the bpf-next part"; bad=1; }
			grep -q '^Fixes: [0-9a-f]\{12\} ("' "$p" ||
				{ echo "  $(basename "$p"): net patch without a Fixes: tag"; bad=1; }
		else
			next=$((next + 1)); seen_next=1
			! grep -q '^Fixes: ' "$p" ||
				{ echo "  $(basename "$p"): Fixes: tag in the bpf-next part (fixes go first, for net)"; bad=1; }
		fi
	done
	[ "$net" -le 15 ] && [ "$next" -le 15 ] ||
		{ echo "  more than 15 patches in a series (net $net, bpf-next $next)"; bad=1; }
	if [ "$next" -gt 2 ] && [ ! -f "$d/0000-cover-letter.cover" ]; then
		echo "  no cover letter beside the $next bpf-next patches"; bad=1
	fi
	if [ "$net" -gt 2 ] && [ ! -f "$d/0000-net-cover-letter.cover" ]; then
		echo "  no cover letter beside the $net net patches"; bad=1
	fi
	[ "$bad" = 0 ] || { verdict format FAIL; return 1; }
	verdict format "ok ($net net fixes first, $next bpf-next patches)"
}

check_signoff() {
	local p bad=0
	for p in "${patches[@]}"; do
		grep -q '^Signed-off-by: .* <.*@.*>' "$p" || { echo "  no Signed-off-by: $(basename "$p")"; bad=1; }
	done
	[ "$bad" = 0 ] && verdict signoff ok || { verdict signoff FAIL; return 1; }
}

check_checkpatch() {
	local p src bad=0 res
	src=$(series_tree)
	for p in "${patches[@]}"; do
		# Debian's python3 (ply, git) for spdxcheck.py, not a pyenv one
		res=$(cd "$src" && PATH=/usr/bin:$PATH ./scripts/checkpatch.pl --strict \
			--quiet --no-summary --ignore UNKNOWN_COMMIT_ID,FILE_PATH_CHANGES \
			"$p" 2>&1) || true
		if [ -n "$res" ]; then
			echo "  $(basename "$p"):"; sed 's/^/    /' <<<"$res" | head -30
			bad=1
		fi
		# FILE_PATH_CHANGES is checked here instead: every added file
		# must already have a maintainer through MAINTAINERS.
		local f
		for f in $(sed -n 's|^+++ b/||p' "$p"); do
			grep -q "^--- /dev/null" <(grep -B1 -F "+++ b/$f" "$p") || continue
			(cd "$src" && perl scripts/get_maintainer.pl --no-git --no-git-fallback \
				-f "$f" 2>/dev/null | grep -q 'maintainer') ||
				{ echo "  $(basename "$p"): $f has no maintainer in MAINTAINERS"; bad=1; }
		done
	done
	[ "$bad" = 0 ] && verdict checkpatch "ok (${#patches[@]} patches, --strict)" ||
		{ verdict checkpatch FAIL; return 1; }
}

kdoc_count() { # tree files...
	local t=$1 f n=0
	shift
	for f in "$@"; do
		[ -f "$t/$f" ] || continue
		case "$f" in *.c|*.h) ;; *) continue ;; esac
		n=$(( n + $(cd "$t" && scripts/kernel-doc -none "$f" 2>&1 | grep -c -i 'warning' || true) ))
	done
	echo "$n"
}

check_kdoc() {
	local src files before after
	src=$(series_tree)
	mapfile -t files < <(touched)
	after=$(kdoc_count "$src" "${files[@]}")
	local bt
	bt=$(mktemp -d)
	git -C "$src" archive "$base" -- "${files[@]}" scripts 2>/dev/null | tar -x -C "$bt" 2>/dev/null || true
	before=$(kdoc_count "$bt" "${files[@]}")
	rm -rf "$bt"
	if [ "$after" -gt "$before" ]; then
		verdict kdoc "FAIL kernel-doc warnings $before -> $after"; return 1
	fi
	verdict kdoc "ok (warnings $before -> $after in ${#files[@]} files)"
}

# The check worktree (base, then base + a prefix of the series).
check_worktree() { # root
	if [ ! -e "$1/src/.git" ]; then
		git -C "$repo" worktree prune
		git -C "$repo" worktree add -q --detach "$1/src" "$base"
	fi
}

# Cache key of base + patches 1..i, from the key of 1..i-1.
next_prefix() { # prefix patch
	printf '%s\n%s\n' "$1" "$(sha256sum < "$2")" | sha256sum | cut -c1-16
}

# Bring the check tree to base + patches 1..n.
check_tree_at() { # src n
	git -C "$1" am --abort >/dev/null 2>&1 || true
	git -C "$1" checkout -q --detach -f "$base"
	[ "$2" -eq 0 ] ||
		git -C "$1" -c user.name=h -c user.email=h@h.invalid am -q "${patches[@]:0:$2}"
}

check_build() {
	local root=$vroot/check src bld i prefix="" p
	src=$root/src bld=$root/build
	mkdir -p "$root/ok" "$bld"
	check_worktree "$root"
	[ -f "$bld/.config" ] || FLAVOUR=check SRC=$src O=$bld "$here/config.sh"
	exec 9>"$CACHE/build.lock"
	flock 9
	prefix=$base
	i=0
	for p in "${patches[@]}"; do
		i=$((i + 1))
		prefix=$(next_prefix "$prefix" "$p")
		if [ -f "$root/ok/$prefix" ]; then
			echo "  [$i/${#patches[@]}] cached ok: $(basename "$p")"
			continue
		fi
		check_tree_at "$src" "$i" ||
			{ verdict build "FAIL $(basename "$p") does not apply"; return 1; }
		echo "  [$i/${#patches[@]}] building: $(basename "$p")"
		if ! make -s -C "$src" O="$bld" -j"$JOBS" CC="ccache gcc" olddefconfig bzImage modules \
			> "$root/build-$i.log" 2>&1; then
			grep -E 'error' "$root/build-$i.log" | head -10
			verdict build "FAIL at $(basename "$p") (log: $root/build-$i.log)"; return 1
		fi
		touch "$root/ok/$prefix"
	done
	verdict build "ok (${#patches[@]} patches build one by one)"
}

w1_count() { # src O file.c
	make -s -C "$1" O="$2" CC="ccache gcc" W=1 "${3%.c}.o" 2>&1 | grep -c 'warning:' || true
}

check_w1() {
	local src files f b a bad=0 root=$vroot/check
	src=$(series_tree)
	mapfile -t files < <(touched | grep '\.c$' || true)
	check_worktree "$root"
	exec 9>"$CACHE/build.lock"
	flock 9
	check_tree_at "$root/src" 0
	for f in "${files[@]}"; do
		touch "$root/src/$f" 2>/dev/null || true
		b=$(w1_count "$root/src" "$root/build" "$f")
		a=$(touch "$src/$f"; w1_count "$src" "$(FLAVOUR=perf flavour_root "$vroot" series)/build" "$f")
		echo "  $f: W=1 warnings $b -> $a"
		[ "$a" -le "$b" ] || bad=1
	done
	[ "$bad" = 0 ] && verdict w1 "ok (${#files[@]} files)" || { verdict w1 "FAIL new W=1 warnings"; return 1; }
}


drivers_w1() { # src O -> W=1 warning count over DRIVER_DIRS
	make -s -C "$1" O="$2" -j"$JOBS" CC="ccache gcc" W=1 "${DRIVER_DIRS[@]}" 2>&1 |
		grep -c 'warning:' || true
}

check_drivers() {
	local root=$vroot/check src bld i p prefix n b
	src=$root/src bld=$root/build
	mkdir -p "$root/drv"
	check_worktree "$root"
	# the gate builds with the benchmark (non-debug) config plus the other
	# drivers the series touches (net-core/config.drivers)
	[ -f "$bld/.config" ] || FLAVOUR=check SRC=$src O=$bld "$here/config.sh"
	exec 9>"$CACHE/build.lock"
	flock 9
	if [ ! -f "$root/drv/base.$base" ]; then
		check_tree_at "$src" 0
		touch_dirs "$src"
		drivers_w1 "$src" "$bld" > "$root/drv/base.$base"
	fi
	b=$(cat "$root/drv/base.$base")
	if [ "${DRIVERS_PER_PATCH:-1}" = 0 ]; then
		# make test: base against the whole series only (make check
		# runs every prefix)
		prefix=$base
		for p in "${patches[@]}"; do prefix=$(next_prefix "$prefix" "$p"); done
		if [ ! -f "$root/drv/$prefix" ]; then
			check_tree_at "$src" "${#patches[@]}" ||
				{ verdict drivers "FAIL the series does not apply"; return 1; }
			touch_dirs "$src"
			drivers_w1 "$src" "$bld" > "$root/drv/$prefix"
		fi
		n=$(cat "$root/drv/$prefix")
		echo "  whole series: W=1 warnings in ${#DRIVER_DIRS[@]} driver dirs $b -> $n"
		[ "$n" -le "$b" ] || { verdict drivers "FAIL new W=1 warnings"; return 1; }
		verdict drivers "ok (W=1 $b warnings at base and after the series; per patch: make check)"
		return 0
	fi
	prefix=$base
	i=0
	for p in "${patches[@]}"; do
		i=$((i + 1))
		prefix=$(next_prefix "$prefix" "$p")
		grep -qE "$DRIVER_RE" "$p" || continue
		if [ ! -f "$root/drv/$prefix" ]; then
			check_tree_at "$src" "$i" ||
				{ verdict drivers "FAIL $(basename "$p") does not apply"; return 1; }
			touch_dirs "$src"
			drivers_w1 "$src" "$bld" > "$root/drv/$prefix"
		fi
		n=$(cat "$root/drv/$prefix")
		echo "  [$i] $(basename "$p"): W=1 warnings in the three drivers $b -> $n"
		[ "$n" -le "$b" ] || { verdict drivers "FAIL new W=1 warnings at $(basename "$p")"; return 1; }
	done
	verdict drivers "ok (W=1 $b warnings at base in ${#DRIVER_DIRS[@]} driver dirs, none added by any patch)"
}

# make every driver object rebuild (W=1 warnings only show when compiling)
touch_dirs() {
	local d
	for d in "${DRIVER_DIRS[@]}"; do
		find "$1/$d" -name '*.c' -exec touch {} +
	done
}

rc=0
for c in "${checks[@]}"; do
	"check_$c" || rc=1
done
exit "$rc"
