#!/bin/bash
# upstream.sh - upstream's own tests of the changed code, inside the VM
# (started by scripts/upstream.sh, once per kernel): bpf test_progs' XDP
# tests (UP_BPF_TESTS), the drivers/net tests UP_DRV_TESTS (nsim:T on a
# netdevsim device lib/py makes, nic:T on the virtio NIC: netsetup.sh, as
# run-tests.sh sets NETIF and the remote netns), and
# net/busy_poll_test.sh (netdevsim). /tools is the host's $CACHE/upstream:
# bpf/ (test_progs), kmods/<kernel>/ (bpf_testmod, bonding), net/.
# Verdicts to /out/results.tap: "ok - bpf:NAME", "not ok - ...",
# "ok - ... # SKIP why"; raw logs beside it.
# shellcheck source=inguest.sh
. "${BASH_SOURCE[0]%/*}/inguest.sh" # inside the harness VM only
set -uo pipefail
kernel=${1:?usage: upstream.sh base|series}
res=/out/results.tap
: > "$res"
echo "# kernel $kernel: $(uname -r)" >> "$res"
log() { echo "[guest] $*"; }
kmods=/tools/kmods/$kernel

# 1. test_progs, from a tree of links to the host's build (it loads
# ./bpf_testmod.ko: this kernel's own)
bpf=/tmp/bpf
if [ -z "${UP_BPF_TESTS:-}" ]; then
	log "no test_progs tests (UP_BPF_TESTS empty)"
elif [ -x /tools/bpf/test_progs ]; then
	cp -as /tools/bpf "$bpf"
	rm -f "$bpf"/bpf_test*.ko
	cp "$kmods"/bpf_test*.ko "$bpf"/ 2>/dev/null || log "no bpf_testmod for $kernel"
	# bonding, sch_ingress, cls_bpf when built: "ip link add type bond",
	# tc cannot modprobe a module outside /lib/modules
	for m in "$kmods"/*.ko; do
		case ${m##*/} in bpf_test*) ;; *) insmod "$m" || log "${m##*/} did not load" ;; esac
	done
	log "running test_progs -a $UP_BPF_TESTS"
	(cd "$bpf" && timeout "${UP_BPF_TIMEOUT:-2400}" ./test_progs -a "$UP_BPF_TESTS") \
		> /out/test_progs.log 2>&1
	rc=$?
	log "test_progs exited $rc"
	# "#12     xdp:OK", "#13/2   xdp_bonding/sub name:FAIL", "#9 x:SKIP
	# (not built)", "#14 y:OK (SKIP: 1/3)"; a failed test's lines come
	# again in the closing error summary
	sed -nE 's/^#[0-9/]+ +(.*):(OK|FAIL|SKIP)(.*)$/\2\3\t\1/p' /out/test_progs.log |
	awk '!s[$0]++' | while IFS=$'\t' read -r verdict name; do
		case $verdict in
		OK*SKIP*|OK) echo "ok - bpf:$name${verdict#OK}" ;;
		SKIP*) echo "ok - bpf:$name # SKIP ${verdict#SKIP}" ;;
		*) echo "not ok - bpf:$name ($verdict)" ;;
		esac
	done >> "$res"
	[ "$rc" = 0 ] || [ "$rc" = 1 ] ||
		echo "not ok - bpf:test_progs exited $rc (see test_progs.log)" >> "$res"
	# its /sys/class/net/bonding_masters would pass for a NIC in netsetup.sh
	! grep -q '^bonding ' /proc/modules || rmmod bonding
else
	echo "not ok - bpf:test_progs not built" >> "$res"
fi

# 2. drivers/net tests on the virtio NIC (NETIF, remote netns) or on
# netdevsim. lib/py runs `udevadm settle` after making a netdevsim device;
# the guest runs no udevd (no udev package: virtme-init would start it),
# so there is no event queue to wait for: a udevadm that does nothing
if ! command -v udevadm >/dev/null; then
	mkdir -p /tmp/bin && printf '#!/bin/sh\nexit 0\n' > /tmp/bin/udevadm
	chmod +x /tmp/bin/udevadm && export PATH=/tmp/bin:$PATH
fi
# shellcheck source=netsetup.sh
. /xdp-pp/scripts/guest/netsetup.sh
ks=/tmp/kselftest
cp -a /variant/kselftest "$ks"
if xdp_pp_netsetup; then
	for dt in ${UP_DRV_TESTS:-}; do
		t=${dt#*:}
		case $dt in
		nsim:*)
			log "running drivers/net/$t on netdevsim"
			(cd "$ks/drivers/net" && env -u NETIF \
				timeout "${UP_DRV_TIMEOUT:-1500}" "./$t") > "/out/drv_$t.tap" 2>&1 ;;
		nic:*)
			log "running drivers/net/$t on $NETIF"
			(cd "$ks/drivers/net" && timeout "${UP_DRV_TIMEOUT:-1500}" "./$t") \
				> "/out/drv_$t.tap" 2>&1 ;;
		*) echo "not ok - drv:$dt (not nsim:TEST or nic:TEST)" >> "$res"; continue ;;
		esac
		rc=$?
		# KTAP leaves: "ok 1 napi_threaded.napi_init # SKIP why"
		sed -nE 's/^(not ok|ok) [0-9]+ ([^ ]+)(.*)$/\1 - drv:\2\3/p' "/out/drv_$t.tap" >> "$res"
		# a KsftSkipEx raised before ksft_run (netpoll_basic.py's
		# dependency check) ends it with a traceback: a skip
		if grep -qE '^(not )?ok [0-9]+ ' "/out/drv_$t.tap"; then :
		elif why=$(grep -m1 -o 'KsftSkipEx: .*' "/out/drv_$t.tap"); then
			echo "ok - drv:$t # SKIP ${why#KsftSkipEx: }" >> "$res"
		else
			echo "not ok - drv:$t exited $rc and reported no case" >> "$res"
		fi
	done
else
	echo "not ok - drv: network setup (netsetup.sh)" >> "$res"
fi

# 3. net/busy_poll_test.sh: two linked netdevsim devices
if ! modprobe -q netdevsim 2>/dev/null && [ ! -d /sys/bus/netdevsim ]; then
	echo "ok - net:busy_poll_test.sh # SKIP no netdevsim in this kernel (CONFIG_NETDEVSIM)" >> "$res"
elif [ ! -x /tools/net/busy_poller ]; then
	echo "not ok - net:busy_poll_test.sh (busy_poller not built: /tools/net)" >> "$res"
else
	log "running net/busy_poll_test.sh"
	cp /tools/net/busy_poller /tools/net/busy_poll_test.sh "$ks/net/"
	(cd "$ks/net" && timeout "${UP_DRV_TIMEOUT:-1500}" ./busy_poll_test.sh) \
		> /out/busy_poll_test.log 2>&1
	rc=$?
	case $rc in
	0) echo "ok - net:busy_poll_test.sh" ;;
	4) echo "ok - net:busy_poll_test.sh # SKIP (exit 4)" ;;
	*) echo "not ok - net:busy_poll_test.sh (exit $rc)" ;;
	esac >> "$res"
fi
log "done: $(grep -c '^ok' "$res") ok, $(grep -c '^not ok' "$res") not ok"
