#!/bin/bash
# napi-threaded-off.sh IFACE - does turning threaded NAPI off return?
#
# The reproducer of the net unit "net: turning threaded NAPI off can wait
# forever" (patches/04-*): on virtio_net, tx-frames 0 leaves the tx NAPIs
# registered but never enabled, and 7.3's napi_stop_kthread() then waits
# for them forever. Sets tx-frames 0 on IFACE (down/up around it), writes
# 1 then 0 to /sys/class/net/IFACE/threaded, each write in the background
# and polled for 12 s (a hung write sleeps in D state: no signal ends it),
# then restores tx-frames. Prints one TAP line: "ok - ..." or
# "not ok - ...". Exit 0 pass, 1 fail, 4 skip (no threaded file, or
# ethtool cannot set tx-frames).
# shellcheck source=inguest.sh
. "${BASH_SOURCE[0]%/*}/inguest.sh" # inside the harness VM only
set -uo pipefail

ifc=${1:?usage: napi-threaded-off.sh IFACE}
f=/sys/class/net/$ifc/threaded
name="napi threaded off returns ($ifc, tx-frames 0)"
limit=12

[ -w "$f" ] || { echo "ok - $name # SKIP no $f"; exit 4; }
txf=$(ethtool -c "$ifc" 2>/dev/null | sed -n 's/^tx-frames: *//p')
[ -n "$txf" ] || { echo "ok - $name # SKIP ethtool -c $ifc has no tx-frames"; exit 4; }

ip link set "$ifc" down
if ! ethtool -C "$ifc" tx-frames 0 2>/dev/null; then
	ip link set "$ifc" up
	echo "ok - $name # SKIP ethtool -C $ifc tx-frames 0 refused"
	exit 4
fi
ip link set "$ifc" up

tmp=$(mktemp -d)
# write_bg VALUE: sets rc to the write's exit status, or "hung"
write_bg() {
	local i
	rm -f "$tmp/rc"
	( echo "$1" > "$f" 2> "$tmp/err"; echo $? > "$tmp/rc" ) &
	for ((i = 0; i < limit * 10; i++)); do
		[ -s "$tmp/rc" ] && { rc=$(cat "$tmp/rc"); return; }
		sleep 0.1
	done
	rc=hung
}

res=""
write_bg 1
if [ "$rc" != 0 ]; then
	res="not ok - $name: threaded=1 write: $rc $(cat "$tmp/err" 2>/dev/null)"
else
	t0=$(date +%s%N)
	write_bg 0
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	case $rc in
	0) res="ok - $name: threaded=0 returned in $ms ms" ;;
	hung) res="not ok - $name: threaded=0 write still waits after $limit s (napi_stop_kthread)" ;;
	*) res="not ok - $name: threaded=0 write failed: $(cat "$tmp/err")" ;;
	esac
fi
echo "$res"
if [ "$rc" != hung ]; then
	# restore (a hung writer still holds the instance lock: leave it)
	ip link set "$ifc" down
	ethtool -C "$ifc" tx-frames "$txf" 2>/dev/null || true
	ip link set "$ifc" up
	rm -rf "$tmp"
fi
case $res in ok*) exit 0 ;; *) exit 1 ;; esac
