#!/bin/bash
# stress.sh - inside the VM: traffic through every XDP drop path while the
# topology changes under it; then checks the kernel log and page_pool
# inflight accounting. Started by scripts/stress.sh (or by hand, see --help).
#
# Traffic: pktgen on the looped second virtio NIC (SENDER, back in the main
# netns: pktgen needs it there) into NETIF, one bounded run per iteration;
# in the veth iteration a second pktgen thread sends skbs into the veth
# pair (veth's own page_pool). Each iteration attaches one xdp-bench mode
# to NETIF and, under traffic, changes the topology (see --help). Results:
# /out/stress.txt (figures, PASS/FAIL), logs under /out/stress-logs/.
set -euo pipefail

usage() {
	cat <<'U'
usage: bash /xdp-pp/scripts/guest/stress.sh [--short]   (inside the VM)

Iteration i runs mode i % N of STRESS_MODES on NETIF under pktgen traffic:
  drop, tx, pass                  xdp-bench drop|tx|pass NETIF
  redirect-map-egress-drop        xdp-bench redirect-map -X -A drop NETIF NETIF
  redirect-cpu-drop               xdp-bench redirect-cpu -c 0 -c 1 -r drop -x
                                  (cpumap program drops; -x replaces the
                                  CPU 1 entry every second)
  veth-drop                       xdp-bench redirect-map NETIF vS0 + drop vS1,
                                  plus pktgen skbs on vS0
and under that traffic: XDP attach, replace (ip -force ... xdpdrv, odd
iterations) and detach; devmap/cpumap entries deleted and re-inserted
(bpftool, by map id); veth pair deleted and re-created, its channel count
changed; threaded NAPI toggled on NETIF (and vS1); virtio channel count
changed when NETIF has more than one queue (else skipped, reason printed);
NETIF unbound from and rebound to virtio_net every STRESS_REBIND_EVERY-th
iteration; a UDP reader with busy polling on throughout.
Pass: no splat in the kernel log (KASAN, WARNING, BUG, lockdep, refcount_t,
page_pool, Oops, stalls), no page_pool left detached with pages in flight
STRESS_LEAK_WAIT s after its detach, every step worked.
Environment (full / --short or STRESS_SHORT=1):
  STRESS_ITERS (12 / 3)  STRESS_SECS loop budget (1500 / 330): no
    iteration starts after it, except the first pass over STRESS_MODES,
    which always runs whole (the VM's timeout bounds it)
  STRESS_DWELL seconds per step (2 / 1)  STRESS_PKTS per pktgen run (5000000)
  STRESS_LEAK_WAIT (60)  STRESS_REBIND_EVERY (4 / 2; 0 = never)
  STRESS_STEP_TIMEOUT (300): a topology change still running after it is
    a hang: its kernel stack is saved, the run FAILs at once, naming it
  STRESS_THREADED_STALL (60): a threaded=0 write still waiting after it
    with traffic on is an error (7.3 waits for a NAPI kthread that
    repolls at full budget); pktgen is paused until the write returns
  STRESS_MODES (all six / redirect-map-egress-drop redirect-cpu-drop
  veth-drop)  STRESS_OUT (/out/stress.txt)
  STRESS_LOGS (/out/stress-logs)  KSRC (a kernel tree with tools/net/ynl;
  default: scripts/guest/ynlfind.py's search)
Exit: 0 pass, 1 fail, 4 skip (a tool or page_pool netlink missing).
U
}
SHORT=${STRESS_SHORT:-0}
case "${1:-}" in
-h|--help) usage; exit 0 ;;
--short) SHORT=1 ;;
"") ;;
*) usage >&2; exit 1 ;;
esac
# shellcheck source=inguest.sh
. "${BASH_SOURCE[0]%/*}/inguest.sh" # inside the harness VM only
ALL_MODES="drop tx redirect-map-egress-drop redirect-cpu-drop veth-drop pass"
if [ "$SHORT" = 1 ]; then
	# the three redirect drop paths, NETIF rebound in the cpumap one
	d_iters=3 d_secs=330 d_dwell=1 d_rebind=2
	d_modes="redirect-map-egress-drop redirect-cpu-drop veth-drop"
else
	d_iters=12 d_secs=1500 d_dwell=2 d_rebind=4 d_modes=$ALL_MODES
fi
ITERS=${STRESS_ITERS:-$d_iters}
SECS=${STRESS_SECS:-$d_secs}
DWELL=${STRESS_DWELL:-$d_dwell}
PKTS=${STRESS_PKTS:-5000000}
LEAK_WAIT=${STRESS_LEAK_WAIT:-60}
REBIND_EVERY=${STRESS_REBIND_EVERY:-$d_rebind}
read -r -a MODES <<<"${STRESS_MODES:-$d_modes}"
RES=${STRESS_OUT:-/out/stress.txt}
LOGS=${STRESS_LOGS:-/out/stress-logs}
UDP_PORT=9 # pktgen's udp_dst (scripts/guest/netsetup.sh)
T_START=$(date +%s)

say() { echo "[stress +$(( $(date +%s) - T_START ))s] $*"; }
skip_run() { echo "stress: SKIP: $*" | tee "$RES"; exit 4; }
ERRORS=()
err() { say "ERROR: $*"; ERRORS+=("$*"); }
declare -A CH=()
bump() { CH[$1]=$(( ${CH[$1]:-0} + 1 )); }

for t in xdp-bench bpftool ethtool ip jq python3; do
	command -v "$t" >/dev/null || skip_run "no $t in the guest"
done
[ -d /proc/net/pktgen ] || modprobe pktgen 2>/dev/null || true
[ -d /proc/net/pktgen ] || skip_run "no pktgen (CONFIG_NET_PKTGEN)"
mkdir -p "$LOGS"
: > "$RES"

# shellcheck source=netsetup.sh
. /xdp-pp/scripts/guest/netsetup.sh
# shellcheck source=../benchlib.sh
. /xdp-pp/scripts/benchlib.sh

# ---- netlink (ynl): found by scripts/guest/ynlfind.py (KSRC, /variant/src,
# else the kselftest install's copy)
if ! python3 /xdp-pp/scripts/guest/ynlfind.py > /dev/null 2> "$LOGS/ynlfind.err"; then
	skip_run "$(cat "$LOGS/ynlfind.err"): cannot read page_pool state"
fi
[ -z "${KSRC:-}" ] || export KSRC
# /variant is read-only: without this, every python3 run compiles the ynl
# library again (tens of seconds under TCG)
export PYTHONPYCACHEPREFIX=/tmp/stress-pycache
# One netlink agent for the whole run (a python3 start costs 10-60 s under
# TCG + KASAN): subscribed to the page-pool notifications from its start,
# it answers one JSON line per request on stdin:
#   stats IFNAME  page_pool stats of IFNAME (scripts/guest/ppstats.py)
#   pools         page-pool-get dump (list)
#   ntf           notifications seen so far, by name
NL_AGENT='
import json, sys
sys.path.insert(0, "/xdp-pp/scripts/guest")
import ynlfind
from ppstats import netdev_pp_stats
ynl = ynlfind.family("netdev")
ynl.ntf_subscribe("page-pool")
seen = {}
def drain():
    ynl.check_ntf()
    while not ynl.async_msg_queue.empty():
        name = ynl.async_msg_queue.get_nowait()["name"]
        seen[name] = seen.get(name, 0) + 1
for line in sys.stdin:
    cmd = line.split() or ["hello"]
    try:
        if cmd[0] == "pools":
            out = ynl.dump("page-pool-get", {})
        elif cmd[0] == "stats":
            out = netdev_pp_stats(cmd[1], ynl=ynl)
        elif cmd[0] == "ntf":
            drain()
            out = seen
        else:
            out = {"hello": len(ynl.dump("page-pool-get", {}))}
    except Exception as e:  # pylint: disable=broad-except
        out = {"error": repr(e)}
    print(json.dumps(out), flush=True)
'
# (FIFOs, not a coproc: a coproc's fds are not there in pipelines)
rm -f /tmp/stress-nl.in /tmp/stress-nl.out
mkfifo /tmp/stress-nl.in /tmp/stress-nl.out
python3 -u -c "$NL_AGENT" < /tmp/stress-nl.in > /tmp/stress-nl.out 2> "$LOGS/nl-agent.err" &
NLA_PID=$!
exec {NL_W}> /tmp/stress-nl.in {NL_R}< /tmp/stress-nl.out
nl() { # REQUEST: the agent's JSON answer on stdout; 1 on no answer
	local line
	echo "$*" >&"$NL_W" || return 1
	IFS= read -r -t 300 line <&"$NL_R" || return 1
	echo "$line"
	! grep -q '^{"error"' <<<"$line"
}

# ---- kernel log: everything from boot on, collected so nothing wraps
# away; judged by scripts/splat.sh (the harness's splat patterns); without
# it, by SPLAT_RE and EXTRA, a coarser line match
SPLAT_RE='WARNING:|BUG:|KASAN|UBSAN|KFENCE|Oops|kernel BUG|inconsistent lock state|possible circular locking|possible recursive locking|suspicious RCU usage|refcount_t|stalled pool shutdown|blocked for more than|detected stall'
EXTRA='page_pool.*violation|soft lockup|hard LOCKUP|list_(add|del) corruption'
dmesg -w > "$LOGS/kmsg.txt" 2>&1 &
KMSG_PID=$!
echo "xdp-pp stress: start" > /dev/kmsg
TR=/sys/kernel/tracing
PP_TRACE=0
if [ -w "$TR/events/page_pool/page_pool_release/enable" ]; then
	echo boot > "$TR/trace_clock" # seconds as in /proc/uptime
	echo > "$TR/trace"
	echo 1 > "$TR/events/page_pool/page_pool_release/enable"
	PP_TRACE=1
fi

# ---- network: NETIF receives, SENDER (the looped NIC) sends
if ip netns list 2>/dev/null | grep -qw remote && [ -n "${NETIF:-}" ] && [ -n "${REMOTE_IF:-}" ]; then
	: # set up already (run-tests.sh)
else
	xdp_pp_netsetup || { echo "stress: FAIL: network setup" | tee "$RES"; exit 1; }
fi
SENDER=$REMOTE_IF
if ! [ -e "/sys/class/net/$SENDER" ]; then
	ip netns exec remote ip link set "$SENDER" netns 1
	SENDER_MOVED=1
fi
ip link set "$SENDER" up
VDEV=$(basename "$(readlink -f "/sys/class/net/$NETIF/device")")
DRV=$(ethtool -i "$NETIF" | sed -n 's/^driver: //p')
NMAC=$(cat "/sys/class/net/$NETIF/address")
DUMMY=/variant/kselftest/net/lib/xdp_dummy.bpf.o
say "NETIF=$NETIF ($DRV, $VDEV) SENDER=$SENDER, $(nproc) CPUs, kernel $(uname -r)"

# ---- background helpers: page_pool notifications, busy-poll UDP reader
sysctl -qw net.core.busy_read=50 net.core.busy_poll=50
python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_BUSY_POLL", 46), 50)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.settimeout(0.2)
while True:
    try:
        s.recv(2048)
    except socket.timeout:
        pass
' "$UDP_PORT" > "$LOGS/busypoll.log" 2>&1 &
BP_PID=$!
sleep 1
kill -0 "$BP_PID" 2>/dev/null || err "busy-poll reader died: $(tail -1 "$LOGS/busypoll.log")"
# the agent is up (and subscribed) once it answers
if ! hello=$(nl hello); then
	skip_run "page_pool over netlink (page-pool-get) failed: $hello $(tail -2 "$LOGS/nl-agent.err" | tr '\n' ' ')"
fi
say "netlink agent up ($hello)"

cleanup() {
	set +e
	echo stop > /proc/net/pktgen/pgctrl 2>/dev/null
	# shellcheck disable=SC2086
	[ -n "$XB_PIDS" ] && kill -KILL $XB_PIDS 2>/dev/null
	kill "$BP_PID" "$NLA_PID" "$KMSG_PID" 2>/dev/null
	ip link set dev "$NETIF" xdp off 2>/dev/null
	ip link del vS0 2>/dev/null
	if [ "${SENDER_MOVED:-0}" = 1 ]; then
		ip link set "$SENDER" netns remote 2>/dev/null
		ip -n remote link set "$SENDER" up 2>/dev/null
	fi
}
trap cleanup EXIT

# ---- counters
busypoll_rx() {
	awk '/^TcpExt:/ { if (!h) { for (i = 1; i <= NF; i++) n[i] = $i; h = 1 }
		else for (i = 1; i <= NF; i++) if (n[i] == "BusyPollRxPackets") print $i }' /proc/net/netstat
}
# NETIF's counters: rx_packets xdp_packets xdp_drops xdp_tx xdp_redirects
nic_now() {
	local rx
	rx=$(cat "/sys/class/net/$NETIF/statistics/rx_packets" 2>/dev/null || echo 0)
	ethtool -S "$NETIF" 2>/dev/null | awk -v rx="$rx" -F: '
		$1 ~ /^ *rx[0-9]+_xdp_packets$/ { p += $2 } $1 ~ /^ *rx[0-9]+_xdp_drops$/ { d += $2 }
		$1 ~ /^ *rx[0-9]+_xdp_tx$/ { t += $2 } $1 ~ /^ *rx[0-9]+_xdp_redirects$/ { r += $2 }
		END { printf "%d %d %d %d %d\n", rx, p, d, t, r }'
}
NIC_ACC=(0 0 0 0 0)
NIC_BASE=()
nic_mark() { read -r -a NIC_BASE <<<"$(nic_now)"; }
nic_add() {
	local now i
	read -r -a now <<<"$(nic_now)"
	for i in 0 1 2 3 4; do
		NIC_ACC[i]=$(( NIC_ACC[i] + now[i] - NIC_BASE[i] ))
	done
	NIC_BASE=("${now[@]}")
}
# NETIF's page_pool recycle stats (scripts/guest/ppstats.py): cached ring ring_full
PP_ACC=(0 0 0)
PP_BASE=(0 0 0)
pp_now() {
	local j
	if j=$(nl stats "$NETIF"); then
		jq -r '"\(.cached) \(.ring) \(.ring_full)"' <<<"$j"
	else
		echo "0 0 0"
	fi
}
pp_mark() { read -r -a PP_BASE <<<"$(pp_now)"; }
pp_add() {
	local now i
	read -r -a now <<<"$(pp_now)"
	for i in 0 1 2; do
		PP_ACC[i]=$(( PP_ACC[i] + now[i] - PP_BASE[i] ))
	done
	PP_BASE=("${now[@]}")
}

# ---- pktgen: kpktgend_0 on SENDER (into NETIF), kpktgend_1 on vS0
PG_SENT=0 PG_VETH_SENT=0 PG_JOB='' PG_ARG=''
pg_sofar() { sed -nE 's/.*pkts-sofar: ([0-9]+).*/\1/p' "/proc/net/pktgen/$1" 2>/dev/null | head -1; }
pg_start() { # [veth]
	PG_ARG=${1:-}
	xdp_pp_pktgen_setup "$SENDER" "$NMAC"
	xdp_pp_pg "$SENDER" "src_min 192.0.2.2"
	xdp_pp_pg "$SENDER" "src_max 192.0.2.2"
	xdp_pp_pg "$SENDER" "burst 16"
	xdp_pp_pg "$SENDER" "count $PKTS"
	if [ -e /proc/net/pktgen/kpktgend_1 ]; then
		xdp_pp_pg kpktgend_1 "rem_device_all"
		if [ "${1:-}" = veth ] && [ -e /sys/class/net/vS0 ]; then
			xdp_pp_pg kpktgend_1 "add_device vS0"
			xdp_pp_pg vS0 "pkt_size 1500"
			xdp_pp_pg vS0 "dst 198.51.100.2"
			xdp_pp_pg vS0 "dst_mac $(cat /sys/class/net/vS1/address)"
			xdp_pp_pg vS0 "count $PKTS"
		fi
	fi
	(echo start > /proc/net/pktgen/pgctrl) 2>/dev/null &
	PG_JOB=$!
}
pg_veth_take() { # count vS0's packets before it goes away
	local n
	n=$(pg_sofar vS0)
	PG_VETH_SENT=$(( PG_VETH_SENT + ${n:-0} ))
}
pg_stop() {
	timeout 30 sh -c 'echo stop > /proc/net/pktgen/pgctrl' || err "pktgen: stop hung"
	wait "$PG_JOB" 2>/dev/null || true
	local n
	n=$(pg_sofar "$SENDER")
	PG_SENT=$(( PG_SENT + ${n:-0} ))
	[ -e /proc/net/pktgen/vS0 ] && pg_veth_take
	[ -e /proc/net/pktgen/kpktgend_1 ] && xdp_pp_pg kpktgend_1 "rem_device_all"
	return 0
}

# ---- XDP
has_xdp() { ip link show dev "$1" 2>/dev/null | grep -q 'prog/xdp'; }
wait_xdp() { # DEV: wait for a program (xdp-bench loads it)
	local _
	for _ in $(seq 120); do
		has_xdp "$1" && return 0
		sleep 0.5
	done
	return 1
}
xb_start() { # LOG ARGS...: one more xdp-bench, its pid added to XB_PIDS
	local old=$XB_PIDS
	xdp_bench_start "$@"
	XB_PIDS="$old $XB_PIDS"
}
xb_stop() { # xdp_bench_stop, bounded
	local guard
	# shellcheck disable=SC2086
	(sleep 20; kill -KILL $XB_PIDS 2>/dev/null) &
	guard=$!
	xdp_bench_stop
	kill "$guard" 2>/dev/null || true
	wait "$guard" 2>/dev/null || true
}
xdp_off() { # DEV: detach whatever is left
	if has_xdp "$1"; then
		bounded "XDP detach on $1 (ip link set xdp off)" ip link set dev "$1" xdp off &&
			bump xdp-detach
	fi
	return 0
}

# ---- maps of the running xdp-bench: bpftool by id
map_ids() { # TYPE -> "id value_size" lines
	bpftool -j map show 2>/dev/null |
		jq -r --arg t "$1" '.[] | select(.type == $t) | "\(.id) \(.bytes_value)"'
}
le_value() { # U32 SIZE: the bytes of U32 (little endian), zero-padded to SIZE
	local v=$1 n=$2 i out=()
	for i in 0 1 2 3; do out+=($(( (v >> (8 * i)) & 255 ))); done
	for (( i = 4; i < n; i++ )); do out+=(0); done
	echo "${out[@]}"
}
map_delete() { # TYPE KEY KIND
	local id sz rc=1
	while read -r id sz; do
		[ -n "$id" ] || continue
		# shellcheck disable=SC2046
		bpftool map delete id "$id" key $(le_value "$2" 4) 2>/dev/null && { bump "$3"; rc=0; }
	done <<<"$(map_ids "$1")"
	return $rc
}
map_insert() { # TYPE KEY VALUE(u32) KIND: no program in the entry
	local id sz rc=1
	while read -r id sz; do
		[ -n "$id" ] || continue
		# shellcheck disable=SC2046
		bpftool map update id "$id" key $(le_value "$2" 4) value $(le_value "$3" "$sz") \
			2>/dev/null && { bump "$4"; rc=0; }
	done <<<"$(map_ids "$1")"
	return $rc
}

# ---- steps that can block in the kernel (rtnl, the netdev instance lock,
# a NAPI that never goes idle) run with a deadline, STRESS_STEP_TIMEOUT.
# A step past it is a hang: the kernel stacks of the stuck tasks go to
# stress-logs/hung.txt, the blocked-task dump (sysrq w) to the kernel log,
# the result is written at once (FAIL, the step named) and the guest powers
# off: nothing that needs the lock the stuck task holds could finish, the
# page_pool checks included, and a VM timeout would leave no result at all.
STEP_TIMEOUT=${STRESS_STEP_TIMEOUT:-300}
bounded() { # LABEL CMD...: CMD's exit status, or no return if it hangs
	bounded_stall 0 "" "" "$@"
}
# As bounded(); if CMD still runs after SECS (0: never), HOOK LABEL ELAPSED
# runs once, and when it succeeds NOTE is added to the label a hang reports.
bounded_stall() { # SECS HOOK NOTE LABEL CMD...
	local secs=$1 hook=$2 note=$3 label=$4 pid t0 el
	shift 4
	"$@" &
	pid=$!
	t0=$(date +%s)
	while kill -0 "$pid" 2>/dev/null; do
		el=$(( $(date +%s) - t0 ))
		if [ -n "$hook" ] && [ "$secs" -gt 0 ] && [ "$el" -ge "$secs" ]; then
			! "$hook" "$label" "$el" || label+=", $note"
			hook=
		fi
		[ "$el" -lt "$STEP_TIMEOUT" ] || hung "$label" "$pid"
		sleep 0.5
	done
	wait "$pid"
}
sysfs_write() { # LABEL FILE VALUE [SECS HOOK NOTE], bounded (bounded_stall)
	# shellcheck disable=SC2016 # expanded by the inner sh
	bounded_stall "${4:-0}" "${5:-}" "${6:-}" "$1" sh -c 'echo "$2" > "$1"' _ "$2" "$3"
}
# Turning threaded NAPI off under traffic: 7.3's napi_stop_kthread() clears
# NAPI_STATE_THREADED and then waits (msleep loop, rtnl and the netdev
# lock held) for the kthread to drop SCHED_THREADED, which it did only when
# a poll completed the instance: while every poll used its whole budget,
# the write waited for the traffic to end. The series' net fix (patches/04-*)
# hands a repolling instance to NET_RX once THREADED is clear. A write
# still waiting after THREADED_STALL s with traffic on is an error; pktgen
# is then paused so that the run can go on and report it; a write that does
# not return once the traffic stopped is a hang (STEP_TIMEOUT).
THREADED_STALL=${STRESS_THREADED_STALL:-60}
TH_OFF=0 TH_OFF_WAITED=0 TH_OFF_RELEASE_MAX=0 TH_PAUSED_AT=
th_pause() { # LABEL ELAPSED: threaded_off's stall hook; fails if no traffic runs
	[ -n "$PG_JOB" ] || return 1
	say "  $1: still waiting after $2 s under traffic (napi_stop_kthread() waits for a NAPI kthread that repolls at full budget); pausing pktgen"
	err "$1: threaded=0 still waiting after $2 s under traffic"
	pg_stop
	TH_PAUSED_AT=$(date +%s)
	TH_OFF_WAITED=$(( TH_OFF_WAITED + 1 ))
}
threaded_off() { # LABEL FILE: write 0, bounded; pause pktgen if it waits for traffic
	local rc=0 el
	TH_OFF=$(( TH_OFF + 1 ))
	TH_PAUSED_AT=
	sysfs_write "$1" "$2" 0 "$THREADED_STALL" th_pause "pktgen paused after $THREADED_STALL s" || rc=$?
	if [ -n "$TH_PAUSED_AT" ]; then
		el=$(( $(date +%s) - TH_PAUSED_AT ))
		[ "$el" -le "$TH_OFF_RELEASE_MAX" ] || TH_OFF_RELEASE_MAX=$el
		say "  $1: returned $el s after pktgen paused; traffic on again"
		pg_start "$PG_ARG"
	fi
	return "$rc"
}
changes_list() { # " kind=count" for every topology change so far, sorted
	local k list=""
	for k in $(printf '%s\n' "${!CH[@]}" | sort); do list+=" $k=${CH[$k]}"; done
	echo "$list"
}
res_header() { # the first two lines of stress.txt
	echo "# xdp-pp stress ($([ "$SHORT" = 1 ] && echo short || echo full)), kernel $(uname -r), $(nproc) vCPUs"
	echo "netif: $NETIF ($DRV) <- pktgen on $SENDER; modes: ${MODES[*]}"
}
hung() { # LABEL PID: never returns
	local p kids changes
	kids=$(awk -v pp="$2" '$4 == pp { print $1 }' /proc/[0-9]*/stat 2>/dev/null || true)
	{
		echo "step hung for more than $STEP_TIMEOUT s: $1 (pid $2), iteration $IT (${mode:-setup})"
		for p in $2 $kids; do
			echo "--- pid $p: $(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null)" \
				"state $(awk '/^State:/ { print $2 }' "/proc/$p/status" 2>/dev/null)"
			cat "/proc/$p/stack" 2>/dev/null || echo "(no /proc/$p/stack)"
		done
	} > "$LOGS/hung.txt"
	echo w > /proc/sysrq-trigger 2>/dev/null || true
	sleep 2
	dmesg > "$LOGS/dmesg-hung.txt" 2>/dev/null || true
	changes=$(changes_list)
	{
		res_header
		echo "iterations: $IT completed, iteration $IT (${mode:-setup}) hung (limit $ITERS iterations / $SECS s)"
		echo "topology changes:${changes:- none}"
		echo "fail: step hung for more than $STEP_TIMEOUT s in iteration $IT (${mode:-setup}): $1; its kernel stack: stress-logs/hung.txt, blocked tasks: stress-logs/dmesg-hung.txt"
		for e in "${ERRORS[@]}"; do echo "fail: $e"; done
		echo "result: FAIL"
	} > "$RES"
	cat "$LOGS/hung.txt" "$RES"
	sync
	# power off now: the stuck task holds what the rest of the run needs
	echo o > /proc/sysrq-trigger 2>/dev/null || true
	sleep 60
	exit 1
}

# ---- topology
threaded_write() { # LABEL FILE VALUE
	if [ "$3" = 0 ]; then threaded_off "$1" "$2"; else sysfs_write "$1" "$2" "$3"; fi
}
threaded_flip() { # set NETIF's (and vS1's) threaded NAPI to $1
	if threaded_write "threaded=$1 on $NETIF (sysfs)" "/sys/class/net/$NETIF/threaded" "$1"; then
		bump threaded-napi
	else
		err "threaded=$1 on $NETIF failed"
	fi
	if [ -e /sys/class/net/vS1 ] && has_xdp vS1; then
		threaded_write "threaded=$1 on vS1 (sysfs)" /sys/class/net/vS1/threaded "$1" 2>/dev/null &&
			bump threaded-napi
	fi
	return 0
}
veth_create() {
	ip link add vS0 numtxqueues 2 numrxqueues 2 type veth \
		peer name vS1 numtxqueues 2 numrxqueues 2
	sysctl -qw net.ipv6.conf.vS0.disable_ipv6=1 net.ipv6.conf.vS1.disable_ipv6=1
	ip link set vS0 up
	ip link set vS1 up
	bump veth-create
}
veth_channels() { # N: vS0 tx and vS1 rx to N queues, in the order veth allows with XDP on vS1
	local a=(vS0 tx) b=(vS1 rx)
	[ "$1" = 1 ] || { a=(vS1 rx); b=(vS0 tx); }
	if bounded "ethtool -L ${a[*]} $1" ethtool -L "${a[@]}" "$1" &&
	   bounded "ethtool -L ${b[*]} $1" ethtool -L "${b[@]}" "$1"; then
		bump veth-channels
	else
		err "veth channels -> $1 failed"
	fi
}
VIRTIO_MAXQ=$(ethtool -l "$NETIF" 2>/dev/null | awk '/^Combined:/ { print $2; exit }')
VIRTIO_MAXQ=${VIRTIO_MAXQ:-1}
if [ "$VIRTIO_MAXQ" -gt 1 ]; then
	CH_SKIP=""
else
	CH_SKIP="$NETIF has 1 combined channel at most (ethtool -l: max Combined $VIRTIO_MAXQ; vng --network loop gives a single-queue virtio-net on a QEMU hubport, which has no multiqueue)"
	say "virtio channel changes skipped: $CH_SKIP"
fi
virtio_channels() { # N (only with no XDP on NETIF: virtio_net refuses it then)
	[ -z "$CH_SKIP" ] || return 0
	if bounded "ethtool -L $NETIF combined $1" ethtool -L "$NETIF" combined "$1"; then
		bump virtio-channels
	else
		err "ethtool -L $NETIF combined $1 failed"
	fi
}
nic_rebind() { # unbind NETIF from virtio_net and bind it again, under traffic
	local d=/sys/bus/virtio/drivers/virtio_net _
	[ -e "$d/unbind" ] || { err "no $d/unbind"; return 0; }
	nic_add
	pp_add
	sysfs_write "unbind $VDEV from virtio_net" "$d/unbind" "$VDEV" || { err "unbind $VDEV failed"; return 0; }
	sleep 0.5
	sysfs_write "bind $VDEV to virtio_net" "$d/bind" "$VDEV" || { err "bind $VDEV failed"; return 0; }
	NETIF=
	for _ in $(seq 60); do
		NETIF=$(find "/sys/bus/virtio/devices/$VDEV/net/" -mindepth 1 -maxdepth 1 \
			-printf '%f\n' 2>/dev/null | head -1)
		[ -n "$NETIF" ] && break
		sleep 0.5
	done
	[ -n "$NETIF" ] || { err "$VDEV has no netdev after rebind"; return 0; }
	ip addr add 192.0.2.1/24 dev "$NETIF"
	ip link set "$NETIF" up
	bump nic-rebind
	say "  rebound $VDEV: NETIF=$NETIF"
	NIC_BASE=(0 0 0 0 0)
	PP_BASE=(0 0 0)
	pp_mark
}

# ---- one mode: attach its programs (xdp-bench)
mode_attach() { # MODE IT
	local log=$LOGS/xb-$2-$1.log cpus=(-c 0)
	[ "$(nproc)" -gt 1 ] && cpus=(-c 0 -c 1 -x)
	case $1 in
	drop|tx|pass) xb_start "$log" "$1" "$NETIF" ;;
	redirect-map-egress-drop) xb_start "$log" redirect-map -X -A drop "$NETIF" "$NETIF" ;;
	redirect-cpu-drop) xb_start "$log" redirect-cpu "${cpus[@]}" -p round-robin -r drop "$NETIF" ;;
	veth-drop) xb_start "$log" drop vS1
		wait_xdp vS1 || err "iteration $2: xdp-bench drop vS1 did not attach"
		xb_start "$log-rm" redirect-map "$NETIF" vS0 ;;
	*) err "unknown mode $1"; return 0 ;;
	esac
	if wait_xdp "$NETIF"; then
		bump xdp-attach
		say "  attached"
	else
		err "iteration $2: $1 did not attach to $NETIF (log $log)"
	fi
}

# ---- one mode: the changes made under its traffic
mode_churn() { # MODE
	case $1 in
	redirect-map-egress-drop)
		map_delete devmap 0 devmap-delete || err "devmap delete failed"
		sleep "$DWELL"
		map_insert devmap 0 "$(cat "/sys/class/net/$NETIF/ifindex")" devmap-insert ||
			err "devmap insert failed" ;;
	redirect-cpu-drop)
		map_delete cpumap 0 cpumap-delete || err "cpumap delete failed"
		sleep "$DWELL"
		map_insert cpumap 0 2048 cpumap-insert || err "cpumap insert failed" ;;
	veth-drop)
		veth_channels 1
		sleep "$DWELL"
		veth_channels 2
		pg_veth_take
		bounded "ip link del vS0 (under traffic)" ip link del vS0 && bump veth-delete
		sleep "$DWELL"
		veth_create
		xb_start "$LOGS/xb-$IT-veth-drop-again.log" drop vS1
		if wait_xdp vS1; then
			bump xdp-attach
		else
			err "xdp-bench drop vS1 (re-created) did not attach"
		fi
		map_insert devmap 0 "$(cat /sys/class/net/vS0/ifindex)" devmap-insert ||
			err "devmap insert (new vS0) failed" ;;
	esac
	return 0
}

# ---- the loop
nic_mark
pp_mark
BP0=$(busypoll_rx)
IT=0
LOOP_T0=$(date +%s)
deadline=$(( LOOP_T0 + SECS ))
say "loop: up to $ITERS iterations or $SECS s (the first pass over the modes runs whole), modes: ${MODES[*]}"
# The budget does not cut the first pass: a run that skips a mode proves
# nothing of it, and how long a pass takes under TCG with KASAN depends on
# the host (CI's machine was slower than the one the budget was set on).
FIRST_PASS_SECS=
while [ "$IT" -lt "$ITERS" ] &&
	{ [ "$IT" -lt "${#MODES[@]}" ] || [ "$(date +%s)" -lt "$deadline" ]; }; do
	mode=${MODES[IT % ${#MODES[@]}]}
	say "iteration $IT: $mode"
	[ "$mode" = veth-drop ] && ! [ -e /sys/class/net/vS0 ] && veth_create
	# no XDP on NETIF here: the virtio channel count may change
	virtio_channels $(( IT % 2 ? VIRTIO_MAXQ : 1 ))
	nic_mark
	if [ "$mode" = veth-drop ]; then pg_start veth; else pg_start; fi
	mode_attach "$mode" "$IT"
	sleep "$DWELL"
	threaded_flip 1
	mode_churn "$mode"
	say "  threaded NAPI on, map/veth changes done"
	if [ "$REBIND_EVERY" -gt 0 ] && [ $(( IT % REBIND_EVERY )) -eq $(( REBIND_EVERY - 1 )) ]; then
		nic_rebind
	fi
	sleep "$DWELL"
	[ -e "/sys/class/net/$NETIF/threaded" ] && [ "$(cat "/sys/class/net/$NETIF/threaded")" != 0 ] &&
		threaded_flip 0
	# replace in odd iterations of the first pass over the modes, in
	# even ones of the second, ...: every mode gets both
	if [ $(( (IT + IT / ${#MODES[@]}) % 2 )) = 1 ] && has_xdp "$NETIF" && [ -f "$DUMMY" ]; then
		# replace the running program under traffic, then detach it
		if bounded "XDP replace on $NETIF (ip -force link set xdpdrv)" \
			ip -force link set dev "$NETIF" xdpdrv obj "$DUMMY" sec xdp; then
			bump xdp-replace
		else
			err "ip -force link set xdpdrv (replace) failed"
		fi
		sleep "$DWELL"
		xdp_off "$NETIF"
		xb_stop
	else
		# xdp-bench detaches its own programs
		has_xdp "$NETIF" && bump xdp-detach
		xb_stop
	fi
	xdp_off "$NETIF"
	[ -e /sys/class/net/vS1 ] && xdp_off vS1
	say "  detached"
	sleep 1 # traffic into the stack: the busy-poll reader
	pg_stop
	nic_add
	nl ntf > /dev/null || true # keeps the agent's socket drained
	say "  pktgen stopped (sent so far: $PG_SENT + $PG_VETH_SENT)"
	IT=$(( IT + 1 ))
	[ "$IT" = "${#MODES[@]}" ] && FIRST_PASS_SECS=$(( $(date +%s) - LOOP_T0 ))
done
LOOP_SECS=$(( $(date +%s) - T_START ))
kill "$BP_PID" 2>/dev/null || true # its socket held pages of NETIF's pools
wait "$BP_PID" 2>/dev/null || true
ip link del vS0 2>/dev/null && bump veth-delete
pp_add
BP_RX=$(( $(busypoll_rx) - BP0 ))

# ---- page_pools: every detached pool must get its pages back
# Two views of the pools still holding pages after their destroy, as
# "source id inflight age_s" lines:
#  - netlink: page-pool-get lists a destroyed pool with pages in flight as
#    detached (detach-time); only pools with a netdev are listed (virtio's,
#    not veth's);
#  - trace: page_pool_release fires at the destroy and at every retry
#    (1/s) of every pool, with its inflight count; a pool whose last event
#    shows pages in flight is still waiting (veth's pools included; for
#    those the kernel also warns "stalled pool shutdown" after 60 s).
pp_pending() {
	local now
	now=$(cut -d' ' -f1 /proc/uptime)
	nl pools | jq -r --argjson now "${now%.*}" '.[] | select(has("detach-time") and (.inflight // 0) > 0)
			| "netlink \(.id) \(.inflight) \($now - .["detach-time"])"'
	[ "$PP_TRACE" = 1 ] || return 0
	awk -v now="$now" '/ page_pool_release: / {
			for (i = 1; i <= NF; i++) {
				if ($i ~ /^[0-9]+\.[0-9]+:$/) ts = $i + 0
				if ($i ~ /^page_pool=/) p = substr($i, 11)
				if ($i ~ /^inflight=/) n = substr($i, 10) + 0
			}
			if (!(p in last) || last[p] <= 0) start[p] = ts
			last[p] = n
		}
		END { for (p in last) if (last[p] > 0) printf "trace %s %d %d\n", p, last[p], now - start[p] }' \
		"$TR/trace"
}
say "page_pool: waiting for destroyed pools to get their pages back (leak after $LEAK_WAIT s)"
t0=$(date +%s)
DRAIN_FIRST=
while :; do
	if ! pending=$(pp_pending); then
		err "page-pool-get dump failed"
		pending=
		break
	fi
	[ -n "$DRAIN_FIRST" ] || DRAIN_FIRST=$(grep -c . <<<"$pending" || true)
	young=$(awk -v w="$LEAK_WAIT" 'NF && $4 < w' <<<"$pending")
	[ -z "$young" ] && break
	[ $(( $(date +%s) - t0 )) -gt $(( LEAK_WAIT + 10 )) ] && break
	sleep 5
done
DRAIN_SECS=$(( $(date +%s) - t0 ))
leaks=$(awk -v w="$LEAK_WAIT" 'NF && $4 >= w' <<<"$pending")
leak_count() { awk -v s="$1" '$1 == s { n++; p += $3 } END { printf "%d %d\n", n, p }' <<<"$leaks"; }
read -r LEAKED_POOLS LEAKED_PAGES <<<"$(leak_count netlink)"
read -r LEAKED_TPOOLS LEAKED_TPAGES <<<"$(leak_count trace)"
[ -z "$leaks" ] || say "page_pool: leaked (source id inflight age_s): $(tr '\n' ';' <<<"$leaks")"
nl pools > "$LOGS/page-pools.json" || true
ntf=$(nl ntf) || err "netlink agent: no notification counts ($ntf)"
PP_CREATED=$(jq -r '.["page-pool-add-ntf"] // 0' <<<"$ntf" 2>/dev/null || echo 0)
PP_DESTROYED=$(jq -r '.["page-pool-del-ntf"] // 0' <<<"$ntf" 2>/dev/null || echo 0)
PP_TDESTROYED=-
if [ "$PP_TRACE" = 1 ]; then # the first release event of a pool: cnt=1
	PP_TDESTROYED=$(grep -c ' page_pool_release: .* cnt=1$' "$TR/trace" || true)
	cp "$TR/trace" "$LOGS/page_pool_release.trace"
fi

# ---- kernel log
sleep 1
kill "$KMSG_PID" 2>/dev/null || true
wait "$KMSG_PID" 2>/dev/null || true
klog=$LOGS/kmsg.txt
if ! grep -q 'xdp-pp stress: start' "$klog"; then # the collector failed
	dmesg > "$LOGS/dmesg.txt"
	klog=$LOGS/dmesg.txt
fi
if [ -f /xdp-pp/scripts/splat.sh ]; then
	bash /xdp-pp/scripts/splat.sh "$klog" > "$LOGS/splats.txt" 2>&1 || true
	SPLATS=$(grep -c '^---- splat ' "$LOGS/splats.txt" || true)
else
	grep -E "$SPLAT_RE|$EXTRA" "$klog" > "$LOGS/splats.txt" || true
	SPLATS=$(grep -c . "$LOGS/splats.txt" || true)
fi
FIRST_SPLAT=$(grep -m1 -E "$SPLAT_RE|$EXTRA" "$klog" | sed 's/^\[[^]]*\] //' || true)
# ---- figures
changes=$(changes_list)
fail=()
[ "$SPLATS" = 0 ] || fail+=("$SPLATS kernel splat(s), first: ${FIRST_SPLAT:-?} (stress-logs/splats.txt)")
[ "$LEAKED_POOLS" = 0 ] || fail+=("$LEAKED_POOLS page_pool(s) listed detached with $LEAKED_PAGES page(s) in flight $LEAK_WAIT s after their destroy (netlink)")
[ "$LEAKED_TPOOLS" = 0 ] || fail+=("$LEAKED_TPOOLS page_pool(s) with $LEAKED_TPAGES page(s) in flight $LEAK_WAIT s after their destroy (page_pool_release trace)")
[ "$IT" -gt 0 ] || fail+=("no iteration ran")
# every mode must have run at least once, or the run proves nothing of it
if [ "$IT" -lt "${#MODES[@]}" ]; then
	fail+=("only $IT of ${#MODES[@]} modes ran (STRESS_ITERS=$ITERS; not run: ${MODES[*]:$IT}); raise STRESS_ITERS to at least ${#MODES[@]}")
fi
for e in "${ERRORS[@]}"; do fail+=("$e"); done
verdict=PASS
[ ${#fail[@]} = 0 ] || verdict=FAIL
{
	res_header
	pass_of="the ${#MODES[@]} modes"
	[ "${#MODES[@]}" -ne 1 ] || pass_of="the 1 mode"
	echo "iterations: $IT (limit $ITERS iterations / $SECS s; first pass over $pass_of ${FIRST_PASS_SECS:-not completed}${FIRST_PASS_SECS:+ s}; loop ${LOOP_SECS} s incl. setup)"
	echo "packets: pktgen sent $PG_SENT to $NETIF + $PG_VETH_SENT into veth vS0 (skb path)"
	echo "packets: $NETIF rx_packets ${NIC_ACC[0]}, xdp_packets ${NIC_ACC[1]}, xdp_drops ${NIC_ACC[2]}, xdp_tx ${NIC_ACC[3]}, xdp_redirects ${NIC_ACC[4]}"
	echo "page_pool ($NETIF recycle): cached ${PP_ACC[0]}, ring ${PP_ACC[1]}, ring_full ${PP_ACC[2]}"
	echo "page_pools: created $PP_CREATED, destroyed $PP_DESTROYED (netlink notifications: pools with a netdev); destroyed $PP_TDESTROYED (page_pool_release trace: all, veth's too)"
	echo "busy poll: BusyPollRxPackets +$BP_RX"
	echo "topology changes:${changes:- none}"
	echo "threaded NAPI off under traffic: $TH_OFF write(s), $TH_OFF_WAITED still waiting after $THREADED_STALL s (pktgen paused; returned at most $TH_OFF_RELEASE_MAX s after)"
	if [ -n "$CH_SKIP" ]; then
		echo "virtio channel changes: skipped: $CH_SKIP"
	fi
	echo "splats: $SPLATS"
	echo "page_pool drain: $DRAIN_FIRST destroyed pool(s) with pages in flight after the loop, ${DRAIN_SECS} s waited"
	echo "leaked (netlink page-pool-get, pools with a netdev): $LEAKED_POOLS pool(s), $LEAKED_PAGES page(s)"
	if [ "$PP_TRACE" = 1 ]; then
		echo "leaked (page_pool_release trace, every pool): $LEAKED_TPOOLS pool(s), $LEAKED_TPAGES page(s)"
	else
		echo "leaked (page_pool_release trace): not checked, no tracefs event"
	fi
	for f in "${fail[@]}"; do echo "fail: $f"; done
	echo "result: $verdict"
} > "$RES"
cat "$RES"
[ "$verdict" = PASS ]
