#!/usr/bin/env bash
# stress.sh - boot the debug kernel (KASAN, lockdep) of a variant and run
# scripts/guest/stress.sh in it: traffic through every XDP drop path while
# programs, map entries, veths, threaded NAPI and the NIC itself change
# under it; then the kernel log and the page_pool inflight accounting are
# checked. Prints the figures (also in $OUT/stress.txt).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# the debug kernel of make test (lib.sh's default is the benchmark's perf)
export FLAVOUR=${FLAVOUR:-debug}
# shellcheck source=lib.sh
. "$here/lib.sh"

usage() {
	cat <<'U'
usage: scripts/stress.sh [--short] [base|series]

Default variant: series, FLAVOUR=debug (the KASAN + lockdep kernel built by
scripts/build.sh; set FLAVOUR=perf to use the benchmark kernel). Builds
through scripts/build.sh (nothing when up to date), boots with scripts/vm.sh
and runs scripts/guest/stress.sh (its --help lists what changes and the
pass criteria). Full run: the six modes twice (12 iterations, loop
bounded at 1500 s). --short (or STRESS_SHORT=1): the three redirect drop
paths once, NETIF rebound under the cpumap one (3 iterations; every mode
must run at least once or the run fails, so the loop budget STRESS_SECS
never cuts the first pass over the modes: VM_TIMEOUT bounds that).
Results: $OUT (default $CACHE/out/stress-<variant>[-short]): stress.txt
(figures, result), stress-logs/ (kernel log, splats, xdp-bench logs,
page_pool notifications), console.log.
A topology change still running after STRESS_STEP_TIMEOUT (300 s) is a
hang: the guest saves the stuck task's kernel stack (stress-logs/hung.txt)
and the blocked-task dump, writes the result (FAIL, the step named) and
powers off, instead of leaving the VM to its timeout with no result.
A threaded=0 write still waiting after STRESS_THREADED_STALL (60 s) with
traffic on gets pktgen paused until it returns (7.3's napi_stop_kthread()
waits for a NAPI kthread whose polls keep using their whole budget);
stress.txt counts those writes.
Environment: STRESS_ITERS, STRESS_SECS, STRESS_DWELL, STRESS_PKTS,
STRESS_LEAK_WAIT, STRESS_REBIND_EVERY, STRESS_MODES, STRESS_STEP_TIMEOUT,
STRESS_THREADED_STALL (passed to the guest),
KDIR, BASE, OUT, FLAVOUR, VM_TIMEOUT (default 1800 short / 5400 full), VM_CPUS.
Exit: 0 pass, 1 fail, 4 skip.
U
}
short=${STRESS_SHORT:-0}
variant=series
while [ $# -gt 0 ]; do
	case $1 in
	-h|--help) usage; exit 0 ;;
	--short) short=1 ;;
	base|series) variant=$1 ;;
	*) usage >&2; exit 1 ;;
	esac
	shift
done
# one run at a time (lib.sh run_lock)
run_lock stress "scripts/stress.sh $variant"
if [ "$short" = 1 ]; then
	export VM_TIMEOUT=${VM_TIMEOUT:-1800}
	suffix=-short
else
	export VM_TIMEOUT=${VM_TIMEOUT:-5400}
	suffix=
fi

"$here/setup-host.sh" --check >/dev/null 2>&1 || "$here/setup-host.sh"
build=$("$here/build.sh" "$variant")
out=${OUT:-$OUTS/stress-$variant$suffix}
rm -rf "$out"
mkdir -p "$out"
envs=("STRESS_SHORT=$short")
for v in $(compgen -v STRESS_ || true); do
	[ "$v" = STRESS_SHORT ] || envs+=("$v=${!v}")
done
log "stress: $variant ($FLAVOUR kernel), $([ "$short" = 1 ] && echo short || echo full) run"
t0=$(date +%s)
set +e
"$here/vm.sh" "$build" "$out" env "${envs[@]}" bash /xdp-pp/scripts/guest/stress.sh
rc=$?
set -e
log "stress: VM run took $(( $(date +%s) - t0 )) s (results: $out)"
if [ -s "$out/stress.txt" ]; then
	cat "$out/stress.txt"
else
	echo "stress: no results in $out/stress.txt (vm exit $rc)"
	[ "$rc" != 0 ] || rc=1
fi
exit "$rc"
