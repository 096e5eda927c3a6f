#!/usr/bin/env bash
# setup-host.sh - install what the harness needs on a Debian bookworm host.
#
# Newer suites (trixie, trixie-backports, sid) are added with apt pins so
# that nothing from them is installed unless asked for by name: bookworm
# keeps priority 990, the others stay <= 100 and never upgrade libc.
# The archive address is taken from the machine's own apt sources.
set -euo pipefail

usage() {
	cat <<'U'
usage: scripts/setup-host.sh [--check] [--help]

Installs (as root, once) the host packages the harness needs:
  build:  build-essential bc bison flex libelf-dev libssl-dev dwarves ccache
          cpio rsync zstd python3 git
  vm:     qemu-system-x86 >= 10 (bookworm-backports, pinned: bookworm's 7.2
          TCG runs guest code half-patched while the kernel live-patches
          text across vCPUs: int3 Oopses), virtme-ng (sid, pinned),
          busybox-static
  guest:  debootstrap (the guest root itself is made by scripts/guest-root.sh)
  base:   linux-source-7.3 (trixie-backports, pinned version)

  --check   only report what is missing; exit 0 if nothing, 1 otherwise
Environment: LINUX_SOURCE_VERSION (default: the pinned one in scripts/lib.sh)
Exit: 0 ok, 1 failure.
U
}

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

check_only=0
case "${1:-}" in
-h|--help) usage; exit 0 ;;
--check) check_only=1 ;;
"") ;;
*) usage >&2; exit 1 ;;
esac

missing=()
for t in gcc make bc bison flex pahole ccache cpio rsync zstd git python3 \
	 qemu-system-x86_64 vng debootstrap gnuplot clang llc; do
	command -v "$t" >/dev/null 2>&1 || missing+=("$t")
done
# QEMU 7.2 (bookworm) is not enough: see the usage text.
if command -v qemu-system-x86_64 >/dev/null 2>&1; then
	qv=$(qemu-system-x86_64 --version | awk 'NR == 1 {print $4}')
	[ "${qv%%.*}" -ge "$QEMU_MIN_MAJOR" ] 2>/dev/null || missing+=("qemu-system-x86>=$QEMU_MIN_MAJOR (have $qv)")
fi
[ -f "$LINUX_SOURCE_TARBALL" ] || missing+=("linux-source-$LINUX_SOURCE_SERIES")
dpkg -s libelf-dev >/dev/null 2>&1 || missing+=(libelf-dev)
dpkg -s libssl-dev >/dev/null 2>&1 || missing+=(libssl-dev)
dpkg -s python3-ply >/dev/null 2>&1 || missing+=(python3-ply)
dpkg -s gnuplot-nox >/dev/null 2>&1 || missing+=(gnuplot-nox)

if [ ${#missing[@]} -eq 0 ]; then
	log "host: all tools present"
	exit 0
fi
if [ "$check_only" = 1 ]; then
	log "host: missing: ${missing[*]} (fix: sudo scripts/setup-host.sh)"
	exit 1
fi
[ "$(id -u)" = 0 ] || die "host: missing ${missing[*]}; run 'sudo scripts/setup-host.sh' (needs root for apt)"

src=/etc/apt/sources.list.d/debian.sources
uri=""
if [ -f "$src" ]; then
	uri=$(awk '/^URIs:/{print $2; exit}' "$src")
fi
if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
	uri=$(awk '$1=="deb" && $0 ~ /bookworm/ {for(i=2;i<=NF;i++) if ($i ~ /^[a-z]+:\/\//) {print $i; exit}}' /etc/apt/sources.list)
fi
[ -n "$uri" ] || die "host: cannot find the Debian archive in /etc/apt/sources*; add a bookworm source first"

newer=/etc/apt/sources.list.d/xdp-pp-newer.sources
if [ ! -f "$newer" ]; then
	log "host: adding trixie, trixie-backports, sid (pinned <= 100) from the machine's archive"
	cat > "$newer" <<S
Types: deb
URIs: $uri
Suites: bookworm-backports trixie trixie-backports sid
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
S
fi
cat > /etc/apt/preferences.d/xdp-pp-pin <<'P'
Package: *
Pin: release n=bookworm
Pin-Priority: 990

Package: *
Pin: release n=bookworm-backports
Pin-Priority: 100

Package: *
Pin: release n=trixie
Pin-Priority: 100

# QEMU 10 comes from bookworm-backports; at an equal 100 an upgrade would
# take trixie's newer qemu-system-data/seabios under the backports binary
Package: qemu-system-x86 qemu-system-common qemu-system-data qemu-system-gui qemu-utils seabios
Pin: release n=bookworm-backports
Pin-Priority: 500

Package: *
Pin: release n=trixie-backports
Pin-Priority: 90

Package: *
Pin: release n=sid
Pin-Priority: 50
P

export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends \
	build-essential bc bison flex libelf-dev libssl-dev dwarves ccache \
	cpio rsync zstd xz-utils python3 python3-ply python3-git git kmod \
	busybox-static file gnuplot-nox clang llvm git-email libmailtools-perl \
	qemu-system-x86/bookworm-backports qemu-system-common/bookworm-backports \
	qemu-system-data/bookworm-backports qemu-utils/bookworm-backports \
	seabios/bookworm-backports debootstrap \
	"virtme-ng=$VIRTME_NG_VERSION" \
	"linux-source-$LINUX_SOURCE_SERIES=$LINUX_SOURCE_VERSION"
# libc must still be bookworm's: refuse to continue otherwise.
libc=$(dpkg-query -W -f='${Version}' libc6)
case "$libc" in
2.36-*) ;;
*) die "host: libc6 is $libc, not bookworm's 2.36: check /etc/apt/preferences.d/xdp-pp-pin" ;;
esac
qv=$(qemu-system-x86_64 --version | awk 'NR == 1 {print $4}')
[ "${qv%%.*}" -ge "$QEMU_MIN_MAJOR" ] ||
	die "host: qemu-system-x86_64 is $qv, need >= $QEMU_MIN_MAJOR from bookworm-backports (apt-get install qemu-system-x86/bookworm-backports)"
log "host: ready (libc6 $libc, qemu $qv, vng $(vng --version 2>/dev/null | head -1))"
