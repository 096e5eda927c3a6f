#!/usr/bin/env bash
# prep.sh - make the series ready to post, the way b4 prep would: the
# patches of patches/ applied on the base in a worktree of the kernel
# repository, with the user's own identity as author and Signed-off-by,
# then git format-patch per series (net fixes, bpf-next) with subject
# prefixes, version, To/Cc per patch from scripts/get_maintainer.pl (their
# union on each cover letter), the changes since the last version, a
# range-diff against it, and base-commit:. Nothing is sent (scripts/send.sh
# shows the dry run); patches/ and the user's branches are not touched.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

usage() {
	cat <<'U'
usage: scripts/prep.sh

Writes $OUT (default $CACHE/out/prep/vN):
  net/0000-cover-letter.patch, net/00NN-*.patch
      "[PATCH net 0/M]": the leading patches with a Fixes: tag (for net)
  bpf-next/0000-cover-letter.patch, bpf-next/00NN-*.patch
      "[RFC PATCH bpf-next vN 0/M]": the rest; its cover letter lists the
      net fixes it applies on, the changes in vN and the range-diff summary
  range-diff-vP-vN.txt   full range-diff against the previous version
The version N is the highest "Changes in vN:" heading of
net-core/cover-letter.txt (none: v1); the previous version's patches come
from the commit of this repository named in net-core/versions.
Author and Signed-off-by: your git identity (git config user.name /
user.email, here: $REPO's); the placeholder identity patches/ carries is
replaced. A placeholder or *.invalid identity is refused.
Environment: KDIR, BASE (the tree and base the series is applied to; the
default is the cached Debian base, which the cover letter says), OUT,
PREFIX_NET ("PATCH net"), PREFIX_NEXT ("RFC PATCH bpf-next"), VERSION.
Exit: 0 ok, 1 failure.
U
}
case "${1:-}" in -h|--help) usage; exit 0 ;; '') ;; *) usage >&2; exit 1 ;; esac

PLACEHOLDER='xdp-pp project <dev@xdp-pp.invalid>'
name=$(git -C "$REPO" config user.name || true)
email=$(git -C "$REPO" config user.email || true)
ident="$name <$email>"
if [ -z "$name" ] || [ -z "$email" ] || [ "$ident" = "$PLACEHOLDER" ] ||
   [[ "$email" == *.invalid ]] || [[ "$email" != *@* ]]; then
	die "prep: your git identity is '$ident', not one to sign patches with. Set it:
  git config --global user.name 'Your Name'
  git config --global user.email you@example.org
(the patches are signed off with it: read Documentation/process/submitting-patches.rst, 'Sign your work')"
fi

cover_src=$REPO/net-core/cover-letter.txt
net_src=$REPO/net-core/cover-letter-net.txt
ver=${VERSION:-$(sed -n 's/^Changes in v\([0-9]\+\):.*/\1/p' "$cover_src" | sort -n | tail -1)}
ver=${ver:-1}
prev=$((ver - 1))
prefix_net=${PREFIX_NET:-PATCH net}
prefix_next=${PREFIX_NEXT:-RFC PATCH bpf-next}
out=${OUT:-$OUTS/prep/v$ver}
mapfile -t patches < <(series_patches)
[ ${#patches[@]} -gt 0 ] || die "prep: no patches in ${PATCHES:-$REPO/patches}"

repo=$(kernel_repo)
base=$(base_commit "$repo")
vroot=$(variant_root "$repo")
src=$vroot/prep/src
mkdir -p "$vroot/prep"
ensure_worktree "$repo" "$src" "$base"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
g() { git -C "$src" -c user.name="$name" -c user.email="$email" "$@"; }

# apply_as BRANCH PATCH...: the patches on the base as BRANCH, with the
# placeholder identity replaced by the user's (author and Signed-off-by)
apply_as() {
	local b=$1 p i=0
	shift
	mkdir -p "$tmp/$b"
	for p in "$@"; do
		i=$((i + 1))
		PH="$PLACEHOLDER" ID="$ident" perl -pe '
			BEGIN { $ph = $ENV{PH}; $id = $ENV{ID} }
			s/^(From|Signed-off-by): \Q$ph\E$/$1: $id/' \
			"$p" > "$tmp/$b/$(printf '%04d' "$i").patch"
	done
	g am --abort >/dev/null 2>&1 || true
	g checkout -q --detach -f "$base"
	g checkout -q -B "xdp-pp/prep-$b"
	g am -q --signoff "$tmp/$b"/*.patch ||
		{ g am --abort >/dev/null 2>&1 || true; die "prep: the $b patches do not apply on $(git -C "$repo" rev-parse --short "$base")"; }
}

# the previous version, for the range-diff
prev_ref=""
if [ "$prev" -ge 1 ]; then
	pc=$(awk -v v="v$prev" '$1 == v { print $2 }' "$REPO/net-core/versions" 2>/dev/null || true)
	if [ -n "$pc" ] && git -C "$REPO" cat-file -e "$pc^{commit}" 2>/dev/null; then
		mkdir -p "$tmp/prev-src"
		for f in $(git -C "$REPO" ls-tree --name-only "$pc" patches/ | grep '\.patch$'); do
			git -C "$REPO" show "$pc:$f" > "$tmp/prev-src/${f##*/}"
		done
		mapfile -t prevp < <(compgen -G "$tmp/prev-src/*.patch" | LC_ALL=C sort)
		apply_as "v$prev" "${prevp[@]}"
		prev_ref=xdp-pp/prep-v$prev
	else
		log "prep: no commit for v$prev in net-core/versions: no range-diff"
	fi
fi
apply_as "v$ver" "${patches[@]}"
head=xdp-pp/prep-v$ver

# the net fixes: the leading commits with a Fixes: tag
mapfile -t commits < <(git -C "$src" rev-list --reverse "$base..$head")
nfix=$(leading_fixes "$src" "$base..$head")
fix_end=$base
[ "$nfix" -eq 0 ] || fix_end=${commits[$((nfix - 1))]}

# base-commit: said plainly
if [ -n "${KDIR:-}" ]; then
	base_note="base-commit below: $(git -C "$repo" describe --always --tags "$base" 2>/dev/null) of the tree the series was prepared in ($KDIR)."
else
	base_note="The series applies to Debian's linux-source-$LINUX_SOURCE_SERIES ($(base_made_version "$repo")), imported as one commit: the base-commit below is that import, not a commit of any public tree. It has not been rebased on bpf-next or net yet."
fi

rm -rf "$out"
mkdir -p "$out/net" "$out/bpf-next"
# fmt DIR PREFIX RANGE
fmt() {
	g format-patch -q --cover-letter --thread --base="$base" --no-signature \
		--subject-prefix="$2" -o "$1" "$3"
}
if [ "$nfix" -gt 0 ]; then
	fmt "$out/net" "$prefix_net" "$base..$fix_end"
fi
next_prefix="$prefix_next"
[ "$ver" -le 1 ] || next_prefix="$prefix_next v$ver"
# the range-diff in the cover letter: one line per commit (-s); the whole
# one goes beside it
if [ -n "$prev_ref" ]; then
	git -C "$src" range-diff --creation-factor=80 --no-color "$base..$prev_ref" "$base..$head" \
		> "$out/range-diff-v$prev-v$ver.txt"
	git -C "$src" range-diff --creation-factor=80 --no-color -s "$base..$prev_ref" "$base..$head" \
		> "$tmp/range-diff-short.txt"
fi
fmt "$out/bpf-next" "$next_prefix" "$fix_end..$head"

# fill_cover FILE SRC: subject and text from SRC; the bpf-next one also
# lists the net fixes, the version history and the range-diff summary
fill_cover() {
	python3 - "$@" <<'P'
import os, re, sys
path, src, fixes, rdiff, base_note, ver = sys.argv[1:7]
s = open(path).read()
subject, body = open(src).read().split('\n', 1)
body = body.strip('\n')
extra = []
if fixes and os.path.exists(fixes) and os.path.getsize(fixes):
    extra.append(open(fixes).read().rstrip('\n'))
if rdiff and os.path.exists(rdiff):
    extra.append('Range-diff against v%d (one line per patch; the whole range-diff is\n'
                 'in range-diff-v%d-v%s.txt beside these patches):\n' % (int(ver) - 1, int(ver) - 1, ver)
                 + open(rdiff).read().rstrip('\n'))
import textwrap
extra.append(textwrap.fill(base_note, 72))
body = body + '\n\n' + '\n\n'.join(extra)
s = s.replace('*** SUBJECT HERE ***', subject)
s = s.replace('*** BLURB HERE ***', body)
s = s.rstrip('\n') + '\nchange-id: 20251107-xdp-pp-decides-a3c1e0\n'
open(path, 'w').write(s)
P
}
: > "$tmp/fixes.txt"
[ "$nfix" -eq 0 ] || printf '%s\n' "This series applies on top of these $nfix fixes, posted to net on their own" \
	"(\"[$prefix_net 0/$nfix]\"):" > "$tmp/fixes.txt"
for c in "${commits[@]:0:$nfix}"; do
	git -C "$src" log -1 --format='  %s%n    %(trailers:key=Fixes,valueonly,separator=%x2C )' "$c" \
		| sed 's/^    \(.\)/    Fixes: \1/' >> "$tmp/fixes.txt"
done
if [ "$nfix" -gt 0 ]; then
	fill_cover "$out/net/0000-cover-letter.patch" "$net_src" "" "" "$base_note" 1
fi
rdshort=""
[ -z "$prev_ref" ] || rdshort=$tmp/range-diff-short.txt
fill_cover "$out/bpf-next/0000-cover-letter.patch" "$cover_src" "$tmp/fixes.txt" "$rdshort" "$base_note" "$ver"
# To/Cc per patch from get_maintainer.pl; the cover letters get the union
# --no-fixes on the Debian base: it has no history to find the Fixes: commits in
fixes_opt=--fixes
[ -n "${KDIR:-}" ] || fixes_opt=--no-fixes
gm() { (cd "$src" && perl scripts/get_maintainer.pl --no-git --no-git-fallback --no-rolestats "$fixes_opt" "$@"); }
add_hdrs() { # file to-list cc-list
	python3 - "$@" <<'P'
import sys
path, to, cc = sys.argv[1:4]
to = [a for a in open(to).read().splitlines() if a]
cc = [a for a in open(cc).read().splitlines() if a and a not in to]
s = open(path).read()
head, rest = s.split('\n', 1)          # "From <sha> Mon Sep 17 00:00:00 2001"
hdr = ''
if to:
    hdr += 'To: ' + ',\n    '.join(to) + '\n'
if cc:
    hdr += 'Cc: ' + ',\n    '.join(cc) + '\n'
open(path, 'w').write(head + '\n' + hdr + rest)
P
}
for d in net bpf-next; do
	compgen -G "$out/$d/0000-cover-letter.patch" >/dev/null || continue
	: > "$tmp/$d.to"; : > "$tmp/$d.cc"
	for p in "$out/$d"/0*.patch; do
		[ "${p##*/}" != 0000-cover-letter.patch ] || continue
		gm --nol --nor "$p" > "$tmp/p.to"
		gm --nom "$p" > "$tmp/p.cc"
		add_hdrs "$p" "$tmp/p.to" "$tmp/p.cc"
		cat "$tmp/p.to" >> "$tmp/$d.to"
		cat "$tmp/p.cc" >> "$tmp/$d.cc"
	done
	awk '!seen[$0]++' "$tmp/$d.to" > "$tmp/$d.to.u"
	awk '!seen[$0]++' "$tmp/$d.cc" > "$tmp/$d.cc.u"
	add_hdrs "$out/$d/0000-cover-letter.patch" "$tmp/$d.to.u" "$tmp/$d.cc.u"
done

nnext=$(( ${#commits[@]} - nfix ))
log "prep: v$ver as $ident, base $(git -C "$repo" rev-parse --short "$base") (${KDIR:-Debian $(base_made_version "$repo")})"
log "prep: $nfix fixes for net in $out/net, $nnext patches for bpf-next in $out/bpf-next"
[ -z "$prev_ref" ] || log "prep: range-diff against v$prev: $out/range-diff-v$prev-v$ver.txt"
log "prep: check with 'make send' (a dry run); the tree is the branch $head in $src"
echo "$out"
