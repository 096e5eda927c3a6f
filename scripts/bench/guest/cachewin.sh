#!/bin/bash
# cachewin.sh - inside the VM: open and close the counting windows of the
# cache plugin (net-core/bench/cache_plugin.c) around N packets.
#
# The plugin is started with start=tracing_mark_write,stop=tracing_mark_raw_write
# (and map=<the build's System.map>): a window opens when the kernel runs
# tracing_mark_write() (a write to tracefs trace_marker) and closes on
# tracing_mark_raw_write() (trace_marker_raw). Nothing else in the harness
# writes those files. Both writes are bash builtins (no fork, a few
# thousand guest instructions in the window).
#
# Sourced (". /xdp-pp/scripts/bench/guest/cachewin.sh"), it defines:
#   cachewin_init [FILE]      start a window log (default $CACHEWIN_OUT or
#                             /out/cachewin.txt), truncated; checks tracefs
#   cachewin_open / cachewin_close
#                             one window, nothing else
#   cachewin_count CASE TX RXIF N [ROLE]
#                             one window around one pktgen run of N packets
#                             on TX (already set up: xdp_pp_pktgen_setup,
#                             burst) received on RXIF; waits (bounded) for
#                             RXIF's rx_packets to grow by N before closing;
#                             appends to the log:
#     cachewin window=<k> case=<CASE> pkts=<rx_packets delta> sent=<N> role=<ROLE>
#                             (ROLE: measure, default, or warm)
#   cachewin_run CASE TX RXIF N WARM REPS
#                             a warm window of WARM packets (role=warm; with
#                             the plugin's model=armed it starts the model),
#                             then REPS measure windows of N packets each
#   cachewin_kallsyms FILE    /proc/kallsyms (modules, BPF programs) for
#                             cache-report.py --kallsyms; call it outside a
#                             window, after the XDP programs are loaded
# Window numbers count from 1 per boot and match the plugin's only if every
# window of the boot goes through these functions and cachewin_init is
# called once per boot.
#
# Run as a script: the standalone cases of scripts/bench/cache-report.py's
# recipe:
#   cachewin.sh egress-drop [N] [WARM] [REPS]
#       the bench's redirect-map-egress-drop case (pktgen on the second NIC
#       -> NETIF, xdp-bench redirect-map -X -A drop NETIF NETIF); with
#       CACHEWIN_HOSTILE=1 a cache-hostile loop (dd bs=8M from /dev/zero,
#       its buffer far larger than the caches) runs beside the packets
#   cachewin.sh dd BS:COUNT...
#       one window around each dd if=/dev/zero of=/dev/null bs=BS count=COUNT
#       (each run once before, outside the windows; "pkts" = COUNT)
# Output in /out: cachewin.txt, cachewin-kallsyms.txt, xb-cachewin.log.

# shellcheck source=../../guest/inguest.sh
. "${BASH_SOURCE[0]%/*}/../../guest/inguest.sh" # inside the harness VM only
CACHEWIN_MARK=${CACHEWIN_MARK:-/sys/kernel/tracing}
CACHEWIN_OUT=${CACHEWIN_OUT:-/out/cachewin.txt}

cachewin_init() {
	CACHEWIN_OUT=${1:-$CACHEWIN_OUT}
	if [ ! -w "$CACHEWIN_MARK/trace_marker" ] || [ ! -w "$CACHEWIN_MARK/trace_marker_raw" ]; then
		mount -t tracefs tracefs "$CACHEWIN_MARK" 2>/dev/null
		if [ ! -w "$CACHEWIN_MARK/trace_marker" ]; then
			echo "cachewin: no $CACHEWIN_MARK/trace_marker (CONFIG_TRACING? tracefs?)" >&2
			return 1
		fi
	fi
	: > "$CACHEWIN_OUT"
}

# builtins only: what runs in the window is the kernel's write path
cachewin_open() { echo cachewin > "$CACHEWIN_MARK/trace_marker" 2>/dev/null; return 0; }
cachewin_close() { printf 'cwin' > "$CACHEWIN_MARK/trace_marker_raw" 2>/dev/null; return 0; }

_cachewin_next() {
	local n=0 l
	while read -r l; do [[ "$l" == "cachewin window="* ]] && n=$((n + 1)); done < "$CACHEWIN_OUT"
	echo $((n + 1))
}

cachewin_count() {
	local name=$1 tx=$2 rxif=$3 n=$4 role=${5:-measure} st=/sys/class/net/$3/statistics/rx_packets
	local w r0 r1 i
	w=$(_cachewin_next)
	echo "count $n" > "/proc/net/pktgen/$tx"
	read -r r0 < "$st"
	cachewin_open
	echo start > /proc/net/pktgen/pgctrl
	# frames pktgen queued may still be on their way: wait (bounded)
	for ((i = 0; i < 2000; i++)); do
		read -r r1 < "$st"
		((r1 - r0 >= n)) && break
	done
	cachewin_close
	read -r r1 < "$st"
	echo "cachewin window=$w case=$name pkts=$((r1 - r0)) sent=$n role=$role" >> "$CACHEWIN_OUT"
}

cachewin_run() {
	local name=$1 tx=$2 rxif=$3 n=$4 warm=$5 reps=$6 r
	cachewin_count "$name" "$tx" "$rxif" "$warm" warm
	for ((r = 0; r < reps; r++)); do
		cachewin_count "$name" "$tx" "$rxif" "$n" measure
	done
}

cachewin_kallsyms() { cat /proc/kallsyms > "$1"; }

_cachewin_main() {
	local what=${1:-}
	shift || true
	case "$what" in
	egress-drop)
		local n=${1:-20000} warm=${2:-5000} reps=${3:-1} hog=''
		# shellcheck source=../../guest/netsetup.sh
		. /xdp-pp/scripts/guest/netsetup.sh
		# shellcheck source=../../benchlib.sh
		. /xdp-pp/scripts/benchlib.sh
		xdp_pp_netsetup || return 1
		cachewin_init "$CACHEWIN_OUT" || return 1
		# the sender NIC back in this netns: pktgen needs it here (as bench.sh)
		ip netns exec remote ip link set "$REMOTE_IF" netns 1
		ip link set "$REMOTE_IF" up
		xdp_pp_pktgen_setup "$REMOTE_IF" "$(cat /sys/class/net/"$NETIF"/address)" 60
		xdp_pp_pg "$REMOTE_IF" "burst ${BURST:-32}"
		xdp_bench_start /out/xb-cachewin.log redirect-map -X -A drop "$NETIF" "$NETIF"
		sleep 2
		cachewin_kallsyms /out/cachewin-kallsyms.txt
		if [ "${CACHEWIN_HOSTILE:-0}" = 1 ]; then
			dd if=/dev/zero of=/dev/null bs=8M count=100000000 2>/dev/null &
			hog=$!
			sleep 0.5
		fi
		cachewin_run redirect-map-egress-drop "$REMOTE_IF" "$NETIF" "$n" "$warm" "$reps"
		[ -z "$hog" ] || { kill "$hog"; wait "$hog" 2>/dev/null; }
		xdp_bench_stop
		cat "$CACHEWIN_OUT"
		;;
	dd)
		local spec bs count w
		[ $# -gt 0 ] || { echo "cachewin: dd BS:COUNT..." >&2; return 1; }
		cachewin_init "$CACHEWIN_OUT" || return 1
		for spec in "$@"; do
			bs=${spec%%:*} count=${spec#*:}
			dd if=/dev/zero of=/dev/null bs="$bs" count="$count" 2>/dev/null # warm
			w=$(_cachewin_next)
			cachewin_open
			dd if=/dev/zero of=/dev/null bs="$bs" count="$count" 2>/dev/null
			cachewin_close
			echo "cachewin window=$w case=dd-$bs pkts=$count sent=$count role=measure" >> "$CACHEWIN_OUT"
		done
		cat "$CACHEWIN_OUT"
		;;
	*)
		echo "usage: cachewin.sh egress-drop [N] [WARM] [REPS] | dd BS:COUNT... (or source it)" >&2
		return 1
		;;
	esac
}

# run as a script (not sourced)
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -uo pipefail
	_cachewin_main "$@"
	exit $?
fi
