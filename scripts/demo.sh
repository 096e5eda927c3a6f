#!/usr/bin/env bash
# demo.sh - the main job: apply the series, build, boot, run the
# redirect-map egress-drop demo and print the receiving NIC's page_pool
# recycle stats (cached vs ring).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# the debug kernel (KASAN, lockdep, ...: selftests/config.debug); `make`
# and `make test` boot the same one
export FLAVOUR=${FLAVOUR:-debug}
# shellcheck source=lib.sh
. "$here/lib.sh"
case "${1:-}" in
-h|--help)
	cat <<'U'
usage: scripts/demo.sh [base|series]

Default: series. Output: the xdp-bench and pktgen summaries and the
page_pool stats delta of the receiving virtio NIC (console log in
$CACHE/out/demo-<variant>). Environment: KDIR, BASE, DEMO_PKTS (200000),
RUN_LOCK_WAIT=1 (wait for a run already going, instead of exit 1).
Rates are wall-clock under TCG emulation: noise, not performance.
U
	exit 0 ;;
esac
variant=${1:-series}
# one run at a time (lib.sh run_lock: busy is one line and exit 1;
# RUN_LOCK_WAIT=1 waits); then in seconds: host packages, disk, the guest
# root's prerequisites
run_lock demo "scripts/demo.sh $variant"
host_ready
preflight_disk "$variant"
"$here/guest-root.sh" --check
build=$("$here/build.sh" "$variant")
out=$OUTS/demo-$variant
rm -rf "$out"
"$here/vm.sh" "$build" "$out" env DEMO_PKTS="${DEMO_PKTS:-200000}" bash /xdp-pp/scripts/guest/demo.sh
