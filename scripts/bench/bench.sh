#!/usr/bin/env bash
# bench.sh - base vs RFC vs series, same config, same guest, one run: QEMU
# with -icount shift=0 (guest ns = guest instructions), 1 vCPU, repeats,
# median and spread; markdown tables, a PNG plot of the ratios and the
# issue's target verdicts.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib.sh
. "$here/../lib.sh"

usage() {
	cat <<'U'
usage: scripts/bench/bench.sh

Builds base, rfc (base + net-core/rfc/*.patch: the Nov 2025 upstream RFC's
change, reconstructed) and series (cached, FLAVOUR=perf), boots each under
QEMU TCG with -icount shift=0 and 1 vCPU, runs scripts/bench/guest/bench.sh,
then scripts/bench/bench-report.py. The three VMs run at the same time (one QEMU
each on the 2 host cores): under icount a figure counts that VM's own
guest instructions whatever the host load; BENCH_PARALLEL=2 runs two,
then the third. Results: $BENCH_OUT (default $CACHE/out/bench):
  bench.md (tables, then the target verdicts, also printed at the end),
  bench.png (ratios), <variant>-icount/bench.txt (raw).
Environment: REPEATS (5), PACKETS (50000, test_run cases), VPKTS (30000,
  packets per NAPI-cost repeat), BURST (32, pktgen frames per virtqueue
  kick in the NAPI-cost cases), SECTIONS (run napi profile pp_bench
  pp_decide: test_run cases, NAPI-cost cases, per-function split of the
  egress-drop poll, page_pool bench, test module bench), NAPI_CASES
  (only these NAPI-cost cases, e.g. "redirect-map-egress-drop
  threaded:tx"; default all), PATCHES (the series' patch directory, e.g.
  a prefix of the series to bench one commit of it: unit dirs like
  patches/, trimmed, or NNNN-*.patch numbered in order in one dir), RFC_PATCHES
  (the rfc patch directory, default net-core/rfc), BENCH_VARIANTS
  (kernels to run, default "base rfc series"; base is required),
  BENCH_PARALLEL (VMs at a time, 3), BENCH_CACHE (3: egress-drop runs
  per kernel under the TCG data-cache model, scripts/bench/cache-run.sh, the
  memory measure of the report; 0 skips it), PP_BENCH_MODULE (series: the
  series' page_pool bench module built for every kernel, so all three
  run the same test code; own: each kernel's own module, 7.3's lacks the
  softirq and NAPI-aware runs), VM_QEMU_OPTS (more QEMU options for
  every VM), BENCH_WALL=1 to add one wall-clock run per
  kernel (labelled: noise), BENCH_NIC_VM=1 to also run
  scripts/bench/bench-nic.sh (the real-NIC mode) inside each VM against the
  virtio loop (a check of that path), KDIR/BASE as for make test.
Exit: 0 done (missed targets included: see the verdicts), 1 a build, a
VM or the determinism check failed. Not a test: `make test` and CI never
run it.
U
}
case "${1:-}" in -h|--help) usage; exit 0 ;; esac
# one run at a time (lib.sh run_lock)
run_lock bench "scripts/bench/bench.sh"

"$REPO/scripts/setup-host.sh" --check >/dev/null 2>&1 || "$REPO/scripts/setup-host.sh"
out=${BENCH_OUT:-$OUTS/bench}
tools=$TOOLS
mkdir -p "$out" "$tools"
gcc -O2 -Wall -static -o "$tools/xdp_pp_run" "$REPO/net-core/bench/xdp_pp_run.c"
gcc -O2 -Wall -static -o "$tools/busy_poll" "$REPO/net-core/bench/busy_poll.c"
need_tool clang "sudo scripts/setup-host.sh"
napi_cost_build "$tools" virtnet_poll veth_poll
napi_cost_build "$tools" -DPLAIN cpu_map_bpf_prog_run
# the functions of the egress-drop poll the profile section times one by
# one; absent ones (not in a kernel's BTF, e.g. a static inline) print
# "absent". __xdp_return_frame_bulk: the out-of-line slow part of an
# inline xdp_return_frame_bulk(). bpf_fentry_test1 (not profiled): the
# trampoline calibration.
PROFILE_FNS="virtnet_poll receive_buf xdp_do_redirect xdp_do_flush try_fill_recv \
bq_xmit_all xdp_return_frame_rx_napi xdp_return_frame xdp_return_frame_bulk \
__xdp_return_frame_bulk page_pool_put_unrefed_netmem page_pool_put_netmem_bulk"
mkdir -p "$tools/profile"
# shellcheck disable=SC2086 # a list
napi_cost_build "$tools/profile" -DPLAIN $PROFILE_FNS bpf_fentry_test1

read -r -a variants <<<"${BENCH_VARIANTS:-base rfc series}"
[[ " ${variants[*]} " == *" base "* ]] || die "bench: BENCH_VARIANTS must include base (every ratio is to base)"
for v in "${variants[@]}"; do
	case $v in base|rfc|series) ;; *) die "bench: unknown variant '$v' in BENCH_VARIANTS" ;; esac
done
builds=()
for v in "${variants[@]}"; do
	builds+=("$(FLAVOUR=perf "$REPO/scripts/build.sh" "$v")")
done

# The page_pool bench module of the series tree (patch 0012 adds its
# softirq and NAPI-aware runs) built against each kernel into
# <variant root>/pp_bench, which the guest prefers to the kernel's own: the
# pp_bench rows then compare the kernels on the same test code.
pp_src=
if [ "${PP_BENCH_MODULE:-series}" = series ]; then
	pp_src=$("$REPO/scripts/tree.sh" series)/tools/testing/selftests/net/bench/page_pool
	[ -f "$pp_src/bench_page_pool_simple.c" ] || pp_src=
fi
i=0
for v in "${variants[@]}"; do
	root=$(dirname "${builds[$i]}")
	i=$((i + 1))
	if [ -z "$pp_src" ]; then
		rm -rf "$root/pp_bench"
		continue
	fi
	# rebuilt when the kernel build or the module's source changed
	stamp=$( { cat "$root/build.stamp"; hash_paths "$pp_src"; } | sha256sum | cut -c1-16)
	[ "$(cat "$root/pp_bench/.stamp" 2>/dev/null)" != "$stamp" ] || continue
	rm -rf "$root/pp_bench"
	cp -r "$pp_src" "$root/pp_bench"
	exec {bfd}>>"$BUILD_LOCK"
	lock_take "$bfd" "$BUILD_LOCK" build "scripts/bench/bench.sh (page_pool bench module, $v)"
	make -s -C "$root/src" O="$root/build" M="$root/pp_bench" CC="ccache gcc" modules \
		> "$root/pp_bench.log" 2>&1 ||
		{ tail -20 "$root/pp_bench.log" >&2; die "bench: the series' page_pool bench module does not build for $v (log: $root/pp_bench.log)"; }
	exec {bfd}>&-
	echo "$stamp" > "$root/pp_bench/.stamp"
	log "bench: the series' page_pool bench module built for $v"
done

# Under -icount a VM's figures count its own guest instructions (the NAPI
# cases time the receiver's polls, not the sender's rate), so the kernels
# run side by side: all three at once by default (one QEMU vCPU thread
# each, 2 host cores), BENCH_PARALLEL=2 for two, then the third.
par=${BENCH_PARALLEL:-3}
[[ "$par" =~ ^[1-9][0-9]*$ ]] || die "bench: BENCH_PARALLEL=$par is not a positive number"
modes=(icount ${BENCH_WALL:+wall} ${BENCH_NIC_VM:+nicvm})
# The memory measure, the last mode: each kernel's egress-drop windows
# under the TCG data-cache model (scripts/bench/cache-run.sh), BENCH_CACHE runs
# per kernel; their "cache case=... fn=..." lines go to
# $out/<variant>/cache.txt, which the report tables and judges. The plugin
# is built first, so that a failing build stops the bench before its runs.
ncache=${BENCH_CACHE:-3}
[[ "$ncache" =~ ^[0-9]+$ ]] || die "bench: BENCH_CACHE=$ncache is not a number"
if [ "$ncache" -gt 0 ]; then
	prc=0
	"$here/cache-plugin.sh" > /dev/null || prc=$?
	if [ "$prc" -eq 4 ]; then
		log "bench: no TCG plugin support in this QEMU: the memory measure is skipped"
	elif [ "$prc" -ne 0 ]; then
		die "bench: the cache-model plugin does not build (scripts/bench/cache-plugin.sh)"
	else
		modes+=(cache)
	fi
fi
cache_variant() { # variant build
	local v=$1 build=$2 i rc
	rm -rf "$out/$v-cache" "$out/$v/cache.txt"
	mkdir -p "$out/$v"
	for ((i = 1; i <= ncache; i++)); do
		rc=0
		"$here/cache-run.sh" "$build" "$out/$v-cache/$i" egress-drop \
			> "$out/$v-cache.$i.log" 2>&1 || rc=$?
		[ "$rc" -eq 0 ] || { tail -20 "$out/$v-cache.$i.log" >&2; log "bench: $v (cache) run $i failed (log: $out/$v-cache.$i.log)"; return 1; }
		grep '^cache case=' "$out/$v-cache/$i/cache-report.txt" >> "$out/$v/cache.txt"
	done
}
run_variant() { # variant build mode
	local v=$1 build=$2 mode=$3 d=$out/$1-$3 icount=1
	if [ "$mode" = cache ]; then
		cache_variant "$v" "$build"
		return
	fi
	[ "$mode" = wall ] && icount=0
	rm -rf "$d"
	if [ "$mode" = nicvm ]; then
		# scripts/bench/bench-nic.sh in the VM: its results land in
		# $d/<label>-nic; the label it detects must be this variant's
		# (an rfc kernel looks like base to it: told by LABEL)
		local label=()
		[ "$v" = rfc ] && label=(LABEL=rfc)
		VM_ICOUNT=1 VM_CPUS=1 VM_TOOLS=$tools VM_TIMEOUT=${VM_TIMEOUT:-5400} \
			"$REPO/scripts/vm.sh" "$build" "$d" env "${label[@]}" \
			NIC_NOTE="VM: virtio_net loop, pktgen in a netns, QEMU -icount shift=0" \
			bash /xdp-pp/scripts/bench/guest/bench-nic-vm.sh > "$d.console" 2>&1 ||
			{ tail -30 "$d.console" >&2; log "bench: $v (nicvm) run failed"; return 1; }
		[ -f "$d/$v-nic/bench.txt" ] ||
			{ log "bench: bench-nic.sh in the $v VM did not label its run $v"; return 1; }
		rm -rf "$out/$v-nic"
		mv "$d/$v-nic" "$out/$v-nic"
		return 0
	fi
	VM_ICOUNT=$icount VM_CPUS=1 VM_TOOLS=$tools VM_TIMEOUT=${VM_TIMEOUT:-5400} \
		"$REPO/scripts/vm.sh" "$build" "$d" env REPEATS="${REPEATS:-5}" \
		SECTIONS="${SECTIONS:-run napi profile pp_bench pp_decide}" \
		PACKETS="${PACKETS:-50000}" VPKTS="${VPKTS:-30000}" BURST="${BURST:-32}" \
		NAPI_CASES="${NAPI_CASES:-}" \
		PROFILE_FNS="$PROFILE_FNS" \
		bash /xdp-pp/scripts/bench/guest/bench.sh > "$d.console" 2>&1 ||
		{ tail -30 "$d.console" >&2; log "bench: $v ($mode) run failed"; return 1; }
}
# Every VM dies with the run: a failing one takes the others down, and
# Ctrl-C or a kill of this script stops them all (vm.sh kills its QEMU).
pids=()
stop_runs() {
	local p
	for p in "${pids[@]}"; do kill_tree "$p"; done
}
trap stop_runs EXIT
trap 'log "bench: interrupted, stopping the VMs"; exit 130' INT
trap 'exit 143' TERM
for mode in "${modes[@]}"; do
	[ "$mode" != cache ] || log "bench: cache model, $ncache egress-drop runs per kernel"
	pids=()
	next=0
	while [ "$next" -lt ${#variants[@]} ] || [ ${#pids[@]} -gt 0 ]; do
		while [ "$next" -lt ${#variants[@]} ] && [ ${#pids[@]} -lt "$par" ]; do
			run_variant "${variants[$next]}" "${builds[$next]}" "$mode" &
			pids+=($!)
			next=$((next + 1))
		done
		rc=0
		wait -n -p finished "${pids[@]}" || rc=$?
		mapfile -t pids < <(printf '%s\n' "${pids[@]}" | grep -vx "$finished" || true)
		if [ "$rc" != 0 ]; then
			log "bench: a $mode run failed; stopping the other VMs"
			stop_runs
			die "bench: a $mode run failed"
		fi
	done
done
python3 "$here/bench-report.py" "$out"
