#!/usr/bin/env bash
# export.sh - write patches/ from a kernel work tree branch with
# git format-patch (never hand-edit patches/). The cover letter text comes
# from net-core/cover-letter.txt (first line: subject) and is written as
# patches/0000-cover-letter.cover, which the *.patch glob does not match.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

case "${1:-}" in
-h|--help)
	cat <<'U'
usage: WORK=<kernel work tree> scripts/export.sh [VERSION]

Exports base..HEAD of $WORK (default $CACHE/dev) into patches/ as
git format-patch output (vVERSION subject prefix, default 1, RFC).
The cover letter gets b4-style base-commit: and change-id: trailers.
U
	exit 0 ;;
esac
work=${WORK:-$CACHE/dev}
ver=${1:-1}
cover=$REPO/net-core/cover-letter.txt
[ -f "$cover" ] || die "no $cover"
git -C "$work" rev-parse -q --verify base >/dev/null || die "$work has no 'base' ref"
[ -z "$(git -C "$work" status --porcelain --untracked-files=no)" ] || die "$work has uncommitted changes"
tmp=$(mktemp -d)
prefix="RFC PATCH"
[ "$ver" = 1 ] || prefix="RFC PATCH v$ver"
git -C "$work" format-patch -q --cover-letter --base=base --subject-prefix="$prefix" \
	--no-signature -o "$tmp" base..HEAD
c=$tmp/0000-cover-letter.patch
subject=$(head -1 "$cover")
python3 - "$c" "$cover" "$subject" <<'P'
import sys, re
path, cover, subject = sys.argv[1:]
s = open(path).read()
body = open(cover).read().split('\n', 1)[1].strip('\n')
s = s.replace('*** SUBJECT HERE ***', subject)
s = s.replace('*** BLURB HERE ***', body)
s = s.rstrip('\n') + '\nchange-id: 20251107-xdp-pp-decides-a3c1e0\n'
open(path, 'w').write(s)
P
rm -f "$REPO"/patches/*.patch "$REPO"/patches/*.cover
mkdir -p "$REPO/patches"
mv "$c" "$REPO/patches/0000-cover-letter.cover"
mv "$tmp"/*.patch "$REPO/patches/"
rmdir "$tmp"
ls "$REPO/patches"
