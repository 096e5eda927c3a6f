#!/usr/bin/env bash
# qemu-check.sh - is this QEMU dependable for the harness? Boots a test
# kernel N times under TCG and runs one workload per boot: make test's
# guest suite, scripts/forensics/guest/textpoke.sh (XDP attach/detach and
# static-key flips under traffic) or scripts/forensics/guest/textpoke-dense.sh
# (static keys, tracepoints and ftrace sites flipped back to back on vCPU 0
# while the other vCPUs run them); counts boots that crashed, hung or failed.
# Bookworm's QEMU 7.2 was seen to Oops with "int3" at jump-label and
# bpf_dispatcher sites; the harness installs QEMU 10 (scripts/setup-host.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export FLAVOUR=${FLAVOUR:-debug}
# shellcheck source=../lib.sh
. "$here/../lib.sh"

usage() {
	cat <<'U'
usage: scripts/forensics/qemu-check.sh [BOOTS]

BOOTS (default 3) boots of a kernel (BUILD, default the series build of
$FLAVOUR, default debug) under the QEMU of QEMU_BIN (default:
qemu-system-x86_64 on PATH), each running one WORKLOAD:
  textpoke  (default) TEXTPOKE_ROUNDS (200) XDP attach/detach rounds and
            SO_TIMESTAMP static-key flips under pktgen traffic
            (scripts/forensics/guest/textpoke.sh)
  dense     DENSE_SECONDS (300) of back-to-back live patching on vCPU 0:
            sched_schedstats, timer_migration, 5 tracepoints, the function
            tracer on 12 functions, in DENSE_SLICE (30) s slices of
            DENSE_PHASES ("sched timer tp ftrace"), while the other vCPUs run
            those sites; panic_on_oops
            (scripts/forensics/guest/textpoke-dense.sh)
  suite     make test's VM run: the same guest command as scripts/test.sh
            (scripts/guest/run-tests.sh, same kselftests, drv-net cases,
            short stress (with KUNIT_EXPECT=series; TEST_STRESS=0: none)
            and KUnit; KUNIT_EXPECT, default series); ok only if
            results.tap has no "not ok" and the kernel log scan is clean
A boot crashed: Oops, panic, BUG or the guest died without an exit status;
hung: the VM timeout with no crash; failed: anything else not ok (a test,
a splat such as KASAN or lockdep, a workload error). One line per boot
(with its VM time), then
"N of BOOTS boots crashed, K hung, F failed (QEMU x.y, workload w)".
Environment: WORKLOAD, BUILD (a build dir with arch/x86/boot/bzImage; its
parent is the guest's /variant), BUILD_ID (refuse any other build: the
"bzImage X modules Y" that build.sh wrote to build.id and this script
prints; a soak continued on another machine must boot the same build),
QEMU_BIN, QEMU_DATA (-L dir with that
QEMU's firmware), VM_QEMU_OPTS (more QEMU options, e.g.
"-accel tcg,thread=single" for round-robin TCG instead of MTTCG), VM_CPUS
(2), VM_TIMEOUT (textpoke 900 s, dense DENSE_SECONDS + 2100 s, suite as
make test), TEXTPOKE_ROUNDS, DENSE_SECONDS, DENSE_SLICE, DENSE_PHASES,
KSFT_TESTS, XRD_CASES, OUT (default $CACHE/out/qemu-check-<workload>;
boot i in OUT/i, its host log OUT/i.log).
Example, bookworm's 7.2 unpacked (dpkg -x) in Q with its firmware in F:
  QEMU_BIN=Q/usr/bin/qemu-system-x86_64 QEMU_DATA=F WORKLOAD=dense \
    scripts/forensics/qemu-check.sh 5
Exit: 0 every boot ok, 1 a boot crashed, hung or failed (or did not
start), 4 every boot skipped (the workload could not run).
U
}
case "${1:-}" in -h|--help) usage; exit 0 ;; esac
boots=${1:-3}
[[ $boots =~ ^[1-9][0-9]*$ ]] || { usage >&2; exit 1; }
workload=${WORKLOAD:-textpoke}
build=${BUILD:-$(flavour_root "$(variant_root "$(kernel_repo)")" series)/build}
[ -f "$build/arch/x86/boot/bzImage" ] ||
	die "qemu-check: no kernel in $build (run: FLAVOUR=$FLAVOUR scripts/build.sh series, or set BUILD)"
build=$(cd "$build" && pwd)
case $workload in
textpoke)
	cmd=(env TEXTPOKE_ROUNDS="${TEXTPOKE_ROUNDS:-200}" bash /xdp-pp/scripts/forensics/guest/textpoke.sh)
	tag='^textpoke:'
	timeout=${VM_TIMEOUT:-900} ;;
dense)
	secs=${DENSE_SECONDS:-300}
	cmd=(env DENSE_SECONDS="$secs" DENSE_SLICE="${DENSE_SLICE:-30}"
	     DENSE_PHASES="${DENSE_PHASES:-sched timer tp ftrace}"
	     bash /xdp-pp/scripts/forensics/guest/textpoke-dense.sh)
	tag='^textpoke-dense: [0-9]+ flips'
	timeout=${VM_TIMEOUT:-$((secs + 2100))} ;;
suite)
	suite_cmd "$build" "${KUNIT_EXPECT:-series}" "$(suite_stress "${KUNIT_EXPECT:-series}")"
	cmd=("${SUITE[@]}")
	tag='^$^'
	timeout=${VM_TIMEOUT:-$SUITE_TIMEOUT} ;;
*) die "qemu-check: WORKLOAD=$workload: not suite, textpoke or dense" ;;
esac
out=${OUT:-$OUTS/qemu-check-$workload}
mkdir -p "$out"
extra=()
if [ -n "${QEMU_BIN:-}" ]; then
	[ -x "$QEMU_BIN" ] || die "qemu-check: QEMU_BIN=$QEMU_BIN is not executable"
	extra+=(VM_QEMU="$QEMU_BIN")
fi
if [ -n "${QEMU_DATA:-}" ]; then
	[ -d "$QEMU_DATA" ] || die "qemu-check: QEMU_DATA=$QEMU_DATA is not a directory"
	extra+=(VM_QEMU_DATA="$QEMU_DATA")
fi
ver=$("${QEMU_BIN:-qemu-system-x86_64}" --version | awk 'NR == 1 {print $4}')
id=$(build_id "$build")
[ -z "${BUILD_ID:-}" ] || [ "$id" = "$BUILD_ID" ] ||
	die "qemu-check: $build holds $id, not BUILD_ID=$BUILD_ID (build the same patches and config fragments on the same base, with the same toolchain and CACHE path: scripts/build.sh builds reproducibly)"
what="QEMU $ver${VM_QEMU_OPTS:+, $VM_QEMU_OPTS}, workload $workload, ${VM_CPUS:-2} vCPUs, build $id"
log "qemu-check: $boots boots of $build ($what), results in $out"

# first lines of a crash, as the kernel prints them (kernel lines only:
# the console also has the guest's own output)
CRASH='^\[ *[0-9]+\.[0-9]+\] .*(Oops|Kernel panic|kernel BUG at|general protection fault|BUG: unable to handle|int3: 0000)'
# code_byte CONSOLE: the byte before <..> in the first "Code:" line (for an
# int3 Oops, RIP is past the int3: that byte is what memory holds where the
# vCPU ran int3; not cc: it ran a stale translation)
code_byte() {
	sed 's/\r$//' "$1" | awk '/Code: / {
		for (i = 2; i <= NF; i++) if ($i ~ /^<[0-9a-f][0-9a-f]>$/) { print $(i - 1) " " $i; exit } }'
}
crashed=0 hung=0 failed=0 skipped=0 oks=0
times=()
for ((i = 1; i <= boots; i++)); do
	d=$out/$i hl=$out/$i.log
	rm -rf "${d:?}" "$hl"
	t0=$(date +%s)
	rc=0
	env ${extra[@]+"${extra[@]}"} VM_TIMEOUT="$timeout" \
		"$REPO/scripts/vm.sh" "$build" "$d" "${cmd[@]}" > "$hl" 2>&1 || rc=$?
	t=$(( $(date +%s) - t0 ))
	times+=("$t")
	con=$d/console.log
	klog=$d/dmesg.log
	[ -s "$klog" ] || klog=$con
	last=$(grep -hE "$tag" "$hl" 2>/dev/null | tail -1 || true)
	crash=$(sed 's/\r$//' "$con" "$klog" 2>/dev/null | grep -m1 -E "$CRASH" | sed 's/^\[[^]]*\] //' || true)
	if ! grep -q 'xdp-pp: guest up' "$con" 2>/dev/null && [ -z "$crash" ]; then
		die "qemu-check: boot $i did not start the guest ($hl): $(grep -hm1 -iE 'qemu|error' "$hl")"
	fi
	if [ -z "$crash" ] && [ "$rc" -ne 0 ] && grep -q 'did not finish (no exit status)' "$hl"; then
		crash="guest died without an exit status: $(sed 's/\r$//' "$con" | grep -v '^\s*$' | tail -1)"
	fi
	if [ -n "$crash" ]; then
		crashed=$((crashed + 1))
		code=$(code_byte "$con")
		echo "boot $i: CRASH after $t s: $crash${code:+ (Code: ... $code)}${last:+; $last}"
		continue
	fi
	if grep -q 'vm: timed out' "$hl"; then
		hung=$((hung + 1))
		echo "boot $i: HUNG (no crash, timed out after $timeout s)${last:+: $last}"
		continue
	fi
	splat=$(grep -m1 '^splat: ' "$d/splats.txt" 2>/dev/null || echo "splat: no scan")
	if [ "$workload" = suite ]; then
		res=$d/results.tap
		notok=$(grep -E '^not ok' "$res" 2>/dev/null | head -3 | paste -sd ';' || true)
		[ -f "$res" ] || notok="no results.tap"
		sk=$(grep -cE '^ok .*# *SKIP' "$res" 2>/dev/null || true)
		pa=$(( $(grep -cE '^ok ' "$res" 2>/dev/null || true) - ${sk:-0} ))
		fa=$(grep -cE '^not ok ' "$res" 2>/dev/null || true)
		last="$pa passed, $fa failed, ${sk:-0} skipped, $splat"
		if [ "$rc" -eq 0 ] && [ -z "$notok" ] && [[ $splat == "splat: 0 unexpected"* ]]; then
			oks=$((oks + 1))
			echo "boot $i: ok, VM $t s: $last"
		else
			failed=$((failed + 1))
			echo "boot $i: FAILED (exit $rc), VM $t s: $last${notok:+; $notok}"
		fi
		continue
	fi
	if [ "$rc" -eq 0 ]; then
		oks=$((oks + 1))
		echo "boot $i: ok, VM $t s: $last"
	elif [ "$rc" -eq 4 ]; then
		skipped=$((skipped + 1))
		echo "boot $i: SKIP, VM $t s: $(grep -hE '^textpoke' "$hl" | tail -1)"
	else
		failed=$((failed + 1))
		why=$(grep -hE '^(error|textpoke)' "$hl" | tail -2 | paste -sd ';')
		[[ $splat == "splat: 0 unexpected"* ]] || why+="; $splat: $(grep -m1 '^---- splat' "$d/splats.txt" 2>/dev/null)"
		echo "boot $i: FAILED (exit $rc), VM $t s: ${why:-see $hl}"
	fi
done
sorted=$(printf '%s\n' "${times[@]}" | sort -n | paste -sd ' ')
log "qemu-check: VM time per boot (s, sorted): $sorted"
sk=''
[ "$skipped" -eq 0 ] || sk=", $skipped skipped"
echo "$crashed of $boots boots crashed, $hung hung, $failed failed$sk ($what)"
[ "$crashed" -eq 0 ] && [ "$hung" -eq 0 ] && [ "$failed" -eq 0 ] || exit 1
[ "$oks" -gt 0 ] || exit 4
