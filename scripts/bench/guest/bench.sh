#!/bin/bash
# bench.sh - inside the VM: the benchmark matrix, one result line per
# measurement in /out/bench.txt:
#   case=<name> rep=<i> value=<x> unit=<u> cached=<n> ring=<n>
# Under QEMU -icount shift=0, guest nanoseconds are guest instructions.
# shellcheck source=../../guest/inguest.sh
. "${BASH_SOURCE[0]%/*}/../../guest/inguest.sh" # inside the harness VM only
set -uo pipefail
REPEATS=${REPEATS:-5}
PACKETS=${PACKETS:-200000}
OUT=/out/bench.txt
# SECTIONS: which parts run (all by default)
SECTIONS=${SECTIONS:-run napi profile pp_bench pp_decide}
want() { [[ " $SECTIONS " == *" $1 "* ]]; }
TOOL=/tools/xdp_pp_run
: > "$OUT"
. /xdp-pp/scripts/guest/netsetup.sh
xdp_pp_netsetup || exit 1
echo "# kernel $(uname -r) cpus $(nproc) $(cat /proc/cmdline)" >> "$OUT"
# the return thunk every function returns through (the report's trampoline
# calibration assumes bpf_fentry_test1()'s body is lea, jmp thunk, ret)
echo "# retbleed: $(cat /sys/devices/system/cpu/vulnerabilities/retbleed 2>/dev/null);" \
	"srso: $(cat /sys/devices/system/cpu/vulnerabilities/spec_rstack_overflow 2>/dev/null)" >> "$OUT"

# vA0: a devmap target that can transmit (GRO on its peer makes veth offer
# ndo_xdp_xmit); vB0: one whose ndo_xdp_xmit fails (peer has GRO, so the
# target offers ndo-xmit, but is down: -ENXIO); vC0/vC1: veth-drop.
ip link add vA0 type veth peer name vA1
ip link add vB0 type veth peer name vB1
ip link add vC0 type veth peer name vC1
# no IPv6 on the test pairs: DAD/RS/MLD packets would reach the counting
# XDP programs (a stray one made a veth-drop repeat count 50001 of 50000)
for d in vA0 vA1 vB0 vB1 vC0 vC1; do
	sysctl -qw "net.ipv6.conf.$d.disable_ipv6=1"
done
ethtool -K vA1 gro on >/dev/null
ethtool -K vB1 gro on >/dev/null
ip link set vA0 up; ip link set vA1 up
ip link set vB0 up
ip link set vC0 up; ip link set vC1 up
declare -A TGT=([devmap-egress-drop]=vA0 [devmap-xmit-fail]=vB0
	[devmap-bcast-empty]=vA0 [veth-drop]="vC0 vC1" [cpumap-drop]=vA0 [xdp-drop]=vA0)

# 1. synchronous BPF_PROG_TEST_RUN live-frame cases (test_run's pool: ring)
want run && for c in devmap-egress-drop devmap-xmit-fail devmap-bcast-empty veth-drop cpumap-drop xdp-drop; do
	# shellcheck disable=SC2086 # TGT holds one or two names
	$TOOL "$c" 20000 ${TGT[$c]} >/dev/null 2>&1 # warm up
	for r in $(seq "$REPEATS"); do
		# shellcheck disable=SC2086
		line=$($TOOL "$c" "$PACKETS" ${TGT[$c]} 2>&1) || { echo "# $c failed: $line" >> "$OUT"; continue; }
		v=$(sed -n 's/.*ns_per_pkt=\([0-9.]*\) .*/\1/p' <<<"$line" | head -1)
		echo "case=run:$c rep=$r value=$v unit=ns/pkt cached=- ring=-" >> "$OUT"
	done
	ip link set vC1 xdp off 2>/dev/null
done

# 2. NAPI-owned cases: pktgen on the second virtio NIC feeds NETIF (or
# pktgen on vD0 feeds veth vD1). napi_cost (net-core/bench/napi_cost.bpf.c)
# times the receiver's NAPI polls: under icount, guest instructions per
# packet spent in the polls, whatever share of the one vCPU the sender
# takes (pktgen's own rate is sender-bound and only recorded as pps=).
. /xdp-pp/scripts/benchlib.sh
SNAP=/xdp-pp/scripts/bench/guest/benchsnap.py
if want napi || want profile; then
	# the sender NIC back in this netns: pktgen needs it here
	ip netns exec remote ip link set "$REMOTE_IF" netns 1
	ip link set "$REMOTE_IF" up
fi
if want napi; then
ip link add vD0 type veth peer name vD1
sysctl -qw net.ipv6.conf.vD0.disable_ipv6=1 net.ipv6.conf.vD1.disable_ipv6=1
ip link set vD0 up; ip link set vD1 up
napi_cost_load /tools virtnet_poll veth_poll || exit 1
napi_cost_load /tools cpu_map_bpf_prog_run || exit 1
VPKTS=${VPKTS:-$((PACKETS / 2))}
BURST=${BURST:-32}
# napi_case NAME SENDER PKTS_IF COST_IFS PP_IF -- [XDP_BENCH_ARGS... [-- MORE]]
# MORE: a second xdp-bench (the dropping program on a veth peer); no
# XDP_BENCH_ARGS: no XDP program, the stack receives the frames.
# NAPI_MODE=threaded|busypoll (env): NETIF's NAPI polled by its kthread, or
# by a busy poller (net-core/bench/busy_poll.c on the frames' UDP port,
# told its NAPI by a first burst before XDP is attached); the case is
# then named MODE:NAME and its lines carry busy=<packets busy polled>.
NAPIMODE=/xdp-pp/scripts/bench/guest/napimode.py
busy_rx() {
	awk '/^TcpExt:/ { if (!h) { for (i = 2; i <= NF; i++) n[i] = $i; h = 1 }
		else for (i = 2; i <= NF; i++) if (n[i] == "BusyPollRxPackets") print $i }' /proc/net/netstat
}
napi_case() {
	local name=$1 tx=$2 pif=$3 cost=$4 ppif=$5 mode=${NAPI_MODE:-softirq}
	local r rate bp="" b0 extra=""
	shift 6
	[ "$mode" = softirq ] || name=$mode:$name
	# NAPI_CASES (env): only these cases (names as in bench.txt, no napi:)
	[ -z "${NAPI_CASES:-}" ] || [[ " $NAPI_CASES " == *" $name "* ]] || return 0
	if ! python3 $NAPIMODE "$NETIF" "$mode" > /out/napimode-$$.log 2>&1; then
		echo "# napi:$name failed: $(cat /out/napimode-$$.log)" >> "$OUT"
		python3 $NAPIMODE "$NETIF" softirq >/dev/null 2>&1
		return 0
	fi
	xdp_pp_pktgen_setup "$tx" "$(cat /sys/class/net/"$pif"/address)" "${PKT_SIZE:-60}"
	# bursts of BURST frames (one virtqueue kick each): the receiver sees
	# batches of a stable size, whose per-packet cost then repeats within
	# ~0.5% (without: 5-7%, batch sizes drift with host timing)
	[ "$tx" = "$REMOTE_IF" ] && xdp_pp_pg "$tx" "burst $BURST"
	if [ "$mode" = busypoll ]; then
		# a source address (the sender NIC lost its own when it left the
		# remote netns): the socket must receive the first burst
		xdp_pp_pg "$tx" "src_min $REMOTE_V4"
		xdp_pp_pg "$tx" "src_max $REMOTE_V4"
		/tools/busy_poll "$LOCAL_V4" 9 64 > "/out/bp-$name.log" 2>&1 &
		bp=$!
		for _ in $(seq 100); do grep -q ready "/out/bp-$name.log" && break; sleep 0.1; done
		xdp_pp_pg "$tx" "count 64"
		xdp_pp_pg pgctrl start
		for _ in $(seq 100); do grep -q '^napi' "/out/bp-$name.log" && break; sleep 0.1; done
		if ! grep -q '^napi' "/out/bp-$name.log"; then
			echo "# napi:$name failed: busy poller: $(cat "/out/bp-$name.log")" >> "$OUT"
			kill "$bp" 2>/dev/null; wait "$bp" 2>/dev/null
			python3 $NAPIMODE "$NETIF" softirq >/dev/null 2>&1
			return 0
		fi
	fi
	[ $# -gt 0 ] && xdp_bench_start "/out/xb-$name.log" "$@"
	sleep 2
	xdp_pp_pg "$tx" "count 5000"
	xdp_pp_pg pgctrl start # warm up
	for r in $(seq "$REPEATS"); do
		python3 $SNAP snap --pp "$ppif" > /tmp/b.json
		b0=$(busy_rx)
		xdp_pp_pg "$tx" "count $VPKTS"
		xdp_pp_pg pgctrl start
		python3 $SNAP snap --pp "$ppif" > /tmp/a.json
		[ -n "$bp" ] && extra=" busy=$(($(busy_rx) - b0))"
		rate=$(sed -nE 's/^ *([0-9]+)pps .*/\1/p' "/proc/net/pktgen/$tx")
		echo "$(python3 $SNAP line "$name" "$r" /tmp/b.json /tmp/a.json --pkts "$pif" \
			--cost "$cost" --pp "$ppif" --pps "${rate:-0}")$extra" >> "$OUT"
	done
	[ $# -gt 0 ] && xdp_bench_stop
	if [ -n "$bp" ]; then
		kill -INT "$bp"; wait "$bp"
		echo "# napi:$name busy poller: $(tail -1 "/out/bp-$name.log")" >> "$OUT"
	fi
	python3 $NAPIMODE "$NETIF" softirq >/dev/null
}
T=$REMOTE_IF
napi_case redirect-map-egress-drop "$T" "$NETIF" "$NETIF" "$NETIF" -- redirect-map -X -A drop "$NETIF" "$NETIF"
# ndo_xdp_xmit of the target fails (vB0's peer is down): returned in the poll
napi_case redirect-map-xmit-fail "$T" "$NETIF" "$NETIF" "$NETIF" -- redirect-map "$NETIF" vB0
# (a) into veth, dropped by XDP on the peer: returns into virtio's pool from veth's NAPI
napi_case redirect-map-veth-drop "$T" "$NETIF" "$NETIF,vA1" "$NETIF" -- redirect-map "$NETIF" vA0 -- drop vA1
napi_case drop "$T" "$NETIF" "$NETIF" "$NETIF" -- drop "$NETIF"
napi_case tx "$T" "$NETIF" "$NETIF" "$NETIF" -- tx "$NETIF"
napi_case pass "$T" "$NETIF" "$NETIF" "$NETIF" -- pass "$NETIF"
# cpumap: the kthread's program run (with its drops) is part of the cost
napi_case redirect-cpu-drop "$T" "$NETIF" "$NETIF,fn:cpu_map_bpf_prog_run" "$NETIF" -- redirect-cpu -c 0 -r drop "$NETIF"
# (b) veth's own pool: skbs copied for XDP, XDP_PASS, consumed by the stack
# in veth's NAPI. 1500-byte frames: the copy takes a whole page (small ones
# share a page as page_pool frags, whose last user is the allocator, not
# the free path, so no recycle decision would be taken).
PKT_SIZE=1500 napi_case veth-skb-pass vD0 vD1 vD1 vD1 -- pass vD1
# Where base and series decide differently (net-core/README.md): NETIF's
# NAPI run by its kthread or by a busy poller; 7.3 never recycled directly
# there. Plus the skb path without XDP: 1500-byte frames (virtio_net
# copies frames up to 128 bytes into the skb head and frees the buffer
# itself), which the stack drops inside the poll (no socket takes them),
# so their pages come back through napi_pp_put_page(): only the series
# lets them recycle directly when the NAPI is threaded.
for m in ${NAPI_MODES_SKB:-softirq threaded}; do
	PKT_SIZE=1500 NAPI_MODE=$m napi_case skb-receive "$T" "$NETIF" "$NETIF" "$NETIF" --
done
for m in ${NAPI_MODES:-threaded busypoll}; do
	NAPI_MODE=$m napi_case redirect-map-egress-drop "$T" "$NETIF" "$NETIF" "$NETIF" -- redirect-map -X -A drop "$NETIF" "$NETIF"
	NAPI_MODE=$m napi_case redirect-map-xmit-fail "$T" "$NETIF" "$NETIF" "$NETIF" -- redirect-map "$NETIF" vB0
	NAPI_MODE=$m napi_case tx "$T" "$NETIF" "$NETIF" "$NETIF" -- tx "$NETIF"
	NAPI_MODE=$m napi_case pass "$T" "$NETIF" "$NETIF" "$NETIF" -- pass "$NETIF"
done
napi_cost_unload
fi

# 2b. where the egress-drop poll's instructions go: each function of
# PROFILE_FNS (set by scripts/bench/bench.sh, which builds their -DPLAIN objects
# into /tools/profile) timed alone over one pktgen run. Raw figures: every
# traced call also pays the trampoline between the two timestamps; the
# report calibrates it out with bpf_fentry_test1() (net/bpf/test_run.c, the
# same 3 instructions in every kernel) timed the same way, called once per
# BPF_PROG_TEST_RUN of a tracing program, no traffic meanwhile.
if want profile; then
	napi_cost_unload
	if napi_cost_load /tools/profile bpf_fentry_test1 2>/dev/null &&
	   /tools/xdp_pp_run trace-run 2000 "$NAPI_COST_DIR/bpf_fentry_test1/p/napi_cost_in" >/dev/null; then
		python3 $SNAP snap | python3 $SNAP profile trampoline bpf_fentry_test1 2000 >> "$OUT"
	else
		echo "profile case=trampoline fn=bpf_fentry_test1 absent" >> "$OUT"
	fi
	napi_cost_unload
	xdp_pp_pktgen_setup "$REMOTE_IF" "$(cat /sys/class/net/"$NETIF"/address)"
	xdp_pp_pg "$REMOTE_IF" "burst ${BURST:-32}"
	xdp_bench_start /out/xb-profile.log redirect-map -X -A drop "$NETIF" "$NETIF"
	sleep 2
	xdp_pp_pg "$REMOTE_IF" "count 5000"
	xdp_pp_pg pgctrl start
	n=${VPKTS:-20000}
	for fn in ${PROFILE_FNS:?set by scripts/bench/bench.sh}; do
		napi_cost_unload
		if ! napi_cost_load /tools/profile "$fn" 2>/dev/null; then
			echo "profile case=redirect-map-egress-drop fn=$fn absent" >> "$OUT"
			continue
		fi
		xdp_pp_pg "$REMOTE_IF" "count $n"
		xdp_pp_pg pgctrl start
		python3 $SNAP snap | python3 $SNAP profile redirect-map-egress-drop "$fn" "$n" >> "$OUT"
	done
	napi_cost_unload
	xdp_bench_stop
fi

# 3. page_pool bench module (softirq runs incl. NAPI-aware): the series'
# module built for this kernel when scripts/bench/bench.sh made one (the same
# test code in every kernel), else this kernel's own
ko=/variant/pp_bench/bench_page_pool.ko
[ -f "$ko" ] || ko=/variant/kselftest/net/bench/page_pool/bench_page_pool.ko
if want pp_bench && [ -f "$ko" ]; then
	echo "# pp_bench module $ko" >> "$OUT"
	for r in $(seq "$REPEATS"); do
		n=$(dmesg | wc -l)
		insmod "$ko" loops=200000 run_flags=0xf2 >/dev/null 2>&1 && rmmod bench_page_pool
		dmesg | tail -n +$((n + 1)) | grep -oE 'Type:[a-z0-9_-]+ Per elem: [0-9]+ cycles\(tsc\) [0-9.]+ ns' |
		while read -r t _ _ _ _ ns _; do
			echo "case=pp_bench:${t#Type:} rep=$r value=$ns unit=ns cached=- ring=-" >> "$OUT"
		done
	done
fi

# 4. the test module's bench mode
ko=/variant/pp_decide/pp_decide_kunit.ko
if want pp_decide && [ -f "$ko" ]; then
	for r in $(seq "$REPEATS"); do
		n=$(dmesg | wc -l)
		insmod "$ko" bench=1 >/dev/null 2>&1; rmmod pp_decide_kunit 2>/dev/null
		dmesg | tail -n +$((n + 1)) | grep -oE 'pp_decide_bench: api=.*ns_per_op=.*' |
		while read -r _ api ctx _ ns _; do
			echo "case=pp_decide:${api#api=}/${ctx#ctx=} rep=$r value=${ns#ns_per_op=} unit=ns cached=- ring=-" >> "$OUT"
		done
	done
fi
echo "# done" >> "$OUT"
