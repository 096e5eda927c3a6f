#!/bin/bash
# bench.sh - inside the VM: the benchmark matrix, one result line per
# measurement in /out/bench.txt:
#   case=<name> rep=<i> value=<x> unit=<u> cached=<n> ring=<n>
# Under QEMU -icount shift=0, guest nanoseconds are guest instructions.
set -uo pipefail
REPEATS=${REPEATS:-5}
PACKETS=${PACKETS:-200000}
SECS=${SECS:-4}
OUT=/out/bench.txt
TOOL=/tools/xdp_pp_run
: > "$OUT"
. /xdp-pp/scripts/guest/netsetup.sh
xdp_pp_netsetup || exit 1
echo "# kernel $(uname -r) cpus $(nproc) $(cat /proc/cmdline)" >> "$OUT"

ip link add veth0 type veth peer name veth1
ip link set veth0 up
ip link set veth1 up

stats() { python3 /xdp-pp/scripts/guest/ppstats.py "$NETIF"; }
delta() { # before after -> "cached=.. ring=.."
	python3 -c 'import json,sys; b,a=(json.loads(x) for x in sys.argv[1:]); print("cached=%d ring=%d" % (a["cached"]-b["cached"], a["ring"]-b["ring"]))' "$1" "$2"
}

# 1. synchronous BPF_PROG_TEST_RUN live-frame cases (test_run's pool: ring)
for c in devmap-egress-drop devmap-xmit-fail devmap-bcast-empty veth-drop cpumap-drop xdp-drop; do
	$TOOL "$c" 20000 >/dev/null 2>&1 # warm up
	for r in $(seq "$REPEATS"); do
		line=$($TOOL "$c" "$PACKETS" 2>&1) || { echo "# $c failed: $line" >> "$OUT"; continue; }
		v=$(sed -n 's/.*ns_per_pkt=\([0-9.]*\) .*/\1/p' <<<"$line" | head -1)
		echo "case=run:$c rep=$r value=$v unit=ns/pkt cached=- ring=-" >> "$OUT"
	done
	ip link set veth1 xdp off 2>/dev/null
done

# 2. virtio_net loop: xdp-trafficgen in the remote netns -> NETIF
mac=$(cat /sys/class/net/"$NETIF"/address)
ip netns exec remote xdp-bench pass "$REMOTE_IF" > /dev/null 2>&1 &
pass=$!
sleep 2
virtio_case() { # name, then the xdp-bench arguments
	local name=$1 r b a rate
	shift
	for r in $(seq "$REPEATS"); do
		xdp-bench "$@" -i 1 > /tmp/xb.log 2>&1 &
		local xb=$!
		sleep 2
		b=$(stats)
		ip netns exec remote timeout "$SECS" xdp-trafficgen udp -t 1 -m "$mac" \
			-a 192.0.2.1 -A 192.0.2.2 "$REMOTE_IF" > /tmp/tg.log 2>&1
		a=$(stats)
		kill -INT "$xb"; wait "$xb" 2>/dev/null
		# receive rate: median of the per-interval "receive" lines
		rate=$(grep -E '^(receive|Receive)' /tmp/xb.log | grep -oE '[0-9,]+ pkt/s' |
			tr -d ', pkt/s' | sort -n | awk '{v[NR]=$1} END {if (NR) print v[int((NR+1)/2)]; else print 0}')
		echo "case=virtio:$name rep=$r value=$rate unit=pps $(delta "$b" "$a")" >> "$OUT"
	done
}
virtio_case redirect-map-egress-drop redirect-map -X -A drop "$NETIF" "$NETIF"
virtio_case redirect-map-veth redirect-map "$NETIF" veth0
virtio_case drop drop "$NETIF"
virtio_case tx tx "$NETIF"
virtio_case pass pass "$NETIF"
virtio_case redirect-cpu redirect-cpu -c 0 -r drop "$NETIF"
kill -INT "$pass" 2>/dev/null

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
		dmesg | tail -n +$((n + 1)) | grep -oE 'pp_decide_bench: .*' |
		while read -r _ api ctx _ ns _; do
			echo "case=pp_decide:${api#api=}/${ctx#ctx=} rep=$r value=${ns#ns_per_op=} unit=ns cached=- ring=-" >> "$OUT"
		done
	done
fi
echo "# done" >> "$OUT"
