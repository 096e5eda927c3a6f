#!/bin/bash
# napicost.sh - sourced: load/unload net-core/bench/napi_cost.bpf.c objects.
#   napi_cost_load OBJDIR FN...  loads OBJDIR/napi_cost-FN.o for each FN,
#                                pinned under /sys/fs/bpf/napi_cost/FN/{p,m}
#   napi_cost_unload             detaches and unpins all of them
# benchsnap.py snap reads what they count.
NAPI_COST_DIR=/sys/fs/bpf/napi_cost

napi_cost_load() {
	local objdir=$1 fn
	shift
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
	for fn in "$@"; do
		rm -rf "${NAPI_COST_DIR:?}/$fn"
		mkdir -p "$NAPI_COST_DIR/$fn"
		if ! bpftool prog loadall "$objdir/napi_cost-$fn.o" \
			"$NAPI_COST_DIR/$fn/p" autoattach pinmaps "$NAPI_COST_DIR/$fn/m"; then
			echo "napicost: cannot attach to $fn (not in this kernel's BTF?)" >&2
			return 1
		fi
	done
}

napi_cost_unload() {
	rm -rf "${NAPI_COST_DIR:?}"
}
