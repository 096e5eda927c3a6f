#!/usr/bin/env bash
# check.sh - NIPA-style series gates, one function per check, each with a
# one-line verdict. --fast runs the cheap ones (used by `make test`).
#
#   format      patch count <= 15, cover letter beside the patches when > 2
#   signoff     every patch has a Signed-off-by
#   checkpatch  checkpatch.pl --strict per patch: 0 errors, 0 warnings, 0 checks
#   kdoc        scripts/kernel-doc -none on touched files: no new warnings
#   build       every patch builds on its own (cached per prefix)
#   w1          W=1 on touched .c files: no new warnings against the base
#   drivers     mvneta, i40e, mlx5 built with W=1 at every patch that
#               touches them: no warning above the base's (cached per prefix)
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
	local n=${#patches[@]} d=${PATCHES:-$REPO/patches}
	[ "$n" -le 15 ] || { verdict format "FAIL $n patches (max 15)"; return 1; }
	if [ "$n" -gt 2 ] && ! compgen -G "$d/*.cover" >/dev/null && ! compgen -G "$d/0000-*" >/dev/null; then
		verdict format "FAIL no cover letter beside $n patches"; return 1
	fi
	verdict format "ok ($n patches)"
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
	[ -f "$bld/.config" ] || cp "$(variant_root "$repo")/series/build/.config" "$bld/.config" 2>/dev/null ||
		SRC=$src O=$bld "$here/config.sh"
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
		a=$(touch "$src/$f"; w1_count "$src" "$vroot/series/build" "$f")
		echo "  $f: W=1 warnings $b -> $a"
		[ "$a" -le "$b" ] || bad=1
	done
	[ "$bad" = 0 ] && verdict w1 "ok (${#files[@]} files)" || { verdict w1 "FAIL new W=1 warnings"; return 1; }
}

# driver object dirs built by the drivers gate
DRIVER_DIRS=(drivers/net/ethernet/marvell/ drivers/net/ethernet/intel/i40e/
	     drivers/net/ethernet/mellanox/mlx5/core/)

drivers_w1() { # src O -> W=1 warning count over DRIVER_DIRS
	make -s -C "$1" O="$2" -j"$JOBS" CC="ccache gcc" W=1 "${DRIVER_DIRS[@]}" 2>&1 |
		grep -c 'warning:' || true
}

check_drivers() {
	local root=$vroot/check src bld i p prefix n b
	src=$root/src bld=$root/build
	mkdir -p "$root/drv"
	check_worktree "$root"
	if [ ! -f "$bld/.config" ]; then
		mkdir -p "$bld"
		cp "$vroot/series/build/.config" "$bld/.config" 2>/dev/null ||
			{ verdict drivers "FAIL no kernel config (run: scripts/build.sh series)"; return 1; }
	fi
	exec 9>"$CACHE/build.lock"
	flock 9
	if [ ! -f "$root/drv/base.$base" ]; then
		check_tree_at "$src" 0
		touch_dirs "$src"
		drivers_w1 "$src" "$bld" > "$root/drv/base.$base"
	fi
	b=$(cat "$root/drv/base.$base")
	prefix=$base
	i=0
	for p in "${patches[@]}"; do
		i=$((i + 1))
		prefix=$(next_prefix "$prefix" "$p")
		grep -qE '^\+\+\+ b/drivers/net/ethernet/(marvell|intel/i40e|mellanox/mlx5)/' "$p" || continue
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
	verdict drivers "ok (W=1 $b warnings at base, none added by any patch)"
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
