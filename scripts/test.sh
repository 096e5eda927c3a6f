#!/usr/bin/env bash
# test.sh - apply the series, build it, boot it and run the tests; print
# "N passed, N failed, N skipped" and exit non-zero on any failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# the debug kernel (KASAN, lockdep, ...: selftests/config.debug); `make`
# and `make test` boot the same one
export FLAVOUR=${FLAVOUR:-debug}
# shellcheck source=lib.sh
. "$here/lib.sh"

usage() {
	cat <<'U'
usage: scripts/test.sh [base|series]

Default variant: series (base + patches/*.patch). On `base` the KUnit
module runs with expect=base and the series' kselftests are absent.
The kernel is the debug flavour (FLAVOUR=debug: KASAN, lockdep,
DEBUG_ATOMIC_SLEEP, DEBUG_OBJECTS, KFENCE ...; selftests/config.debug):
any kernel splat fails the run (scripts/splat.sh, decoded).
Steps: fast series gates (scripts/check.sh --fast), tree, build, the
W=1 gate (scripts/check.sh w1: the touched .c files, NIC drivers among
them, base against the series), VM run (scripts/guest/run-tests.sh),
the short stress (scripts/guest/stress.sh --short, series only, in the
same VM boot before KUnit; TEST_STRESS=0 skips it), summary.
Environment: KDIR, BASE, OUT (results dir, default $CACHE/out/test-<variant>),
KSFT_TESTS (kselftest runner -t names), XRD_CASES (cases of the drv-net
test, ksft -t patterns; "all": every case, ~20 min), VM_TIMEOUT, SKIP_GATES=1,
KUNIT_EXPECT (base|series: what the KUnit module expects; default the variant),
TEST_STRESS (1; 0: no stress), STRESS_* (to the guest's stress.sh, see
scripts/stress.sh --help; STRESS_TIMEOUT bounds it in the guest, 2400 s).
Exit: 0 all passed, 1 a failure.
U
}
case "${1:-series}" in
-h|--help) usage; exit 0 ;;
base|series) variant=${1:-series} ;;
*) usage >&2; exit 1 ;;
esac

"$here/setup-host.sh" --check >/dev/null 2>&1 || "$here/setup-host.sh"
# the guest root (debootstrap once, ~1 min, mostly download and unpack)
# beside the base unpack and the build; vm.sh waits on its lock
"$here/guest-root.sh" > /dev/null &
guest_root=$!
gates_failed=0
if [ "$variant" = series ] && [ "${SKIP_GATES:-0}" != 1 ]; then
	"$here/check.sh" --fast || gates_failed=1
fi

build=$("$here/build.sh" "$variant")
if [ "$variant" = series ] && [ "${SKIP_GATES:-0}" != 1 ]; then
	# the hardware drivers cannot run here: every .c file the series
	# touches (the NIC drivers among them) built with W=1 at the base and
	# after the series, in the check config (whole driver dirs at every
	# patch: make check)
	"$here/check.sh" w1 || gates_failed=1
fi
out=${OUT:-$CACHE/out/test-$variant}
rm -rf "$out"
mkdir -p "$out"
expect=${KUNIT_EXPECT:-$variant}
# the guest command and its timeout (lib.sh: the kselftests, the drv-net
# cases make test runs, the short stress on the series, KUnit)
stress=$(suite_stress "$variant")
suite_cmd "$build" "$expect" "$stress"
export VM_TIMEOUT=${VM_TIMEOUT:-$SUITE_TIMEOUT}
wait "$guest_root" || true # vm.sh reports a failure (it tries again)
t0=$(date +%s)
set +e
"$here/vm.sh" "$build" "$out" "${SUITE[@]}"
vm_rc=$?
set -e
log "test: VM run took $(( $(date +%s) - t0 )) s (results: $out)"

res=$out/results.tap
[ -f "$res" ] || echo "not ok - vm: no results (exit $vm_rc)" > "$res"
if [ "$stress" = 1 ] && ! grep -q ' - stress (short): ' "$res"; then
	# no line from the guest: the VM ended in or before it (a hung step
	# powers the VM off after writing its verdict)
	why=$(grep -m1 '^fail: ' "$out/stress/stress.txt" 2>/dev/null || true)
	echo "not ok - stress (short): ${why:-did not finish} (see $out/stress, $out/console.log)" >> "$res"
fi
# the whole kernel log, scanned by scripts/splat.sh inside vm.sh
if [ -f "$out/splats.txt" ] && grep -q '^splat: 0 unexpected' "$out/splats.txt"; then
	echo "ok - kernel log: no splat ($(sed -n 's/^splat: 0 unexpected, \([0-9]*\) expected.*/\1/p' "$out/splats.txt") expected)" >> "$res"
else
	echo "not ok - kernel log: splats or no log (see $out/splats.txt)" >> "$res"
fi
[ "$vm_rc" -eq 0 ] || echo "not ok - vm: exited $vm_rc" >> "$res"
[ "$gates_failed" = 0 ] || echo "not ok - gates: scripts/check.sh (see above)" >> "$res"
grep -E '^(not )?ok' "$res" | sed 's/^/  /'
skipped=$(grep -cE '^ok .*# *SKIP' "$res" || true)
passed=$(( $(grep -cE '^ok ' "$res" || true) - skipped ))
failed=$(grep -cE '^not ok ' "$res" || true)
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
