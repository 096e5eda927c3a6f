#!/usr/bin/env bash
# splat.sh - find kernel splats (KASAN, lockdep, WARN, BUG, Oops, RCU and
# hung-task reports, refcount and page_pool complaints) in a console log,
# print each one decoded with the kernel's scripts/decode_stacktrace.sh,
# and fail if any is not an expected one.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

usage() {
	cat <<'U'
usage: scripts/splat.sh <console log> [<build dir>]

Scans <console log> (scripts/vm.sh writes $OUT/console.log) for kernel
splats. Each one is printed from its first line to its end marker (at most
80 lines), decoded against <build dir>/vmlinux and its source tree when a
build dir is given. Expected splats are listed below; they are printed as
"expected" and do not fail the scan.

Expected (both with pp_timer_fn of pp_decide_kunit in the trace):
selftests/pp_decide's hard IRQ case returns a page from a hard hrtimer on
purpose (see the case's comment), which gives
  - the lockdep_assert_no_hardirq() WARNING at net/core/page_pool.c, and
  - lockdep's "BUG: Invalid wait context" for the ring's producer_lock.
Also expected: that WARNING with pp_poll_irqs_off in the trace, from the
case that returns a page with interrupts disabled in the owner's poll; it
warns only where the hard IRQ case did not warn first (base, which returns
nothing from the timer by default: the warning is once per boot).

Exit: 0 no unexpected splat, 1 at least one (or the log is missing).
U
}
case "${1:-}" in -h|--help) usage; exit 0 ;; "") usage >&2; exit 1 ;; esac
log=$1 build=${2:-}
[ -f "$log" ] || die "splat: no console log $log"

# First lines of a splat, as the kernel prints them.
START='(WARNING: |BUG: |kernel BUG at|Oops|Kernel panic|KASAN|UBSAN|KFENCE|'\
'inconsistent lock state|possible circular locking|possible recursive locking|'\
'suspicious RCU usage|refcount_t: |INFO: task .* blocked for more than|'\
'rcu: INFO: rcu_.* detected stall|self-detected stall|stalled pool shutdown|'\
'unreferenced object 0x|DEBUG_LOCKS_WARN_ON|ODEBUG: )'

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Split the log into one file per splat: from a start line to the end
# marker, the next start line, or 80 lines.
sed 's/\r$//' "$log" | awk -v dir="$tmp" -v pat="$START" '
	function close_cur() { if (cur != "") { close(cur); cur = "" } }
	$0 ~ pat && !($0 ~ /xdp_redirect_drop: start/) {
		if (cur == "" || n > 3) { close_cur(); cur = sprintf("%s/%03d", dir, ++k); n = 0 }
	}
	cur != "" {
		print > cur; n++
		if ($0 ~ /---\[ end trace|---\[ end Kernel panic/ || n >= 80) close_cur()
	}'

src=""
if [ -n "$build" ] && [ -e "$build/source" ]; then
	src=$(readlink -f "$build/source")
fi
# The lockdep_assert_no_hardirq() lines of page_pool.c (one is inlined
# into page_pool_put_unrefed_netmem()): an expected WARNING must come from
# one of them, not from elsewhere in the file the series changes. Without
# the source, any line of page_pool.c in that function.
assert_lines='[0-9]+'
if [ -n "$src" ] && [ -f "$src/net/core/page_pool.c" ]; then
	l=$(grep -n 'lockdep_assert_no_hardirq();' "$src/net/core/page_pool.c" | cut -d: -f1 | paste -sd '|')
	[ -z "$l" ] || assert_lines="($l)"
fi
pp_assert="WARNING: .*net/core/page_pool\.c:$assert_lines at page_pool_put_unrefed_netmem\+"
bad=0 expected=0
for f in "$tmp"/[0-9]*; do
	[ -e "$f" ] || continue
	# pp_decide's hard IRQ case returns a page from a hard hrtimer on
	# purpose: lockdep_assert_no_hardirq() warns in __page_pool_put_page()
	# (inlined into page_pool_put_unrefed_netmem()), and lockdep reports
	# the ring's producer_lock (a spinlock_t) taken in hard IRQ context
	if grep -q 'pp_timer_fn' "$f" && grep -q 'pp_decide_kunit' "$f" &&
	   { head -1 "$f" | grep -qE "$pp_assert" ||
	     { head -1 "$f" | grep -q 'BUG: Invalid wait context' &&
	       grep -q 'producer_lock' "$f"; }; }; then
		expected=$((expected + 1))
		echo "splat (expected: pp_decide hard IRQ return): $(head -1 "$f" | sed 's/^\[[^]]*\] //')"
		continue
	fi
	# its IRQs-off case: the same warning, where the hard IRQ case did
	# not trigger it first
	if grep -q 'pp_poll_irqs_off' "$f" && grep -q 'pp_decide_kunit' "$f" &&
	   head -1 "$f" | grep -qE "$pp_assert"; then
		expected=$((expected + 1))
		echo "splat (expected: pp_decide return with IRQs off): $(head -1 "$f" | sed 's/^\[[^]]*\] //')"
		continue
	fi
	bad=$((bad + 1))
	echo "---- splat $bad: $(head -1 "$f" | sed 's/^\[[^]]*\] //')"
	if [ -n "$src" ] && [ -f "$build/vmlinux" ] && [ -x "$src/scripts/decode_stacktrace.sh" ]; then
		(cd "$src" && ./scripts/decode_stacktrace.sh "$build/vmlinux" "$src" "$build" < "$f" 2>/dev/null) ||
			cat "$f"
	else
		cat "$f"
	fi
done
echo "splat: $bad unexpected, $expected expected in $(basename "$log")"
[ "$bad" -eq 0 ]
