#!/usr/bin/env bash
# base.sh - unpack Debian's linux-source-7.3 once into the cache and make it a
# git repository with a `base` tag. Prints the repository path. When the
# installed linux-source-7.3 changes, its tree becomes the new `base` in the
# same repository (the worktrees of scripts/tree.sh stay valid).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

case "${1:-}" in
-h|--help)
	cat <<'U'
usage: scripts/base.sh

Unpacks /usr/src/linux-source-7.3.tar.xz (Debian package linux-source-7.3,
pinned version in scripts/lib.sh, or the newest the archive had when
scripts/setup-host.sh ran) into $CACHE/linux (default
~/.cache/xdp-pp/linux), removes the Debian .gitignore block that ignores
every top-level path, commits it and tags it `base`. Idempotent: an existing
repository with a `base` tag made from the installed version is reused;
when another version is installed, its tree is committed in the same
repository and `base` moves to it (one line says so). Only the pinned
version's commit is known (LINUX_SOURCE_COMMIT); another version's commit
is accepted with a note. Prints the repository path.
Environment: CACHE, LINUX_SOURCE_TARBALL (default /usr/src/linux-source-7.3.tar.xz).
U
	exit 0 ;;
esac

repo=$BASE_REPO
pkg=linux-source-$LINUX_SOURCE_SERIES
have=$(linux_source_installed)
update=0
if git -C "$repo" rev-parse -q --verify refs/tags/base >/dev/null 2>&1; then
	made=$(base_made_version "$repo")
	if [ -z "$have" ] || [ "$have" = "$made" ]; then
		echo "$repo"
		exit 0
	fi
	log "base: $pkg $have is installed, the cached base is ${made:-unknown}: committing $have as the new base in $repo"
	update=1
fi
[ -f "$LINUX_SOURCE_TARBALL" ] ||
	die "no $LINUX_SOURCE_TARBALL (fix: on Debian bookworm sudo scripts/setup-host.sh; elsewhere set KDIR=<a kernel git tree>)"
need_tool git "apt-get install git"
ver=${have:-unknown}

log "base: unpacking $LINUX_SOURCE_TARBALL ($ver)"
rm -rf "$repo.tmp"
mkdir -p "$repo.tmp"
tar -xJf "$LINUX_SOURCE_TARBALL" -C "$repo.tmp" --strip-components=1
cd "$repo.tmp"
# The Debian block ("ignore everything at the top level") sits at the end of
# .gitignore; cut it so the base is a normal tree.
if grep -q '^# Debian packaging' .gitignore 2>/dev/null; then
	awk '/^# Debian packaging/ {cut = 1} !cut' .gitignore |
		sed '$ {/^#$/d}' > .gitignore.new
	mv .gitignore.new .gitignore
fi
# Fixed identity and dates: the same tarball gives the same base commit id
# on every machine, so the cover letter's base-commit: is reproducible.
export GIT_AUTHOR_NAME="xdp-pp harness" GIT_AUTHOR_EMAIL=harness@xdp-pp.invalid \
	GIT_COMMITTER_NAME="xdp-pp harness" GIT_COMMITTER_EMAIL=harness@xdp-pp.invalid \
	GIT_AUTHOR_DATE=$LINUX_SOURCE_DATE GIT_COMMITTER_DATE=$LINUX_SOURCE_DATE
msg="Linux $ver (Debian $pkg)"
if [ "$update" = 1 ]; then
	# the new tree as a root commit of the cached repository: the same id
	# a fresh repository gives (same tree, identity, dates and message)
	idx=$repo/.git/xdp-pp-base.index
	rm -f "$idx"
	GIT_DIR=$repo/.git GIT_WORK_TREE=$repo.tmp GIT_INDEX_FILE=$idx git add -A
	n=$(GIT_DIR=$repo/.git GIT_INDEX_FILE=$idx git ls-files | wc -l)
	[ "$n" -gt 50000 ] || die "base: only $n files tracked: the .gitignore fix-up failed"
	t=$(GIT_DIR=$repo/.git GIT_INDEX_FILE=$idx git write-tree)
	rm -f "$idx"
	got=$(git -C "$repo" commit-tree -m "$msg" "$t")
	git -C "$repo" tag -f base "$got" >/dev/null
	git -C "$repo" reset -q --hard base
	cd /
	rm -rf "$repo.tmp"
else
	git init -q
	git config user.name "xdp-pp harness"
	git config user.email "harness@xdp-pp.invalid"
	git add -A
	n=$(git ls-files | wc -l)
	[ "$n" -gt 50000 ] || die "base: only $n files tracked: the .gitignore fix-up failed"
	git commit -q -m "$msg"
	git tag base
	got=$(git rev-parse HEAD)
	cd /
	mv "$repo.tmp" "$repo"
fi
if [ "$ver" = "$LINUX_SOURCE_PINNED" ]; then
	[ "$got" = "$LINUX_SOURCE_COMMIT" ] ||
		log "base: warning: base commit $got differs from the pinned $LINUX_SOURCE_COMMIT (tarball or git changed?)"
else
	log "base: note: $pkg $ver is not the pinned $LINUX_SOURCE_PINNED: base commit $got (only the pinned version's commit is known; a patch that no longer applies is named by scripts/tree.sh)"
fi
log "base: $repo at $(git -C "$repo" rev-parse --short base) ($pkg $ver), $n files"
echo "$repo"
