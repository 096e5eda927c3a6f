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
drivers gate (scripts/check.sh drivers), VM run (scripts/guest/run-tests.sh),
the short stress run (scripts/stress.sh --short, series only; TEST_STRESS=0
skips it), summary.
Environment: KDIR, BASE, OUT (results dir, default $CACHE/out/test-<variant>),
KSFT_TESTS (kselftest runner -t names), XRD_CASES (cases of the drv-net
test, ksft -t patterns; "all": every case, ~20 min), VM_TIMEOUT, SKIP_GATES=1,
KUNIT_EXPECT (base|series: what the KUnit module expects; default the variant).
Exit: 0 all passed, 1 a failure.
U
}
case "${1:-series}" in
-h|--help) usage; exit 0 ;;
base|series) variant=${1:-series} ;;
*) usage >&2; exit 1 ;;
esac

"$here/setup-host.sh" --check >/dev/null 2>&1 || "$here/setup-host.sh"
gates_failed=0
if [ "$variant" = series ] && [ "${SKIP_GATES:-0}" != 1 ]; then
	"$here/check.sh" --fast || gates_failed=1
fi

build=$("$here/build.sh" "$variant")
if [ "$variant" = series ] && [ "${SKIP_GATES:-0}" != 1 ]; then
	# the hardware drivers cannot run here: W=1 build of the drivers the
	# series touches, base against the whole series (per patch: make check)
	DRIVERS_PER_PATCH=0 "$here/check.sh" drivers || gates_failed=1
fi
out=${OUT:-$CACHE/out/test-$variant}
rm -rf "$out"
mkdir -p "$out"
expect=${KUNIT_EXPECT:-$variant}
# the guest command and its timeout (lib.sh: the kselftests, the drv-net
# cases make test runs, KUnit)
suite_cmd "$build" "$expect"
[ "${XRD_CASES:-}" != all ] || export VM_TIMEOUT=${VM_TIMEOUT:-$SUITE_TIMEOUT}
t0=$(date +%s)
set +e
"$here/vm.sh" "$build" "$out" "${SUITE[@]}"
vm_rc=$?
set -e
log "test: VM run took $(( $(date +%s) - t0 )) s (results: $out)"

res=$out/results.tap
[ -f "$res" ] || echo "not ok - vm: no results (exit $vm_rc)" > "$res"

# the short stress run (scripts/stress.sh --short: the three redirect drop
# paths under topology churn on the same debug kernel, a VM of its own)
if [ "$variant" = series ] && [ "${TEST_STRESS:-1}" = 1 ]; then
	t0=$(date +%s)
	set +e
	OUT=$out/stress "$here/stress.sh" --short series > "$out/stress.log" 2>&1
	st_rc=$?
	set -e
	log "test: short stress run took $(( $(date +%s) - t0 )) s (results: $out/stress)"
	st=$out/stress/stress.txt
	if [ "$st_rc" -eq 0 ] && [ -s "$st" ] && grep -q '^result: PASS' "$st"; then
		iters=$(sed -n 's/^iterations: \([0-9]*\).*/\1/p' "$st")
		changes=$(sed -n 's/^topology changes: *//p' "$st" | tr ' ' '\n' |
			awk -F= '{ n += $2 } END { print n + 0 }')
		echo "ok - stress (short): $iters iterations, $changes topology changes, $(sed -n 's/^splats: //p' "$st") splats, leaked $(sed -n 's/^leaked (netlink[^:]*: //p' "$st")" >> "$res"
	else
		why=$(grep -m1 "^fail: " "$st" 2>/dev/null || tail -1 "$out/stress.log" 2>/dev/null || true)
		echo "not ok - stress (short): ${why:-no result} (see $out/stress)" >> "$res"
	fi
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
