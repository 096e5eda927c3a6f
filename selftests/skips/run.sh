#!/usr/bin/env bash
# run.sh - self-test of scripts/skips.sh on the synthetic results files
# here (scripts/check.sh skips runs it; so does check.sh --fast).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
skips=$repo/scripts/skips.sh

usage() {
	cat <<'U'
usage: selftests/skips/run.sh

Runs scripts/skips.sh, with and without --rewrite, on each *.tap here.
Its first line says how: "# skips-test: list=test|real variant=base|series
rc=N passed=N failed=N skipped=N says=TEXT": the allow-list (test: the
synthetic expected-skips here, real: selftests/expected-skips), skips.sh's
exit status, make test's counts of the file after --rewrite (as
scripts/test.sh counts them) and a text its output must contain. Then
checks that skips.sh refuses malformed allow-lists. One line per case:
"ok NAME" or "FAIL NAME: why" (skips.sh's output below it, "    | "
indented); a count last.
Exit: 0 every case passed, 1 a case failed.
U
}
case "${1:-}" in
-h|--help) usage; exit 0 ;;
"") ;;
*) usage >&2; exit 1 ;;
esac
[ -x "$skips" ] || { echo "error: no $skips (fix: restore scripts/skips.sh)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0
# bad NAME WHY [OUTPUT-FILE]: a failed case, skips.sh's output indented below
bad() {
	echo "FAIL $1: $2"
	[ -z "${3:-}" ] || sed 's/^/    | /' "$3"
	failed=$((failed + 1))
}
# field NAME HEADER: the value of NAME= in a case's header (before says=)
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"${2%% says=*}"; }

for f in "$here"/*.tap; do
	name=$(basename "$f" .tap)
	n=$((n + 1))
	hdr=$(head -n1 "$f")
	case "$hdr" in
	"# skips-test: "*) ;;
	*) bad "$name" "no '# skips-test:' header line"; continue ;;
	esac
	list=$here/expected-skips
	[ "$(field list "$hdr")" = test ] || list=$repo/selftests/expected-skips
	variant=$(field variant "$hdr") says=${hdr#* says=}
	cp "$f" "$tmp/plain.tap"
	cp "$f" "$tmp/rewritten.tap"
	rc=0
	EXPECTED_SKIPS=$list "$skips" "$variant" "$tmp/plain.tap" > "$tmp/plain.out" 2>&1 || rc=$?
	rrc=0
	EXPECTED_SKIPS=$list "$skips" --rewrite "$variant" "$tmp/rewritten.tap" > "$tmp/out" 2>&1 || rrc=$?
	res=$tmp/rewritten.tap
	skipped=$(grep -cE '^ok .*# *SKIP' "$res" || true)
	passed=$(( $(grep -cE '^ok ' "$res" || true) - skipped ))
	failed_n=$(grep -cE '^not ok ' "$res" || true)
	got="rc=$rrc passed=$passed failed=$failed_n skipped=$skipped"
	want="rc=$(field rc "$hdr") passed=$(field passed "$hdr") failed=$(field failed "$hdr") skipped=$(field skipped "$hdr")"
	if [ "$got" != "$want" ]; then
		bad "$name" "$got, want $want" "$tmp/out"
	elif ! grep -qF -- "$says" "$tmp/out"; then
		bad "$name" "output lacks '$says'" "$tmp/out"
	elif [ "$rc" != "$rrc" ] || ! cmp -s "$tmp/plain.out" "$tmp/out"; then
		bad "$name" "without --rewrite: exit $rc, output differs"
	elif ! cmp -s "$f" "$tmp/plain.tap"; then
		bad "$name" "without --rewrite the results file changed"
	else
		echo "ok $name ($got)"
	fi
done

# malformed allow-lists: exit 1 with one error line naming the fix
bad_list() { # name want-text line
	local rc=0
	n=$((n + 1))
	printf '%s\n' "$3" > "$tmp/list"
	EXPECTED_SKIPS=$tmp/list "$skips" series "$here/a-no-skip.tap" > "$tmp/out" 2>&1 || rc=$?
	if [ "$rc" != 1 ] || ! grep -q "^error: .*$2.*(fix: " "$tmp/out"; then
		bad "list-$1" "exit $rc, want 1 and an error '$2 ... (fix: ...)'" "$tmp/out"
	else
		echo "ok list-$1"
	fi
}
bad_list no-reason "not '<variant> <regex>  # <reason>'" 'series ok - kunit:pp_decide: x # SKIP y'
bad_list variant "variant 'sereis'" 'sereis ok - kunit:pp_decide: x # SKIP  # why'
bad_list regex "bad regex" 'series ok - kunit:pp_decide: x(  # why'
bad_list any-skip "matches an empty line" 'any .*  # allows everything'

echo "skips self-test: $((n - failed)) of $n cases passed"
[ "$failed" -eq 0 ]
