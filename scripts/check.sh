#!/usr/bin/env bash
# check.sh - NIPA-style series gates, one function per check, each with a
# one-line verdict. --fast runs the cheap ones (used by `make test`).
#
#   format      the units of patches/ match net-core/covers (count,
#               prefix, cover letter, <= 15 patches each); fixes units
#               (net, *-net: Fixes: tags) before the -next ones
#   signoff     every patch has a Signed-off-by
#   checkpatch  checkpatch.pl --strict per patch: 0 errors, 0 warnings, 0 checks
#   kdoc        scripts/kernel-doc -none on touched files: no new warnings
#   skips       scripts/skips.sh (make test's allow-list of skips,
#               selftests/expected-skips) on the synthetic results files of
#               selftests/skips/: expected skips pass, others fail
#   splat       scripts/splat-selftest.sh: scripts/splat.sh on the
#               synthetic kernel logs of selftests/splat/ (each report
#               form caught, pp_decide's expected splats still expected)
#   build       every patch builds on its own (cached per prefix)
#   w1          W=1 on touched .c files, base against the series, in the
#               check tree and config (FLAVOUR=check), one make per side:
#               no new warnings (make test runs it too)
#   drivers     the touched NIC drivers (DRIVER_DIRS in lib.sh: mvneta,
#               i40e, mlx5, and the drivers of the fixes and conversions)
#               built with W=1 at every patch that touches them: no warning
#               above the base's (cached per prefix); DRIVERS_PER_PATCH=0:
#               only at the end of the series
#   upstream    scripts/upstream.sh: upstream's own tests of this code
#               (bpf test_progs' XDP tests, drivers/net napi_threaded.py and
#               netpoll_basic.py, net/busy_poll_test.sh) on the base and
#               the series debug kernels (built first): the same verdicts
#
# Each check runs in its own process with errexit in effect (set -eE, an ERR
# trap, inherit_errexit): a command that fails and is not handled ends the
# check as a FAIL naming the command, never as a pass. A check ends with one
# verdict, NIPA's convention (retcode): pass 0, warn 250, fail 1.
#   warn  a step could not run but nothing is known to be wrong (kdoc: the
#         base could not be counted and the series has no warning; w1: a
#         touched file does not compile in the check config at the base or
#         at all, so it was not compared)
#   fail  anything found wrong, and anything unexpected (a check that ends
#         without a verdict or on an unhandled error)
# Results: $RESULTS/<check>/{retcode,desc,log} (desc: the one-line verdict,
# log: the check's full output), RESULTS default $CACHE/out/check; a summary
# line per check at the end. Exit 1 when a check fails (a warn does not).
# The check_* functions and their helpers are called indirectly (run_check):
# shellcheck disable=SC2317
set -euo pipefail
shopt -s inherit_errexit
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

usage() {
	cat <<'U'
usage: scripts/check.sh [--fast] [CHECK...]

Checks: format signoff checkpatch kdoc skips splat objs build w1 drivers
upstream (default: all; --fast: format signoff checkpatch kdoc skips splat;
`make test` adds w1). objs: each patch's .c files (and the core users of
a touched header) compile at its prefix, ~30 s a patch; build: each
prefix's full bzImage and modules, minutes a patch.
Environment: KDIR, BASE, PATCHES, RESULTS (default $CACHE/out/check),
DRIVERS_PER_PATCH=0 (drivers: base against the whole series only).
checkpatch ignores UNKNOWN_COMMIT_ID (the Debian base tarball has no
history, so a cited upstream commit cannot be looked up) and
FILE_PATH_CHANGES, which is replaced by a get_maintainer.pl check that every
added file already has a maintainer.
Each check runs in its own process with errexit in effect: an unhandled
failing command makes it fail. Verdicts (NIPA's retcodes):
  pass (0)    nothing wrong
  warn (250)  a step could not run, nothing known wrong (kdoc: base not
              counted, no warning in the series; w1: a file not compiled
              in the check config, so not compared)
  fail (1)    something wrong (new warnings, ...) or anything unexpected
Results per check: $RESULTS/<check>/retcode, desc (one-line verdict), log;
a summary line per check at the end: `name: pass|warn|fail — desc`.
Exit: 0 no check failed (warnings allowed), 1 a check failed.
U
}
checks=()
fast=0
for a in "$@"; do
	case "$a" in
	-h|--help) usage; exit 0 ;;
	--fast) fast=1 ;;
	format|signoff|checkpatch|kdoc|skips|splat|objs|build|w1|drivers|upstream) checks+=("$a") ;;
	*) usage >&2; exit 1 ;;
	esac
done
if [ ${#checks[@]} -eq 0 ]; then
	checks=(format signoff checkpatch kdoc skips splat)
	[ "$fast" = 1 ] || checks+=(objs build w1 drivers upstream)
fi
RESULTS=${RESULTS:-$OUTS/check}

mapfile -t patches < <(series_patches)
repo=$(kernel_repo)
base=$(base_commit "$repo")
vroot=$(variant_root "$repo")

series_tree() { "$here/tree.sh" series; }
# files touched by the series (kernel files, not tools/)
touched() { # series-tree
	git -C "$1" diff --name-only "$base" HEAD -- ':!tools' ':!Documentation'
}
# lines NAME TEXT: the array NAME gets the lines of TEXT (none when empty)
lines() {
	local -n _lines=$1
	_lines=()
	[ -z "$2" ] || mapfile -t _lines <<<"$2"
}
# count GREP-ARGS...: matching lines of stdin; no match is 0, not a failure
count() { grep -c "$@" || [ $? = 1 ]; }

verdict() { printf '%-11s %s\n' "$1:" "$2"; }

# The verdict of the running check (in its own process, see run_check):
# prints the console line, writes desc and retcode, ends the process.
finish() { # retcode console-text desc
	[ "$BASHPID" = "$check_pid" ] ||
		{ echo "  error: verdict '$3' given in a subshell" >&2; exit 1; }
	verdict "$check_name" "$2"
	printf '%s\n' "$3" > "$check_dir/desc"
	echo "$1" > "$check_dir/retcode"
	exit "$1"
}
pass() { finish 0 "ok ($1)" "$1"; }
warn() { finish 250 "WARN $1" "$1"; }
fail() { finish 1 "FAIL $1" "$1"; }
# problem TEXT: something wrong, shown now; fail_on_problems ends the check
problem() { echo "  $1"; problems+=("$1"); }
fail_on_problems() {
	[ ${#problems[@]} -eq 0 ] && return
	if [ ${#problems[@]} -gt 1 ]; then
		fail "${problems[0]} (and $(( ${#problems[@]} - 1 )) more, see the log)"
	fi
	fail "${problems[0]}"
}
# ERR trap: the first unhandled failure is the check's desc (run_check)
on_err() { # status command
	local where="${FUNCNAME[1]:-main}, line ${BASH_LINENO[0]}"
	echo "  error: '$2' exited $1 ($where)" >&2
	[ -e "$check_dir/err" ] || echo "'$2' exited $1 ($where)" > "$check_dir/err"
}

check_format() {
	# patches/ holds the units (net-core/covers/NN-name.txt, export.sh):
	# each matches its cover, carries its prefix, has a cover letter and
	# NIPA's limit of 15 patches; a fixes tree's units (net, *-net) have
	# a Fixes: tag on every patch and come before the -next units, which
	# have none
	local d=${PATCHES:-$REPO/patches} c u p n fix=0 next=0 seen_next=0 nu=0 tree msg
	local -a ps
	[ -n "$(unit_dirs "$d")" ] || fail "no unit directories NN-name/ in ${d#"$REPO"/} (make export)"
	[ -n "$(unit_covers)" ] || fail "no cover sources ${COVERS#"$REPO"/}/NN-name.txt"
	while IFS= read -r c; do
		msg=$( { cover_read "$c"; } 2>&1 >/dev/null ) || problem "${msg#error: }"
	done < <(unit_covers)
	fail_on_problems
	while IFS= read -r c; do
		cover_read "$c"
		u=$d/$U_NAME nu=$((nu + 1))
		[ -d "$u" ] || { problem "$U_NAME: no ${u#"$REPO"/} (make export)"; continue; }
		mapfile -t ps < <(unit_patches "$u")
		n=${#ps[@]}
		[ "$n" = "$U_PATCHES" ] || problem "$U_NAME: $n patches, its cover says Patches: $U_PATCHES"
		[ "$n" -le 15 ] || problem "$U_NAME: $n patches, more than 15 in one series"
		grep -q "^Subject: \[$U_PREFIX 0*/$n\] " "$u/0000-cover-letter.patch" 2>/dev/null ||
			problem "$U_NAME: 0000-cover-letter.patch missing or not \"[$U_PREFIX 0/$n] ...\""
		tree=$(unit_tree "$U_PREFIX")
		if unit_fixes "$tree"; then
			fix=$((fix + n))
			[ "$seen_next" = 0 ] || problem "$U_NAME: a unit for $tree after a -next unit (fixes go first)"
		else
			next=$((next + n)) seen_next=1
		fi
		for p in ${ps[@]+"${ps[@]}"}; do
			grep -q "^Subject: \[$U_PREFIX [0-9]*/$n\] " "$p" ||
				problem "$(patch_label "$p"): subject prefix is not [$U_PREFIX N/$n]"
			if unit_fixes "$tree"; then
				grep -q '^Fixes: [0-9a-f]\{12\} ("' "$p" ||
					problem "$(patch_label "$p"): no Fixes: tag in a unit for $tree"
			else
				! grep -q '^Fixes: ' "$p" ||
					problem "$(patch_label "$p"): Fixes: tag in a unit for $tree (fixes go to net)"
			fi
		done
	done < <(unit_covers)
	while IFS= read -r u; do
		[ -f "$COVERS/${u##*/}.txt" ] || problem "${u##*/}: no cover source ${COVERS#"$REPO"/}/${u##*/}.txt"
	done < <(unit_dirs "$d")
	fail_on_problems
	pass "$nu units: $fix fixes first (Fixes: tags), $next -next patches; each <= 15 with its cover letter"
}

check_signoff() {
	local p
	for p in "${patches[@]}"; do
		grep -q '^Signed-off-by: .* <.*@.*>' "$p" || problem "no Signed-off-by: $(patch_label "$p")"
	done
	fail_on_problems
	pass "${#patches[@]} patches signed off"
}

check_checkpatch() {
	local p src res st f out added=()
	src=$(series_tree)
	for p in "${patches[@]}"; do
		# Debian's python3 (ply, git) for spdxcheck.py, not a pyenv one.
		# checkpatch.pl exits 1 when it reports anything: its report decides.
		st=0
		res=$(cd "$src" && PATH=/usr/bin:$PATH ./scripts/checkpatch.pl --strict \
			--quiet --no-summary --ignore UNKNOWN_COMMIT_ID,FILE_PATH_CHANGES \
			"$p" 2>&1) || st=$?
		if [ -n "$res" ]; then
			echo "  $(patch_label "$p"):"; sed -n '1,30s/^/    /p' <<<"$res"
			problems+=("checkpatch.pl reports on $(patch_label "$p")")
		elif [ "$st" != 0 ]; then
			problem "$(patch_label "$p"): checkpatch.pl exited $st without a report"
		fi
		# FILE_PATH_CHANGES is checked here instead: every added file
		# ("--- /dev/null" then "+++ b/FILE") must already have a
		# maintainer through MAINTAINERS.
		lines added "$(awk '/^--- \/dev\/null$/ { n = NR + 1 }
			NR == n && /^\+\+\+ b\// { print substr($0, 7) }' "$p")"
		for f in "${added[@]}"; do
			out=$(cd "$src" && perl scripts/get_maintainer.pl --no-git --no-git-fallback \
				-f "$f" 2>/dev/null) || fail "get_maintainer.pl failed on $f"
			grep -q 'maintainer' <<<"$out" ||
				problem "$(patch_label "$p"): $f has no maintainer in MAINTAINERS"
		done
	done
	fail_on_problems
	pass "${#patches[@]} patches, --strict"
}

# kdoc_count KERNEL-DOC DIR FILE...: warning and error lines of kernel-doc
# -none on the .c/.h FILEs under DIR (absent files count 0); fails when
# kernel-doc does not run.
kdoc_count() {
	local kd=$1 dir=$2 f out k n=0
	shift 2
	for f in "$@"; do
		case "$f" in *.c|*.h) ;; *) continue ;; esac
		[ -f "$dir/$f" ] || continue
		out=$(cd "$dir" && "$kd" -none "$f" 2>&1) || {
			echo "  kernel-doc failed on $dir/$f:" >&2
			sed -n '1,5s/^/    /p' <<<"$out" >&2
			return 1
		}
		k=$(count -i -E 'warning|error' <<<"$out") || return 1
		n=$((n + k))
	done
	echo "$n"
}

kdoc_tmp=""
check_kdoc() {
	local src kd files=() old=() before after
	src=$(series_tree)
	kd=$src/scripts/kernel-doc
	lines files "$(touched "$src")"
	after=$(kdoc_count "$kd" "$src" "${files[@]}") ||
		fail "kernel-doc does not run on the series tree"
	# the base versions of the files, read by the same kernel-doc (the base's
	# scripts/kernel-doc is a symlink into tools/, a base copy of scripts/
	# alone cannot run it)
	kdoc_tmp=$(mktemp -d)
	trap 'rm -rf "$kdoc_tmp"' EXIT
	before=unknown
	if [ ${#files[@]} -eq 0 ]; then
		before=0
	elif lines old "$(git -C "$src" ls-tree -r --name-only "$base" -- "${files[@]}")" &&
	     { [ ${#old[@]} -eq 0 ] || git -C "$src" archive "$base" -- "${old[@]}" | tar -x -C "$kdoc_tmp"; }; then
		before=$(kdoc_count "$kd" "$kdoc_tmp" "${files[@]}") || before=unknown
	fi
	if [ "$before" = unknown ]; then
		[ "$after" -eq 0 ] ||
			fail "kernel-doc warnings ? -> $after (the base could not be counted)"
		warn "no kernel-doc warning in ${#files[@]} files; the base could not be counted"
	fi
	[ "$after" -le "$before" ] || fail "kernel-doc warnings $before -> $after"
	pass "warnings $before -> $after in ${#files[@]} files"
}

# make test's skip judge (scripts/skips.sh) on synthetic results files, and
# the real allow-list parses (selftests/skips/run.sh)
check_skips() {
	local out bad l
	if out=$("$REPO/selftests/skips/run.sh" 2>&1); then
		pass "$(tail -n 1 <<<"$out")"
	fi
	printf '%s\n' "$out"
	lines bad "$(grep -E '^(FAIL|error)' <<<"$out" || true)"
	[ ${#bad[@]} -gt 0 ] || bad=("selftests/skips/run.sh failed")
	for l in "${bad[@]}"; do problem "${l#FAIL }"; done
	fail_on_problems
}

# make test's splat scan (scripts/splat.sh) on synthetic kernel logs
check_splat() {
	local out st=0
	out=$("$here/splat-selftest.sh" 2>&1) || st=$?
	printf '%s\n' "$out" | grep -v '^ok ' || true
	[ "$st" = 0 ] || fail "scripts/splat-selftest.sh: $(tail -n 1 <<<"$out") (first: $(grep -m1 '^FAIL' <<<"$out" || echo "exit $st"))"
	pass "scripts/splat-selftest.sh: $(tail -n 1 <<<"$out")"
}

# upstream's own tests, base against series (scripts/upstream.sh); the two
# debug kernels built (or reused) first. A skip of upstream.sh (exit 4: a
# prerequisite absent) fails: it would leave the comparison unmade
check_upstream() {
	local v st=0 out
	for v in base series; do
		FLAVOUR=debug RUN_LOCK_WAIT=1 "$here/build.sh" "$v" ||
			fail "the debug $v kernel did not build (FLAVOUR=debug scripts/build.sh $v)"
	done
	out=$OUTS/upstream
	FLAVOUR=debug RUN_LOCK_WAIT=1 OUT="$out" "$here/upstream.sh" || st=$?
	out=$out/table.txt
	[ "$st" = 0 ] || fail "scripts/upstream.sh exited $st: $(tail -n 1 "$out" 2>/dev/null || echo 'no table')"
	pass "$(tail -n 1 "$out")"
}

# The check worktree (base, then base + a prefix of the series).
check_worktree() { ensure_worktree "$repo" "$1/src" "$base"; } # root

# Cache key of base + patches 1..i, from the key of 1..i-1.
next_prefix() { # prefix patch
	printf '%s\n%s\n' "$1" "$(sha256sum < "$2")" | sha256sum | cut -c1-16
}

# Bring the check tree to base + patches 1..n (explicit statuses: it is
# called in `||` too, where errexit does not apply).
check_tree_at() { # src n
	git -C "$1" am --abort >/dev/null 2>&1 || true # fails when no am is in progress
	git -C "$1" checkout -q --detach -f "$base" || return
	[ "$2" -eq 0 ] ||
		git -C "$1" -c user.name=h -c user.email=h@h.invalid am -q "${patches[@]:0:$2}"
}

# The check build's config (FLAVOUR=check), re-made when a fragment
# changes; the cached per-prefix results (ok/, drv/) were made with the
# old one and go with it.
check_config() { # root src bld
	local want frags
	read -r -a frags <<<"$(FLAVOUR=check config_fragments | tr '\n' ' ')"
	want=$(hash_paths "${frags[@]}")
	if [ -f "$3/.config" ] && [ "$(cat "$3/.config.stamp" 2>/dev/null || true)" = "$want" ]; then
		return 0
	fi
	echo "  check config: (re)made from the fragments; cached results cleared"
	rm -rf "$1/ok" "$1/drv" "$1/w1" "$1/objs"
	mkdir -p "$1/ok" "$1/drv" "$1/w1" "$3"
	FLAVOUR=check SRC=$2 O=$3 "$here/config.sh"
	echo "$want" > "$3/.config.stamp"
}

# the build lock on fd 9, for the check tree (a wait says for whom)
check_build_lock() {
	exec 9>>"$BUILD_LOCK"
	lock_take 9 "$BUILD_LOCK" build "scripts/check.sh${XDP_PP_RUN:+ for $XDP_PP_RUN}"
}

# prefix_loop KIND STEP: every patch at its prefix in the check tree ($src
# of the caller), STEP I PATCH run there; a prefix that passed before (a
# marker in $root/KIND) is skipped, a failing STEP fails the check
prefix_loop() {
	local kind=$1 step=$2 i=0 p prefix=$base
	mkdir -p "$root/$kind"
	for p in "${patches[@]}"; do
		i=$((i + 1))
		prefix=$(next_prefix "$prefix" "$p")
		if [ -f "$root/$kind/$prefix" ]; then
			echo "  [$i/${#patches[@]}] cached ok: $(patch_label "$p")"
			continue
		fi
		check_tree_at "$src" "$i" || fail "$(patch_label "$p") does not apply"
		"$step" "$i" "$p"
		touch "$root/$kind/$prefix"
	done
}

build_step() { # i patch: bzImage and modules at this prefix
	echo "  [$1/${#patches[@]}] building: $(patch_label "$2")"
	if ! make -s -C "$src" O="$bld" -j"$JOBS" CC="ccache gcc" olddefconfig bzImage modules \
		> "$root/build-$1.log" 2>&1; then
		awk '/error/ && n++ < 10' "$root/build-$1.log"
		fail "at $(patch_label "$2") (log: $root/build-$1.log)"
	fi
}

check_build() {
	local root=$vroot/check src bld
	src=$root/src bld=$root/build
	mkdir -p "$bld"
	check_worktree "$root"
	check_build_lock
	check_config "$root" "$src" "$bld"
	prefix_loop ok build_step
	pass "${#patches[@]} patches build one by one"
}

# Each patch on its own, quickly: at every prefix, compile the .c files
# the patch touches (and, when it touches include/, the core files that
# use those headers), in the check tree and config. A file that compiles
# at the base or at the end of the series and not at a prefix fails the
# gate. The full
# per-prefix build (bzImage and modules) is the build check: hours.
HEADER_USERS=(net/core/dev.c net/core/xdp.c net/core/filter.c net/core/page_pool.c
	kernel/bpf/devmap.c kernel/bpf/cpumap.c net/bpf/test_run.c drivers/net/veth.c)
objs_step() { # i patch: the patch's files (incfg: of the caller)
	local all=() files=() have=() bad=() f n
	lines all "$(git -C "$src" diff --name-only HEAD~1 HEAD -- ':!tools' ':!Documentation')"
	for f in "${all[@]}"; do
		case "$f" in
		*.c) files+=("$f") ;;
		include/*) files+=("${HEADER_USERS[@]}") ;;
		esac
	done
	lines files "$(printf '%s\n' "${files[@]}" | sort -u | sed '/^$/d')"
	present have "$src" "${files[@]}"
	while read -r f n; do
		[ "$f" != total ] && [ "$n" = - ] && [ -n "${incfg[$f]:-}" ] && bad+=("$f")
	done < <(w1_build "$src" "$bld" "${have[@]}")
	[ ${#bad[@]} -eq 0 ] || fail "at $(patch_label "$2"): ${bad[*]} do not compile"
	echo "  [$1/${#patches[@]}] ok (${#have[@]} files): $(patch_label "$2")"
}

check_objs() {
	local root=$vroot/check src bld f n b side all=() files=() extra=() have=()
	local -A incfg=()
	src=$root/src bld=$root/build
	lines all "$(touched "$(series_tree)")"
	for f in "${all[@]}"; do case "$f" in *.c) files+=("$f") ;; esac; done
	check_worktree "$root"
	check_build_lock
	check_config "$root" "$src" "$bld"
	# which files the check config builds: those that compile at the
	# base or at the end of the series (the w1 gate's results, plus the
	# header users the series does not touch)
	w1_results "${files[@]}"
	while read -r side f n; do
		[ "$f" = total ] || [ "$n" = - ] || incfg[$f]=1
	done < "$W1_RES"
	for f in "${HEADER_USERS[@]}"; do
		[[ " ${files[*]} " == *" $f "* ]] || extra+=("$f")
	done
	for n in 0 "${#patches[@]}"; do
		[ ${#extra[@]} -gt 0 ] || break
		check_tree_at "$src" "$n" || fail "the series does not apply"
		present have "$src" "${extra[@]}"
		while read -r f b; do
			[ "$f" = total ] || [ "$b" = - ] || incfg[$f]=1
		done < <(w1_build "$src" "$bld" "${have[@]}")
	done
	prefix_loop objs objs_step
	pass "${#patches[@]} patches: the files each touches compile at its prefix"
}

# w1_build SRC O FILE.c...: compile the FILEs' objects with W=1 in one make
# (-k: a file that does not compile does not stop the others); prints one
# line per FILE, "FILE N" (N: W=1 warnings at its own lines) or "FILE -"
# (no object: it does not compile, or is not built in the check config),
# then "total N" (every warning of the make, headers included)
w1_build() {
	local src=$1 bld=$2 f objs=() mark out
	shift 2
	[ $# -gt 0 ] || { echo "total 0"; return 0; }
	for f in "$@"; do objs+=("${f%.c}.o"); done
	mkdir -p "$bld"
	mark=$(mktemp "$bld/.w1-mark.XXXXXX")
	# recompile: W=1 warnings show only when a file is compiled (ccache
	# replays them on a hit)
	for f in "$@"; do touch "$src/$f"; done
	out=$(make -k -s -C "$src" O="$bld" -j"$JOBS" CC="ccache gcc" W=1 \
		"${objs[@]}" 2>&1) || true
	for f in "$@"; do
		if [ "$bld/${f%.c}.o" -nt "$mark" ]; then
			echo "$f $(count -E "(^|/)${f//./\\.}:[0-9]+:[0-9]+: warning:" <<<"$out")"
		else
			echo "$f -"
		fi
	done
	echo "total $(count 'warning:' <<<"$out")"
	rm -f "$mark"
}

# present NAME SRC FILE...: the array NAME gets the FILEs that exist in SRC
present() {
	local -n _present=$1
	local d=$2 f
	shift 2
	_present=()
	for f in "$@"; do [ ! -f "$d/$f" ] || _present+=("$f"); done
}

# The W=1 build of every .c file the series touches, at the base and at the
# end of the series, in the check tree and config; cached per series.
# w1_results FILE.c...: the W=1 build of the FILEs (the .c files the
# series touches) at the base ("base FILE N") and at the end of the series
# ("series FILE N"), in the check tree and config ($root, $src, $bld of the
# caller, which holds the build lock); cached per series. Sets W1_RES to
# the result file (no subshell: a fail inside ends the check).
w1_results() {
	local key f res have=()
	key=$base
	for f in "${patches[@]}"; do key=$(next_prefix "$key" "$f"); done
	mkdir -p "$root/w1"
	res=$root/w1/$key
	if [ ! -f "$res" ]; then
		# base and series in the same tree and config: the counts compare
		check_tree_at "$src" 0
		present have "$src" "$@"
		w1_build "$src" "$bld" "${have[@]}" | sed 's/^/base /' > "$res.tmp"
		check_tree_at "$src" "${#patches[@]}" || fail "the series does not apply"
		present have "$src" "$@"
		w1_build "$src" "$bld" "${have[@]}" | sed 's/^/series /' >> "$res.tmp"
		mv "$res.tmp" "$res"
	else
		echo "  cached: $res"
	fi
	W1_RES=$res
}

check_w1() {
	local root=$vroot/check src bld all=() files=() f res side n b
	local -A before after
	local -a bad=() notcmp=() gone=()
	src=$root/src bld=$root/build
	lines all "$(touched "$(series_tree)")"
	for f in "${all[@]}"; do
		case "$f" in *.c) files+=("$f") ;; esac
	done
	[ ${#files[@]} -gt 0 ] || pass "no .c file touched"
	check_worktree "$root"
	check_build_lock
	check_config "$root" "$src" "$bld"
	w1_results "${files[@]}"
	res=$W1_RES
	while read -r side f n; do
		if [ "$side" = base ]; then before[$f]=$n; else after[$f]=$n; fi
	done < "$res"
	for f in "${files[@]}" total; do
		b=${before[$f]:-absent} n=${after[$f]:-absent}
		echo "  $f: W=1 warnings $b -> $n"
		case "$b/$n" in
		absent/-) bad+=("$f") ;; # added by the series, does not compile
		-/-) notcmp+=("$f") ;;
		*/absent) gone+=("$f") ;;
		absent/*) [ "$n" -eq 0 ] || bad+=("$f") ;; # added by the series
		-/*) notcmp+=("$f") ;;
		*/-) bad+=("$f") ;; # compiled at the base, not after
		*) [ "$n" -le "$b" ] || bad+=("$f") ;;
		esac
	done
	[ ${#bad[@]} -eq 0 ] || fail "new W=1 warnings or errors in ${bad[*]}"
	[ ${#notcmp[@]} -eq 0 ] ||
		warn "${#notcmp[@]} of ${#files[@]} files not compared (not compiled in the check config at the base): ${notcmp[*]}"
	pass "${#files[@]} files compiled with W=1 at the base and after the series (${#gone[@]} removed by it): ${before[total]} -> ${after[total]} warnings"
}

# drivers_w1 SRC O: W=1 warning count over DRIVER_DIRS; fails (showing the
# errors) when they do not build
drivers_w1() {
	local out
	out=$(make -s -C "$1" O="$2" -j"$JOBS" CC="ccache gcc" W=1 "${DRIVER_DIRS[@]}" 2>&1) || {
		awk '/[Ee]rror/ && n++ < 10 { print "    " $0 }' <<<"$out" >&2
		return 1
	}
	count 'warning:' <<<"$out"
}

check_drivers() {
	local root=$vroot/check src bld i p prefix n b
	src=$root/src bld=$root/build
	mkdir -p "$root/drv"
	check_worktree "$root"
	# the gate builds with the benchmark (non-debug) config plus the other
	# drivers the series touches (net-core/config.drivers)
	check_build_lock
	check_config "$root" "$src" "$bld"
	if [ ! -f "$root/drv/base.$base" ]; then
		check_tree_at "$src" 0
		touch_dirs "$src"
		n=$(drivers_w1 "$src" "$bld") || fail "the driver dirs do not build with W=1 at the base"
		echo "$n" > "$root/drv/base.$base"
	fi
	b=$(cat "$root/drv/base.$base")
	if [ "${DRIVERS_PER_PATCH:-1}" = 0 ]; then
		# make test: base against the whole series only (make check
		# runs every prefix)
		prefix=$base
		for p in "${patches[@]}"; do prefix=$(next_prefix "$prefix" "$p"); done
		if [ ! -f "$root/drv/$prefix" ]; then
			check_tree_at "$src" "${#patches[@]}" || fail "the series does not apply"
			touch_dirs "$src"
			n=$(drivers_w1 "$src" "$bld") || fail "the driver dirs do not build with W=1 after the series"
			echo "$n" > "$root/drv/$prefix"
		fi
		n=$(cat "$root/drv/$prefix")
		echo "  whole series: W=1 warnings in ${#DRIVER_DIRS[@]} driver dirs $b -> $n"
		[ "$n" -le "$b" ] || fail "new W=1 warnings ($b -> $n)"
		pass "W=1 $b warnings at base and after the series; per patch: make check"
	fi
	prefix=$base
	i=0
	for p in "${patches[@]}"; do
		i=$((i + 1))
		prefix=$(next_prefix "$prefix" "$p")
		grep -qE "$DRIVER_RE" "$p" || continue
		if [ ! -f "$root/drv/$prefix" ]; then
			check_tree_at "$src" "$i" || fail "$(patch_label "$p") does not apply"
			touch_dirs "$src"
			n=$(drivers_w1 "$src" "$bld") ||
				fail "the driver dirs do not build with W=1 at $(patch_label "$p")"
			echo "$n" > "$root/drv/$prefix"
		fi
		n=$(cat "$root/drv/$prefix")
		echo "  [$i] $(patch_label "$p"): W=1 warnings in the driver dirs $b -> $n"
		[ "$n" -le "$b" ] || fail "new W=1 warnings at $(patch_label "$p") ($b -> $n)"
	done
	pass "W=1 $b warnings at base in ${#DRIVER_DIRS[@]} driver dirs, none added by any patch"
}

# make every driver object rebuild (W=1 warnings only show when compiling)
touch_dirs() {
	local d
	for d in "${DRIVER_DIRS[@]}"; do
		find "$1/$d" -name '*.c' -exec touch {} +
	done
}

# run_check NAME: check_NAME in its own process, errexit in effect (the
# process is not in an `||` or `if` context, where bash would ignore it);
# output to the console and $RESULTS/NAME/log, verdict in retcode and desc.
run_check() {
	local c=$1 d=$RESULTS/$1 st why
	rm -rf "$d"
	mkdir -p "$d"
	set +e
	(
		set -eE
		check_name=$c check_dir=$d check_pid=$BASHPID problems=()
		trap 'on_err $? "$BASH_COMMAND"' ERR
		[ ${#patches[@]} -gt 0 ] || fail "no patches in ${PATCHES:-$REPO/patches}"
		"check_$c"
	) 2>&1 | tee "$d/log"
	st=${PIPESTATUS[0]}
	set -e
	if [ -f "$d/retcode" ] && [ "$(cat "$d/retcode")" = "$st" ]; then
		return 0
	fi
	if [ -f "$d/err" ]; then
		why="unexpected error: $(cat "$d/err")"
	elif [ "$st" = 0 ]; then
		why="ended without a verdict"
	else
		why="exited $st without a verdict: $(tail -n 1 "$d/log")"
	fi
	verdict "$c" "FAIL $why" | tee -a "$d/log"
	printf '%s\n' "$why" > "$d/desc"
	echo 1 > "$d/retcode"
}

rc=0
for c in "${checks[@]}"; do
	run_check "$c"
done
echo "summary ($RESULTS):"
for c in "${checks[@]}"; do
	case $(cat "$RESULTS/$c/retcode") in
	0) v=pass ;;
	250) v=warn ;;
	*) v=fail; rc=1 ;;
	esac
	echo "$c: $v — $(cat "$RESULTS/$c/desc")"
done
exit "$rc"
