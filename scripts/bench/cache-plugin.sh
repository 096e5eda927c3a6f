#!/usr/bin/env bash
# cache-plugin.sh - build the QEMU TCG cache plugin (net-core/bench/cache_plugin.c)
# against the plugin API of the installed QEMU; print the .so's path.
#
# No package ships qemu-plugin.h: it is taken from the Debian source
# package of the installed QEMU (same version), fetched with apt-get source
# --download-only through a deb-src entry made from the machine's own
# <codename>-backports entry in /etc/apt/sources*. That entry lives in a
# private apt configuration in a temporary directory (own source list and
# lists dir), removed on exit: the system's apt configuration and lists are
# never changed. glib's headers (qemu-plugin.h includes glib.h) come from
# libglib2.0-dev's .deb, unpacked with dpkg -x, not installed (installing
# it would upgrade the installed libglib). Nothing is installed or upgraded.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib.sh
. "$here/../lib.sh"

usage() {
	cat <<'U'
usage: scripts/bench/cache-plugin.sh [--force] [--help]

Builds the data-cache TCG plugin net-core/bench/cache_plugin.c against the
qemu-plugin.h of the installed qemu-system-x86 and prints the path of the
shared object on stdout ($CACHE/qemu-plugin/xdp-cache-<qemu version>.so).
Rebuilt only when the source is newer than the .so (or --force).
Downloaded on first use, into $CACHE/qemu-plugin/ (never into the repo):
  the Debian source package of the installed QEMU (apt-get source
  --download-only, needs root: a private apt configuration whose one
  deb-src entry is made from the machine's <codename>-backports entry;
  deleted after use), and libglib2.0-dev's .deb of the installed glib
  version (apt-get download; dpkg -x, not installed).
Plugin arguments: see the comment at the top of net-core/bench/cache_plugin.c,
or scripts/bench/cache-report.py --help for the whole recipe.
Environment: CACHE (~/.cache/xdp-pp), CC (gcc).
Exit: 0 built (or up to date), 1 failure, 4 skip (no QEMU, or a QEMU
without TCG plugin support).
U
}
force=0
case "${1:-}" in
-h|--help) usage; exit 0 ;;
--force) force=1 ;;
"") ;;
*) usage >&2; exit 1 ;;
esac

command -v qemu-system-x86_64 >/dev/null 2>&1 || skip "cache-plugin: no qemu-system-x86_64 (sudo scripts/setup-host.sh)"
qbin=$(command -v qemu-system-x86_64)
if command -v nm >/dev/null 2>&1; then
	syms=$(nm -D "$qbin" 2>/dev/null || true)
	grep -q ' T qemu_plugin_register_vcpu_mem_cb$' <<<"$syms" ||
		skip "cache-plugin: $qbin has no TCG plugin support"
fi
# the Debian source package (name, version) of the installed QEMU binary
pkg=$(dpkg-query -S "$qbin" 2>/dev/null | head -1 | cut -d: -f1) || true
[ -n "$pkg" ] || pkg=qemu-system-x86
read -r srcpkg srcver < <(dpkg-query -W -f='${source:Package} ${source:Version}\n' "$pkg") ||
	die "cache-plugin: cannot query the installed $pkg"
upver=${srcver#*:}        # no epoch
upver=${upver%-*}         # upstream version, e.g. 10.0.2+ds
qver=${upver%%+*}         # 10.0.2

dir=$CACHE/qemu-plugin
src=$REPO/net-core/bench/cache_plugin.c
so=$dir/xdp-cache-$qver.so
hdr_dir=$dir/qemu-$srcver/include
[ -f "$src" ] || die "cache-plugin: missing $src"
mkdir -p "$dir"

# private apt configuration (temporary): only used by fetch_qemu_header
tmp=''
cleanup() { [ -z "$tmp" ] || rm -rf "$tmp"; }
trap cleanup EXIT
# apt output with the archive's address masked (it may end up in logs)
mask() { if [ -n "${uri:-}" ]; then sed "s|$uri|<archive>|g"; else cat; fi; }

# backports_entry CODENAME: "URI KEYRING" of the first enabled deb entry of
# the machine's apt sources whose suites include CODENAME-backports
backports_entry() {
	local suite=$1-backports f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk -v s="$suite" '
			function flush() {
				if (deb && en && has && u != "") { print u, (k == "" ? "-" : k); found = 1; exit }
				deb = 0; en = 1; has = 0; u = ""; k = ""
			}
			BEGIN { en = 1 }
			/^[ \t]*$/ { flush(); next }
			/^[ \t]*#/ { next }
			tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
			tolower($1) == "enabled:" { if (tolower($2) == "no") en = 0 }
			tolower($1) == "uris:" { u = $2 }
			tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == s) has = 1 }
			tolower($1) == "signed-by:" { k = $2 }
			END { if (!found) flush() }' "$f" | head -1
	done | head -1 | grep . && return 0
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk -v s="$suite" '
			$1 == "deb" {
				k = "-"; i = 2
				if ($2 ~ /^\[/) {
					for (; i <= NF; i++) {
						if ($i ~ /signed-by=/) { k = $i; sub(/.*signed-by=/, "", k); sub(/\]$/, "", k) }
						if ($i ~ /\]$/) { i++; break }
					}
				}
				if ($(i + 1) == s) { print $i, k; exit }
			}' "$f"
	done | head -1 | grep .
}

fetch_qemu_header() {
	local codename entry key sd lists
	[ "$(id -u)" = 0 ] || die "cache-plugin: qemu-plugin.h must be fetched once as root (apt-get source): sudo $0"
	need_tool apt-get "a Debian host"
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	[ -n "$codename" ] || die "cache-plugin: no VERSION_CODENAME in /etc/os-release"
	entry=$(backports_entry "$codename") ||
		die "cache-plugin: no $codename-backports entry in /etc/apt/sources* (scripts/setup-host.sh adds one)"
	uri=${entry% *} key=${entry#* }
	tmp=$(mktemp -d)
	sd=$tmp/sources.list.d lists=$tmp/lists
	mkdir -p "$sd" "$lists/partial" "$tmp/cache/archives/partial"
	if [ "$key" = - ]; then
		echo "deb-src $uri $codename-backports main" > "$tmp/sources.list"
	else
		echo "deb-src [signed-by=$key] $uri $codename-backports main" > "$tmp/sources.list"
	fi
	local apt=(apt-get -q -o "Dir::Etc::SourceList=$tmp/sources.list"
		   -o "Dir::Etc::SourceParts=$sd" -o "Dir::State::Lists=$lists"
		   -o "Dir::Cache=$tmp/cache" -o "Dir::Cache::pkgcache="
		   -o "Dir::Cache::srcpkgcache=" -o "APT::Sandbox::User=root")
	log "cache-plugin: fetching the source package $srcpkg $srcver ($codename-backports, private apt config)"
	"${apt[@]}" update > "$tmp/update.log" 2>&1 || { mask < "$tmp/update.log" >&2; die "cache-plugin: apt-get update (deb-src) failed"; }
	mkdir -p "$dir/src"
	# apt checks each file against the signed Sources index; the header
	# needs only the orig tarball, so a missing .dsc/.debian.tar is a warning
	local srcrc=0
	(cd "$dir/src" && "${apt[@]}" source --download-only "$srcpkg=$srcver") > "$tmp/source.log" 2>&1 || srcrc=$?
	local orig deb=''
	orig=$(compgen -G "$dir/src/${srcpkg}_${upver}.orig.tar.*" | head -1) ||
		{ mask < "$tmp/source.log" >&2; die "cache-plugin: apt-get source --download-only $srcpkg=$srcver gave no orig tarball"; }
	deb=$(compgen -G "$dir/src/${srcpkg}_${srcver#*:}.debian.tar.*" | head -1) || deb=''
	if [ "$srcrc" != 0 ]; then
		grep '^E:' "$tmp/source.log" | mask >&2 || true
		log "cache-plugin: warning: apt-get source failed for some files; using the orig tarball${deb:+ and the debian tarball}"
	fi
	rm -rf "$tmp"; tmp=''
	local x=$dir/qemu-$srcver.tmp
	rm -rf "$x"
	mkdir -p "$x"
	tar -xf "$orig" -C "$x" --wildcards --no-anchored 'include/qemu/qemu-plugin.h'
	if [ -n "$deb" ]; then
		tar -xf "$deb" -C "$x" debian/patches
	else
		log "cache-plugin: warning: no Debian patches to check (no debian tarball): upstream $upver header"
	fi
	local h
	h=$(find "$x" -path '*/include/qemu/qemu-plugin.h' | head -1)
	[ -n "$h" ] || die "cache-plugin: include/qemu/qemu-plugin.h not in $orig"
	# a Debian patch touching the header: apply it (the one file is all we unpacked)
	local p
	if [ -f "$x/debian/patches/series" ]; then
		while read -r p _; do
			case "$p" in ''|'#'*) continue ;; esac
			grep -q '^+++ [^ ]*include/qemu/qemu-plugin.h' "$x/debian/patches/$p" 2>/dev/null || continue
			log "cache-plugin: applying Debian patch $p to qemu-plugin.h"
			(cd "$(dirname "$(dirname "$(dirname "$h")")")" &&
				filter_patch "$x/debian/patches/$p" | patch -p1 -s) ||
				die "cache-plugin: Debian patch $p does not apply to qemu-plugin.h"
		done < "$x/debian/patches/series"
	fi
	rm -rf "$dir/qemu-$srcver"
	mkdir -p "$hdr_dir"
	mv "$h" "$hdr_dir/qemu-plugin.h"
	rm -rf "$x"
}

# filter_patch PATCH: only the hunks of include/qemu/qemu-plugin.h
filter_patch() {
	awk '/^diff |^--- /{ keep = 0 }
	     /^--- / { hold = $0; next }
	     /^\+\+\+ / { keep = ($2 ~ /include\/qemu\/qemu-plugin\.h$/); if (keep) print hold }
	     keep' "$1"
}

fetch_glib() {
	local gver have cand
	need_tool dpkg "a Debian host"
	# the headers of the installed glib version; else the same upstream
	# version (another Debian revision has the same API)
	gver=$(dpkg-query -W -f='${Version}' libglib2.0-0 2>/dev/null) ||
		die "cache-plugin: libglib2.0-0 is not installed (QEMU needs it)"
	have=$(apt-cache madison libglib2.0-dev | awk -F' [|] ' '{gsub(/ /, "", $2); print $2}')
	if grep -qxF "$gver" <<<"$have"; then
		cand=$gver
	else
		cand=$(grep -F "${gver%%-*}-" <<<"$have" | head -1) ||
			die "cache-plugin: no libglib2.0-dev of glib ${gver%%-*} in the apt lists (apt-get update?)"
	fi
	log "cache-plugin: unpacking libglib2.0-dev $cand (dpkg -x, not installed)"
	local d=$dir/glib.tmp
	rm -rf "$d"
	mkdir -p "$d/deb"
	(cd "$d/deb" && apt-get -q download "libglib2.0-dev=$cand") > "$d/download.log" 2>&1 ||
		{ mask < "$d/download.log" >&2; die "cache-plugin: apt-get download libglib2.0-dev=$cand failed"; }
	dpkg -x "$d"/deb/libglib2.0-dev_*.deb "$d/root"
	rm -rf "$dir/glib-$gver"
	mv "$d/root" "$dir/glib-$gver"
	mv "$d"/deb/*.deb "$dir/"
	rm -rf "$d"
}

gver=$(dpkg-query -W -f='${Version}' libglib2.0-0 2>/dev/null || echo none)
glib=$dir/glib-$gver
[ -f "$hdr_dir/qemu-plugin.h" ] || fetch_qemu_header
[ -f "$glib/usr/include/glib-2.0/glib.h" ] || fetch_glib
gcfg=$(dirname "$(find "$glib" -name glibconfig.h | head -1)")
[ -f "$gcfg/glibconfig.h" ] || die "cache-plugin: no glibconfig.h in $glib"

if [ "$force" = 1 ] || [ ! -f "$so" ] || [ "$src" -nt "$so" ] || [ "$hdr_dir/qemu-plugin.h" -nt "$so" ]; then
	log "cache-plugin: building $so (QEMU $qver plugin API)"
	${CC:-gcc} -O2 -g -std=gnu11 -Wall -Wextra -Wno-unused-parameter -fPIC -shared \
		-I "$hdr_dir" -I "$glib/usr/include/glib-2.0" -I "$gcfg" \
		-o "$so.tmp" "$src" -lpthread ||
		die "cache-plugin: compiling $src failed"
	mv "$so.tmp" "$so"
fi
echo "$so"
