#!/usr/bin/env bash
# guest-root.sh - build (once, cached) the Debian root the VM boots into.
#
# The host stays bookworm; the guest gets sid's user space for xdp-tools
# >= 1.6 (`xdp-bench redirect-map -X -A drop`). Rebuilt only when the package
# list below changes. Prints the root's path.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

GUEST_SUITE=${GUEST_SUITE:-sid}
# for make upstream: bpftrace and iperf3 (netpoll_basic.py counts
# netpoll_poll_dev() calls under iperf3 load). No udev: virtme-init would
# start udevd and coldplug every device at each boot
GUEST_PKGS="bash bpftool bpftrace busybox ethtool iperf3 iproute2 iputils-ping jq
kmod procps python3 python3-jsonschema python3-yaml socat util-linux xdp-tools"

case "${1:-}" in
-h|--help)
	cat <<'U'
usage: scripts/guest-root.sh [--check]

Debootstraps a minimal Debian ($GUEST_SUITE, default sid) root with
xdp-tools, bpftool, bpftrace, iperf3, iproute2, ethtool, python3 + yaml,
socat, kmod and busybox (poweroff) into $CACHE/guest-<hash>, where <hash>
covers the suite and the package list. Reuses it when present. Needs root. Prints the path.
The archive is the machine's own (apt's debian.sources, or a one-line
sources.list). Concurrent callers (make bench starts three VMs at once)
wait on $CACHE/guest.lock for the one that builds it, saying so.
  --check   only check, in seconds, that the root is there or can be made
            now (root, debootstrap, the archive answers for the suite);
            exit 0 if so, else one line naming the fix and exit 1
U
	exit 0 ;;
--check) check_only=1 ;;
"") check_only=0 ;;
*) echo "usage: scripts/guest-root.sh [--check]" >&2; exit 1 ;;
esac

key=$(printf '%s\n%s\n' "$GUEST_SUITE" "$GUEST_PKGS" | sha256sum | cut -c1-12)
root=$CACHE/guest-$key
# ready: the root is moved into place whole, its marker last
if [ -f "$root/.xdp-pp-ready" ]; then
	[ "$check_only" = 1 ] || echo "$root"
	exit 0
fi
# what building it needs, checked before anything is written
prereqs() {
	[ "$(id -u)" = 0 ] || die "guest root: debootstrap needs root (run as root, or build it once with sudo)"
	need_tool debootstrap "sudo scripts/setup-host.sh"
	uri=$(debian_archive_uri) ||
		die "guest root: no Debian archive in /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list (fix: add a bookworm source)"
}
if [ "$check_only" = 1 ]; then
	prereqs
	archive_reachable "$uri" "$GUEST_SUITE" ||
		die "guest root: the Debian archive $uri does not answer for $GUEST_SUITE (fix: the network or proxy, or GUEST_SUITE; debootstrap needs it once)"
	exit 0
fi
# One debootstrap at a time: make bench starts its three VMs at once, and
# on a fresh machine each would otherwise debootstrap into the same
# $root.tmp (seen: "Cannot install into target ... noexec or nodev" as one
# run's rm -rf removed another's probe files). The lock's holder builds the
# root; the others wait (saying so) and then find it ready.
mkdir -p "$CACHE"
exec 8>>"$GUEST_LOCK"
lock_take 8 "$GUEST_LOCK" "guest root" "scripts/guest-root.sh${XDP_PP_RUN:+ for $XDP_PP_RUN}"
if [ -f "$root/.xdp-pp-ready" ]; then
	echo "$root"
	exit 0
fi
prereqs

log "guest root: debootstrap $GUEST_SUITE into $root (a few minutes, once)"
rm -rf "$root.tmp"
debootstrap --variant=minbase --include="$(echo $GUEST_PKGS | tr ' ' ,)" \
	"$GUEST_SUITE" "$root.tmp" "$uri" > "$CACHE/guest-$key.log" 2>&1 ||
	{ tail -20 "$CACHE/guest-$key.log" >&2; die "guest root: debootstrap failed (log: $CACHE/guest-$key.log)"; }
help=$(chroot "$root.tmp" xdp-bench redirect-map --help 2>&1 || true)
grep -q -- --egress-action <<<"$help" ||
	die "guest root: xdp-bench in the guest lacks redirect-map -X (need xdp-tools >= 1.6)"
# poweroff for a clean VM exit (minbase has no init system).
for t in poweroff reboot halt; do
	[ -e "$root.tmp/usr/sbin/$t" ] || ln -s /bin/busybox "$root.tmp/usr/sbin/$t"
done
# mount points for scripts/vm.sh (the root is mounted read-only)
mkdir -p "$root.tmp/sys/fs/bpf" "$root.tmp/xdp-pp" "$root.tmp/variant" \
	"$root.tmp/out" "$root.tmp/tools" "$root.tmp/etc/lvm"
rm -rf "$root.tmp/var/cache/apt/archives/"*.deb
touch "$root.tmp/.xdp-pp-ready"
mv "$root.tmp" "$root"
log "guest root: ready ($(chroot "$root" dpkg-query -W -f='${Version}' xdp-tools) xdp-tools)"
echo "$root"
