#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench-report.py OUT_DIR - base vs series table (bench.md) and plot (bench.png).

Reads OUT_DIR/{base,series}-{icount,wall}/bench.txt written by
scripts/guest/bench.sh. Costs are per packet/op (lower is better); pps
figures are turned into ns/pkt (1e9/pps). Under -icount shift=0 a guest ns
is a guest instruction. spread = (max - min) / median over the repeats; a
difference is claimed only when |ratio - 1| > 3 x the larger spread.
Exit 1 when the determinism check fails (a synchronous test_run case,
whose whole path runs inside one syscall, has a spread > 5%).
"""
import os
import re
import statistics
import subprocess
import sys

LINE = re.compile(r'case=(\S+) rep=(\d+) value=([0-9.]+) unit=(\S+) cached=(\S+) ring=(\S+)')
DETERMINISM_MAX_SPREAD = 0.05
# the synchronous test_run cases: the whole path runs inside one syscall
SYNC_CASES = ('run:devmap-egress-drop', 'run:devmap-xmit-fail',
              'run:devmap-bcast-empty', 'run:xdp-drop')


def load(path):
    res = {}
    if not os.path.exists(path):
        return res
    for line in open(path):
        m = LINE.match(line.strip())
        if not m:
            continue
        case, _, val, unit, cached, ring = m.groups()
        val = float(val)
        if unit == 'pps':
            if val <= 0:
                continue
            val, unit = 1e9 / val, 'ns/pkt'
        r = res.setdefault(case, {'vals': [], 'unit': unit, 'cached': 0, 'ring': 0})
        r['vals'].append(val)
        if cached != '-':
            r['cached'] += int(cached)
            r['ring'] += int(ring)
    return res


def summary(r):
    v = r['vals']
    med = statistics.median(v)
    spread = (max(v) - min(v)) / med if med else 0.0
    share = None
    if r['cached'] + r['ring']:
        share = 100.0 * r['cached'] / (r['cached'] + r['ring'])
    return med, spread, share


def fmt_share(s):
    return '-' if s is None else f'{s:.0f}%'


def table(out, mode):
    base = load(os.path.join(out, f'base-{mode}', 'bench.txt'))
    ser = load(os.path.join(out, f'series-{mode}', 'bench.txt'))
    rows, det_ok = [], True
    for case in sorted(set(base) | set(ser)):
        if case not in base or case not in ser:
            rows.append((case, 'series only' if case in ser else 'base only'))
            continue
        b, s = summary(base[case]), summary(ser[case])
        ratio = s[0] / b[0] if b[0] else float('nan')
        noise = max(b[1], s[1])
        verdict = 'diff' if abs(ratio - 1) > 3 * noise else 'within noise'
        if mode == 'icount' and case in SYNC_CASES and noise > DETERMINISM_MAX_SPREAD:
            det_ok = False
        rows.append((case, (base[case]['unit'], b, s, ratio, noise, verdict,
                            len(base[case]['vals']), len(ser[case]['vals']))))
    return rows, det_ok


def main():
    out = sys.argv[1]
    md = []
    plot_rows = []
    det_ok = True
    for mode, title in (('icount', 'QEMU -icount shift=0, 1 vCPU: guest ns = guest instructions'),
                        ('wall', 'wall-clock under TCG emulation: NOISE, not performance')):
        rows, ok = table(out, mode)
        if not rows:
            continue
        det_ok &= ok
        md.append(f'### {title}\n')
        md.append('| case | unit | base median (spread) | series median (spread) | series/base | verdict | cached share base / series | n |')
        md.append('|---|---|---|---|---|---|---|---|')
        for case, r in rows:
            if isinstance(r, str):
                md.append(f'| {case} | | {r} (the series adds it) | | | | | |')
                continue
            unit, b, s, ratio, noise, verdict, nb, ns = r
            md.append(f'| {case} | {unit} | {b[0]:.1f} ({100*b[1]:.1f}%) | {s[0]:.1f} ({100*s[1]:.1f}%) '
                      f'| {ratio:.3f} | {verdict} | {fmt_share(b[2])} / {fmt_share(s[2])} | {nb}/{ns} |')
            if mode == 'icount':
                plot_rows.append((case, ratio, noise))
        md.append('')
    md.append(f'Determinism check (icount, synchronous test_run cases {", ".join(SYNC_CASES)}: '
              f'spread <= {100*DETERMINISM_MAX_SPREAD:.0f}%): {"PASS" if det_ok else "FAIL"}\n')
    text = '\n'.join(md)
    open(os.path.join(out, 'bench.md'), 'w').write(text)
    print(text)
    if plot_rows:
        dat = os.path.join(out, 'bench.dat')
        with open(dat, 'w') as f:
            for i, (case, ratio, noise) in enumerate(plot_rows):
                f.write(f'{i} "{case}" {ratio:.4f} {noise:.4f}\n')
        gp = f'''set terminal pngcairo size 1200,600
set output "{os.path.join(out, 'bench.png')}"
set title "series / base, cost per packet or op (lower is better; QEMU icount)"
set style fill solid 0.6
set boxwidth 0.6
set xtics rotate by -40 font ",9"
set ylabel "ratio"
set grid ytics
set yrange [0.5:*]
plot "{dat}" using 1:3:xtic(2) with boxes notitle, \\
     "{dat}" using 1:3:($3*$4) with yerrorbars lc rgb "black" pt 0 notitle, \\
     1 with lines lc rgb "red" notitle
'''
        subprocess.run(['gnuplot'], input=gp.encode(), check=True)
    return 0 if det_ok else 1


if __name__ == '__main__':
    sys.exit(main())
