#!/bin/bash
# demo.sh - inside the VM: the RFC's benchmark, xdp-bench redirect-map with
# an egress program that drops (-X -A drop) on NETIF, fed by pktgen from the
# looped second NIC; prints NETIF's page_pool recycle stats before and after
# (cached = direct cache, ring = ptr_ring). Rates are TCG wall-clock: noise.
# shellcheck source=inguest.sh
. "${BASH_SOURCE[0]%/*}/inguest.sh" # inside the harness VM only
set -euo pipefail
. /xdp-pp/scripts/guest/netsetup.sh
NETIF=eth0
SENDER=eth1
PKTS=${DEMO_PKTS:-200000}
ip link set "$NETIF" up
ip link set "$SENDER" up
# page_pool stats of NETIF (scripts/guest/ppstats.py); the demo fails at
# once, with ppstats's line, when they cannot be read
stats() {
	python3 /xdp-pp/scripts/guest/ppstats.py "$NETIF" ||
		{ echo "demo: FAIL: no page_pool stats for $NETIF (see the line above)" >&2; exit 1; }
}

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
# one line, the delta; exit 1 when NETIF has no pool or nothing came back
python3 - "$before" "$after" <<'P'
import json, sys
b, a = (json.loads(x) for x in sys.argv[1:])
d = {k: a[k] - b[k] for k in ('cached', 'ring', 'ring_full')}
tot = d['cached'] + d['ring'] + d['ring_full']
share = 100.0 * d['cached'] / tot if tot else 0.0
print(f"page_pool recycle delta on ifindex {a['ifindex']}: cached={d['cached']} ring={d['ring']} "
      f"ring_full={d['ring_full']} -> cached share {share:.1f}%")
if not a['pools']:
    sys.exit("demo: FAIL: the receiving NIC has no page_pool")
if not tot:
    sys.exit("demo: FAIL: no page came back to the receiving NIC's page_pool (cached + ring + ring_full = 0)")
P
