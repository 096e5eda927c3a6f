#!/usr/bin/env bash
# tree.sh - prepare the kernel source tree of a variant: `base` (the base
# commit), `series` (base + the patches of patches/' units, NN order, cover
# letters left out: series_patches in lib.sh, applied with git am) or `rfc`
# (base + net-core/rfc/*.patch: the reconstructed Nov 2025 upstream RFC that
# make bench puts beside the other two).
#
# Trees are git worktrees under the cache, so neither the cached Debian
# base nor a user's KDIR work tree or branch is ever modified. Prints the
# tree's path. A series or rfc tree is re-made only when the base commit or
# a patch changes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

usage() {
	cat <<'U'
usage: scripts/tree.sh base|rfc|series

base: the base commit; series: base + every unit of patches/ (NN-name/,
in NN order, cover letters left out); rfc: base +
net-core/rfc/*.patch (the upstream RFC's change, reconstructed; only
make bench uses it). Each is a worktree at <root>/<variant>/src, the
patches applied with git am on a branch xdp-pp/<variant>-<hash>.
Environment:
  KDIR    a kernel git tree to use instead of the cached Debian 7.3 base
          (e.g. bpf-next). Must be clean; its HEAD (or BASE) is the base.
  BASE    base commit-ish in KDIR (default HEAD; `base` tag for Debian).
  PATCHES patch directory of the series (default: patches/ of this repo):
          unit dirs NN-name/ like patches/, or NNNN-*.patch in one dir.
  RFC_PATCHES patch directory of rfc (default: net-core/rfc/).
One tree.sh at a time ($CACHE/tree.lock; a waiting one says for whom).
Exit: 0 ok, 1 failure (a patch that does not apply is named).
U
}
case "${1:-}" in
-h|--help) usage; exit 0 ;;
base|rfc|series) variant=$1 ;;
*) usage >&2; exit 1 ;;
esac

# one tree.sh at a time (make test's gates and build, make check, make
# prep may ask at once): the base unpack (kernel_repo) and the worktree
# are made under $TREE_LOCK
mkdir -p "$CACHE"
exec {tree_lock}>>"$TREE_LOCK"
lock_take "$tree_lock" "$TREE_LOCK" tree "scripts/tree.sh $variant${XDP_PP_RUN:+ for $XDP_PP_RUN}"
repo=$(kernel_repo)
base=$(base_commit "$repo")
root=$(variant_root "$repo")/$variant
src=$root/src
mkdir -p "$root"

patches=()
case $variant in
series) mapfile -t patches < <(series_patches) ;;
rfc) mapfile -t patches < <(rfc_patches)
     [ ${#patches[@]} -gt 0 ] || die "tree: no rfc patches in ${RFC_PATCHES:-$REPO/net-core/rfc}" ;;
esac
want=$( { echo "$base"; for p in "${patches[@]}"; do sha256sum < "$p"; done; } | sha256sum | cut -c1-16)
if [ -f "$root/tree.stamp" ] && [ "$(cat "$root/tree.stamp")" = "$want" ] &&
   [ -e "$src/.git" ] && [ -z "$(git -C "$src" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
	echo "$src"
	exit 0
fi

ensure_worktree "$repo" "$src" "$base"
cd "$src"
git am --abort >/dev/null 2>&1 || true
# the branch of the tree's previous series goes when a new one is made
old_branch=$(git symbolic-ref -q --short HEAD || true)
git checkout -q --detach -f "$base"
case "$old_branch" in
xdp-pp/series-*|xdp-pp/rfc-*) git branch -q -D "$old_branch" >/dev/null 2>&1 || true ;;
esac
if [ ${#patches[@]} -gt 0 ]; then
	branch=xdp-pp/$variant-$want
	git checkout -q -B "$branch"
	log "tree: applying ${#patches[@]} patches on $(git rev-parse --short "$base") in $src"
	if ! out=$(git -c user.name="xdp-pp harness" -c user.email=harness@xdp-pp.invalid \
		   am -q --3way "${patches[@]}" 2>&1); then
		failed=$(sed -n 's/^Patch failed at \(.*\)$/\1/p' <<<"$out" | head -1)
		git am --abort >/dev/null 2>&1 || true
		git checkout -q --detach -f "$base"
		git branch -q -D "$branch" >/dev/null 2>&1 || true
		printf '%s\n' "$out" | tail -15 >&2
		die "tree: patch ${failed:-?} does not apply on $(git rev-parse --short "$base") (${KDIR:-Debian $LINUX_SOURCE_VERSION}); nothing was changed outside $root"
	fi
fi
echo "$want" > "$root/tree.stamp"
echo "$src"
