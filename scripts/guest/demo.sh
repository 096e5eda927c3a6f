#!/bin/bash
# demo.sh - inside the VM: the RFC's benchmark, xdp-bench redirect-map with
# an egress program that drops (-X -A drop) on NETIF, fed by pktgen from the
# looped second NIC; prints NETIF's page_pool recycle stats before and after
# (cached = direct cache, ring = ptr_ring). Rates are TCG wall-clock: noise.
set -euo pipefail
. /xdp-pp/scripts/guest/netsetup.sh
NETIF=eth0
SENDER=eth1
PKTS=${DEMO_PKTS:-200000}
ip link set "$NETIF" up
ip link set "$SENDER" up
stats() { python3 /xdp-pp/scripts/guest/ppstats.py "$NETIF"; }

mac=$(cat /sys/class/net/"$NETIF"/address)
echo "== NETIF=$NETIF ($(ethtool -i "$NETIF" | sed -n 's/^driver: //p')), kernel $(uname -r)"
xdp-bench redirect-map -X -A drop -s -i 1 "$NETIF" "$NETIF" > /tmp/bench.log 2>&1 &
bench=$!
sleep 2
before=$(stats)
echo "page_pool before: $before"
xdp_pp_pktgen_setup "$SENDER" "$mac"
xdp_pp_pg "$SENDER" "count $PKTS"
xdp_pp_pg pgctrl start
sleep 1
after=$(stats)
kill -INT "$bench" 2>/dev/null || true
wait "$bench" 2>/dev/null || true
echo "== xdp-bench redirect-map -X -A drop $NETIF $NETIF"
grep -vE '^ *$' /tmp/bench.log | tail -8
echo "== pktgen on $SENDER: $(grep -E 'pps|Result' /proc/net/pktgen/"$SENDER" | tr -s ' ' | tr '\n' ' ')"
echo "page_pool after:  $after"
python3 - "$before" "$after" <<'P'
import json, sys
b, a = (json.loads(x) for x in sys.argv[1:])
d = {k: a[k] - b[k] for k in ('cached', 'ring', 'ring_full')}
tot = d['cached'] + d['ring'] + d['ring_full']
share = 100.0 * d['cached'] / tot if tot else 0.0
print(f"page_pool recycle delta on ifindex {a['ifindex']}: cached={d['cached']} ring={d['ring']} "
      f"ring_full={d['ring_full']} -> cached share {share:.1f}%")
P
