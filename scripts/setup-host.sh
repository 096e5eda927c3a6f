#!/usr/bin/env bash
# setup-host.sh - check for what the harness needs; on Debian bookworm,
# install it (root) from newer suites pinned so that nothing from them comes
# unless named (libc stays bookworm's), and undo those apt changes. The
# archive address is taken from the machine's own apt sources.
set -euo pipefail

usage() {
	cat <<'U'
usage: scripts/setup-host.sh [--check|--dry-run|--remove|--help]

Checks the host for the tools the harness needs; when some are missing,
or when run as root on Debian bookworm, installs them (again later is
quick and changes nothing more; `make test` runs this only when --check
fails):
  build:  build-essential bc bison flex libelf-dev libssl-dev dwarves ccache
          cpio rsync zstd xz-utils python3 python3-ply python3-git git kmod
          file clang llvm, clang-16 (make upstream's test_progs: bookworm's
          clang-14 cannot build one of its XDP programs)
  vm:     qemu-system-x86 qemu-system-common qemu-system-data qemu-utils
          seabios, all from bookworm-backports (QEMU >= 10: bookworm's 7.2
          TCG runs guest code half-patched while the kernel live-patches
          text across vCPUs: int3 Oopses), virtme-ng (sid, pinned, at least
          1.41), busybox-static
  guest:  debootstrap (the guest root itself is made by scripts/guest-root.sh)
  bench:  gnuplot-nox;  send: git-email libmailtools-perl
  base:   linux-source-7.3 (trixie-backports, pinned; only without KDIR)
Pinned versions no longer in the archive: the installed one is kept, else
the newest is taken (virtme-ng >= 1.41), with a line saying so.
apt changes (said before they are made; undo with --remove):
  /etc/apt/sources.list.d/xdp-pp-newer.sources  bookworm-backports trixie
          trixie-backports sid, main, from the machine's own archive
  /etc/apt/preferences.d/xdp-pp-pin  bookworm 990; QEMU from
          bookworm-backports 500; bookworm-backports, trixie 100;
          trixie-backports 90; sid 50
Other distros: bring your own tools (--check lists what is missing: vng,
QEMU >= 10, gcc, clang, pahole, ...) and set KDIR=<a kernel git tree>;
nothing is installed there.

  --check    only report what is missing; exit 0 if nothing, 1 otherwise
  --dry-run  say what set-up would change and install (the versions too)
  --remove   delete the two apt files above and apt-get update (root);
             the packages stay installed (the apt-get remove line is printed)
Environment: KDIR (no linux-source needed), LINUX_SOURCE_VERSION,
VIRTME_NG_VERSION (defaults: the pins in scripts/lib.sh), OS_RELEASE
(default /etc/os-release).
Exit: 0 ok, 1 failure.
U
}

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

mode=install
case "${1:-}" in
-h|--help) usage; exit 0 ;;
--check) mode=check ;;
--dry-run) mode=dry ;;
--remove) mode=remove ;;
"") ;;
*) usage >&2; exit 1 ;;
esac

newer=/etc/apt/sources.list.d/xdp-pp-newer.sources
pin=/etc/apt/preferences.d/xdp-pp-pin
src_pkg=linux-source-$LINUX_SOURCE_SERIES
from_newer="qemu-system-x86 qemu-system-common qemu-system-data qemu-utils seabios virtme-ng $src_pkg"
is_root() { [ "$(id -u)" = 0 ]; }

if [ "$mode" = remove ]; then
	gone=()
	for f in "$newer" "$pin"; do [ ! -e "$f" ] || gone+=("$f"); done
	if [ ${#gone[@]} -eq 0 ]; then log "host: no $newer or $pin: no apt changes of set-up to undo"; else
		is_root || die "host: --remove deletes ${gone[*]}: run 'sudo scripts/setup-host.sh --remove'"
		log "host: removing ${gone[*]} and running apt-get update"
		rm -f -- "${gone[@]}"
		apt-get update -q >/dev/null ||
			die "host: apt-get update failed (the files are gone already): run 'apt-get update' again"
	fi
	log "host: packages stay installed; to remove the newer suites' ones too: apt-get remove $from_newer"
	exit 0
fi

# What the harness runs, as tool (Debian package); any distro.
missing=()
has() { PATH=$PATH:/usr/sbin:/sbin command -v "$1" >/dev/null 2>&1; }
for t in gcc:build-essential make bc bison flex pahole:dwarves ccache cpio rsync zstd \
	 xz:xz-utils file git python3 perl qemu-system-x86_64:qemu-system-x86 vng:virtme-ng \
	 virtme-configkernel:virtme-ng busybox:busybox-static debootstrap gnuplot:gnuplot-nox \
	 clang llc:llvm modinfo:kmod depmod:kmod; do
	n=${t%%:*} p=${t#*:}
	has "$n" || if [ "$n" = "$p" ]; then missing+=("$n"); else missing+=("$n ($p)"); fi
done
# the headers and modules a kernel build and checkpatch use (check.sh runs
# checkpatch with /usr/bin first in PATH)
hdr() { printf '#include <%s>\n' "$1" | gcc -E -x c - >/dev/null 2>&1; }
if has gcc; then
	hdr gelf.h || missing+=("gelf.h (libelf-dev)")
	hdr openssl/ssl.h || missing+=("openssl/ssl.h (libssl-dev)")
fi
py() { PATH=/usr/bin:$PATH python3 -c "import $1" 2>/dev/null; }
py ply || missing+=("python3 ply (python3-ply)")
py git || missing+=("python3 git (python3-git)")
if has git; then
	[ -x "$(git --exec-path)/git-send-email" ] || missing+=("git send-email (git-email)")
fi
perl -MMail::Address -e 1 2>/dev/null || missing+=("perl Mail::Address (libmailtools-perl)")
# QEMU 7.2 (bookworm) is not enough: see the usage text.
if has qemu-system-x86_64; then
	qv=$(qemu-system-x86_64 --version | awk 'NR == 1 {print $4}')
	[ "${qv%%.*}" -ge "$QEMU_MIN_MAJOR" ] 2>/dev/null || missing+=("qemu-system-x86_64 >= $QEMU_MIN_MAJOR (have $qv)")
fi
if has vng; then
	vv=$(vng --version 2>/dev/null | awk 'NR == 1 {print $NF}')
	[ "$(printf '%s\n' "$VIRTME_NG_MIN" "$vv" | sort -V | head -1)" = "$VIRTME_NG_MIN" ] ||
		missing+=("vng >= $VIRTME_NG_MIN (have $vv)")
fi
[ -n "${KDIR:-}" ] || [ -f "$LINUX_SOURCE_TARBALL" ] ||
	missing+=("$LINUX_SOURCE_TARBALL ($src_pkg; or set KDIR=<a kernel git tree>)")

list=$(printf '%s, ' "${missing[@]}")
list=${list%, }
os_release=${OS_RELEASE:-/etc/os-release}
# shellcheck disable=SC1090 # os-release is sh assignments
osr() { # osr VAR: VAR of os-release
	(. "$os_release" 2>/dev/null || true; eval "echo \"\${$1:-}\""); }
bookworm=0
[ "$(osr ID) $(osr VERSION_CODENAME)" != "debian bookworm" ] || bookworm=1
name=$(osr PRETTY_NAME)
ours="this host is ${name:-not known (no $os_release)}, set-up installs on Debian bookworm only"

# all there: nothing to do (as root on bookworm, set-up still makes sure of
# its apt files and packages: the way back after --remove)
if [ ${#missing[@]} -eq 0 ] && { [ "$mode" = check ] || [ "$bookworm" = 0 ] ||
	{ [ "$mode" = install ] && ! is_root; }; }; then
	log "host: all tools present${KDIR:+ (KDIR: the Debian base is not used)}; nothing changed"
	exit 0
fi
if [ "$mode" = check ]; then
	if [ "$bookworm" = 1 ]; then fix="sudo scripts/setup-host.sh"; else fix="install them yourself: $ours"; fi
	log "host: missing: $list (fix: $fix)"
	exit 1
fi
# Before anything is installed: a release this was not made for is refused.
[ "$bookworm" = 1 ] ||
	die "host: $ours: install $list yourself, then scripts/setup-host.sh --check"
[ "$mode" = dry ] || is_root ||
	die "host: missing $list; run 'sudo scripts/setup-host.sh' (needs root for apt; scripts/setup-host.sh --dry-run says what it changes)"

uri=""
src=/etc/apt/sources.list.d/debian.sources
[ ! -f "$src" ] || uri=$(awk '/^URIs:/{print $2; exit}' "$src")
if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
	uri=$(awk '$1=="deb" && $0 ~ /bookworm/ {for(i=2;i<=NF;i++) if ($i ~ /^[a-z]+:\/\//) {print $i; exit}}' /etc/apt/sources.list)
fi
[ -n "$uri" ] || die "host: cannot find the Debian archive in /etc/apt/sources*; add a bookworm source first"

want_newer="Types: deb
URIs: $uri
Suites: bookworm-backports trixie trixie-backports sid
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg"
want_pin='Package: *
Pin: release n=bookworm
Pin-Priority: 990

Package: *
Pin: release n=bookworm-backports
Pin-Priority: 100

Package: *
Pin: release n=trixie
Pin-Priority: 100

# QEMU 10 comes from bookworm-backports; at an equal 100 an upgrade would
# take trixie'"'"'s newer qemu-system-data/seabios under the backports binary
Package: qemu-system-x86 qemu-system-common qemu-system-data qemu-system-gui qemu-utils seabios
Pin: release n=bookworm-backports
Pin-Priority: 500

Package: *
Pin: release n=trixie-backports
Pin-Priority: 90

Package: *
Pin: release n=sid
Pin-Priority: 50'
same() { [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]; }
if ! same "$newer" "$want_newer" || ! same "$pin" "$want_pin"; then
	w=adding
	[ "$mode" != dry ] || w="would add"
	log "host: apt: $w $newer (bookworm-backports trixie trixie-backports sid, main, from $uri) and $pin (bookworm 990, QEMU from bookworm-backports 500, bookworm-backports/trixie 100, trixie-backports 90, sid 50); undo: scripts/setup-host.sh --remove"
	if [ "$mode" = install ]; then
		printf '%s\n' "$want_newer" > "$newer"
		printf '%s\n' "$want_pin" > "$pin"
	fi
else
	log "host: apt: $newer and $pin in place (undo: scripts/setup-host.sh --remove)"
fi
export DEBIAN_FRONTEND=noninteractive
[ "$mode" = dry ] || apt-get update -q >/dev/null

# pick PKG PINNED MIN: what of PKG to install, nothing when the installed
# one stays: PINNED when the archive has it (an installed newer one stays);
# else the installed one if >= MIN, else the archive's newest >= MIN, with a
# line saying so.
pick() {
	local v best='' inst avail
	mapfile -t avail < <(apt-cache madison "$1" 2>/dev/null | awk -F'|' '{gsub(/ /, "", $2); print $2}')
	inst=$(dpkg-query -W -f='${db:Status-Abbrev}${Version}\n' "$1" 2>/dev/null | sed -n 's/^ii *//p' || true)
	if printf '%s\n' "${avail[@]}" | grep -qxF -- "$2"; then
		if [ -z "$inst" ] || dpkg --compare-versions "$inst" lt "$2"; then echo "$1=$2"
		elif [ "$inst" != "$2" ]; then log "host: keeping the installed $1 $inst (newer than the pinned $2)"; fi
		return 0
	fi
	if [ -n "$inst" ] && dpkg --compare-versions "$inst" ge "$3"; then
		log "host: $1 $2 is not in the archive: keeping the installed $inst"
		return 0
	fi
	for v in "${avail[@]}"; do
		dpkg --compare-versions "$v" ge "$3" || continue
		[ -z "$best" ] || dpkg --compare-versions "$v" gt "$best" || continue
		best=$v
	done
	[ -n "$best" ] || die "host: no $1 $2 nor any $1 >= $3 in the archive (apt-cache madison $1: ${avail[*]:-none})"
	log "host: $1 $2 is not in the archive: taking the newest, $best"
	echo "$1=$best"
}
pins=("$(pick virtme-ng "$VIRTME_NG_VERSION" "$VIRTME_NG_MIN")")
[ -n "${KDIR:-}" ] || pins+=("$(pick "$src_pkg" "$LINUX_SOURCE_VERSION" 0)")
# only what is not installed yet (nothing installed is upgraded or reinstalled)
pkgs=()
for p in build-essential bc bison flex libelf-dev libssl-dev dwarves ccache \
	 cpio rsync zstd xz-utils python3 python3-ply python3-git git kmod \
	 busybox-static file gnuplot-nox clang llvm clang-16 git-email libmailtools-perl debootstrap; do
	dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^ii' || pkgs+=("$p")
done
[[ "${missing[*]}" != *qemu-system-x86* ]] ||
	pkgs+=(qemu-system-x86/bookworm-backports qemu-system-common/bookworm-backports
	       qemu-system-data/bookworm-backports qemu-utils/bookworm-backports
	       seabios/bookworm-backports)
for p in "${pins[@]}"; do [ -z "$p" ] || pkgs+=("$p"); done
if [ ${#pkgs[@]} -eq 0 ]; then
	log "host: every package is installed: nothing to install"
elif [ "$mode" = dry ]; then
	log "host: would run: apt-get install -y --no-install-recommends ${pkgs[*]}"
else
	apt-get install -y -q --no-install-recommends "${pkgs[@]}"
fi
[ "$mode" != dry ] || exit 0
# libc must still be bookworm's: refuse to continue otherwise.
libc=$(dpkg-query -W -f='${Version}' libc6)
case "$libc" in
2.36-*) ;;
*) die "host: libc6 is $libc, not bookworm's 2.36: check $pin" ;;
esac
qv=$(qemu-system-x86_64 --version | awk 'NR == 1 {print $4}')
[ "${qv%%.*}" -ge "$QEMU_MIN_MAJOR" ] ||
	die "host: qemu-system-x86_64 is $qv, need >= $QEMU_MIN_MAJOR from bookworm-backports (apt-get install qemu-system-x86/bookworm-backports)"
log "host: ready (libc6 $libc, qemu $qv, vng $(vng --version 2>/dev/null | head -1), $src_pkg $(linux_source_installed)); undo the apt changes: scripts/setup-host.sh --remove"
