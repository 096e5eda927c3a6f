#!/usr/bin/env bash
# revert-each.sh - which test turns red when the series is applied
# without one of its patches.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export FLAVOUR=${FLAVOUR:-debug}
# shellcheck source=../lib.sh
. "$here/../lib.sh"

usage() {
	cat <<'U'
usage: scripts/forensics/revert-each.sh [-l] [SUBJECT_REGEX...]

For each patch of the series (patches/, in order; with SUBJECT_REGEX only
those whose subject matches one, grep -E), the series is applied without
that patch and make test's VM suite runs on that kernel (scripts/test.sh
series with PATCHES = a copy of patches/ less the patch; no gates, no
stress). When a later patch then does not apply, that is the verdict.
Selftest-only patches are left out. Not part of make test or CI: a warm debug build and a VM
run per patch, ~14 min each here; the first build after it rebuilds the
series kernel.
-l  list the patches it would revert, and stop.
Writes $OUT/revert-each.tsv (default OUT $CACHE/out/revert-each): one
line per patch, "unit/patch<TAB>verdict<TAB>tests that failed"; verdict
is "red" (a test failed), "GREEN" (nothing caught the revert), "conflict"
or "build" (the reverted kernel did not build). Each run's results in
$OUT/NN/.
Environment: REVERT_KSFT_TESTS (kselftests of each run; default the veth
and drv-net tests and the page_pool bench), XRD_CASES (drv-net cases,
default all), OUT, KDIR, BASE.
Exit: 0 when every listed patch was run (whatever the verdicts), 1 on a
harness error.
U
}
list=0
case "${1:-}" in
-h|--help) usage; exit 0 ;;
-l) list=1; shift ;;
esac
out=${OUT:-$CACHE/out/revert-each}

# The series tree (patches/ applied), its patches' commits in order.
src=$("$here/../tree.sh" series)
base=$(base_commit "$(kernel_repo)")
# the runs below re-make this tree (PATCHES less a patch): keep its top
top=$(git -C "$src" rev-parse HEAD)
mapfile -t commits < <(git -C "$src" rev-list --reverse "$base..$top")
mapfile -t files < <(series_patches)
[ "${#commits[@]}" = "${#files[@]}" ] ||
	die "revert-each: ${#commits[@]} commits in $src, ${#files[@]} patches"

todo=()
for i in "${!commits[@]}"; do
	c=${commits[$i]}
	subj=$(git -C "$src" log -1 --format=%s "$c")
	# selftest-only patches: nothing to catch
	if ! git -C "$src" diff-tree --no-commit-id --name-only -r "$c" |
	     grep -qv '^tools/testing/selftests/'; then
		continue
	fi
	if [ $# -gt 0 ]; then
		hit=0
		for re in "$@"; do grep -qE -- "$re" <<<"$subj" && hit=1; done
		[ "$hit" = 1 ] || continue
	fi
	todo+=("$i")
	[ "$list" = 0 ] || echo "$(patch_label "${files[$i]}")  $subj"
done
[ "$list" = 0 ] || exit 0
[ "${#todo[@]}" -gt 0 ] || die "revert-each: no patch matches $*"

mkdir -p "$out"
tsv=$out/revert-each.tsv
: > "$tsv"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

for i in "${todo[@]}"; do
	label=$(patch_label "${files[$i]}")
	n=$(printf '%02d' "$((i + 1))")
	log "revert-each: $n $label"
	# patches/ as units, without this patch
	p=$scratch/patches
	rm -rf "$p"
	cp -r "$REPO/patches" "$p"
	rm "$p/$label"
	set +e
	PATCHES=$p SKIP_GATES=1 TEST_STRESS=0 RUN_LOCK_WAIT=1 OUT="$out/$n" \
		KSFT_TESTS="${REVERT_KSFT_TESTS:-net:veth_xdp_pp.py drivers/net/hw:xdp_redirect_drop.py net/bench:test_bench_page_pool.sh}" \
		"$here/../test.sh" series > "$out/$n.log" 2>&1
	set -e
	res=$out/$n/results.tap
	if grep -q 'does not apply' "$out/$n.log"; then
		printf '%s\tconflict\t%s\n' "$label" \
			"$(sed -n 's/.*error: tree: \(patch .* does not apply\).*/\1/p' "$out/$n.log" | head -1)" >> "$tsv"
		continue
	fi
	if [ ! -f "$res" ]; then
		printf '%s\tbuild\t(see %s)\n' "$label" "$out/$n.log" >> "$tsv"
		continue
	fi
	red=$(sed -n 's/^not ok - //p' "$res" | cut -c1-80 | paste -sd ';' -)
	if [ -n "$red" ]; then
		printf '%s\tred\t%s\n' "$label" "$red" >> "$tsv"
	else
		printf '%s\tGREEN\t-\n' "$label" >> "$tsv"
	fi
done
log "revert-each: $tsv"
column -t -s $'\t' "$tsv"
