#!/usr/bin/env bash
# prep.sh - make the units of the series ready to post, the way b4 prep
# would: every unit of patches/ (or those UNITS= names) applied in order on
# the base, with the user's own identity as author and Signed-off-by, then
# git format-patch per unit with its subject prefix, its cover letter
# (net-core/covers/NN-name.txt), To/Cc from the base tree's
# scripts/get_maintainer.pl, base-commit:, and with VERSION= a version and
# a range-diff. The patches are applied in a scratch clone of the kernel
# repository (git clone --shared: KDIR's objects are read, nothing in KDIR
# is written): the user's branches, HEAD, index and files stay as they
# are, as does patches/. Nothing is sent (scripts/send.sh shows the dry run).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

usage() {
	cat <<'U'
usage: [KDIR=<kernel tree>] [UNITS="NN ..."] [VERSION=N] scripts/prep.sh

Applies the units of patches/ (patches/NN-name/, written by make export) in
NN order on the base: KDIR's HEAD (or BASE), default the cached Debian
base. KDIR is only read: the units are applied in a scratch clone
(git clone --shared: $CACHE/kdir-<hash>/prep/clone, for the Debian base
$CACHE/prep/clone), never on your branches or files. When a patch does
not apply, prep stops with one line naming the unit and that patch (git
am's output beside the clone, in prep/am.log) and writes no output.
Writes $OUT (default $CACHE/out/prep/vN, N = VERSION or 1), per unit:
  NN-name/0000-cover-letter.patch  "[Prefix 0/M] Subject" and the body of
                                   net-core/covers/NN-name.txt
  NN-name/00MM-*.patch             "[Prefix MM/M]"
  README.md                        one line per unit: prefix, patches,
                                   To/Cc counts, Depends:
Each patch gets To: (maintainers and lists) and Cc: (reviewers and the
rest) from the base tree's scripts/get_maintainer.pl; a cover letter gets
its unit's union. base-commit: is the base; a unit after others gets
prerequisite-patch-id: lines for theirs. On the Debian base the cover
letter says that base-commit: is the linux-source import.
To post one unit to another tree (e.g. an iwl-net unit to Intel's tree):
  KDIR=<that tree> UNITS=04 make prep
UNITS: unit numbers or names (default all), applied in NN order; a unit
that needs others does not apply without them (list them too).
VERSION: none for a first posting; VERSION=N (N >= 2) for a resend:
"[Prefix vN ...]", and when net-core/versions names the commit of this
repository that held vN-1, range-diff-vP-vN.txt of the whole series.
Author and Signed-off-by: your git identity (git config user.name /
user.email, here: $REPO's); the placeholder identity patches/ carries is
replaced. A placeholder or *.invalid identity is refused.
Environment: KDIR, BASE, UNITS, VERSION, OUT, PATCHES, COVERS.
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

ver=${VERSION:-}
case $ver in
''|1) ver=1 ;;
*[!0-9]*|0*) die "prep: VERSION=$ver is not a version number" ;;
esac
pdir=${PATCHES:-$REPO/patches}

# the units: covers in NN order, each with patches/NN-name/ of its size
mapfile -t covers < <(unit_covers)
[ ${#covers[@]} -gt 0 ] || die "prep: no cover sources ${COVERS#"$REPO"/}/NN-name.txt"
names=()
declare -A prefix count depends subject body_of
for c in "${covers[@]}"; do
	cover_read "$c"
	names+=("$U_NAME")
	prefix[$U_NAME]=$U_PREFIX count[$U_NAME]=$U_PATCHES
	depends[$U_NAME]=$U_DEPENDS subject[$U_NAME]=$U_SUBJECT body_of[$U_NAME]=$U_BODY
	n=$(unit_patches "$pdir/$U_NAME" | wc -l)
	[ "$n" = "$U_PATCHES" ] ||
		die "prep: ${pdir#"$REPO"/}/$U_NAME has $n patches, its cover says Patches: $U_PATCHES (run make export)"
done
while IFS= read -r d; do
	[ -n "${count[${d##*/}]:-}" ] ||
		die "prep: ${d#"$REPO"/} has no cover source ${COVERS#"$REPO"/}/${d##*/}.txt (run make export)"
done < <(unit_dirs "$pdir")
# UNITS: numbers (4, 04), names (04-i40e-budget0, i40e-budget0), kept in
# NN order
is_unit() { # token name
	[ "$1" = "$2" ] || [ "$1" = "${2#[0-9][0-9]-}" ] || [ "$1" = "${2%%-*}" ] ||
		{ [[ "$1" =~ ^[0-9]+$ ]] && [ "$((10#$1))" = "$((10#${2%%-*}))" ]; }
}
sel=()
want=${UNITS:-}
read -r -a want <<<"${want//,/ }"
for u in ${want[@]+"${want[@]}"}; do
	m=0
	for n in "${names[@]}"; do ! is_unit "$u" "$n" || m=1; done
	[ "$m" = 1 ] || die "prep: UNITS: no unit '$u' (units: ${names[*]})"
done
for n in "${names[@]}"; do
	m=$(( ${#want[@]} == 0 ))
	for u in ${want[@]+"${want[@]}"}; do ! is_unit "$u" "$n" || m=1; done
	[ "$m" = 0 ] || sel+=("$n")
done
out=${OUT:-$OUTS/prep/v$ver}

repo=$(kernel_repo)
base=$(base_commit "$repo")
sbase=$(git -C "$repo" rev-parse --short "$base")
where=${KDIR:+KDIR $KDIR}
where=${where:-Debian $(base_made_version "$repo")}
vroot=$(variant_root "$repo")
mkdir -p "$vroot/prep"
exec {prep_lock}>>"$vroot/prep/lock"
lock_take "$prep_lock" "$vroot/prep/lock" prep "scripts/prep.sh"

# the scratch clone: its own refs and commits, the kernel repository's
# objects through alternates; re-made when it borrows from another one
clone=$vroot/prep/clone
objects=$(git -C "$repo" rev-parse --path-format=absolute --git-common-dir)/objects
if [ ! -d "$clone/.git" ] || [ "$(cat "$clone/.git/objects/info/alternates" 2>/dev/null)" != "$objects" ]; then
	rm -rf "$clone"
	log "prep: a scratch clone of $repo in $clone (once; checking out a kernel tree takes a while)"
	git clone -q --shared --no-checkout "$repo" "$clone" || die "prep: cannot clone $repo to $clone"
	# detached from the start and without refs of its own (nothing can
	# point at objects KDIR may prune later); no gc of a borrowing clone
	git -C "$clone" config gc.auto 0
	git -C "$clone" checkout -q --detach "$base" || die "prep: cannot check out $base in $clone"
	git -C "$clone" remote remove origin
	git -C "$clone" for-each-ref --format='delete %(refname)' | git -C "$clone" update-ref --stdin
fi
tmp=$(mktemp -d)
g() { git -C "$clone" -c user.name="$name" -c user.email="$email" "$@"; }
at_base() {
	g am --abort >/dev/null 2>&1 || true
	g checkout -q --detach -f "$base" && g reset -q --hard
}
trap 'rm -rf "$tmp"' EXIT
at_base || die "prep: cannot check out $sbase in $clone"

# apply UNIT PATCH...: the patches onto HEAD with the placeholder identity
# replaced by the user's (author and Signed-off-by); on failure one line
# naming UNIT and the first patch that does not apply
apply() {
	local u=$1 p i=0 failed n
	shift
	mkdir -p "$tmp/am/$u"
	for p in "$@"; do
		i=$((i + 1))
		PH="$PLACEHOLDER" ID="$ident" perl -pe '
			BEGIN { $ph = $ENV{PH}; $id = $ENV{ID} }
			s/^(From|Signed-off-by): \Q$ph\E$/$1: $id/' \
			"$p" > "$tmp/am/$u/$(printf '%04d' "$i").patch"
	done
	if ! g am -q --3way --signoff "$tmp/am/$u"/*.patch > "$vroot/prep/am.log" 2>&1; then
		failed=$(sed -n 's/^Patch failed at \([0-9]*\) .*/\1/p' "$vroot/prep/am.log" | head -1)
		n=${failed:+$((10#$failed))}
		p='?'
		[ -z "$n" ] || p=$(basename "${*:$n:1}")
		at_base >/dev/null 2>&1 || true
		die "prep: unit $u: $p does not apply on $sbase ($where, untouched); git am's output: $vroot/prep/am.log"
	fi
}

declare -A start end
for u in "${sel[@]}"; do
	mapfile -t ps < <(unit_patches "$pdir/$u")
	start[$u]=$(g rev-parse HEAD)
	apply "$u" "${ps[@]}"
	end[$u]=$(g rev-parse HEAD)
done
rm -f "$vroot/prep/am.log"

if [ -z "${KDIR:-}" ]; then
	base_note="The series applies to Debian's linux-source-$LINUX_SOURCE_SERIES ($(base_made_version "$repo")), imported as one commit: the base-commit below is that import, not a commit of any public tree. It has not been rebased on a public tree yet."
else
	base_note=''
fi
fill_cover() { # file subject body-file note change-id
	python3 - "$@" <<'P'
import sys, textwrap
path, subject, body, note, change_id = sys.argv[1:6]
s = open(path).read()
body = open(body).read().strip('\n')
if note:
    body += '\n\n' + textwrap.fill(note, 72)
s = s.replace('*** SUBJECT HERE ***', subject)
s = s.replace('*** BLURB HERE ***', body)
s = s.rstrip('\n') + '\nchange-id: %s\n' % change_id
open(path, 'w').write(s)
P
}
# To/Cc from get_maintainer.pl; its --fixes (Cc the authors of the commits
# a patch fixes) only when the tree has them (the Debian import has no
# history)
fixes_opt() { # patch
	local c
	for c in $(sed -n 's/^Fixes: \([0-9a-f]\{8,40\}\) .*/\1/p' "$1"); do
		git -C "$clone" cat-file -e "$c^{commit}" 2>/dev/null || { echo --no-fixes; return; }
	done
	echo --fixes
}
gm() { (cd "$clone" && perl scripts/get_maintainer.pl --no-git --no-git-fallback --no-rolestats "$@"); }
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

rm -rf "$out"
mkdir -p "$out"
{
	echo "# make prep: ready to post, one directory per unit"
	echo
	echo "Applied in this order on $sbase ($where) as $ident."
	echo "Post a unit with git send-email <dir>/*.patch once what it depends on is in its tree."
	echo
	echo "| dir | prefix | patches | To | Cc | depends |"
	echo "|---|---|---|---|---|---|"
} > "$out/README.md"
for u in "${sel[@]}"; do
	pfx=${prefix[$u]}
	[ "$ver" = 1 ] || pfx="$pfx v$ver"
	g format-patch -q --cover-letter --thread --base="$base" --no-signature \
		--subject-prefix="$pfx" -o "$out/$u" "${start[$u]}..${end[$u]}"
	printf '%s\n' "${body_of[$u]}" > "$tmp/body"
	fill_cover "$out/$u/0000-cover-letter.patch" "${subject[$u]}" "$tmp/body" "$base_note" \
		"$(unit_change_id "$u")"
	: > "$tmp/u.to"; : > "$tmp/u.cc"
	while IFS= read -r p; do
		gm --nor --no-fixes "$p" > "$tmp/p.to"
		gm "$(fixes_opt "$p")" "$p" | grep -vxF -f "$tmp/p.to" > "$tmp/p.cc" || true
		add_hdrs "$p" "$tmp/p.to" "$tmp/p.cc"
		cat "$tmp/p.to" >> "$tmp/u.to"
		cat "$tmp/p.cc" >> "$tmp/u.cc"
	done < <(unit_patches "$out/$u")
	awk '!seen[$0]++' "$tmp/u.to" > "$tmp/u.to.u"
	awk '!seen[$0]++' "$tmp/u.cc" | grep -vxF -f "$tmp/u.to.u" > "$tmp/u.cc.u" || true
	add_hdrs "$out/$u/0000-cover-letter.patch" "$tmp/u.to.u" "$tmp/u.cc.u"
	nto=$(grep -c . "$tmp/u.to.u" || true) ncc=$(grep -c . "$tmp/u.cc.u" || true)
	printf '| `%s/` | `[%s]` | %s | %s | %s | %s |\n' "$u" "$pfx" "${count[$u]}" "$nto" "$ncc" \
		"${depends[$u]:--}" >> "$out/README.md"
	log "prep: $u: [$pfx 0/${count[$u]}] To $nto, Cc $ncc${depends[$u]:+; depends: ${depends[$u]}}"
done

# VERSION >= 2: the range-diff of the whole series against the previous
# version (the commit of this repository net-core/versions names for it)
if [ "$ver" -ge 2 ]; then
	prev=$((ver - 1))
	pc=$(awk -v v="v$prev" '$1 == v { print $2 }' "$REPO/net-core/versions" 2>/dev/null || true)
	if [ -n "$pc" ] && git -C "$REPO" cat-file -e "$pc^{commit}" 2>/dev/null; then
		mkdir -p "$tmp/prev"
		git -C "$REPO" archive "$pc" patches | tar -x -C "$tmp/prev"
		mapfile -t prevp < <(PATCHES=$tmp/prev/patches series_patches)
		head=$(g rev-parse HEAD)
		at_base
		if [ ${#prevp[@]} -gt 0 ] && (apply "v$prev" "${prevp[@]}") 2>/dev/null; then
			g range-diff --creation-factor=80 --no-color "$base..HEAD" "$base..$head" \
				> "$out/range-diff-v$prev-v$ver.txt"
			log "prep: range-diff against v$prev ($pc): $out/range-diff-v$prev-v$ver.txt"
		else
			log "prep: v$prev ($pc) does not apply on $sbase: no range-diff"
		fi
		rm -f "$vroot/prep/am.log"
		g checkout -q --detach -f "$head"
	else
		log "prep: net-core/versions names no commit for v$prev: no range-diff"
	fi
fi

log "prep: ${#sel[@]} units as $ident on $sbase ($where) in $out ($out/README.md)"
log "prep: the units applied: $clone (detached HEAD); check with 'make send' (a dry run, it never sends)"
echo "$out"
