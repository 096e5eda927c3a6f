#!/bin/bash
# init.sh - runs first inside the VM: mounts what vng's guest lacks
# (bpffs, debugfs, tracefs), quiets the console, then runs its arguments.
# shellcheck source=inguest.sh
. "${BASH_SOURCE[0]%/*}/inguest.sh" # inside the harness VM only
set -euo pipefail
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug
mountpoint -q /sys/kernel/tracing 2>/dev/null || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null || true
ulimit -l unlimited
# console: errors and worse only (hung task, RCU stall, lockup headers),
# so that a VM that times out still shows on the console what hung it
# (scripts/vm.sh scans the console when the guest left no dmesg.log)
dmesg -n 4 2>/dev/null || true
# scripts/vm.sh shows the console from this line on (boot lines stay in
# console.log)
echo "xdp-pp: guest up ($(uname -r))"
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# vng's exit-code channel needs udev-made /dev/virtio-ports links, which
# this guest root has not: hand the command's status back through /out.
rc=0
"$@" || rc=$?
# the whole kernel log (the console only shows level 1): scripts/splat.sh
dmesg > /out/dmesg.log 2>/dev/null || true
echo "$rc" > /out/.vm-rc
sync
exit "$rc"
