#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Per-function L1D/L2 figures from the cache plugin's CSV dump.

usage: cache-report.py CSV --map System.map [--window N[,N...]|last|all]
                       [--pkts N] [--case NAME] [--cachewin FILE]
                       [--fns F1,F2,...] [--group NAME=REGEX ...]
                       [--top N] [--emit-top N] [--kallsyms FILE]
                       [--include-user] [--user-below ADDR] [--sum] [--quiet]

CSV is what net-core/bench/cache_plugin.c writes (out=): rows
window,insn,accesses,l1d_misses,l2_misses,io keyed by the guest virtual
address of the instruction making the access. Each instruction address is
named by the text symbol of System.map that contains it (__pfx_F padding
counts as F); kernel addresses outside System.map's text (modules, BPF
programs and trampolines, JIT) go under "?", user-space addresses
(the plugin puts them all at address 0) under "[user]". "all" is the
kernel: every symbol plus
"?", without "[user]" (--include-user adds it).

Windows: --cachewin FILE (written in the guest by
scripts/bench/guest/cachewin.sh; lines "cachewin window=<n> case=<name>
pkts=<n> role=warm|measure") reports
each measure window on its own, with its case name and packet count (with
--sum: one report per case, its measure windows and packets added up). Else
--window picks the windows to add up (default: the last closed one) and
--pkts/--case name them.

Output: a table per report (accesses, L1D misses, L2 misses in total and
per packet when the packet count is known, share of the L1D misses),
--top rows (default 25) plus the --fns and --group rows; then, for the
bench, lines in exactly this format:
  cache case=<name> fn=<function|all> accesses=<n> misses=<n> pkts=<n>
(misses: L1D misses; totals over the window, pkts=0 when unknown; the
table's l1i columns, with the plugin's icache=on, are not emitted), for
fn=all, the --group names, the --fns functions, and the --emit-top
(default 0) functions with the most L1D misses. --quiet prints only those.
--kallsyms (the guest's /proc/kallsyms, cachewin.sh saves it) splits the
"?" row of the table by module/BPF symbol (the cache lines keep fn=?), and
is checked against System.map: a map that is not the booted kernel's (the
build dir rebuilt meanwhile) is an error.
Exit: 0, 1 on bad input.
"""
import argparse
import bisect
import re
import sys

USER_TOP = 0xffff800000000000
TEXT_TYPES = set('TtWw')
# per instruction / function: accesses, l1d misses, l2 misses, io,
# l1i fetches, l1i misses (the last two with the plugin's icache=on)
NCOL = 6


def load_map(path):
    """Sorted (addresses, names) of the text symbols, and the text ranges."""
    syms = []
    marks = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) < 3:
                continue
            try:
                addr = int(parts[0], 16)
            except ValueError:
                continue
            typ, name = parts[1], parts[2]
            if name in ('_stext', '_text', '_etext', '_sinittext', '_einittext'):
                marks[name] = addr
            if typ in TEXT_TYPES:
                syms.append((addr, name))
    if not syms:
        sys.exit(f'cache-report: no text symbols in {path}')
    syms.sort()
    ranges = []
    lo = marks.get('_stext', marks.get('_text'))
    if lo is not None and '_etext' in marks:
        ranges.append((lo, marks['_etext']))
    if '_sinittext' in marks and '_einittext' in marks:
        ranges.append((marks['_sinittext'], marks['_einittext']))
    if not ranges:  # not a kernel map (e.g. the selftest's nm output)
        ranges.append((syms[0][0], syms[-1][0] + 0x1000))
    return [a for a, _ in syms], [n for _, n in syms], ranges


def load_kallsyms(path, text_ranges):
    """Sorted (addresses, labels) of the symbols outside the kernel text."""
    out = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) < 3 or parts[1] not in TEXT_TYPES:
                continue
            addr = int(parts[0], 16)
            if addr == 0 or any(lo <= addr < hi for lo, hi in text_ranges):
                continue
            label = parts[2] + (' ' + parts[3] if len(parts) > 3 else '')
            out.append((addr, label))
    out.sort()
    return [a for a, _ in out], [n for _, n in out]


def check_kallsyms(mapfile, kallsyms):
    """The guest's /proc/kallsyms must agree with System.map on the kernel
    text symbols both have: else the map is not the booted kernel's (a
    rebuilt build dir) and every name would be wrong."""
    want = {}
    with open(mapfile) as f:
        for line in f:
            p = line.split()
            if len(p) >= 3 and p[1] in TEXT_TYPES:
                want.setdefault(p[2], set()).add(int(p[0], 16))
    same = differ = 0
    example = None
    with open(kallsyms) as f:
        for line in f:
            p = line.split()
            if len(p) != 3 or p[1] not in TEXT_TYPES or p[2] not in want:
                continue
            a = int(p[0], 16)
            if a == 0:
                return  # addresses hidden (kptr_restrict): nothing to check
            if a in want[p[2]]:
                same += 1
            else:
                differ += 1
                example = example or (p[2], a, min(want[p[2]]))
    if differ > same // 1000:
        name, a, m = example
        sys.exit(f'cache-report: {mapfile} is not the booted kernel\'s: {differ} of '
                 f'{same + differ} text symbols differ from {kallsyms} (e.g. {name} '
                 f'at {a:#x}, System.map {m:#x}); was the build dir rebuilt?')


class Namer:
    def __init__(self, mapfile, kallsyms=None, user_top=USER_TOP):
        self.user_top = user_top
        self.addrs, self.names, self.ranges = load_map(mapfile)
        self.kaddrs, self.knames = (load_kallsyms(kallsyms, self.ranges)
                                    if kallsyms else ([], []))
        self.cache = {}

    def start(self, insn):
        """The address of the System.map text symbol containing insn."""
        i = bisect.bisect_right(self.addrs, insn) - 1
        return self.addrs[i] if i >= 0 else insn

    def fn(self, insn):
        """(function, detail): detail names '?' code when kallsyms has it."""
        hit = self.cache.get(insn)
        if hit:
            return hit
        if insn < self.user_top:
            res = ('[user]', None)
        elif not any(lo <= insn < hi for lo, hi in self.ranges):
            detail = None
            i = bisect.bisect_right(self.kaddrs, insn) - 1
            if i >= 0 and insn - self.kaddrs[i] < 0x10000:
                detail = self.knames[i]
            res = ('?', detail)
        else:
            i = bisect.bisect_right(self.addrs, insn) - 1
            name = self.names[i] if i >= 0 else '?'
            if name.startswith('__pfx_'):
                name = name[len('__pfx_'):]
            res = (name, None)
        self.cache[insn] = res
        return res


COUNT_COLS = ('accesses', 'l1d_misses', 'l2_misses', 'io', 'l1i_fetches', 'l1i_misses')


def load_csv(path):
    """{window: {insn: [NCOL counts]}}, {window: summary dict},
    {window: {insn: [set mask, last set]}} (the plugin's sets=on columns)."""
    rows, summ, sets = {}, {}, {}

    def layout(names):
        """(columns, (row index, count index) of each count column, the
        row indexes of the set mask and the last set, or None)."""
        counts = [(i, COUNT_COLS.index(n)) for i, n in enumerate(names) if n in COUNT_COLS]
        st = ((names.index('l1d_miss_sets'), names.index('l1d_last_set'))
              if 'l1d_miss_sets' in names else None)
        return len(names), counts, st

    ncols, counts, setcols = layout(['window', 'insn'] + list(COUNT_COLS[:4]))
    sre = re.compile(r'^# window (\d+) (closed|partial): (.*)$')
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            if line.startswith('#'):
                m = sre.match(line)
                if m:
                    d = dict(kv.split('=', 1) for kv in m.group(3).split())
                    d['state'] = m.group(2)
                    summ[int(m.group(1))] = d
                continue
            if line.startswith('window,'):
                ncols, counts, setcols = layout(line.split(','))
                continue
            p = line.split(',')
            if len(p) != ncols:
                sys.exit(f'cache-report: bad row in {path}: {line}')
            w, insn = int(p[0]), int(p[1], 16)
            ent = rows.setdefault(w, {}).setdefault(insn, [0] * NCOL)
            for i, k in counts:
                ent[k] += int(p[i])
            if setcols:
                st = sets.setdefault(w, {}).setdefault(insn, [0, -1])
                st[0] |= int(p[setcols[0]], 16)
                last = int(p[setcols[1]])
                if last >= 0:
                    st[1] = last
    return rows, summ, sets


def load_cachewin(path):
    out = []
    with open(path) as f:
        for line in f:
            if not line.startswith('cachewin '):
                continue
            d = dict(kv.split('=', 1) for kv in line.split()[1:] if '=' in kv)
            out.append(d)
    return out


def aggregate(rows, windows, namer, include_user):
    per_fn, detail = {}, {}
    for w in windows:
        for insn, vals in rows.get(w, {}).items():
            fn, det = namer.fn(insn)
            for tgt, key in ((per_fn, fn), (detail, det)):
                if tgt is detail and (det is None):
                    continue
                ent = tgt.setdefault(key, [0] * NCOL)
                for k in range(NCOL):
                    ent[k] += vals[k]
    total = [0] * NCOL
    for fn, ent in per_fn.items():
        if fn == '[user]' and not include_user:
            continue
        for k in range(NCOL):
            total[k] += ent[k]
    return per_fn, detail, total


def insn_rows(args, rows, sets, namer, windows, pkts, out):
    """--insns: each instruction of the named functions that missed, by its
    offset in the function (objdump -d names the same offsets)."""
    want = [f for f in args.insns.split(',') if f]
    per = {}
    for w in windows:
        for insn, vals in rows.get(w, {}).items():
            fn, _ = namer.fn(insn)
            # a name also takes its compiler clones (F.constprop.0, F.isra.0)
            if not any(fn == f or fn.startswith(f + '.') for f in want):
                continue
            ent = per.setdefault((fn, insn), [0] * NCOL + [0, -1])
            for k in range(NCOL):
                ent[k] += vals[k]
            st = sets.get(w, {}).get(insn)
            if st:
                ent[NCOL] |= st[0]
                if st[1] >= 0:
                    ent[NCOL + 1] = st[1]
    for (fn, insn), v in sorted(per.items()):
        if not v[1]:
            continue
        s = f'insn {fn}+{insn - namer.start(insn):#x} accesses={v[0]} l1d_misses={v[1]}'
        if pkts:
            s += f' acc/pkt={v[0] / pkts:.3f} l1d/pkt={v[1] / pkts:.3f}'
        if v[NCOL]:
            ids = [b for b in range(64) if v[NCOL] >> b & 1]
            s += f' sets={",".join(map(str, ids))} last_set={v[NCOL + 1]}'
        print(s, file=out)


def report(args, rows, summ, namer, windows, case, pkts, out, sets=None):
    per_fn, detail, total = aggregate(rows, windows, namer, args.include_user)
    groups = {}
    for name, rx in args.group:
        ent = [0] * NCOL
        for fn, v in per_fn.items():
            if fn not in ('?', '[user]') and rx.search(fn):
                for k in range(NCOL):
                    ent[k] += v[k]
        groups[name] = ent
    fns = [f for f in args.fns.split(',') if f] if args.fns else []
    if not args.quiet:
        insns = sum(int(summ.get(w, {}).get('insns', 0)) for w in windows)
        head = (f'== case={case} windows={",".join(map(str, windows))} '
                f'pkts={pkts or "?"} guest_insns={insns}')
        if pkts:
            head += f' ({insns / pkts:.1f}/pkt)'
        print(head, file=out)
        icache = total[4] > 0
        per = ' acc/pkt l1d/pkt  l2/pkt' if pkts else ''
        ih = f' {"l1i_miss":>9}' + (' l1i/pkt' if pkts else '') if icache else ''
        print(f'{"function":<44} {"accesses":>10} {"l1d_miss":>9} {"l2_miss":>8}'
              f'{per} {"%l1d":>6}{ih}', file=out)

        def row(label, v):
            share = 100.0 * v[1] / total[1] if total[1] else 0.0
            s = f'{label[:44]:<44} {v[0]:>10} {v[1]:>9} {v[2]:>8}'
            if pkts:
                s += f' {v[0] / pkts:7.1f} {v[1] / pkts:7.2f} {v[2] / pkts:7.3f}'
            s += f' {share:6.2f}'
            if icache:
                s += f' {v[5]:>9}' + (f' {v[5] / pkts:7.2f}' if pkts else '')
            print(s, file=out)

        row('all', total)
        for name, v in groups.items():
            row(f'group:{name}', v)
        shown = set()
        order = sorted(per_fn.items(), key=lambda kv: (-kv[1][1], -kv[1][0], kv[0]))
        for fn, v in order[:args.top]:
            row(fn, v)
            shown.add(fn)
            if fn == '?' and detail:
                for det, dv in sorted(detail.items(), key=lambda kv: -kv[1][1])[:10]:
                    row(f'  ? {det}', dv)
        for fn in fns:
            if fn not in shown:
                row(fn, per_fn.get(fn, [0] * NCOL))
    emit = [('all', total)] + list(groups.items())
    emit += [(f, per_fn.get(f, [0] * NCOL)) for f in fns]
    if args.emit_top:
        have = {f for f, _ in emit}
        order = sorted(per_fn.items(), key=lambda kv: (-kv[1][1], -kv[1][0], kv[0]))
        emit += [(f, v) for f, v in order if f not in have][:args.emit_top]
    for fn, v in emit:
        print(f'cache case={case} fn={fn} accesses={v[0]} misses={v[1]} pkts={pkts or 0}',
              file=out)
    if args.insns:
        insn_rows(args, rows, sets or {}, namer, windows, pkts, out)


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split('\n\n', 1)[0],
        epilog=__doc__.split('\n\n', 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('csv')
    ap.add_argument('--map', required=True, help='the kernel build\'s System.map')
    ap.add_argument('--window', default='last', help='N[,N...], last or all (summed)')
    ap.add_argument('--pkts', type=int, default=0)
    ap.add_argument('--case', default='-')
    ap.add_argument('--cachewin', help='window file of scripts/bench/guest/cachewin.sh')
    ap.add_argument('--fns', default='')
    ap.add_argument('--insns', default='',
                    help='F1,F2: per-instruction lines of these functions and their '
                         'clones (F.constprop.0 ...): their misses, '
                         'and with the plugin\'s sets=on the L1D sets they fell in')
    ap.add_argument('--group', action='append', default=[], metavar='NAME=REGEX')
    ap.add_argument('--top', type=int, default=25)
    ap.add_argument('--emit-top', type=int, default=0)
    ap.add_argument('--kallsyms')
    ap.add_argument('--include-user', action='store_true')
    ap.add_argument('--quiet', action='store_true')
    ap.add_argument('--sum', action='store_true',
                    help='with --cachewin: one report per case, its measure windows added up')
    ap.add_argument('--user-below', type=lambda x: int(x, 0), default=USER_TOP,
                    help='addresses below are [user] (default 0xffff800000000000; 0: none)')
    args = ap.parse_args()
    groups = []
    for g in args.group:
        if '=' not in g:
            ap.error(f'--group {g}: want NAME=REGEX')
        name, rx = g.split('=', 1)
        groups.append((name, re.compile(rx)))
    args.group = groups
    try:
        rows, summ, sets = load_csv(args.csv)
        if args.kallsyms:
            check_kallsyms(args.map, args.kallsyms)
        namer = Namer(args.map, args.kallsyms, args.user_below)
    except OSError as e:
        sys.exit(f'cache-report: {e}')
    closed = sorted(w for w, d in summ.items() if d['state'] == 'closed')

    def pick(spec):
        if spec == 'last':
            if not closed:
                sys.exit(f'cache-report: no closed window in {args.csv}')
            return [closed[-1]]
        if spec == 'all':
            return closed
        ws = [int(x) for x in spec.split(',') if x]
        for w in ws:
            if w not in summ:
                sys.exit(f'cache-report: no window {w} in {args.csv}')
        return ws

    if args.cachewin:
        wins = [d for d in load_cachewin(args.cachewin) if d.get('role') == 'measure']
        if args.window != 'last':
            keep = set(pick(args.window))
            wins = [d for d in wins if int(d['window']) in keep]
        if not wins:
            sys.exit(f'cache-report: no measure window in {args.cachewin}')
        for d in wins:
            w = int(d['window'])
            if w not in summ or summ[w]['state'] != 'closed':
                sys.exit(f'cache-report: window {w} of {args.cachewin} is not closed in {args.csv}'
                         ' (guest and plugin out of step?)')
        if args.sum:  # one report per case: its measure windows added up
            cases = {}
            for d in wins:
                c = cases.setdefault(d.get('case', '-'), [[], 0])
                c[0].append(int(d['window']))
                c[1] += int(d.get('pkts', 0))
            for case, (ws, pkts) in cases.items():
                report(args, rows, summ, namer, ws, case, pkts, sys.stdout, sets)
        else:
            for d in wins:
                report(args, rows, summ, namer, [int(d['window'])], d.get('case', '-'),
                       int(d.get('pkts', 0)), sys.stdout, sets)
    else:
        report(args, rows, summ, namer, pick(args.window), args.case, args.pkts, sys.stdout,
               sets)
    return 0


if __name__ == '__main__':
    sys.exit(main())
