#!/usr/bin/env bash
# bench-nic.sh - the benchmark matrix on a real NIC, for the running kernel.
# Run it once booted into the base kernel and once into the series kernel;
# scripts/bench/bench-report.py then puts the two side by side.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib.sh
. "$here/../lib.sh"

usage() {
	cat <<'U'
usage: NETIF=<dut if> REMOTE=<ssh host> REMOTE_IF=<its if> scripts/bench/bench-nic.sh

Runs on the device under test (root), booted into the base or the series
kernel. The traffic generator is xdp-trafficgen on REMOTE (over ssh),
sending 64-byte UDP frames to NETIF's MAC. For each case, xdp-bench runs
on NETIF; after WARMUP seconds, REPEATS windows of DURATION seconds each
give: rx pps (mean of xdp-bench's per-second lines, turned into ns/packet
= 1e9/pps by the report, as in the RFC thread), the receiver's ns/packet
inside the driver's NAPI poll (net-core/bench/napi_cost.bpf.c, needs clang
and bpftool; skipped with a note otherwise) and the page_pool recycle
counters of NETIF (cached vs ring).
Cases: redirect-map-egress-drop (xdp-bench redirect-map -X -A drop NETIF
OUT_IF), drop, pass, tx, redirect-cpu-drop (cpumap, -r drop),
redirect-map-veth-drop (into a veth pair whose peer drops), and when OUT_IF
is another port redirect-map-xmit (forwarded; frames return at OUT_IF's TX
completion).
Results: $BENCH_OUT/<label>-nic/bench.txt, label = LABEL or detected
(base when the kernel still exports xdp_return_frame_rx_napi, else series;
the rfc kernel of net-core/rfc keeps that symbol: run it with LABEL=rfc).
With base and another label present, `scripts/bench/bench-report.py $BENCH_OUT`
prints the table (bench.md) and plot.
Environment: NETIF, REMOTE, REMOTE_IF (required); OUT_IF (NETIF),
  REMOTE_SH (ssh -o BatchMode=yes $REMOTE: how to run a command on the
  generator), TG_THREADS (1), TG_ARGS (more xdp-trafficgen options, e.g.
  "-a <dut-ipv6>"), PKT_SIZE (64), REPEATS (5), DURATION (10),
  WARMUP (3), CASES (all), POLL_FN (from the driver: mlx5e_napi_poll,
  i40e_napi_poll, mvneta_poll, virtnet_poll, veth_poll), KSRC (a kernel
  tree for ynl page-pool stats; else ethtool -S), BENCH_OUT
  ($CACHE/out/bench-nic), LABEL, NIC_NOTE (a note for the report title),
  NAPI_COST_OBJS (a dir of prebuilt napi_cost-<fn>.o instead of clang
  here), TRAFFICGEN=pktgen (generator-side pktgen instead of
  xdp-trafficgen, for NICs or VMs where xdp-trafficgen cannot run).
Exit: 0 done, 1 error, 4 skipped (no NETIF/REMOTE).
U
}
case "${1:-}" in -h|--help) usage; exit 0 ;; esac
if [ -z "${NETIF:-}" ] || [ -z "${REMOTE:-}${REMOTE_SH:-}" ] || [ -z "${REMOTE_IF:-}" ]; then
	log "bench-nic: set NETIF, REMOTE (or REMOTE_SH) and REMOTE_IF (see --help); skipped"
	exit 4
fi
[ "$(id -u)" = 0 ] || die "bench-nic: run as root (XDP programs, BPF tracing)"
[ -d "/sys/class/net/$NETIF" ] || die "bench-nic: no netdev $NETIF here"
need_tool xdp-bench "apt-get install xdp-tools (>= 1.5 for -A drop)"
need_tool ethtool "apt-get install ethtool"
REMOTE_SH=${REMOTE_SH:-ssh -o BatchMode=yes $REMOTE}
OUT_IF=${OUT_IF:-$NETIF}
REPEATS=${REPEATS:-5} DURATION=${DURATION:-10} WARMUP=${WARMUP:-3}
PKT_SIZE=${PKT_SIZE:-64} TG_THREADS=${TG_THREADS:-1}
cases="redirect-map-egress-drop drop pass tx redirect-cpu-drop redirect-map-veth-drop"
# forwarding to another port: returns at OUT_IF's TX completion (i40e: patch 0013)
[ "$OUT_IF" != "$NETIF" ] && cases="$cases redirect-map-xmit"
CASES=${CASES:-$cases}
# shellcheck disable=SC2086 # REMOTE_SH is a command line
rsh() { $REMOTE_SH "$@"; }
if [ "${TRAFFICGEN:-xdp-trafficgen}" = xdp-trafficgen ]; then
	rsh command -v xdp-trafficgen >/dev/null ||
		die "bench-nic: no xdp-trafficgen on the generator ($REMOTE_SH); install xdp-tools there or set TRAFFICGEN=pktgen"
fi

if [ -z "${LABEL:-}" ]; then
	if grep -qw xdp_return_frame_rx_napi /proc/kallsyms; then LABEL=base; else LABEL=series; fi
fi
out=${BENCH_OUT:-$OUTS/bench-nic}/$LABEL-nic
mkdir -p "$out"
res=$out/bench.txt
: > "$res"
driver_of() { ethtool -i "$1" 2>/dev/null | awk '/^driver:/{print $2}'; }
echo "# kernel $(uname -r) label $LABEL netif $NETIF driver $(driver_of "$NETIF") $(date -u +%FT%TZ)" >> "$res"
[ -n "${NIC_NOTE:-}" ] && echo "# note: $NIC_NOTE" >> "$res"
log "bench-nic: $LABEL kernel $(uname -r), results in $out"

# receiver cost inside the NAPI polls: NETIF's driver, OUT_IF's (frames
# forwarded there return at its TX completion), veth's, and cpumap's
# program run (-DPLAIN: a function, not a poll)
poll_fn() { # netdev -> its driver's NAPI poll function
	case "$(driver_of "$1")" in
	mlx5_core) echo mlx5e_napi_poll ;;
	i40e) echo i40e_napi_poll ;;
	mvneta) echo mvneta_poll ;;
	virtio_net) echo virtnet_poll ;;
	veth) echo veth_poll ;;
	esac
}
POLL_FN=${POLL_FN:-$(poll_fn "$NETIF")}
fns=$(printf '%s\n' "$POLL_FN" "$(poll_fn "$OUT_IF")" veth_poll | awk 'NF && !seen[$0]++')
napi=0
modprobe veth 2>/dev/null || true	# veth_poll must be in BTF to attach
. "$REPO/scripts/benchlib.sh"
objs=${NAPI_COST_OBJS:-}
if [ -z "$objs" ] && [ -n "$POLL_FN" ] && command -v clang >/dev/null; then
	objs=$out
	# shellcheck disable=SC2086 # fns: a list
	( napi_cost_build "$objs" $fns && napi_cost_build "$objs" -DPLAIN cpu_map_bpf_prog_run ) ||
		objs=
fi
if [ -n "$objs" ] && [ -n "$POLL_FN" ] && command -v bpftool >/dev/null; then
	# shellcheck disable=SC2086
	if napi_cost_load "$objs" $fns cpu_map_bpf_prog_run; then
		napi=1
	fi
fi
[ "$napi" = 1 ] || { log "bench-nic: no NAPI cost (need POLL_FN, clang or NAPI_COST_OBJS, bpftool)"; echo "# no napi cost" >> "$res"; }

mac=$(cat "/sys/class/net/$NETIF/address")
tg_pid=
# the generator side: a script on the remote shell's stdin (ssh joins
# its arguments into one string, so no sh -c quoting)
pktgen_script() {
	cat <<S
modprobe pktgen 2>/dev/null
cd /proc/net/pktgen || exit 1
echo rem_device_all > kpktgend_0
echo "add_device $REMOTE_IF" > kpktgend_0
for kv in "pkt_size $((PKT_SIZE - 4))" "count 0" "delay 0" "dst 198.18.0.1" \
	  "dst_mac $mac" "udp_dst_min 9" "udp_dst_max 9"; do
	echo "\$kv" > "$REMOTE_IF"
done
echo start > pgctrl
S
}
tg_start() {
	if [ "${TRAFFICGEN:-xdp-trafficgen}" = pktgen ]; then
		pktgen_script | rsh sh >/dev/null 2>&1 &
	else
		# shellcheck disable=SC2086 # TG_ARGS: extra generator options
		rsh xdp-trafficgen udp -m "$mac" -s "$PKT_SIZE" -t "$TG_THREADS" ${TG_ARGS:-} \
			"$REMOTE_IF" < /dev/null >/dev/null 2>&1 &
	fi
	tg_pid=$!
}
tg_stop() {
	if [ "${TRAFFICGEN:-xdp-trafficgen}" = pktgen ]; then
		echo 'echo stop > /proc/net/pktgen/pgctrl' | rsh sh >/dev/null 2>&1 || true
	else
		rsh pkill -INT xdp-trafficgen < /dev/null >/dev/null 2>&1 || true
	fi
	kill "$tg_pid" 2>/dev/null || true
	wait "$tg_pid" 2>/dev/null || true
	tg_pid=
}
SNAP=$REPO/scripts/bench/guest/benchsnap.py
rate() { # xdp-bench log, first line, last line: mean top-level rx/s
	sed -n "$2,$3p" "$1" | python3 "$SNAP" rate Summary "$NETIF->$OUT_IF" "$NETIF->xppv0" "$NETIF->?"
}

veth=0
# whatever happens: generator stopped, xdp-bench stopped, probes and the
# veth pair gone (the DUT's own settings are not touched)
cleanup() {
	[ -n "$tg_pid" ] && tg_stop
	[ -n "$XB_PIDS" ] && xdp_bench_stop
	napi_cost_unload
	[ "$veth" = 1 ] && ip link del xppv0 2>/dev/null
	return 0
}
trap cleanup EXIT
# NIC_COST: the polls/functions whose time counts (default NETIF's polls)
nic_case() { # name, xdp-bench arguments [-- second xdp-bench]
	local name=$1 r l0 l1 pps cost=${NIC_COST:-$NETIF}
	shift
	# a second xdp-bench (the veth peer's): its device's polls count too
	[[ " $* " == *" -- "* ]] && cost="$NETIF,${*: -1}"
	log "bench-nic: $name"
	xdp_bench_start "$out/xb-$name.log" "$@"
	sleep 1
	local p
	for p in $XB_PIDS; do
		kill -0 "$p" 2>/dev/null && continue
		echo "# $name: xdp-bench failed: $(cat "$out/xb-$name.log"* | tail -3 | tr '\n' ' ')" >> "$res"
		xdp_bench_stop
		return 0
	done
	tg_start
	sleep "$WARMUP"
	if ! kill -0 "$tg_pid" 2>/dev/null; then
		echo "# $name: the generator stopped (no traffic): $REMOTE_SH, ${TRAFFICGEN:-xdp-trafficgen} on $REMOTE_IF" >> "$res"
		tg_stop
		xdp_bench_stop
		return 0
	fi
	for r in $(seq "$REPEATS"); do
		python3 "$SNAP" snap --pp "$NETIF" > "$out/.b.json"
		l0=$(wc -l < "$out/xb-$name.log")
		sleep "$DURATION"
		l1=$(wc -l < "$out/xb-$name.log")
		python3 "$SNAP" snap --pp "$NETIF" > "$out/.a.json"
		pps=$(rate "$out/xb-$name.log" $((l0 + 1)) "$l1")
		[ "$pps" != 0 ] || echo "# $name rep $r: xdp-bench saw no packets" >> "$res"
		python3 "$SNAP" nic "$name" "$r" "$out/.b.json" "$out/.a.json" --pps "$pps" --pp "$NETIF" >> "$res"
		if [ "$napi" = 1 ]; then
			python3 "$SNAP" line "$name" "$r" "$out/.b.json" "$out/.a.json" \
				--pkts "$NETIF" --cost "$cost" --pp "$NETIF" --pps "$pps" >> "$res" || true
		fi
	done
	tg_stop
	xdp_bench_stop
}

for c in $CASES; do
	case "$c" in
	redirect-map-egress-drop) nic_case "$c" redirect-map -X -A drop "$NETIF" "$OUT_IF" ;;
	redirect-map-xmit) NIC_COST="$NETIF,$OUT_IF" nic_case "$c" redirect-map "$NETIF" "$OUT_IF" ;;
	drop|pass|tx) nic_case "$c" "$c" "$NETIF" ;;
	redirect-cpu-drop) NIC_COST="$NETIF,fn:cpu_map_bpf_prog_run" \
		nic_case "$c" redirect-cpu -c 0 -r drop "$NETIF" ;;
	redirect-map-veth-drop)
		if [ "$veth" = 0 ]; then
			ip link add xppv0 type veth peer name xppv1
			ip link set xppv0 up; ip link set xppv1 up
			veth=1
		fi
		nic_case "$c" redirect-map "$NETIF" xppv0 -- drop xppv1 ;;
	*) die "bench-nic: unknown case $c" ;;
	esac
done
echo "# done" >> "$res"
log "bench-nic: $res"
if [ -f "${out%/*}/base-nic/bench.txt" ] && [ -f "${out%/*}/series-nic/bench.txt" ]; then
	python3 "$here/bench-report.py" "${out%/*}" || true
fi
