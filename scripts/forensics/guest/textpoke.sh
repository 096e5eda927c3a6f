#!/bin/bash
# textpoke.sh - inside the VM: make the kernel live-patch its text on one
# vCPU while another vCPU runs the patched code, as the harness's tests do
# by accident: every XDP attach/detach re-patches bpf_dispatcher_xdp_func
# (text_poke_bp(): int3 first, then the new bytes) while NET_RX runs it on
# the other vCPU, fed by pktgen; every static-key flip (here: net_timestamp
# via SO_TIMESTAMP sockets) patches jump labels. A TCG that executes a
# half-patched instruction Oopses with "int3". Prints one result line.
# shellcheck source=../../guest/inguest.sh
. "${BASH_SOURCE[0]%/*}/../../guest/inguest.sh" # inside the harness VM only
set -uo pipefail
. /xdp-pp/scripts/guest/netsetup.sh
ROUNDS=${TEXTPOKE_ROUNDS:-200}
NETIF=eth0
SENDER=eth1
ip link set "$NETIF" up
ip link set "$SENDER" up
mac=$(cat /sys/class/net/"$NETIF"/address)
obj=/variant/kselftest/net/lib/xdp_dummy.bpf.o
[ -f "$obj" ] || { echo "textpoke: no $obj (kselftests not built?)"; exit 4; }
xdp_pp_pktgen_setup "$SENDER" "$mac"
xdp_pp_pg "$SENDER" "count 0"
xdp_pp_pg pgctrl start &
pg=$!
python3 - "$ROUNDS" <<'P' &
import socket, sys, time
# flip the netstamp static key on and off (jump-label patching)
for _ in range(int(sys.argv[1])):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_TIMESTAMP", 29), 1)
    time.sleep(0.01)
    s.close()
    time.sleep(0.01)
P
ts=$!
ok=0
for ((i = 0; i < ROUNDS; i++)); do
	ip link set dev "$NETIF" xdpdrv obj "$obj" sec xdp 2>/dev/null && ok=$((ok + 1))
	ip link set dev "$NETIF" xdpdrv off 2>/dev/null
	[ $(((i + 1) % 10)) -ne 0 ] || echo "textpoke: round $((i + 1))/$ROUNDS, $ok attached"
done
wait "$ts" 2>/dev/null
echo "stop" > /proc/net/pktgen/pgctrl 2>/dev/null
wait "$pg" 2>/dev/null
rx=$(cat /sys/class/net/"$NETIF"/statistics/rx_packets)
echo "textpoke: $ROUNDS XDP attach/detach rounds ($ok attached) under traffic, rx_packets=$rx"
[ "$ok" -gt 0 ] || { echo "textpoke: no attach succeeded"; exit 1; }
