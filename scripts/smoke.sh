#!/usr/bin/env bash
# smoke.sh - every make target starts: each script a target runs answers
# --help (exit 0, a usage line), `make -n TARGET` expands, and every
# `make X` the README names is a target. Seconds, no kernel, no VM: a
# renamed path or a broken script header fails here, not after a build.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)

case "${1:-}" in
-h|--help)
	cat <<'U'
usage: scripts/smoke.sh

Checks, without building or booting anything:
  - every target of the Makefile (make help's list) expands (make -n);
  - every script a target runs (scripts/*.sh, scripts/bench/*.sh, ...)
    prints its usage with --help, exit 0;
  - every `make X` in README.md is a Makefile target;
  - patches/ holds one unit dir per cover source net-core/covers/NN-name.txt,
    each with its Patches: count, as series_patches (scripts/lib.sh) reads them.
Prints one ok/not ok line per check and "N passed, N failed".
Exit: 0 all pass, 1 a failure.
U
	exit 0 ;;
"") ;;
*) echo "usage: scripts/smoke.sh [--help]" >&2; exit 1 ;;
esac

cd "$repo"
pass=0 fail=0
ok() { echo "ok - smoke: $*"; pass=$((pass + 1)); }
notok() { echo "not ok - smoke: $*"; fail=$((fail + 1)); }

mapfile -t targets < <(sed -n 's/^\([a-z][a-z-]*\):.*## .*/\1/p' Makefile)
[ ${#targets[@]} -gt 0 ] || { notok "no '## ' targets in Makefile"; targets=(); }
for t in "${targets[@]}"; do
	if ! recipe=$(make -s -n "$t" 2>&1); then
		notok "make -n $t: $(tail -1 <<<"$recipe")"
		continue
	fi
	mapfile -t scripts < <(grep -oE 'scripts/[A-Za-z0-9_./-]+\.sh' <<<"$recipe" | sort -u)
	for s in "${scripts[@]}"; do
		if [ ! -f "$s" ]; then
			notok "make $t runs $s, which does not exist"
		elif out=$(timeout 30 bash "$s" --help 2>&1 < /dev/null) &&
		     grep -qi '^usage' <<<"$out"; then
			ok "make $t: $s --help"
		else
			notok "make $t: $s --help (exit or no usage line: $(head -1 <<<"$out"))"
		fi
	done
	[ ${#scripts[@]} -gt 0 ] || ok "make $t (no script: $(head -1 <<<"$recipe"))"
done
# patches/ against net-core/covers/, read the way every script reads them
if out=$(exec 2>&1
	# shellcheck source=lib.sh
	. "$here/lib.sh"
	n=0 total=0
	while IFS= read -r c; do
		cover_read "$c"
		k=$(unit_patches "$repo/patches/$U_NAME" | wc -l)
		[ "$k" = "$U_PATCHES" ] || die "patches/$U_NAME has $k patches, its cover says $U_PATCHES"
		n=$((n + 1)) total=$((total + k))
	done < <(unit_covers)
	[ "$n" -gt 0 ] || die "no cover sources in net-core/covers/"
	k=$(unit_dirs "$repo/patches" | wc -l)
	[ "$k" = "$n" ] || die "$k unit dirs in patches/, $n covers"
	k=$(series_patches | wc -l)
	[ "$k" = "$total" ] || die "series_patches lists $k patches, the covers $total"
	echo "$n units, $total patches"
	); then
	ok "patches/ matches net-core/covers/: $out"
else
	notok "patches/ against net-core/covers/: ${out#error: } (make export)"
fi
# `make X` in the README, in code spans or at the start of a command line
mapfile -t named < <(grep -oE '(`|^ *\$? *)make [a-z][a-z-]*' README.md |
	sed -E 's/.*make //' | sort -u)
for n in "${named[@]}"; do
	if printf '%s\n' "${targets[@]}" | grep -qx "$n"; then
		ok "README's make $n is a target"
	else
		notok "README names make $n, not a Makefile target"
	fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
