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
usage: scripts/test.sh [base|series|rt]

Default variant: series (base + the units of patches/, in order). On `base` the KUnit
module runs with expect=base and the series' kselftests are absent.
`rt` (make test-rt) boots the series built with PREEMPT_RT (FLAVOUR=rt,
selftests/config.rt; a second kernel, ~45 min cold here): the KUnit module,
whose cases assert what RT does (every decided return to the ring), the
net/bench page_pool bench and the napi_stop_kthread() reproducer; no
gates, no drv-net test, no stress.
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
test, ksft -t patterns; default "all": 7 cases, ~2 min), VM_TIMEOUT, SKIP_GATES=1,
KUNIT_EXPECT (base|series: what the KUnit module expects; default the variant),
TEST_STRESS (1; 0: no stress), STRESS_* (to the guest's stress.sh, see
scripts/stress.sh --help; STRESS_TIMEOUT bounds it in the guest, 2400 s),
RUN_LOCK_WAIT=1 (wait for a run already going instead of exit 1).
First, in seconds: one run at a time ($CACHE/run.lock: make test, make,
make bench, make stress, make shell, make build; busy: one line naming
the run, exit 1), host packages, the disk the cold parts need (cold:
~17 GiB free in $CACHE, ~11 GB written), the guest root's prerequisites;
the guest root is made beside the build, its failure stops the run at once.
Ctrl-C stops every step (background ones too) and frees the locks.
Exit: 0 all passed, 1 a failure.
U
}
# run: the run's name (its lock, results dir and skips variant); variant:
# the kernel built (rt is the series, FLAVOUR=rt)
case "${1:-series}" in
-h|--help) usage; exit 0 ;;
base|series) run=${1:-series} variant=$run ;;
rt) run=rt variant=series FLAVOUR=rt SKIP_GATES=1 TEST_STRESS=0
    KSFT_TESTS=${KSFT_TESTS:-net/bench:test_bench_page_pool.sh} ;;
*) usage >&2; exit 1 ;;
esac

# One run at a time: a second make test would delete this one's results
# while its VM writes them (busy: one line naming it, exit 1).
if [ "$run" = series ]; then run_lock test "scripts/test.sh series"
else run_lock "test-$run" "scripts/test.sh $run"; fi
# Ctrl-C, a TERM, or any exit stops every child (the guest root's
# debootstrap too), so that no lock outlives the run
test_tmp=$(mktemp -d)
trap 'stop_children; rm -rf "$test_tmp"' EXIT
trap 'log "test: interrupted, stopping"; stop_children; trap - INT; kill -INT $$' INT
trap 'stop_children; exit 143' TERM HUP

# Preflight, in seconds: host packages (installed when missing, the
# archive checked first), the disk the cold parts still need, the guest
# root's prerequisites (root, debootstrap, the archive answers).
host_ready
w1=''
[ "$variant" != series ] || [ "${SKIP_GATES:-0}" = 1 ] || w1=w1
preflight_disk "$variant" $w1
"$here/guest-root.sh" --check

# The guest root (debootstrap once, ~1 min) beside the base unpack, the
# gates and the build; the steps up to the build run watched (run_step):
# its failure stops them at once, not after the 30 min build.
"$here/guest-root.sh" > /dev/null &
guest_root=$!
# guest_check: once the guest root job has ended, its failure ends the run
guest_check() {
	[ -n "$guest_root" ] && ! kill -0 "$guest_root" 2>/dev/null || return 0
	local rc=0
	wait "$guest_root" || rc=$?
	guest_root=''
	[ "$rc" = 0 ] ||
		die "test: the guest root failed (error above), stopped before the VM (fix it, then make test again)"
}
# run_step CMD...: CMD in the background, waited for while the guest root
# job is watched (a TERM or Ctrl-C is acted on at once: the trap stops
# CMD); CMD's exit status.
run_step() {
	local pid rc=0
	"$@" &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		guest_check
		sleep 1
	done
	wait "$pid" || rc=$?
	guest_check
	return "$rc"
}
gates_failed=0
if [ "$variant" = series ] && [ "${SKIP_GATES:-0}" != 1 ]; then
	run_step "$here/check.sh" --fast || gates_failed=1
fi

run_step "$here/build.sh" "$variant" > "$test_tmp/build"
build=$(cat "$test_tmp/build")
# the guest root is needed next (the W=1 gate is the last step before
# the VM): a failure still running into it ends the run here
[ -z "$guest_root" ] || log "test: waiting for the guest root (scripts/guest-root.sh)"
while [ -n "$guest_root" ]; do guest_check; sleep 1; done
if [ "$variant" = series ] && [ "${SKIP_GATES:-0}" != 1 ]; then
	# the hardware drivers cannot run here: every .c file the series
	# touches (the NIC drivers among them) built with W=1 at the base and
	# after the series, in the check config (whole driver dirs at every
	# patch: make check)
	"$here/check.sh" w1 || gates_failed=1
fi
out=${OUT:-$CACHE/out/test-$run}
rm -rf "$out"
mkdir -p "$out"
expect=${KUNIT_EXPECT:-$variant}
# the guest command and its timeout (lib.sh: the kselftests, the drv-net
# cases make test runs, the short stress on the series, KUnit)
stress=$(suite_stress "$variant")
suite_cmd "$build" "$expect" "$stress"
export VM_TIMEOUT=${VM_TIMEOUT:-$SUITE_TIMEOUT}
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
# no silent skips: a skip not in selftests/expected-skips (with its
# reason) for this variant becomes "not ok - skip not allowed: ..."
if ! "$here/skips.sh" --rewrite "$run" "$res" &&
   ! grep -q '^not ok - skip not allowed: ' "$res"; then
	echo "not ok - skips: scripts/skips.sh could not judge the skips (see above)" >> "$res"
fi
# which base this run tested (a pinned version gone from the archive
# falls back to the newest: scripts/setup-host.sh, scripts/base.sh)
echo "# base: $(base_version)" >> "$res"
log "test: base: $(base_version)"
grep -E '^(not )?ok' "$res" | sed 's/^/  /'
skipped=$(grep -cE '^ok .*# *SKIP' "$res" || true)
passed=$(( $(grep -cE '^ok ' "$res" || true) - skipped ))
failed=$(grep -cE '^not ok ' "$res" || true)
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
