#!/bin/bash
# bench.sh - inside the VM: the benchmark matrix, one result line per
# measurement in /out/bench.txt:
#   case=<name> rep=<i> value=<x> unit=<u> cached=<n> ring=<n>
# Under QEMU -icount shift=0, guest nanoseconds are guest instructions.
set -uo pipefail
REPEATS=${REPEATS:-5}
PACKETS=${PACKETS:-200000}
OUT=/out/bench.txt
TOOL=/tools/xdp_pp_run
: > "$OUT"
. /xdp-pp/scripts/guest/netsetup.sh
xdp_pp_netsetup || exit 1
echo "# kernel $(uname -r) cpus $(nproc) $(cat /proc/cmdline)" >> "$OUT"

# vA0: a devmap target that can transmit (GRO on its peer makes veth offer
# ndo_xdp_xmit); vB0: one whose ndo_xdp_xmit fails (peer has GRO, so the
# target offers ndo-xmit, but is down: -ENXIO); vC0/vC1: veth-drop.
ip link add vA0 type veth peer name vA1
ethtool -K vA1 gro on >/dev/null
ip link set vA0 up; ip link set vA1 up
ip link add vB0 type veth peer name vB1
ethtool -K vB1 gro on >/dev/null
ip link set vB0 up
ip link add vC0 type veth peer name vC1
ip link set vC0 up; ip link set vC1 up
declare -A TGT=([devmap-egress-drop]=vA0 [devmap-xmit-fail]=vB0
	[devmap-bcast-empty]=vA0 [veth-drop]="vC0 vC1" [cpumap-drop]=vA0 [xdp-drop]=vA0)

stats() { python3 /xdp-pp/scripts/guest/ppstats.py "$NETIF"; }
delta() { # before after -> "cached=.. ring=.."
	python3 -c 'import json,sys; b,a=(json.loads(x) for x in sys.argv[1:]); print("cached=%d ring=%d" % (a["cached"]-b["cached"], a["ring"]-b["ring"]))' "$1" "$2"
}

# 1. synchronous BPF_PROG_TEST_RUN live-frame cases (test_run's pool: ring)
for c in devmap-egress-drop devmap-xmit-fail devmap-bcast-empty veth-drop cpumap-drop xdp-drop; do
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

# 2. virtio_net loop: pktgen on the second NIC sends to NETIF, which runs
# the XDP case. One vCPU: pktgen's own elapsed time covers sender and
# receiver; under icount 1e9/pps is guest instructions per packet of both.
# (xdp-trafficgen needs an ethtool ioctl virtio_net lacks here.)
ip netns exec remote ip link set "$REMOTE_IF" netns 1
ip link set "$REMOTE_IF" up
mac=$(cat /sys/class/net/"$NETIF"/address)
xdp_pp_pktgen_setup "$REMOTE_IF" "$mac"
VPKTS=${VPKTS:-$((PACKETS / 2))}
virtio_case() { # name, then the xdp-bench arguments
	local name=$1 r b a rate
	shift
	xdp-bench "$@" -i 1 > "/out/xb-$name.log" 2>&1 &
	local xb=$!
	sleep 2
	xdp_pp_pg "$REMOTE_IF" "count 5000"
	xdp_pp_pg pgctrl start # warm up
	for r in $(seq "$REPEATS"); do
		b=$(stats)
		xdp_pp_pg "$REMOTE_IF" "count $VPKTS"
		xdp_pp_pg pgctrl start
		a=$(stats)
		rate=$(sed -nE 's/^ *([0-9]+)pps .*/\1/p' "/proc/net/pktgen/$REMOTE_IF")
		echo "case=virtio:$name rep=$r value=$rate unit=pps $(delta "$b" "$a")" >> "$OUT"
	done
	kill -INT "$xb"; wait "$xb" 2>/dev/null
}
virtio_case redirect-map-egress-drop redirect-map -X -A drop "$NETIF" "$NETIF"
virtio_case redirect-map-veth redirect-map "$NETIF" vA0
virtio_case drop drop "$NETIF"
virtio_case tx tx "$NETIF"
virtio_case pass pass "$NETIF"
virtio_case redirect-cpu redirect-cpu -c 0 -r drop "$NETIF"

# 3. page_pool bench module (softirq runs incl. NAPI-aware)
ko=/variant/kselftest/net/bench/page_pool/bench_page_pool.ko
if [ -f "$ko" ]; then
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
if [ -f "$ko" ]; then
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
