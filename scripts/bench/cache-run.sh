#!/usr/bin/env bash
# cache-run.sh - one VM under the cache plugin: boot a built kernel with
# 1 vCPU and -icount, run a scripts/bench/guest/cachewin.sh case, report.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib.sh
. "$here/../lib.sh"

# the return path of the egress-drop case, base and series names
# (xdp_return_frame_rx_napi / xdp_return_frame_bulk, page_pool's put side)
RETURN_RE='^(__)?xdp_return|^xdp_flush_frame_bulk|^(__)?page_pool_(put|recycle|return|page_can_be_recycled|napi_local)|^napi_pp_put_page'
# the devmap egress side where base, RFC and series differ: enqueue, the
# flush with the egress program and the drop returns (which the series
# inlines into the flush, out of the "return" group's reach), and the returns
EGRESS_RE="^(bq_enqueue|dev_map_enqueue|bq_xmit_all|dev_map_bpf_prog_run|__dev_flush|xdp_do_flush)|$RETURN_RE"

usage() {
	cat <<U
usage: scripts/bench/cache-run.sh <build dir> <out dir> <cachewin.sh args...>

Builds the plugin (scripts/bench/cache-plugin.sh), boots <build dir>'s kernel
(scripts/vm.sh, VM_CPUS=1, VM_ICOUNT=1) with
  -plugin <so>,out=<out dir>/cache.csv,map=<build dir>/System.map,
          start=tracing_mark_write,stop=tracing_mark_raw_write[,\$CACHE_PLUGIN_ARGS]
runs "bash /xdp-pp/scripts/bench/guest/cachewin.sh <args>" in it, e.g.
  egress-drop [N=20000] [WARM=5000] [REPS=1]   the bench's redirect-map-egress-drop
  dd BS:COUNT...                                dd if=/dev/zero of=/dev/null, a window each
and writes <out dir>/cache-report.txt (scripts/bench/cache-report.py: the table
and the "cache case=... fn=... accesses= misses= pkts=" lines, with the
groups "return" (the return path: $RETURN_RE)
and "egress" (the devmap egress side, enqueue to flush, and the returns:
$EGRESS_RE),
and the functions of \$CACHE_FNS).
Environment: CACHE_PLUGIN_ARGS (more plugin arguments, e.g.
  model=armed,icache=on,sets=on,l2size=2M), CACHEWIN_HOSTILE=1 (a cache-hostile dd
  beside the packets), CACHE_FNS (comma list), CACHE_INSNS (functions whose
  instructions with misses get a line each, cache-report.py --insns),
  VM_TIMEOUT (3600), VM_MEM.
Exit: 0, 1 failure (VM, plugin, report), 4 skip (no plugin support).
U
}
case "${1:-}" in -h|--help) usage; exit 0 ;; esac
[ $# -ge 3 ] || { usage >&2; exit 1; }
build=$1 out=$2
shift 2
map=$build/System.map
[ -f "$map" ] || die "cache-run: no $map"
for s in tracing_mark_write tracing_mark_raw_write; do
	grep -q " [Tt] $s\$" "$map" || die "cache-run: $s not in $map (CONFIG_TRACING?)"
done
so=$("$here/cache-plugin.sh") || exit $?
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out/cache.csv" "$out/cachewin.txt" "$out/cachewin-kallsyms.txt"
# the map of the kernel about to boot: a rebuild of the build dir meanwhile
# would rename everything (cache-report.py checks it against the guest's
# /proc/kallsyms)
cp "$map" "$out/System.map"
map=$out/System.map
popts="$so,out=$out/cache.csv,map=$map,start=tracing_mark_write,stop=tracing_mark_raw_write"
[ -z "${CACHE_PLUGIN_ARGS:-}" ] || popts+=",$CACHE_PLUGIN_ARGS"
start=$(date +%s)
VM_CPUS=1 VM_ICOUNT=1 VM_TIMEOUT=${VM_TIMEOUT:-3600} \
	VM_QEMU_OPTS="${VM_QEMU_OPTS:+$VM_QEMU_OPTS }-plugin $popts" \
	"$REPO/scripts/vm.sh" "$build" "$out" env CACHEWIN_HOSTILE="${CACHEWIN_HOSTILE:-0}" \
	bash /xdp-pp/scripts/bench/guest/cachewin.sh "$@"
log "cache-run: VM done in $(($(date +%s) - start)) s"
[ -s "$out/cache.csv" ] || die "cache-run: the plugin wrote no $out/cache.csv"
[ -s "$out/cachewin.txt" ] || die "cache-run: the guest wrote no $out/cachewin.txt"
ks=()
[ -s "$out/cachewin-kallsyms.txt" ] && ks=(--kallsyms "$out/cachewin-kallsyms.txt")
"$here/cache-report.py" "$out/cache.csv" --map "$map" --cachewin "$out/cachewin.txt" \
	"${ks[@]}" --group "return=$RETURN_RE" --group "egress=$EGRESS_RE" --fns "${CACHE_FNS:-}" \
	--insns "${CACHE_INSNS:-}" > "$out/cache-report.txt"
cat "$out/cache-report.txt"
