#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Load the pp_decide KUnit module in the guest, print the suite's KTAP,
# unload it, and turn the result into an exit code.

set -euo pipefail

SUITE=pp_decide
DEBUGFS=/sys/kernel/debug

usage() {
	cat <<EOF
Usage: ${0##*/} [--help] MODULE.ko [PARAM=VALUE...]

Loads MODULE.ko (pp_decide_kunit.ko) with the given module parameters,
e.g. expect=base on the unpatched 7.3 kernel (default expect=series),
bench=1 bench_loops=N for the cost benchmark, hardirq_return=1.
The KUnit suite runs during insmod.  Prints its KTAP from
$DEBUGFS/kunit/$SUITE/results (plus any pp_decide_bench lines from the
kernel log), then unloads the module.

Exit status:
  0  every case ok (skipped cases are fine)
  1  at least one case "not ok" without "# SKIP", or no results
  2  usage error (bad arguments, not root, unknown module parameter value)
  4  the module could not be loaded because the kernel lacks support
     (unknown/mismatched symbols, wrong module format, no KUnit/debugfs)
EOF
}

case "${1:-}" in
-h | --help)
	usage
	exit 0
	;;
"")
	usage >&2
	exit 2
	;;
esac

ko=$1
shift
if [[ ! -f $ko ]]; then
	echo "error: $ko: no such file" >&2
	exit 2
fi
if [[ $(id -u) -ne 0 ]]; then
	echo "error: must run as root" >&2
	exit 2
fi

mod=$(basename "$ko" .ko)
mod=${mod//-/_}
results=$DEBUGFS/kunit/$SUITE/results

if [[ -d /sys/module/$mod ]]; then
	echo "note: $mod already loaded, unloading it first" >&2
	rmmod "$mod"
fi

if ! mountpoint -q "$DEBUGFS"; then
	if ! mount -t debugfs debugfs "$DEBUGFS"; then
		echo "error: cannot mount debugfs on $DEBUGFS" >&2
		exit 4
	fi
fi
if [[ ! -d $DEBUGFS/kunit ]]; then
	echo "error: $DEBUGFS/kunit missing (CONFIG_KUNIT/CONFIG_KUNIT_DEBUGFS?)" >&2
	exit 4
fi

log_lines=$(dmesg | wc -l)
new_log() {
	dmesg | tail -n +"$((log_lines + 1))"
}

errfile=$(mktemp)
trap 'rm -f "$errfile"' EXIT

if ! insmod "$ko" "$@" 2>"$errfile"; then
	cat "$errfile" >&2
	new_log >&2 || true
	if grep -qiE 'Unknown symbol|disagrees about version|Invalid module format|Exec format error|Key was rejected|Required key not available' \
		"$errfile" <(new_log || true); then
		echo "error: kernel lacks support for $mod" >&2
		exit 4
	fi
	if grep -qiE 'Invalid (argument|parameters)|Unknown parameter|expect=' \
		"$errfile" <(new_log || true); then
		exit 2
	fi
	exit 1
fi

status=0
if [[ -r $results ]]; then
	ktap=$(cat "$results")
	printf '%s\n' "$ktap"
else
	echo "error: $results missing (KUnit disabled with kunit.enable=0?)" >&2
	ktap=
	status=4
fi

new_log | grep 'pp_decide_bench:' || true

rmmod "$mod"

if [[ $status -ne 0 ]]; then
	exit "$status"
fi
if ! grep -qE '^[[:space:]]*ok [0-9]+ ' <<<"$ktap"; then
	echo "error: no test results" >&2
	exit 1
fi
# No grep -q at the end of the pipe: with pipefail, an early exit would
# SIGPIPE the first grep and turn a match into a failure.
if grep -E '^[[:space:]]*not ok [0-9]+ ' <<<"$ktap" | grep -v '# SKIP' >/dev/null; then
	exit 1
fi
exit 0
