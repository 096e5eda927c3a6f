#!/bin/bash
# benchlib.sh - functions only (sourcing it changes nothing): sourced in
# the VM by scripts/guest/stress.sh and scripts/bench/guest/{bench,cachewin}.sh,
# on a NIC host by scripts/bench/bench-nic.sh.
#   napi_cost_load OBJDIR FN...  loads OBJDIR/napi_cost-FN.o for each FN
#                                (net-core/bench/napi_cost.bpf.c), pinned
#                                under /sys/fs/bpf/napi_cost/FN/{p,m}
#   napi_cost_unload             detaches and unpins all of them
#   xdp_bench_start LOG ARGS... [-- ARGS2...]
#                                xdp-bench ARGS (and a second one with
#                                ARGS2) in the background, output in LOG
#                                (LOG-2); their pids in XB_PIDS
#   xdp_bench_stop               SIGINT to them, wait, XB_PIDS emptied
# benchsnap.py snap reads what napi_cost counts.
NAPI_COST_DIR=/sys/fs/bpf/napi_cost

XB_PIDS=

napi_cost_load() {
	local objdir=$1 fn
	shift
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
	for fn in "$@"; do
		rm -rf "${NAPI_COST_DIR:?}/$fn"
		mkdir -p "$NAPI_COST_DIR/$fn"
		if ! bpftool prog loadall "$objdir/napi_cost-$fn.o" \
			"$NAPI_COST_DIR/$fn/p" autoattach pinmaps "$NAPI_COST_DIR/$fn/m"; then
			echo "benchlib: cannot attach to $fn (not in this kernel's BTF?)" >&2
			return 1
		fi
	done
}

napi_cost_unload() {
	rm -rf "${NAPI_COST_DIR:?}"
}

xdp_bench_start() {
	local log=$1 args=() more=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
	[ $# -gt 0 ] && { shift; more=("$@"); }
	xdp-bench "${args[@]}" -i 1 > "$log" 2>&1 &
	XB_PIDS=$!
	if [ ${#more[@]} -gt 0 ]; then
		xdp-bench "${more[@]}" -i 1 > "$log-2" 2>&1 &
		XB_PIDS="$XB_PIDS $!"
	fi
}

xdp_bench_stop() {
	# shellcheck disable=SC2086 # a list of pids
	kill -INT $XB_PIDS 2>/dev/null || true
	# shellcheck disable=SC2086
	wait $XB_PIDS 2>/dev/null || true
	XB_PIDS=
}
