#!/usr/bin/env bash
# skips.sh - judge the skips of a results.tap against the allow-list
# selftests/expected-skips: each one is expected (listed, with its reason)
# or UNEXPECTED, which fails (make test: a broken kernel must not pass as
# a run with a few skips).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

usage() {
	cat <<'U'
usage: scripts/skips.sh [--rewrite] <base|series|rt> <results.tap>

Reads <results.tap> (scripts/test.sh's $OUT/results.tap: "ok - ..." and
"not ok - ..." lines; a skip is an "ok ... # SKIP <why>" line) and the
allow-list (EXPECTED_SKIPS, default selftests/expected-skips: lines
"<variant> <regex>  # <reason>", variant series, base, rt (make
test-rt: the series on PREEMPT_RT) or any; see the
file's header). Prints each skip as
  skip: expected (<reason>): <line>
  skip: UNEXPECTED: <line>
and a count. --rewrite: every unexpected skip line of <results.tap> becomes
  not ok - skip not allowed: <what> (SKIP <why>)
in place (make test counts it as failed, no longer as skipped).
Environment: EXPECTED_SKIPS (the allow-list).
Exit: 0 no unexpected skip, 1 an unexpected skip (or a bad allow-list,
results file or argument).
U
}
rewrite=0
while [ $# -gt 0 ]; do
	case "$1" in
	-h|--help) usage; exit 0 ;;
	--rewrite) rewrite=1; shift ;;
	--) shift; break ;;
	-*) usage >&2; exit 1 ;;
	*) break ;;
	esac
done
[ $# -eq 2 ] || { usage >&2; exit 1; }
variant=$1 res=$2
case "$variant" in
base|series|rt) ;;
*) die "skips: variant '$variant' (fix: base, series or rt)" ;;
esac
list=${EXPECTED_SKIPS:-$REPO/selftests/expected-skips}
[ -f "$list" ] || die "skips: no allow-list $list (fix: restore selftests/expected-skips or set EXPECTED_SKIPS)"
[ -f "$res" ] || die "skips: no results file $res (fix: give the results.tap of a run, e.g. \$CACHE/out/test-series/results.tap)"

# empty_match RE: 0 RE matches an empty line, 1 it does not, 2 not a regex
empty_match() { [[ "" =~ ^($1) ]]; }

# The allow-list entries for this variant: regexes and reasons.
allow_re=() reasons=()
n=0
entry_re='^([^[:space:]]+)[[:space:]]+(.*[^[:space:]])[[:space:]]{2,}#[[:space:]]+(.*[^[:space:]])[[:space:]]*$'
while IFS= read -r l || [ -n "$l" ]; do
	n=$((n + 1))
	[[ $l =~ ^[[:space:]]*(#|$) ]] && continue
	[[ $l =~ $entry_re ]] ||
		die "skips: $list:$n: not '<variant> <regex>  # <reason>' (fix: add the reason after two blanks and '# ')"
	v=${BASH_REMATCH[1]} re=${BASH_REMATCH[2]} why=${BASH_REMATCH[3]}
	case "$v" in
	base|series|rt|any) ;;
	*) die "skips: $list:$n: variant '$v' (fix: series, base, rt or any)" ;;
	esac
	st=0
	empty_match "$re" || st=$?
	[ "$st" -ne 2 ] || die "skips: $list:$n: bad regex '$re' (fix: an extended regular expression)"
	[ "$st" -ne 0 ] || die "skips: $list:$n: regex '$re' matches an empty line, so any skip (fix: name the case and its reason)"
	[ "$v" = any ] || [ "$v" = "$variant" ] || continue
	allow_re+=("$re") reasons+=("$why")
done < "$list"

skip_re='^ok .*# *SKIP'
# what (SKIP why) of an "ok - what # SKIP why" line
split_re='^ok (- )?(.*[^ ]) *# *SKIP *(.*)$'
expected=0 unexpected=0
out=()
while IFS= read -r line || [ -n "$line" ]; do
	if ! [[ $line =~ $skip_re ]]; then
		out+=("$line")
		continue
	fi
	why=
	for i in "${!allow_re[@]}"; do
		if [[ $line =~ ^(${allow_re[$i]}) ]]; then
			why=${reasons[$i]}
			break
		fi
	done
	if [ -n "$why" ]; then
		expected=$((expected + 1))
		echo "skip: expected ($why): $line"
		out+=("$line")
		continue
	fi
	unexpected=$((unexpected + 1))
	echo "skip: UNEXPECTED: $line"
	if [[ $line =~ $split_re ]]; then
		out+=("not ok - skip not allowed: ${BASH_REMATCH[2]} (SKIP ${BASH_REMATCH[3]:-no reason})")
	else
		out+=("not ok - skip not allowed: $line")
	fi
done < "$res"

echo "skips: $((expected + unexpected)) ($expected expected, $unexpected unexpected; allow-list $list, variant $variant)"
if [ "$rewrite" = 1 ] && [ "$unexpected" -gt 0 ]; then
	# all of it was read: write it back in place (same file, same mode)
	printf '%s\n' "${out[@]}" > "$res"
fi
[ "$unexpected" -eq 0 ]
