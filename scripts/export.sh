#!/usr/bin/env bash
# export.sh - write patches/ from a kernel work tree branch with
# git format-patch (never hand-edit patches/).
#
# The branch holds two series, in the order they apply: first the fixes
# meant for net (every leading commit that carries a Fixes: tag), then the
# series for bpf-next. Each is numbered on its own, with its own subject
# prefix and cover letter; file names keep one running number so that
# `git am patches/*.patch` applies both in order. Cover letters:
# patches/0000-net-cover-letter.cover (net-core/cover-letter-net.txt) and
# patches/0000-cover-letter.cover (net-core/cover-letter.txt); the first
# line of each source file is the subject. The *.patch glob matches
# neither.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

usage() {
	cat <<'U'
usage: WORK=<kernel work tree> scripts/export.sh [VERSION]

Exports base..HEAD of $WORK (default $CACHE/dev) into patches/:
  - the leading commits with a Fixes: tag as "[PATCH net N/M]"
  - the rest as "[RFC PATCH bpf-next vVERSION N/M]" (VERSION default: the
    highest "Changes in vN:" of net-core/cover-letter.txt, as make prep)
Cover letters get b4-style base-commit: and change-id: trailers.
Environment: WORK, NET_PREFIX ("PATCH net"), NEXT_PREFIX ("RFC PATCH
bpf-next").
U
}
case "${1:-}" in -h|--help) usage; exit 0 ;; esac
work=${WORK:-$CACHE/dev}
ver=${1:-$(sed -n 's/^Changes in v\([0-9]\+\):.*/\1/p' "$REPO/net-core/cover-letter.txt" | sort -n | tail -1)}
ver=${ver:-1}
net_prefix=${NET_PREFIX:-PATCH net}
next_prefix=${NEXT_PREFIX:-RFC PATCH bpf-next}
[ "$ver" = 1 ] || next_prefix="$next_prefix v$ver"
for c in cover-letter.txt cover-letter-net.txt; do
	[ -f "$REPO/net-core/$c" ] || die "no net-core/$c"
done
git -C "$work" rev-parse -q --verify base >/dev/null || die "$work has no 'base' ref"
[ -z "$(git -C "$work" status --porcelain --untracked-files=no)" ] || die "$work has uncommitted changes"

# the net fixes: leading commits with a Fixes: tag
mapfile -t commits < <(git -C "$work" rev-list --reverse base..HEAD)
nfix=$(leading_fixes "$work" base..HEAD)
for c in "${commits[@]:$nfix}"; do
	! git -C "$work" log -1 --format=%B "$c" | grep -q '^Fixes: ' ||
		die "$(git -C "$work" log -1 --format='%h %s' "$c"): a Fixes: commit after the bpf-next part; move it to the front"
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# fmt DIR PREFIX START RANGE: format-patch one series, files numbered from START
fmt() {
	git -C "$work" format-patch -q --cover-letter --base=base \
		--subject-prefix="$2" --no-signature --start-number=1 -o "$1" "$4"
	local f n name
	for f in "$1"/[0-9]*.patch; do
		n=${f##*/}; n=${n%%-*}
		[ "$n" = 0000 ] && continue
		name=$(printf '%04d-%s' $((10#$n + $3 - 1)) "${f##*/[0-9][0-9][0-9][0-9]-}")
		mv "$f" "$tmp/out/$name"
	done
}
# cover SRC FILE: fill the cover letter from a source file
cover() {
	python3 - "$2" "$REPO/net-core/$1" <<'P'
import sys
path, src = sys.argv[1:]
s = open(path).read()
subject, body = open(src).read().split('\n', 1)
s = s.replace('*** SUBJECT HERE ***', subject)
s = s.replace('*** BLURB HERE ***', body.strip('\n'))
s = s.rstrip('\n') + '\nchange-id: 20251107-xdp-pp-decides-a3c1e0\n'
open(path, 'w').write(s)
P
}
mkdir -p "$tmp/out" "$tmp/net" "$tmp/next"
fix_end=${commits[$((nfix - 1))]:-base}
if [ "$nfix" -gt 0 ]; then
	fmt "$tmp/net" "$net_prefix" 1 "base..$fix_end"
	cover cover-letter-net.txt "$tmp/net/0000-cover-letter.patch"
	mv "$tmp/net/0000-cover-letter.patch" "$tmp/out/0000-net-cover-letter.cover"
fi
fmt "$tmp/next" "$next_prefix" $((nfix + 1)) "$fix_end..HEAD"
cover cover-letter.txt "$tmp/next/0000-cover-letter.patch"
mv "$tmp/next/0000-cover-letter.patch" "$tmp/out/0000-cover-letter.cover"

rm -f "$REPO"/patches/*.patch "$REPO"/patches/*.cover
mkdir -p "$REPO/patches"
mv "$tmp"/out/* "$REPO/patches/"
log "export: $nfix fixes for net, $(( ${#commits[@]} - nfix )) patches for bpf-next"
ls "$REPO/patches"
