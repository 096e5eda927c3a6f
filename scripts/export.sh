#!/usr/bin/env bash
# export.sh - write patches/ from a kernel work tree branch with
# git format-patch (never hand-edit patches/).
#
# The branch (base..HEAD) holds the units of the series, in the order they
# apply: net-core/covers/NN-name.txt says, per unit, its subject prefix,
# how many consecutive commits are its own (Patches:), what it depends on
# and its cover letter (scripts/lib.sh, cover_read). Each unit becomes
# patches/NN-name/: 0000-cover-letter.patch and 0001..000N, numbered 1..N
# within the unit, base-commit: the commit it applies on. patches/README.md
# lists the units. Every unit's patches, cover left out (series_patches),
# in NN order, `git am` onto the base.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

usage() {
	cat <<'U'
usage: WORK=<kernel work tree> scripts/export.sh

Exports base..HEAD of $WORK (default $CACHE/dev; it must have a 'base'
ref and no uncommitted changes) as units, one per cover source
net-core/covers/NN-name.txt, taken in NN order:
  Prefix: PATCH net       subject prefix, no version ("PATCH net-next",
                          "PATCH iwl-net", "PATCH iwl-next", "RFC PATCH bpf-next")
  Patches: N              the unit's N consecutive commits of the branch
  Depends: <free text>    optional, listed in patches/README.md
  Subject: <cover subject>
  <blank line, then the cover letter's body>
The Patches: of all covers must add up to the branch's commit count.
Unit NN-name -> patches/NN-name/: 0000-cover-letter.patch ("[Prefix 0/N]",
Subject and body filled in, b4-style base-commit: (the commit the unit
applies on) and change-id: trailers), 0001-*.patch .. "[Prefix N/N]".
Unit dirs that no cover names any more are removed; patches/README.md:
one line per unit (dir, prefix, patches, depends).
Applying them all onto the base, in order, covers left out:
  for d in patches/[0-9]*/; do git am $(ls "$d"[0-9]???-*.patch | grep -v /0000-); done
(the files scripts/lib.sh's series_patches lists, which the harness reads).
Environment: WORK, COVERS (default net-core/covers).
U
}
case "${1:-}" in -h|--help) usage; exit 0 ;; '') ;; *) usage >&2; exit 1 ;; esac
work=${WORK:-$CACHE/dev}
git -C "$work" rev-parse -q --verify base >/dev/null || die "export: $work has no 'base' ref"
[ -z "$(git -C "$work" status --porcelain --untracked-files=no)" ] || die "export: $work has uncommitted changes"

mapfile -t covers < <(unit_covers)
[ ${#covers[@]} -gt 0 ] || die "export: no cover sources ${COVERS#"$REPO"/}/NN-name.txt"
mapfile -t commits < <(git -C "$work" rev-list --reverse base..HEAD)
total=0
for c in "${covers[@]}"; do
	cover_read "$c"
	total=$((total + U_PATCHES))
done
[ "$total" = "${#commits[@]}" ] ||
	die "export: the covers' Patches: add up to $total, but base..HEAD of $work has ${#commits[@]} commits (fix the Patches: lines of ${COVERS#"$REPO"/}/*.txt)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# fill_cover FILE SUBJECT BODY-FILE CHANGE-ID: the cover letter's subject,
# body and change-id: trailer
fill_cover() {
	python3 - "$@" <<'P'
import sys
path, subject, body, change_id = sys.argv[1:5]
s = open(path).read()
s = s.replace('*** SUBJECT HERE ***', subject)
s = s.replace('*** BLURB HERE ***', open(body).read().strip('\n'))
s = s.rstrip('\n') + '\nchange-id: %s\n' % change_id
open(path, 'w').write(s)
P
}
{
	echo "# patches/: written by scripts/export.sh, never by hand"
	echo
	echo "The units of the series, in the order they apply (\`git am\` each"
	echo "dir's patches, 0000-cover-letter.patch left out):"
	echo
	echo "| dir | prefix | patches | depends |"
	echo "|---|---|---|---|"
} > "$tmp/README.md"
off=0
for c in "${covers[@]}"; do
	cover_read "$c"
	start=base
	[ "$off" -eq 0 ] || start=${commits[$((off - 1))]}
	end=${commits[$((off + U_PATCHES - 1))]}
	git -C "$work" format-patch -q --cover-letter --base="$start" --no-signature \
		--subject-prefix="$U_PREFIX" -o "$tmp/$U_NAME" "$start..$end"
	printf '%s\n' "$U_BODY" > "$tmp/body"
	fill_cover "$tmp/$U_NAME/0000-cover-letter.patch" "$U_SUBJECT" "$tmp/body" \
		"$(unit_change_id "$U_NAME")"
	n=$(unit_patches "$tmp/$U_NAME" | wc -l)
	[ "$n" = "$U_PATCHES" ] || die "export: $U_NAME: format-patch wrote $n patches, not $U_PATCHES"
	printf '| `%s/` | `[%s]` | %s | %s |\n' "$U_NAME" "$U_PREFIX" "$U_PATCHES" "${U_DEPENDS:--}" >> "$tmp/README.md"
	log "export: $U_NAME: $U_PATCHES patches, [$U_PREFIX], $(git -C "$work" log -1 --format=%h "$start")..$(git -C "$work" log -1 --format=%h "$end")"
	off=$((off + U_PATCHES))
done

mkdir -p "$REPO/patches"
# stale units, and the flat layout before units
while IFS= read -r d; do rm -rf "$d"; done < <(unit_dirs "$REPO/patches")
rm -f "$REPO"/patches/*.patch "$REPO"/patches/*.cover "$REPO/patches/README.md"
mv "$tmp"/[0-9][0-9]-* "$tmp/README.md" "$REPO/patches/"
log "export: ${#covers[@]} units, ${#commits[@]} patches in patches/ (patches/README.md)"
