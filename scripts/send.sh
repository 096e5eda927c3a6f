#!/usr/bin/env bash
# send.sh - the dry run of posting what scripts/prep.sh prepared: git
# send-email --dry-run over each series (net fixes first, then bpf-next),
# showing From, To, Cc and Subject of every message. It never sends: the
# command that would is printed for you to run yourself.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

usage() {
	cat <<'U'
usage: scripts/send.sh [PREP_DIR]

PREP_DIR: what scripts/prep.sh wrote (default: the newest $CACHE/out/prep/v*).
Runs `git send-email --dry-run --confirm=never` on PREP_DIR/net/*.patch and
PREP_DIR/bpf-next/*.patch with the To/Cc headers prep wrote; nothing is
sent. Summary per message on stdout, the full dry run in PREP_DIR/send-dry-run.txt.
Exit: 0 dry run ok, 1 failure.
U
}
case "${1:-}" in -h|--help) usage; exit 0 ;; esac
dir=${1:-$(compgen -G "$OUTS/prep/v*" | sort -V | tail -1 || true)}
if [ -z "$dir" ] || [ ! -d "$dir" ]; then die "send: nothing prepared (run: make prep)"; fi
if [ ! -x "$(git --exec-path)/git-send-email" ] || ! /usr/bin/perl -MMail::Address -e 1 2>/dev/null; then
	die "send: git send-email is missing (fix: sudo apt-get install git-email libmailtools-perl, or sudo scripts/setup-host.sh)"
fi
from=$(git -C "$REPO" var GIT_AUTHOR_IDENT | sed 's/ [0-9]* [-+][0-9]*$//')
: > "$dir/send-dry-run.txt"
n=0
for s in net bpf-next; do
	compgen -G "$dir/$s/*.patch" >/dev/null || continue
	log "send: dry run of $dir/$s"
	# --to= and --in-reply-to= empty: the headers prep wrote decide, and
	# send-email does not prompt
	git send-email --dry-run --confirm=never --no-format-patch --from="$from" \
		--in-reply-to= --suppress-cc=self --8bit-encoding=UTF-8 \
		"$dir/$s"/*.patch < /dev/null >> "$dir/send-dry-run.txt" 2>&1 ||
		{ tail -20 "$dir/send-dry-run.txt" >&2; die "send: git send-email --dry-run failed on $dir/$s"; }
	n=$((n + $(compgen -G "$dir/$s/*.patch" | wc -l)))
done
# one line per message: subject and how many recipients it would reach
python3 - "$dir/send-dry-run.txt" <<'PY'
import re, sys
msgs, cur = [], None
for line in open(sys.argv[1], errors='replace'):
    if line.startswith('Dry-OK. Log says:'):
        cur = {'rcpt': 0, 'subject': '?'}
        msgs.append(cur)
    elif cur is not None and line.startswith('RCPT TO:'):
        cur['rcpt'] += 1
    elif cur is not None and line.startswith('Subject: ') and cur['subject'] == '?':
        cur['subject'] = line[9:].strip()
for m in msgs:
    print('  %-3d recipients  %s' % (m['rcpt'], m['subject'][:100]))
PY
log "send: dry run of $n messages ok (details: $dir/send-dry-run.txt); nothing was sent"
log "send: to post for real, yourself: git send-email $dir/net/*.patch, then $dir/bpf-next/*.patch"
