#!/bin/bash
# demo.sh - inside the VM: the RFC's benchmark, xdp-bench redirect-map with
# an egress program that drops (-X -A drop) on NETIF, fed by xdp-trafficgen
# from the remote netns; prints NETIF's page_pool recycle stats before and
# after (cached = direct cache, ring = ptr_ring).
set -euo pipefail
. /xdp-pp/scripts/guest/netsetup.sh
xdp_pp_netsetup
SECS=${DEMO_SECS:-10}
stats() { python3 /xdp-pp/scripts/guest/ppstats.py "$NETIF"; }

mac=$(cat /sys/class/net/"$NETIF"/address)
echo "== NETIF=$NETIF ($(ethtool -i "$NETIF" | sed -n 's/^driver: //p')), kernel $(uname -r)"
before=$(stats)
echo "page_pool before: $before"
# the sender's virtio_net needs an XDP program to offer ndo_xdp_xmit
xdp_pp_remote xdp-bench pass "$REMOTE_IF" > /tmp/pass.log 2>&1 &
pass=$!
xdp-bench redirect-map -X -A drop -s -i 2 "$NETIF" "$NETIF" > /tmp/bench.log 2>&1 &
bench=$!
sleep 3
xdp_pp_remote timeout "$SECS" xdp-trafficgen udp -t 1 -m "$mac" \
	-a 2001:db8::1 -A 2001:db8::2 "$REMOTE_IF" > /tmp/tgen.log 2>&1 || true
sleep 2
kill -INT "$bench" "$pass" 2>/dev/null || true
wait "$bench" "$pass" 2>/dev/null || true
after=$(stats)
echo "== xdp-bench redirect-map -X -A drop $NETIF $NETIF"
grep -E 'receive|redirect|xmit|drop|Packets|pps' /tmp/bench.log | tail -12 || cat /tmp/bench.log
echo "== xdp-trafficgen (remote)"
tail -4 /tmp/tgen.log
echo "page_pool after:  $after"
python3 - "$before" "$after" <<'P'
import json, sys
b, a = (json.loads(x) for x in sys.argv[1:])
d = {k: a[k] - b[k] for k in ('cached', 'ring', 'ring_full')}
tot = d['cached'] + d['ring']
share = 100.0 * d['cached'] / tot if tot else 0.0
print(f"page_pool recycle delta on {a['ifindex']}: cached={d['cached']} ring={d['ring']} "
      f"ring_full={d['ring_full']} cached share={share:.1f}%")
P
