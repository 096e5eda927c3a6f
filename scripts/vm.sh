#!/usr/bin/env bash
# vm.sh - boot a built kernel under QEMU (virtme-ng, TCG) with the guest
# root, two virtio NICs wired back to back, and run one command in it.
#
# The console goes to $OUT/console.log; the terminal shows it from the
# guest's first line on, without kernel messages. A VM that hangs is
# stopped (timeout) and the last 50 console lines are shown; any kernel
# splat in the console (scripts/splat.sh) fails the run, decoded.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

usage() {
	cat <<'U'
usage: scripts/vm.sh <build dir> <out dir> <command...>

Runs <command> as root inside a VM booted from <build dir>'s bzImage.
In the guest: this repo at /xdp-pp (read-only), <build dir>'s variant root
at /variant (read-only), <out dir> at /out (read-write).
Environment:
  VM_CPUS (2), VM_MEM (2G), VM_TIMEOUT (seconds, 1800),
  VM_ICOUNT=1 to run QEMU with -icount shift=0 (guest time = instructions),
  VM_APPEND extra kernel arguments, VM_TOOLS a host dir seen as /tools,
  VM_QEMU a QEMU binary other than qemu-system-x86_64 on PATH,
  VM_QEMU_DATA that QEMU's firmware dir (-L), for a QEMU unpacked elsewhere.
Exit: the command's exit code; 1 on a kernel splat (panic, KASAN,
lockdep, WARN, ...; scripts/splat.sh) or a timeout.
U
}
case "${1:-}" in -h|--help) usage; exit 0 ;; esac
[ $# -ge 3 ] || { usage >&2; exit 1; }
build=$1 out=$2
shift 2
need_tool vng "sudo scripts/setup-host.sh"
need_tool qemu-system-x86_64 "sudo scripts/setup-host.sh"
img=$build/arch/x86/boot/bzImage
[ -f "$img" ] || die "vm: no kernel image $img (run scripts/build.sh)"
guest=$("$here/guest-root.sh")
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out/.vm-rc" "$out/dmesg.log"
tools=$TOOLS
mkdir -p "$tools"

cmd=$(printf '%q ' "$@")
console=$out/console.log
mode=TCG
[ "${VM_ICOUNT:-0}" = 1 ] && mode="TCG, -icount shift=0"
log "vm: booting $(basename "$(dirname "$build")") kernel (${VM_CPUS:-2} vCPU, $mode)"
cd "$guest"
: > "$console"
# QEMU runs in a session of its own (setsid), so that it is not in the
# terminal's process group: Ctrl-C reaches this script, whose trap then
# kills the whole session (vng and QEMU) - on Ctrl-C, on SIGTERM from a
# caller (a failing sibling VM in bench/bench.sh), on the timeout, on any exit.
# A new session is also a new scheduler autogroup, which starts at nice 0
# whatever this process's nice is (sched_autogroup_enabled: nice only
# weighs within a group), so a VM started under `nice -n 19` would take
# an equal share of the CPUs from a VM or build in another session. The
# session's first process gives the group the caller's nice value.
vng_args "$build" "$out" "$tools" "$guest"
# shellcheck disable=SC2016 # expanded by the inner bash
setsid bash -c 'n=$(nice); [ "$n" -le 0 ] || echo "$n" > /proc/self/autogroup 2>/dev/null || true; exec "$@"' \
	vm "${VNG[@]}" --exec "bash /xdp-pp/scripts/guest/init.sh $cmd" \
	< /dev/null > "$console" 2>&1 &
vm=$!
vm_kill() {
	kill -0 "$vm" 2>/dev/null || return 0
	kill -TERM -- -"$vm" 2>/dev/null || kill -TERM "$vm" 2>/dev/null || true
	wait_for "$vm" 10 || kill -KILL -- -"$vm" 2>/dev/null || true
}
trap 'vm_kill' EXIT
# after the VM is gone, die of SIGINT again so that callers stop too
trap 'log "vm: interrupted, stopping the VM"; vm_kill; trap - INT EXIT; kill -INT $$' INT
trap 'vm_kill; exit 143' TERM HUP
# the terminal shows the guest's own lines (from "guest up" on), no kernel log
# (sed -u: line by line; mawk would hold its input until a block filled)
tail -n +1 -F --pid="$vm" "$console" 2>/dev/null |
	sed -un '/xdp-pp: guest up/,$ { /^\[ *[0-9]\+\.[0-9]\+\]/!p }' &
shown=$!
rc=0
if wait_for "$vm" "${VM_TIMEOUT:-1800}"; then
	wait "$vm" || rc=$?
else
	rc=124
	vm_kill
fi
wait "$shown" 2>/dev/null || true
if [ "$rc" != 124 ]; then
	# the guest's own status (see scripts/guest/init.sh); none: it died
	if [ -f "$out/.vm-rc" ]; then
		rc=$(cat "$out/.vm-rc")
		rm -f "$out/.vm-rc"
	else
		log "vm: the guest command did not finish (no exit status); last console lines:"
		tail -30 "$console" >&2
		rc=1
	fi
fi
if [ "$rc" = 124 ]; then
	echo "---- last 50 console lines ($console) ----" >&2
	tail -50 "$console" >&2
	# a hang often comes with a report (soft lockup, RCU stall, hung task,
	# panic): scan what the guest left (no dmesg.log: the console, which
	# after init.sh's `dmesg -n 1` has only KERN_EMERG lines), then die
	klog=$out/dmesg.log
	[ -s "$klog" ] || klog=$console
	if ! "$here/splat.sh" "$klog" "$build" > "$out/splats.txt" 2>&1; then
		cat "$out/splats.txt" >&2
		die "vm: timed out after ${VM_TIMEOUT:-1800} s, with kernel splats in $(basename "$klog") (decoded above; $out/splats.txt)"
	fi
	grep 'expected' "$out/splats.txt" >&2 || true
	die "vm: timed out after ${VM_TIMEOUT:-1800} s, no splat in $(basename "$klog") (fix: raise VM_TIMEOUT, or see the console lines above)"
fi
# any splat (KASAN, lockdep, WARN, ...) fails the run, decoded
# the guest's dmesg (init.sh) has every level; the console has what a
# guest that died printed
klog=$out/dmesg.log
[ -s "$klog" ] || klog=$console
if ! "$here/splat.sh" "$klog" "$build" > "$out/splats.txt" 2>&1; then
	cat "$out/splats.txt" >&2
	die "vm: kernel splats in the console log (decoded above; $out/splats.txt)"
fi
grep -q 'expected' "$out/splats.txt" && grep 'expected' "$out/splats.txt" >&2
exit "$rc"
