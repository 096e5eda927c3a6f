#!/usr/bin/env bash
# splat-selftest.sh - run scripts/splat.sh on the synthetic kernel logs of
# selftests/splat/ (one per report form it must catch, the expected
# pp_decide splats, and unexpected reports glued to them) and check what
# it finds. Needs no kernel; scripts/check.sh --fast runs it (check splat).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

usage() {
	cat <<'U'
usage: scripts/splat-selftest.sh [--help]

Runs scripts/splat.sh on each case of selftests/splat/cases (a log in
selftests/splat/, optionally with a fake build dir whose source tree has
page_pool.c's lockdep_assert_no_hardirq() at lines 843 and 1004) and
checks its exit status, its "splat: N unexpected, N expected" line and,
where given, a text of its "---- splat N: title" lines. Prints one line
per case and "N passed, N failed".
Environment: SPLAT_CASES (a cases file, default selftests/splat/cases).
Exit: 0 all cases as expected, 1 a case failed.
U
}
case "${1:-}" in -h|--help) usage; exit 0 ;; "") ;; *) usage >&2; exit 1 ;; esac

dir=$REPO/selftests/splat
cases=${SPLAT_CASES:-$dir/cases}
[ -f "$cases" ] || die "splat-selftest: no cases file $cases (fix: restore selftests/splat/)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the fake build dir: source/net/core/page_pool.c with the assert lines
mkdir -p "$tmp/src/net/core" "$tmp/build"
awk 'BEGIN { for (i = 1; i <= 1100; i++)
	print (i == 843 || i == 1004) ? "\tlockdep_assert_no_hardirq();" : "" }' \
	> "$tmp/src/net/core/page_pool.c"
ln -s "$tmp/src" "$tmp/build/source"

passed=0 failed=0
while IFS= read -r line; do
	case "$line" in ''|'#'*) continue ;; esac
	IFS='|' read -r logf bld want_bad want_exp text <<<"$line"
	logf=${logf// /} bld=${bld// /} want_bad=${want_bad// /} want_exp=${want_exp// /}
	text=${text# } text=${text% }
	name=$logf
	args=("$dir/$logf")
	if [ "$bld" = src ]; then
		args+=("$tmp/build"); name+=" (source)"
	fi
	want_rc=0
	[ "$want_bad" -eq 0 ] || want_rc=1
	rc=0
	"$here/splat.sh" "${args[@]}" > "$tmp/out" 2>&1 || rc=$?
	sum=$(grep -m1 '^splat: ' "$tmp/out" || echo "no summary line")
	why=()
	[ "$rc" = "$want_rc" ] || why+=("exit $rc, want $want_rc")
	[[ $sum == "splat: $want_bad unexpected, $want_exp expected in "* ]] ||
		why+=("'$sum', want $want_bad unexpected, $want_exp expected")
	if [ "$text" != - ] && ! grep '^---- splat ' "$tmp/out" | grep -qF -- "$text"; then
		why+=("no '---- splat' line with '$text'")
	fi
	if [ ${#why[@]} -eq 0 ]; then
		passed=$((passed + 1))
		has=""
		[ "$text" = - ] || has=", has '$text'"
		echo "ok - $name: $want_bad unexpected, $want_exp expected$has"
	else
		failed=$((failed + 1))
		printf -v why_s '%s; ' "${why[@]}"
		echo "FAIL - $name: ${why_s%; }"
		sed 's/^/    /' "$tmp/out" | head -20
	fi
done < "$cases"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
