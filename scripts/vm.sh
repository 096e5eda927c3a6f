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
  VM_QEMU a QEMU binary other than qemu-system-x86_64 on PATH.
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
tools=${VM_TOOLS:-$CACHE/tools}
mkdir -p "$tools"

# no5lvl: TCG's CPU model offers LA57; with 5-level paging a KASAN kernel
# reports a wild-memory-access when an interrupt arrives while
# identify_cpu() clears the capability bits (pgtable_l5_enabled() reads
# false for a moment, so the direct map looks out of range). Not the
# series; seen at 0.006 s of boot, before any networking.
qopts=()
if [ "${VM_ICOUNT:-0}" = 1 ]; then
	qopts+=(--qemu-opts="-icount shift=0")
fi
cmd=$(printf '%q ' "$@")
console=$out/console.log
mode=TCG
[ "${VM_ICOUNT:-0}" = 1 ] && mode="TCG, -icount shift=0"
log "vm: booting $(basename "$(dirname "$build")") kernel (${VM_CPUS:-2} vCPU, $mode)"
set +e
cd "$guest"
timeout --kill-after=30 "${VM_TIMEOUT:-1800}" \
	vng --run "$img" --root "$guest" --disable-microvm --disable-kvm --force-9p --verbose \
	${VM_QEMU:+--qemu "$VM_QEMU"} \
	--cpus "${VM_CPUS:-2}" --memory "${VM_MEM:-2G}" --network loop \
	--append root=/dev/root --append "nokaslr norandmaps log_buf_len=8M no5lvl ${VM_APPEND:-}" \
	--rodir /xdp-pp="$REPO" --rodir /variant="$(dirname "$build")" \
	--rwdir /out="$out" --rodir /tools="$tools" "${qopts[@]}" \
	--exec "bash /xdp-pp/scripts/guest/init.sh $cmd" \
	< /dev/null 2>&1 | tee "$console" |
	awk '/xdp-pp: guest up/ { on = 1 } on && !/^\[ *[0-9]+\.[0-9]+\]/ { print; fflush() }'
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" != 124 ] && [ "$rc" != 137 ]; then
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
timed_out=0
[ "$rc" = 124 ] || [ "$rc" = 137 ] && timed_out=1
if [ "$timed_out" = 1 ]; then
	echo "---- last 50 console lines ($console) ----" >&2
	tail -50 "$console" >&2
	die "vm: timed out after ${VM_TIMEOUT:-1800} s"
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
