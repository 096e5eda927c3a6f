#!/usr/bin/env bash
# base.sh - unpack Debian's linux-source-7.3 once into the cache and make it a
# git repository with a `base` tag. Prints the repository path.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

case "${1:-}" in
-h|--help)
	cat <<'U'
usage: scripts/base.sh

Unpacks /usr/src/linux-source-7.3.tar.xz (Debian package linux-source-7.3,
pinned version in scripts/lib.sh) into $CACHE/linux (default
~/.cache/xdp-pp/linux), removes the Debian .gitignore block that ignores
every top-level path, commits it and tags it `base`. Idempotent: an existing
repository with a `base` tag is reused. Prints the repository path.
Environment: CACHE.
U
	exit 0 ;;
esac

repo=$BASE_REPO
if git -C "$repo" rev-parse -q --verify refs/tags/base >/dev/null 2>&1; then
	echo "$repo"
	exit 0
fi
[ -f "$LINUX_SOURCE_TARBALL" ] || die "no $LINUX_SOURCE_TARBALL (fix: sudo scripts/setup-host.sh)"
need_tool git "apt-get install git"
have=$(dpkg-query -W -f='${Version}' "linux-source-$LINUX_SOURCE_SERIES" 2>/dev/null || true)
[ "$have" = "$LINUX_SOURCE_VERSION" ] ||
	die "linux-source-$LINUX_SOURCE_SERIES is '$have', pinned $LINUX_SOURCE_VERSION (fix: sudo scripts/setup-host.sh)"

log "base: unpacking $LINUX_SOURCE_TARBALL ($LINUX_SOURCE_VERSION)"
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
git init -q
git config user.name "xdp-pp harness"
git config user.email "harness@xdp-pp.invalid"
git add -A
n=$(git ls-files | wc -l)
[ "$n" -gt 50000 ] || die "base: only $n files tracked: the .gitignore fix-up failed"
# Fixed identity and dates: the same tarball gives the same base commit id
# on every machine, so the cover letter's base-commit: is reproducible.
GIT_AUTHOR_NAME="xdp-pp harness" GIT_AUTHOR_EMAIL=harness@xdp-pp.invalid \
GIT_COMMITTER_NAME="xdp-pp harness" GIT_COMMITTER_EMAIL=harness@xdp-pp.invalid \
GIT_AUTHOR_DATE=$LINUX_SOURCE_DATE GIT_COMMITTER_DATE=$LINUX_SOURCE_DATE \
	git commit -q -m "Linux $LINUX_SOURCE_VERSION (Debian linux-source-$LINUX_SOURCE_SERIES)"
git tag base
got=$(git rev-parse HEAD)
[ "$got" = "$LINUX_SOURCE_COMMIT" ] ||
	log "base: warning: base commit $got differs from the pinned $LINUX_SOURCE_COMMIT (tarball or git changed?)"
cd /
mv "$repo.tmp" "$repo"
log "base: $repo at $(git -C "$repo" rev-parse --short base), $n files"
echo "$repo"
