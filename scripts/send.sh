#!/usr/bin/env bash
# send.sh - the dry run of posting what scripts/prep.sh prepared: git
# send-email --dry-run over each unit's directory (cover letter and
# patches), in NN order, one line per unit. It never sends: the commands
# that would are printed for you to run yourself.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

usage() {
	cat <<'U'
usage: scripts/send.sh [PREP_DIR]

PREP_DIR: what scripts/prep.sh wrote (default: the newest $CACHE/out/prep/v*),
one directory NN-name/ per unit. Runs `git send-email --dry-run
--confirm=never` on each unit's 0000-cover-letter.patch and patches with
the To/Cc headers prep wrote; nothing is sent. One line per unit on
stdout (messages, the cover's subject, recipients of the widest message);
the full dry run in PREP_DIR/send-dry-run.txt.
Each unit is its own thread, for its own tree: post it when what it
depends on (PREP_DIR/README.md) is in that tree.
Exit: 0 dry run ok, 1 failure.
U
}
case "${1:-}" in -h|--help) usage; exit 0 ;; esac
dir=${1:-$(compgen -G "$OUTS/prep/v*" | sort -V | tail -1 || true)}
if [ -z "$dir" ] || [ ! -d "$dir" ]; then die "send: nothing prepared (run: make prep)"; fi
mapfile -t units < <(unit_dirs "$dir")
[ ${#units[@]} -gt 0 ] || die "send: no unit directories NN-name/ in $dir (run: make prep)"
if [ ! -x "$(git --exec-path)/git-send-email" ] || ! /usr/bin/perl -MMail::Address -e 1 2>/dev/null; then
	die "send: git send-email is missing (fix: sudo apt-get install git-email libmailtools-perl, or sudo scripts/setup-host.sh)"
fi
from=$(git -C "$REPO" var GIT_AUTHOR_IDENT | sed 's/ [0-9]* [-+][0-9]*$//')
: > "$dir/send-dry-run.txt"
n=0
for u in "${units[@]}"; do
	files=()
	[ -f "$u/0000-cover-letter.patch" ] && files+=("$u/0000-cover-letter.patch")
	mapfile -t -O "${#files[@]}" files < <(unit_patches "$u")
	[ ${#files[@]} -gt 0 ] || die "send: no patches in $u"
	echo "=== ${u##*/}" >> "$dir/send-dry-run.txt"
	# --to= and --in-reply-to= empty: the headers prep wrote decide, and
	# send-email does not prompt
	git send-email --dry-run --confirm=never --no-format-patch --from="$from" \
		--in-reply-to= --suppress-cc=self --8bit-encoding=UTF-8 \
		"${files[@]}" < /dev/null > "$dir/send-unit.txt" 2>&1 ||
		{ tail -20 "$dir/send-unit.txt" >&2; die "send: git send-email --dry-run failed on $u"; }
	cat "$dir/send-unit.txt" >> "$dir/send-dry-run.txt"
	# the unit's line: messages, the first subject, the most recipients
	python3 - "$dir/send-unit.txt" "${u##*/}" "${#files[@]}" <<'PY'
import sys
path, unit, nfiles = sys.argv[1], sys.argv[2], int(sys.argv[3])
msgs, cur = [], None
for line in open(path, errors='replace'):
    if line.startswith('Dry-OK. Log says:'):
        cur = {'rcpt': 0, 'subject': '?'}
        msgs.append(cur)
    elif cur is not None and line.startswith('RCPT TO:'):
        cur['rcpt'] += 1
    elif cur is not None and line.startswith('Subject: ') and cur['subject'] == '?':
        cur['subject'] = line[9:].strip()
if len(msgs) != nfiles:
    sys.exit('send: %s: %d messages in the dry run, %d files' % (unit, len(msgs), nfiles))
print('  %-24s %2d messages, up to %2d recipients  %s' % (
    unit, len(msgs), max(m['rcpt'] for m in msgs), msgs[0]['subject'][:80]))
PY
	n=$((n + ${#files[@]}))
done
rm -f "$dir/send-unit.txt"
log "send: dry run of ${#units[@]} units, $n messages ok (details: $dir/send-dry-run.txt); nothing was sent"
log "send: to post a unit for real, yourself, once what it depends on is in its tree ($dir/README.md):"
for u in "${units[@]}"; do log "  git send-email $u/*.patch"; done
