#!/bin/bash
# bench-nic-vm.sh - inside the VM: scripts/bench/bench-nic.sh against the looped
# virtio NICs, generator = pktgen in the "remote" netns. Checks the
# real-NIC path end to end (label detection, xdp-bench parsing, NAPI cost,
# page_pool stats) where no NIC exists. Results: /out/<label>-nic/.
# shellcheck source=../../guest/inguest.sh
. "${BASH_SOURCE[0]%/*}/../../guest/inguest.sh" # inside the harness VM only
set -uo pipefail
. /xdp-pp/scripts/guest/netsetup.sh
xdp_pp_netsetup || exit 1
NETIF=$NETIF REMOTE_IF=$REMOTE_IF REMOTE_SH="ip netns exec remote" \
	TRAFFICGEN=pktgen NAPI_COST_OBJS=/tools BENCH_OUT=/out KSRC=/variant/src \
	REPEATS=${REPEATS:-3} DURATION=${DURATION:-2} WARMUP=${WARMUP:-1} \
	NIC_NOTE="${NIC_NOTE:-VM}" bash /xdp-pp/scripts/bench/bench-nic.sh
