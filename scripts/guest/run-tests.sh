#!/bin/bash
# run-tests.sh - the test suite, inside the VM (started by scripts/test.sh).
#
# Sets up the drivers/net environment on the two looped virtio NICs (NETIF
# in the main netns, the other one in netns "remote"), then runs:
#   1. the series' kselftests through the kselftest runner (drivers/net
#      XDP redirect-map drop tests, net/bench page_pool bench),
#   2. with TEST_STRESS=1, the short stress (stress.sh --short: the three
#      redirect drop paths under topology churn; results in /out/stress),
#      in this boot: a second boot of the debug kernel costs minutes,
#   3. the reproducer of the napi_stop_kthread() net fix (series only),
#   4. the out-of-tree KUnit module selftests/pp_decide, last: its IRQs-off
#      case makes lockdep warn (expected).
# Every component's KTAP goes to /out/<component>.tap; leaf results are
# collected in /out/results.tap as "ok - ..." / "not ok - ..." lines.
# shellcheck source=inguest.sh
. "${BASH_SOURCE[0]%/*}/inguest.sh" # inside the harness VM only
set -uo pipefail

VARIANT=/variant
OUT=/out
EXPECT=${EXPECT:-series}
: > "$OUT/results.tap"

log() { echo "[guest] $*"; }

# Leaf results of a KTAP stream: indented or "# "-prefixed result lines;
# a failing top-level line with no failing leaf counts as one failure.
collect() {
	local comp=$1 file=$2 rc=$3 leaves
	leaves=$(grep -E '^(#|[[:space:]])[#[:space:]]*(not ok|ok) [0-9]+ ' "$file" |
		sed -E 's/^[#[:space:]]*//')
	if [ -z "$leaves" ]; then
		leaves=$(grep -E '^(not ok|ok) [0-9]+ ' "$file")
	fi
	while read -r line; do
		[ -n "$line" ] || continue
		case "$line" in
		"not ok "*) echo "not ok - $comp: ${line#not ok [0-9]* }" ;;
		"ok "*) echo "ok - $comp: ${line#ok [0-9]* }" ;;
		esac
	done <<<"$leaves" >> "$OUT/results.tap"
	if [ -n "$leaves" ] && [ "$rc" -ne 0 ] && [ "$rc" -ne 4 ] &&
	   ! grep -q '^not ok' <<<"$(sed -E 's/^[#[:space:]]*//' <<<"$leaves")"; then
		echo "not ok - $comp: exited $rc without a failing case" >> "$OUT/results.tap"
	fi
	if [ -z "$leaves" ]; then
		# nothing ran: a module that did not load, a runner that died
		if [ "$rc" -eq 0 ]; then
			echo "not ok - $comp: reported no test" >> "$OUT/results.tap"
		else
			echo "not ok - $comp: exited $rc and reported no test (see $OUT/*.tap)" >> "$OUT/results.tap"
		fi
	fi
}

# shellcheck source=netsetup.sh
. /xdp-pp/scripts/guest/netsetup.sh

setup_net() {
	xdp_pp_netsetup || return 1
	log "NETIF=$NETIF ($(ethtool -i "$NETIF" | sed -n 's/^driver: //p')), remote $REMOTE_IF in netns remote"
}

run_kselftests() {
	local ks=/tmp/kselftest
	cp -a "$VARIANT/kselftest" "$ks"
	local t
	for t in ${KSFT_TESTS:-}; do
		local comp="kselftest:${t}" tap="$OUT/${t//[:\/]/_}.tap" c filt=()
		if [ "$t" = drivers/net/hw:xdp_redirect_drop.py ] &&
		   [ "${XRD_CASES:-all}" != all ]; then
			# a chosen set of its cases: the runner passes no
			# arguments, so run the test itself with ksft filters
			for c in $XRD_CASES; do filt+=(-t "$c"); done
			log "running $comp ($(( ${#filt[@]} / 2 )) cases, XRD_CASES)"
			(cd "$ks/drivers/net/hw" &&
			 timeout 1500 ./xdp_redirect_drop.py "${filt[@]}") > "$tap" 2>&1
			collect "$comp" "$tap" $?
			continue
		fi
		log "running $comp"
		# the debug kernel under TCG is several times slower than the
		# 360 s the drivers/net settings allow a test
		(cd "$ks" && timeout 3000 ./run_kselftest.sh -o "${KSFT_TIMEOUT:-2700}" -t "$t") \
			> "$tap" 2>&1
		collect "$comp" "$tap" $?
	done
}

run_kunit() {
	local ko=$VARIANT/pp_decide/pp_decide_kunit.ko
	log "running kunit:pp_decide (expect=$EXPECT)"
	if [ ! -f "$ko" ]; then
		echo "not ok - kunit:pp_decide: module not built" >> "$OUT/results.tap"
		return
	fi
	bash /xdp-pp/selftests/pp_decide/run-in-guest.sh "$ko" "expect=$EXPECT" \
		> "$OUT/kunit_pp_decide.tap" 2>&1
	collect "kunit:pp_decide" "$OUT/kunit_pp_decide.tap" $?
}

# The short stress (its own network use: it takes the remote NIC back as
# pktgen's sender, and gives it back); one result line from its summary.
run_stress() {
	local d=$OUT/stress st rc iters changes why
	[ "${TEST_STRESS:-0}" = 1 ] || return 0
	log "running stress (short)"
	mkdir -p "$d"
	st=$d/stress.txt
	STRESS_OUT=$st STRESS_LOGS=$d/stress-logs \
		timeout "${STRESS_TIMEOUT:-2400}" bash /xdp-pp/scripts/guest/stress.sh --short \
		> "$d/stress.log" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ] && [ -s "$st" ] && grep -q '^result: PASS' "$st"; then
		iters=$(sed -n 's/^iterations: \([0-9]*\).*/\1/p' "$st")
		changes=$(sed -n 's/^topology changes: *//p' "$st" | tr ' ' '\n' |
			awk -F= '{ n += $2 } END { print n + 0 }')
		echo "ok - stress (short): $iters iterations, $changes topology changes, $(sed -n 's/^splats: //p' "$st") splats, leaked $(sed -n 's/^leaked (netlink[^:]*: //p' "$st")" >> "$OUT/results.tap"
	else
		why=$(grep -m1 '^fail: ' "$st" 2>/dev/null || tail -1 "$d/stress.log" 2>/dev/null)
		[ "$rc" -ne 124 ] || why="timed out after ${STRESS_TIMEOUT:-2400} s"
		echo "not ok - stress (short): ${why:-no result, exit $rc} (see stress/)" >> "$OUT/results.tap"
	fi
}

# The reproducer of the net fix for napi_stop_kthread() (series only: 7.3
# hangs there, and a hung write cannot be killed).
run_napi_threaded() {
	[ "$EXPECT" = series ] || return 0
	log "running napi threaded off ($NETIF)"
	bash /xdp-pp/scripts/guest/napi-threaded-off.sh "$NETIF" >> "$OUT/results.tap" 2>&1
}

setup_net || { echo "not ok - setup: network" >> "$OUT/results.tap"; }
dmesg > "$OUT/dmesg.before"
run_kselftests
run_stress
run_napi_threaded
run_kunit
dmesg > "$OUT/dmesg.after"
# kernel splats are judged on the host (scripts/splat.sh on the whole log,
# decoded, with the expected warnings of pp_decide's hard IRQ and IRQs-off
# cases: scripts/splat.sh --help)
