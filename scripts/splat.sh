#!/usr/bin/env bash
# splat.sh - find kernel splats (KASAN, lockdep, WARN, BUG, Oops, SLUB,
# list corruption, RCU stalls, soft/hard lockups, hung tasks, refcount_t,
# page_pool and netdev refcount complaints) in a kernel log, print each
# one decoded with the kernel's scripts/decode_stacktrace.sh, and fail if
# any is not an expected one. scripts/splat-selftest.sh tests it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

usage() {
	cat <<'U'
usage: scripts/splat.sh <kernel log> [<build dir>]

Scans <kernel log> (scripts/vm.sh: the guest's $OUT/dmesg.log, or
$OUT/console.log when the guest died or timed out) for kernel splats.
Each one is printed from its first line to its end marker (at most 80
lines), decoded against <build dir>/vmlinux and its source tree when a
build dir is given. Expected splats are listed below; they are printed as
"expected" and do not fail the scan.

A splat starts at a report's first line (WARNING:, BUG:, BUG <slab cache>,
kernel BUG at, Oops, Kernel panic, KASAN, UBSAN, KFENCE, lockdep's
headings, refcount_t:, list_add/list_del corruption, INFO: task ...
blocked for more than, rcu: INFO: ... detected (expedited) stall(s),
watchdog: BUG: soft lockup, Watchdog detected hard LOCKUP, page_pool
refcnt N violation, stalled pool shutdown, unregister_netdevice: waiting
for, kmemleak, DEBUG_LOCKS_WARN_ON, ODEBUG) or at a "[ cut here ]" line.
Every such line starts a new splat, except the lines one report prints
itself: a WARN's message and its WARNING / kernel BUG line after its
"[ cut here ]", the "[ cut here ]" and kernel BUG of a list corruption
printed just before them, the Oops after a BUG: / kernel BUG at line,
and KASAN's "in range" line after an Oops.

Expected: the lockdep_assert_no_hardirq() WARNING at net/core/page_pool.c
with pp_poll_irqs_off of pp_decide_kunit in the trace: selftests/pp_decide
returns a page with interrupts disabled in the owner's poll on purpose
(see the case's comment). With hardirq_return=1 its hard IRQ case returns
a page from a hard hrtimer instead (pp_timer_fn in the trace), which gives
that WARNING first (it is once per boot) and lockdep's "BUG: Invalid wait
context" for the ring's producer_lock; both are expected too.
A splat is expected only when it holds that one report and no other.

Exit: 0 no unexpected splat, 1 at least one (or the log is missing).
U
}
case "${1:-}" in -h|--help) usage; exit 0 ;; "") usage >&2; exit 1 ;; esac
log=$1 build=${2:-}
[ -f "$log" ] || die "splat: no kernel log $log (fix: give the console.log or dmesg.log of a run)"

# First lines of a report, as the kernel prints them (the printk formats
# of the base tree; a line may carry a "[   12.345678] " timestamp and a
# "[  T123] " caller id before them, or sit after a guest line's text on
# the console). "BUG: " covers KASAN, KFENCE, lockdep's "[ BUG: ... ]",
# "watchdog: BUG: soft lockup - CPU#N stuck for", scheduling while atomic;
# "BUG <cache> (Not tainted|Tainted: ...): " is SLUB's (mm/slub.c).
START='(WARNING: |BUG: |BUG [^ ]+ \((Not tainted|Tainted)|kernel BUG at|Oops|Kernel panic|'\
'KASAN|UBSAN|KFENCE|inconsistent lock state|possible circular locking|'\
'possible recursive locking|suspicious RCU usage|refcount_t: |'\
'list_(add|del) corruption|list_add double add|'\
'INFO: task .* blocked (in I/O wait )?for more than|'\
'INFO: rcu_[a-z_]+ (self-)?detected (expedited )?stall|'\
'Watchdog detected hard LOCKUP|page_pool refcnt -?[0-9]+ violation|'\
'stalled pool shutdown|unregister_netdevice: waiting for|'\
'unreferenced object 0x|DEBUG_LOCKS_WARN_ON|ODEBUG: )'

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Split the log into one file per splat (NNN, its report lines in NNN.t):
# from a start line to the end marker, the next start line, or 80 lines.
sed 's/\r$//' "$log" | awk -v dir="$tmp" -v pat="$START" '
	function strip(s) {
		sub(/^\[ *[0-9]+\.[0-9]+\] ?/, "", s)
		sub(/^\[ *[TC][0-9]+\] ?/, "", s)
		return s
	}
	function close_cur() {
		if (cur != "") { close(cur); if (starts) close(cur ".t"); cur = "" }
	}
	function open_new() {
		close_cur(); cur = sprintf("%s/%03d", dir, ++k)
		n = 0; starts = 0; title = ""; cutwin = 0; last = ""; last_at = 0; oops_at = 0
	}
	BEGIN {
		hdr = "(WARNING: |kernel BUG at|BUG: |UBSAN: )"
		# a BUG line the Oops of the same report follows (x86 fault.c,
		# traps.c, lib/bug.c)
		bugoops = "(kernel BUG at|BUG: (kernel NULL pointer dereference|unable to handle|kernel tried to execute|.*stack guard page))"
		corrupt = "(list_(add|del) corruption|list_add double add)"
	}
	{
		line = $0; s = strip(line)
		cut = (line ~ /-+\[ cut here \]-+/)
		# the mark of the drv-net test (its case name): not a report
		t = line; sub(/xdp_redirect_drop: start [^ ]+ [0-9]+ [0-9.]+/, "", t)
		st = !cut && t ~ pat && line !~ /---\[ end /
		if (cut) {
			# CHECK_DATA_CORRUPTION with BUG_ON_DATA_CORRUPTION: the
			# message, then BUG(): its cut here belongs to the message
			if (cur != "" && starts == 1 && !cutwin && title ~ corrupt && n <= 3)
				cutwin = 1
			else {
				open_new(); cutwin = 1
			}
		} else if (st) {
			cont = 0
			if (cur != "" && cutwin && n < 10) {
				# after "[ cut here ]": the WARN message, then the
				# WARNING / kernel BUG line, then nothing more
				cont = 1
				if (s ~ hdr) cutwin = 0
			} else if (cur != "" && !oops_at && s ~ /Oops/ && last ~ bugoops && n - last_at < 8) {
				cont = 1
			} else if (cur != "" && oops_at && s ~ /KASAN: .* in range \[/ && n - oops_at < 3) {
				cont = 1
			}
			if (!cont) open_new()
			if (s ~ /Oops/ && !oops_at) oops_at = n + 1
			if (title == "") title = s
			print s > (cur ".t"); starts++
			last = s; last_at = n + 1
		}
		if (cur != "") {
			print line > cur; n++
			if (line ~ /---\[ end trace|---\[ end Kernel panic/ || n >= 80) close_cur()
		}
	}
	END { close_cur() }'

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
for f in "$tmp"/[0-9][0-9][0-9]; do
	[ -e "$f" ] || continue
	# its report lines: one, for an expected splat
	nrep=0 title="[ cut here ] and no report line"
	if [ -f "$f.t" ]; then
		nrep=$(wc -l < "$f.t")
		title=$(head -1 "$f.t")
	fi
	if [ "$nrep" -eq 1 ] && grep -q 'pp_decide_kunit' "$f"; then
		# pp_decide's hard IRQ case, with hardirq_return=1, returns a
		# page from a hard hrtimer: lockdep_assert_no_hardirq() warns in
		# __page_pool_put_page() (inlined into
		# page_pool_put_unrefed_netmem()), and lockdep reports the
		# ring's producer_lock (a spinlock_t) taken in hard IRQ context
		if grep -q 'pp_timer_fn' "$f" &&
		   { grep -qE "$pp_assert" <<<"$title" ||
		     { grep -q 'BUG: Invalid wait context' <<<"$title" &&
		       grep -q 'producer_lock' "$f"; }; }; then
			expected=$((expected + 1))
			echo "splat (expected: pp_decide hard IRQ return): $title"
			continue
		fi
		# its IRQs-off case: the same warning (the default run)
		if grep -q 'pp_poll_irqs_off' "$f" && grep -qE "$pp_assert" <<<"$title"; then
			expected=$((expected + 1))
			echo "splat (expected: pp_decide return with IRQs off): $title"
			continue
		fi
	fi
	bad=$((bad + 1))
	more=""
	[ "$nrep" -le 1 ] || more=" (+$((nrep - 1)) more report lines)"
	echo "---- splat $bad: $title$more"
	if [ -n "$src" ] && [ -f "$build/vmlinux" ] && [ -x "$src/scripts/decode_stacktrace.sh" ]; then
		(cd "$src" && ./scripts/decode_stacktrace.sh "$build/vmlinux" "$src" "$build" < "$f" 2>/dev/null) ||
			cat "$f"
	else
		cat "$f"
	fi
done
echo "splat: $bad unexpected, $expected expected in $(basename "$log")"
[ "$bad" -eq 0 ]
