#!/usr/bin/env bash
# clean.sh - remove the git worktrees and branches the harness made in the
# kernel repository (KDIR, or the cached Debian base), and nothing else.
#
# The harness makes, per kernel repository, the worktrees
# <variant root>/{base,rfc,series,check,prep}/src (scripts/tree.sh, check.sh,
# the prep.sh of before units) and the branches xdp-pp/series-*,
# xdp-pp/rfc-* and xdp-pp/prep-*, and prep.sh's scratch clone
# <variant root>/prep/clone (a clone in the cache). Build directories, ccache and the guest root stay (they
# are the cache: rm -rf $CACHE for those). A worktree or branch of any other name is left alone,
# as is everything in the user's own work tree.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

usage() {
	cat <<'U'
usage: scripts/clean.sh [-n]

Removes the harness's worktrees (<root>/{base,rfc,series,check,prep}/src)
and branches (xdp-pp/series-*, xdp-pp/rfc-*, xdp-pp/prep-*) from KDIR (a
user's kernel tree, when set) or the cached Debian base repository, and
make prep's scratch clone (<root>/prep/clone). -n: only list them.
Environment: KDIR, CACHE.
Exit: 0 done (or nothing to do), 1 failure.
U
}
dry=0
case "${1:-}" in
-h|--help) usage; exit 0 ;;
-n) dry=1 ;;
'') ;;
*) usage >&2; exit 1 ;;
esac

if [ -n "${KDIR:-}" ]; then
	[ -d "$KDIR" ] || die "KDIR=$KDIR does not exist"
	git -C "$KDIR" rev-parse --git-dir >/dev/null 2>&1 || die "KDIR=$KDIR is not a git tree"
	repo=$(cd "$KDIR" && pwd)
else
	repo=$BASE_REPO
	if ! git -C "$repo" rev-parse --git-dir >/dev/null 2>&1; then
		log "clean: no cached base repository ($repo): nothing to do"
		exit 0
	fi
fi
vroot=$(variant_root "$repo")
run() { if [ "$dry" = 1 ]; then echo "would: $*"; else "$@"; fi; }

n=0
while read -r key path; do
	[ "$key" = worktree ] || continue
	ours=0
	for w in "${WORKTREES[@]}"; do [ "$path" != "$vroot/$w/src" ] || ours=1; done
	[ "$ours" = 1 ] || continue
	log "clean: worktree $path"
	run git -C "$repo" worktree remove --force "$path"
	run rm -f "$(dirname "$path")/tree.stamp"
	n=$((n + 1))
done < <(git -C "$repo" worktree list --porcelain)
run git -C "$repo" worktree prune
while read -r b; do
	log "clean: branch $b"
	run git -C "$repo" branch -q -D "$b"
	n=$((n + 1))
done < <(git -C "$repo" for-each-ref --format='%(refname:short)' \
	'refs/heads/xdp-pp/series-*' 'refs/heads/xdp-pp/rfc-*' 'refs/heads/xdp-pp/prep-*')
if [ -d "$vroot/prep/clone" ]; then
	log "clean: make prep's scratch clone $vroot/prep/clone"
	run rm -rf "$vroot/prep/clone"
	n=$((n + 1))
fi
if [ "$dry" = 1 ]; then log "clean: $n worktrees and branches would go from $repo"; else log "clean: $n worktrees and branches removed from $repo"; fi
