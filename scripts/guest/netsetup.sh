#!/bin/bash
# netsetup.sh - sourced inside the VM: the drivers/net test environment on
# vng's two looped virtio NICs. NETIF stays in the main netns with
# 192.0.2.1/24; the other NIC goes to netns "remote" with 192.0.2.2/24.
# (2001:db8::1/2 for IPv6). Exports NETIF REMOTE_IF LOCAL_V4 REMOTE_V4
# LOCAL_V6 REMOTE_V6 REMOTE_TYPE REMOTE_ARGS, and xdp_pp_remote: run a
# command in the remote netns with bpffs mounted (ip netns exec remounts
# /sys, and libxdp needs bpffs), and xdp_pp_pktgen_setup / xdp_pp_pg.

# shellcheck source=inguest.sh
. "${BASH_SOURCE[0]%/*}/inguest.sh" # inside the harness VM only
xdp_pp_netsetup() {
	local ifs=() d
	for d in /sys/class/net/*; do
		[ "${d##*/}" = lo ] || ifs+=("${d##*/}")
	done
	if [ ${#ifs[@]} -lt 2 ]; then
		echo "netsetup: need two NICs (vng --network loop), found: ${ifs[*]}" >&2
		return 1
	fi
	NETIF=${ifs[0]}
	REMOTE_IF=${ifs[1]}
	ip link set lo up
	ip netns add remote
	ip link set "$REMOTE_IF" netns remote
	ip addr add 192.0.2.1/24 dev "$NETIF"
	ip addr add 2001:db8::1/64 dev "$NETIF" nodad
	ip link set "$NETIF" up
	ip -n remote addr add 192.0.2.2/24 dev "$REMOTE_IF"
	ip -n remote addr add 2001:db8::2/64 dev "$REMOTE_IF" nodad
	ip -n remote link set "$REMOTE_IF" up
	ip -n remote link set lo up
	export NETIF REMOTE_IF LOCAL_V4=192.0.2.1 REMOTE_V4=192.0.2.2 \
		LOCAL_V6=2001:db8::1 REMOTE_V6=2001:db8::2 \
		REMOTE_TYPE=netns REMOTE_ARGS=remote
	local _
	for _ in $(seq 50); do
		ping -q -c1 -W1 192.0.2.2 >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	echo "netsetup: 192.0.2.2 does not answer" >&2
	return 1
}

xdp_pp_remote() {
	ip netns exec remote sh -c 'mount -t bpf bpf /sys/fs/bpf 2>/dev/null; exec "$@"' sh "$@"
}

# pktgen on DEV sending SIZE-byte (default 60) UDP frames to DST_MAC
# (port 9); start a run with `xdp_pp_pg DEV "count N"; xdp_pp_pg pgctrl start`.
xdp_pp_pg() { echo "$2" > "/proc/net/pktgen/$1"; }
xdp_pp_pktgen_setup() { # DEV DST_MAC [SIZE]
	local kv
	xdp_pp_pg kpktgend_0 "rem_device_all"
	xdp_pp_pg kpktgend_0 "add_device $1"
	for kv in "pkt_size ${3:-60}" "delay 0" "dst 192.0.2.1" "dst_mac $2" \
		  "udp_dst_min 9" "udp_dst_max 9"; do
		xdp_pp_pg "$1" "$kv"
	done
}
