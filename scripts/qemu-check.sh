#!/usr/bin/env bash
# qemu-check.sh - does this QEMU survive the kernel live-patching its text
# across vCPUs? Boots the test kernel N times under TCG with 2 vCPUs and runs
# scripts/guest/textpoke.sh (XDP attach/detach and static-key flips under
# traffic); counts boots that Oops. QEMU 7.2 (bookworm) was seen to Oops
# with "int3" at jump-label and bpf_dispatcher sites; the harness installs
# QEMU 10 from bookworm-backports (scripts/setup-host.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export FLAVOUR=${FLAVOUR:-debug}
# shellcheck source=lib.sh
. "$here/lib.sh"

usage() {
	cat <<'U'
usage: scripts/qemu-check.sh [BOOTS]

BOOTS (default 3) boots of the series kernel ($FLAVOUR, default debug) under
the QEMU of QEMU_BIN (default: qemu-system-x86_64 on PATH), each running
TEXTPOKE_ROUNDS (200) XDP attach/detach rounds under pktgen traffic.
Prints one line per boot and "N of BOOTS boots crashed, M hung".
Environment: QEMU_BIN, QEMU_DATA (-L dir for that QEMU's firmware),
TEXTPOKE_ROUNDS, OUT (default $CACHE/out/qemu-check).
Exit: 0 no crash and no hang, 1 otherwise.
U
}
case "${1:-}" in -h|--help) usage; exit 0 ;; esac
boots=${1:-3}
build=$(flavour_root "$(variant_root "$(kernel_repo)")" series)/build
[ -f "$build/arch/x86/boot/bzImage" ] || die "qemu-check: no kernel in $build (run: FLAVOUR=$FLAVOUR scripts/build.sh series)"
out=${OUT:-$OUTS/qemu-check}
extra=()
if [ -n "${QEMU_BIN:-}" ]; then
	extra+=(VM_QEMU="$QEMU_BIN")
fi
if [ -n "${QEMU_DATA:-}" ]; then
	[ -d "$QEMU_DATA" ] || die "qemu-check: QEMU_DATA=$QEMU_DATA is not a directory"
	extra+=(VM_QEMU_DATA="$QEMU_DATA")
fi
ver=$("${QEMU_BIN:-qemu-system-x86_64}" --version | awk 'NR == 1 {print $4}')
crashed=0 hung=0
for ((i = 1; i <= boots; i++)); do
	rm -rf "${out:?}/$i"
	if env "${extra[@]}" VM_TIMEOUT="${VM_TIMEOUT:-900}" "$here/vm.sh" "$build" "$out/$i" \
		env TEXTPOKE_ROUNDS="${TEXTPOKE_ROUNDS:-200}" bash /xdp-pp/scripts/guest/textpoke.sh \
		> "$out.$i.log" 2>&1; then
		echo "boot $i (QEMU $ver): ok: $(grep -h '^textpoke:' "$out.$i.log" | tail -1)"
	elif ! grep -q 'xdp-pp: guest up' "$out/$i/console.log" 2>/dev/null &&
		! grep -qE 'Oops|BUG:|panic|int3' "$out/$i/console.log" 2>/dev/null; then
		die "qemu-check: boot $i did not start the guest ($out.$i.log): $(grep -hm1 -i 'qemu' "$out.$i.log")"
	elif grep -q 'vm: timed out' "$out.$i.log" &&
		! grep -qE 'Oops|BUG:|panic|int3' "$out/$i/console.log" 2>/dev/null; then
		hung=$((hung + 1))
		echo "boot $i (QEMU $ver): HUNG (no crash, timed out): $(grep -h '^textpoke:' "$out.$i.log" | tail -1)"
	else
		crashed=$((crashed + 1))
		echo "boot $i (QEMU $ver): CRASH: $(grep -hm1 -E 'Oops|BUG:|panic|int3' "$out/$i/console.log" "$out/$i/dmesg.log" 2>/dev/null | sed 's/^\[[^]]*\] //')"
	fi
done
echo "$crashed of $boots boots crashed, $hung hung (QEMU $ver)"
[ "$crashed" -eq 0 ] && [ "$hung" -eq 0 ]
