#!/usr/bin/env bash
# bench.sh - base vs series, same config, same guest, one run: QEMU with
# -icount shift=0 (guest ns = guest instructions), 1 vCPU, repeats, median
# and spread; a markdown table and a PNG plot of the ratios.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

usage() {
	cat <<'U'
usage: scripts/bench.sh

Builds base and series (cached), boots each under QEMU TCG with
-icount shift=0 and 1 vCPU (both kernels side by side), runs
scripts/guest/bench.sh, then
scripts/bench-report.py. Results: $BENCH_OUT (default $CACHE/out/bench):
  bench.md (table), bench.png (ratios), <variant>/bench.txt (raw).
Environment: REPEATS (5), PACKETS (50000, test_run cases), VPKTS (30000,
  packets per NAPI-cost repeat), BURST (32, pktgen frames per virtqueue
  kick in the NAPI-cost cases), SECTIONS (run napi profile pp_bench
  pp_decide: test_run cases, NAPI-cost cases, per-function split of the
  egress-drop poll, page_pool bench, test module bench), NAPI_CASES
  (only these NAPI-cost cases, e.g. "redirect-map-egress-drop
  threaded:tx"; default all), PATCHES (the series' patch directory, e.g.
  a prefix of patches/ to bench one commit of the series),
  BENCH_WALL=1 to add one wall-clock run per kernel (labelled: noise),
  BENCH_NIC_VM=1 to also run scripts/bench-nic.sh (the real-NIC mode)
  inside each VM against the virtio loop (a check of that path),
  KDIR/BASE as for make test.
Not a test: `make test` and CI never run it.
U
}
case "${1:-}" in -h|--help) usage; exit 0 ;; esac

"$here/setup-host.sh" --check >/dev/null 2>&1 || "$here/setup-host.sh"
out=${BENCH_OUT:-$OUTS/bench}
tools=$TOOLS
mkdir -p "$out" "$tools"
gcc -O2 -Wall -static -o "$tools/xdp_pp_run" "$REPO/net-core/bench/xdp_pp_run.c"
gcc -O2 -Wall -static -o "$tools/busy_poll" "$REPO/net-core/bench/busy_poll.c"
need_tool clang "sudo scripts/setup-host.sh"
napi_cost_build "$tools" virtnet_poll veth_poll
napi_cost_build "$tools" -DPLAIN cpu_map_bpf_prog_run
# the functions of the egress-drop poll the profile section times one by one
PROFILE_FNS="virtnet_poll receive_buf xdp_do_redirect xdp_do_flush try_fill_recv \
bq_xmit_all xdp_return_frame_rx_napi xdp_return_frame xdp_return_frame_bulk \
page_pool_put_unrefed_netmem page_pool_put_netmem_bulk"
mkdir -p "$tools/profile"
# shellcheck disable=SC2086 # a list
napi_cost_build "$tools/profile" -DPLAIN $PROFILE_FNS

builds=()
for v in base series; do
	builds+=("$(FLAVOUR=perf "$here/build.sh" "$v")")
done
# Under -icount a VM's figures count its own guest instructions, so the two
# kernels run side by side (one QEMU thread each, 2 host cores).
run_variant() { # variant build mode
	local v=$1 build=$2 mode=$3 d=$out/$1-$3 icount=1
	[ "$mode" = wall ] && icount=0
	rm -rf "$d"
	if [ "$mode" = nicvm ]; then
		# scripts/bench-nic.sh in the VM: its results land in
		# $d/<label>-nic; the label it detects must be this variant's
		VM_ICOUNT=1 VM_CPUS=1 VM_TOOLS=$tools VM_TIMEOUT=${VM_TIMEOUT:-5400} \
			"$here/vm.sh" "$build" "$d" env \
			NIC_NOTE="VM: virtio_net loop, pktgen in a netns, QEMU -icount shift=0" \
			bash /xdp-pp/scripts/guest/bench-nic-vm.sh > "$d.console" 2>&1 ||
			{ tail -30 "$d.console" >&2; log "bench: $v (nicvm) run failed"; return 1; }
		[ -f "$d/$v-nic/bench.txt" ] ||
			{ log "bench: bench-nic.sh in the $v VM did not label its run $v"; return 1; }
		rm -rf "$out/$v-nic"
		mv "$d/$v-nic" "$out/$v-nic"
		return 0
	fi
	VM_ICOUNT=$icount VM_CPUS=1 VM_TOOLS=$tools VM_TIMEOUT=${VM_TIMEOUT:-5400} \
		"$here/vm.sh" "$build" "$d" env REPEATS="${REPEATS:-5}" \
		SECTIONS="${SECTIONS:-run napi profile pp_bench pp_decide}" \
		PACKETS="${PACKETS:-50000}" VPKTS="${VPKTS:-30000}" BURST="${BURST:-32}" \
		NAPI_CASES="${NAPI_CASES:-}" \
		PROFILE_FNS="$PROFILE_FNS" \
		bash /xdp-pp/scripts/guest/bench.sh > "$d.console" 2>&1 ||
		{ tail -30 "$d.console" >&2; log "bench: $v ($mode) run failed"; return 1; }
}
# Both VMs die with the run: a failing one takes its sibling down, and
# Ctrl-C or a kill of this script stops both (vm.sh kills its QEMU).
pids=()
stop_runs() {
	local p
	for p in "${pids[@]}"; do kill_tree "$p"; done
}
trap stop_runs EXIT
trap 'log "bench: interrupted, stopping both VMs"; exit 130' INT
trap 'exit 143' TERM
for mode in icount ${BENCH_WALL:+wall} ${BENCH_NIC_VM:+nicvm}; do
	pids=()
	i=0
	for v in base series; do
		run_variant "$v" "${builds[$i]}" "$mode" &
		pids+=($!)
		i=$((i + 1))
	done
	while [ ${#pids[@]} -gt 0 ]; do
		rc=0
		wait -n -p finished "${pids[@]}" || rc=$?
		mapfile -t pids < <(printf '%s\n' "${pids[@]}" | grep -vx "$finished" || true)
		if [ "$rc" != 0 ]; then
			log "bench: a $mode run failed; stopping the other VM"
			stop_runs
			die "bench: a $mode run failed"
		fi
	done
done
python3 "$here/bench-report.py" "$out"
