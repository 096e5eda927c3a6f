#!/usr/bin/env bash
# cache-selftest.sh - check the cache plugin's model against exact figures:
# a bare-metal guest (net-core/bench/cache_selftest.c) with known access
# patterns in three windows, run under QEMU TCG with the plugin.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib.sh
. "$here/../lib.sh"

usage() {
	cat <<'U'
usage: scripts/bench/cache-selftest.sh [--help]

Builds net-core/bench/cache_selftest.c (32-bit multiboot, gcc -m32) and the
plugin (scripts/bench/cache-plugin.sh), runs the guest under
qemu-system-x86_64 (TCG, 1 s) with the plugin in several configurations and
compares each window's accesses / L1D misses / L2 misses with what the
access pattern implies (32 KiB 8-way L1D, 1 MiB 16-way L2, 64-byte lines):
  window 1  friendly: 10 passes over a warm 16 KiB array: ~0 misses
  window 2  hostile: 2 passes, 64-byte stride over 4 MiB: every access misses
  window 3  window 1 after window 2 evicted it: 256 misses (16 KiB / 64)
model=armed (cold at window 1), an 8 KiB 4-way L1D (the array thrashes it)
and 2 vCPUs (the locked path), with icache=on too, are checked, and that
scripts/bench/cache-report.py names hostile() and friendly() for those
misses. Files in $CACHE/qemu-plugin/selftest.
Exit: 0 all figures as expected, 1 a mismatch or failure, 4 skip (no
QEMU plugin support).
U
}
case "${1:-}" in -h|--help) usage; exit 0 ;; "") ;; *) usage >&2; exit 1 ;; esac

rc=0
so=$("$here/cache-plugin.sh") || { rc=$?; exit "$rc"; }
d=$CACHE/qemu-plugin/selftest
mkdir -p "$d"
cat > "$d/mb.ld" <<'L'
ENTRY(_start)
SECTIONS {
	. = 0x100000;
	.text : { *(.multiboot) *(.text*) }
	.rodata : { *(.rodata*) }
	.data : { *(.data*) }
	.bss : { *(.bss*) *(COMMON) }
}
L
${CC:-gcc} -m32 -O2 -ffreestanding -fno-pic -fno-stack-protector -nostdlib \
	-c "$REPO/net-core/bench/cache_selftest.c" -o "$d/st.o" ||
	die "cache-selftest: gcc -m32 failed"
ld -m elf_i386 -T "$d/mb.ld" --no-warn-rwx-segments -o "$d/st.elf" "$d/st.o" ||
	die "cache-selftest: ld failed"
nm "$d/st.elf" > "$d/st.map"

fails=0
# run NAME VCPUS PLUGIN_ARGS EXPECT...: EXPECT is "window:accesses:l1d:l2"
run() {
	local name=$1 cpus=$2 args=$3 e w a l1 l2 got ga gl1 gl2 qrc=0
	shift 3
	timeout 120 qemu-system-x86_64 -smp "$cpus" -m 64 -display none -serial none \
		-monitor none -nodefaults -device isa-debug-exit,iobase=0xf4,iosize=1 \
		-kernel "$d/st.elf" \
		-plugin "$so,out=$d/$name.csv,map=$d/st.map,start=cw_start,stop=cw_stop,kbase=0${args:+,$args}" \
		> "$d/$name.log" 2>&1 || qrc=$?
	# isa-debug-exit: (1 << 1) | 1
	if [ "$qrc" != 3 ]; then
		log "cache-selftest: $name: QEMU exited $qrc (want 3): $(tail -3 "$d/$name.log")"
		fails=$((fails + 1))
		return 0
	fi
	for e in "$@"; do
		IFS=: read -r w a l1 l2 <<<"$e"
		got=$(sed -n "s/^# window $w closed: insns=[0-9]* accesses=\([0-9]*\) l1d_misses=\([0-9]*\) l2_misses=\([0-9]*\) .*/\1 \2 \3/p" "$d/$name.csv")
		read -r ga gl1 gl2 <<<"${got:-x x x}"
		# a few accesses of the calls around the pattern: +16 slack, misses +4
		if [[ "$ga" =~ ^[0-9]+$ ]] && ((ga >= a && ga <= a + 16 && gl1 >= l1 && gl1 <= l1 + 4 &&
			gl2 >= l2 && gl2 <= l2 + 4)); then
			echo "ok   $name window $w: accesses=$ga l1d_misses=$gl1 l2_misses=$gl2 (want $a/$l1/$l2, +slack)"
		else
			echo "FAIL $name window $w: accesses=$ga l1d_misses=$gl1 l2_misses=$gl2 (want $a/$l1/$l2, +slack)"
			fails=$((fails + 1))
		fi
	done
}
# friendly: 10 x 2048 64-bit loads (two 32-bit loads each); hostile: 2 x 65536;
# armed-icache window 1: its L2 also misses the cold code lines
run default 1 "" 1:40960:0:0 2:131072:131072:131072 3:40960:256:256
run armed 1 model=armed 1:40960:256:256 2:131072:131072:131072 3:40960:256:256
run small-l1 1 l1size=8K,l1assoc=4 1:40960:2560:0 2:131072:131072:131072 3:40960:2560:256
run no-l2 1 l2size=0 1:40960:0:0 2:131072:131072:0 3:40960:256:0
run smp2 2 "" 1:40960:0:0 2:131072:131072:131072 3:40960:256:256
run icache 1 icache=on 1:40960:0:0 2:131072:131072:131072 3:40960:256:256
run armed-icache 2 model=armed,icache=on 1:40960:256:260 2:131072:131072:131072 3:40960:256:256
# attribution: window 2's misses belong to hostile(), window 3's to friendly()
for e in 2:hostile:131072 3:friendly:256; do
	IFS=: read -r w fn want <<<"$e"
	got=$("$here/cache-report.py" "$d/default.csv" --map "$d/st.map" --user-below 0 \
		--window "$w" --quiet --group "$fn=^$fn" | sed -n "s/^cache case=- fn=$fn accesses=[0-9]* misses=\([0-9]*\) .*/\1/p")
	if [ "${got:-0}" -ge "$want" ] && [ "$got" -le $((want + 4)) ]; then
		echo "ok   attribution window $w: $fn() misses=$got (want $want)"
	else
		echo "FAIL attribution window $w: $fn() misses=${got:-none} (want $want)"
		fails=$((fails + 1))
	fi
done
# sets=on: hostile()'s misses cover every L1D set, aliased()'s (window 4:
# 16 lines 4 KiB apart, 64 misses, the first pass's 16 in L2 too) exactly one
run sets 1 sets=on 4:64:64:16
for e in 2:hostile:64 4:aliased:1; do
	IFS=: read -r w fn want <<<"$e"
	got=$("$here/cache-report.py" "$d/sets.csv" --map "$d/st.map" --user-below 0 \
		--window "$w" --quiet --insns "$fn" | sed -n 's/^insn .* sets=\([0-9,]*\) .*/\1/p' |
		tr ',' '\n' | sort -un | grep -c . || true)
	if [ "$got" = "$want" ]; then
		echo "ok   sets window $w: $fn()'s misses in $got L1D set(s) (want $want)"
	else
		echo "FAIL sets window $w: $fn()'s misses in ${got:-no} L1D set(s) (want $want)"
		fails=$((fails + 1))
	fi
done
if [ "$fails" != 0 ]; then
	log "cache-selftest: $fails mismatch(es); outputs in $d"
	exit 1
fi
log "cache-selftest: all figures as expected"
