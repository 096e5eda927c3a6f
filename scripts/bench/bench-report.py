#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench-report.py OUT_DIR - base | RFC | series tables (bench.md), plot (bench.png)
and the issue's target verdicts.

Reads OUT_DIR/<kernel>-{icount,wall}/bench.txt written by
scripts/bench/guest/bench.sh and OUT_DIR/<kernel>-nic/bench.txt written by
scripts/bench/bench-nic.sh, for the kernels base, rfc (base + net-core/rfc:
the upstream RFC's change) and series (base + patches/); a kernel that did
not run gets '-' cells. Costs are per packet/op (lower is better); pps
figures are turned into ns/pkt (1e9/pps).
Under -icount shift=0 a guest ns is a guest instruction.

Every table has base | RFC | series | RFC/base | series/base. spread =
(max - min) / median over the repeats; a ratio is claimed (bold) only when
|ratio - 1| > 3 x the larger spread of the two kernels, else it says
"(noise)". A case a kernel lacks says "absent" there.

The verdicts (PASS / FAIL / n/a, with the numbers) come last, judged on
series vs base; the RFC column is reported, not judged, except in the
memory-behaviour line:
  - napi:redirect-map-egress-drop (softirq), NAPI poll cost: series/base <= 0.97
    and beyond 3x spread;
  - the return path of that poll: series <= 0.6 x base. Per kernel, from the
    per-function profile with the trampoline subtracted (calibrated on
    bpf_fentry_test1(), see the profile section): base = the outermost
    return functions traced (those not nested in another traced one);
    RFC/series = base - (bq_xmit_all(base) - bq_xmit_all(kernel)), since
    bq_xmit_all() wraps the egress program run (the same in every kernel)
    plus the returns, so no return function needs to be traceable there;
  - page_pool bench: NAPI-aware delegated return (softirq-page_pool04-
    napi-aware) <= fast path (softirq-page_pool01) + 10%, series kernel;
  - no other case worse than +0.5% (series/base, beyond 3x spread);
  - L1D misses per packet of the egress-drop case, series below both RFC and
    base: from OUT_DIR/<kernel>/cache.txt when present (lines
    "cache case=<name> fn=<fn|all> accesses=<n> misses=<n> pkts=<n>", a QEMU
    TCG cache-model plugin), else n/a.
Exit 1 when the determinism check fails (a synchronous test_run case, whose
whole path runs inside one syscall, has a spread > 5% in some kernel);
missed targets do not change the exit status.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Dict, List, NamedTuple, Optional, Tuple

LINE = re.compile(r'case=(\S+) rep=(\d+) value=([0-9.]+) unit=(\S+) cached=(\S+) ring=(\S+)(.*)')
PROFILE = re.compile(r'profile case=(\S+) fn=(\S+) (?:calls_per_pkt=([0-9.]+) ns_per_pkt=([0-9.]+)|absent)')
CACHE = re.compile(r'cache case=(\S+) fn=(\S+) accesses=(\d+) misses=(\d+) pkts=(\d+)')
NOTE = '# note: '
KERNELS = ('base', 'rfc', 'series')
NAME = {'base': 'base', 'rfc': 'RFC', 'series': 'series'}
DETERMINISM_MAX_SPREAD = 0.05
TARGET_CASE, TARGET_RATIO, WORSE_MAX = 'napi:redirect-map-egress-drop', 0.97, 0.005
RETURN_RATIO = 0.6
PP_FAST, PP_NAPI, PP_NAPI_MAX = ('pp_bench:softirq-page_pool01',
                                 'pp_bench:softirq-page_pool04-napi-aware', 1.10)
PROFILE_CASE = 'redirect-map-egress-drop'
# Trampoline calibration: bpf_fentry_test1() (net/bpf/test_run.c, "return
# a + 1", the same in every kernel), traced like the profile's functions and
# called by BPF_PROG_TEST_RUN; its body is 3 instructions (lea, the jmp to
# the return thunk, ret: objdump of the 7.3 perf vmlinux; the trampoline
# enters after endbr64 and the __fentry__ call; 2 where the return thunk is
# patched to a plain ret: see the "# retbleed:" line of bench.txt). What a traced call of
# it costs beyond that is the trampoline's share inside the two timestamps
# (+1 instruction per argument register a function restores beyond the one
# of bpf_fentry_test1).
CAL_FN, CAL_BODY = 'bpf_fentry_test1', 3
# the fallback of a bench.txt without that line (v2): xdp_return_frame_bulk's
# common path, 35 instructions (objdump of the v2 series vmlinux)
XRFB_FAST_PATH = 35
# The profile's return functions, and which of them run inside which: a
# nested one's time is already in its caller's (each function is timed
# alone), so the outermost ones add up to the return path. Static: the call
# graph of 7.3 and the series. page_pool_put_netmem_bulk is outermost: the
# inline xdp_flush_frame_bulk() at the end of bq_xmit_all() calls it (a
# filled bulk also flushes from inside xdp_return_frame_bulk(); a devmap
# flush returns at most 16 frames, the bulk's size, so not on this path).
RETURN_FNS = ('xdp_return_frame_rx_napi', 'xdp_return_frame', 'xdp_return_frame_bulk',
              '__xdp_return_frame_bulk', 'page_pool_put_unrefed_netmem',
              'page_pool_put_netmem_bulk')
NESTED_IN = {
    'page_pool_put_unrefed_netmem': ('xdp_return_frame_rx_napi', 'xdp_return_frame',
                                     'xdp_return_frame_bulk', '__xdp_return_frame_bulk'),
    '__xdp_return_frame_bulk': ('xdp_return_frame_bulk',),
}
WRAPPER_FN = 'bq_xmit_all'
# the synchronous test_run cases: the whole path runs inside one syscall
SYNC_CASES = ('run:devmap-egress-drop', 'run:devmap-xmit-fail',
              'run:devmap-bcast-empty', 'run:xdp-drop')


class Summary(NamedTuple):
    """One kernel's figures for one case, over its repeats."""
    median: float
    spread: float             # (max - min) / median
    share: Optional[float]    # % of the recycled pages that went to the cache
    n: int                    # repeats


@dataclass
class Case:
    """The result lines of one case in one bench.txt."""
    unit: str
    vals: List[float] = field(default_factory=list)
    cached: int = 0
    ring: int = 0
    ppoll: List[float] = field(default_factory=list)  # packets per NAPI poll
    pps: List[float] = field(default_factory=list)    # the sender's rate
    pkts: int = 0    # packets the receiver's polls reported
    busy: Optional[int] = None  # of them, polled by a busy poller (busy poll cases)

    def summary(self) -> Summary:
        med = statistics.median(self.vals)
        spread = (max(self.vals) - min(self.vals)) / med if med else 0.0
        share = None
        if self.cached + self.ring:
            share = 100.0 * self.cached / (self.cached + self.ring)
        return Summary(med, spread, share, len(self.vals))


class ProfileKey(NamedTuple):
    case: str
    fn: str


class ProfileCost(NamedTuple):
    """One traced function's share of a case, per packet."""
    calls: float
    ns: float


@dataclass
class BenchFile:
    """Everything the report takes from one bench.txt (read once)."""
    present: bool = False
    cases: Dict[str, Case] = field(default_factory=dict)
    # None: the function could not be traced on that kernel ("absent")
    profile: Dict[ProfileKey, Optional[ProfileCost]] = field(default_factory=dict)
    note: Optional[str] = None  # the first "# note: " line (bench-nic.sh NIC_NOTE)


class Ratio(NamedTuple):
    value: float
    noise: float      # the larger spread of the two kernels
    claimed: bool     # |value - 1| > 3 x noise


class Row(NamedTuple):
    """One case of a table: each kernel's summary (None: absent/not run)
    and the rfc and series ratios to base (None: a side lacks it)."""
    case: str
    unit: str
    sums: Dict[str, Optional[Summary]]
    ratios: Dict[str, Optional[Ratio]]


def read_bench(path) -> BenchFile:
    res = BenchFile()
    if not os.path.exists(path):
        return res
    res.present = True
    with open(path) as f:
        for line in f:
            if res.note is None and line.startswith(NOTE):
                res.note = line[len(NOTE):].strip()
            m = PROFILE.match(line.strip())
            if m:
                case, fn, calls, ns = m.groups()
                res.profile[ProfileKey(case, fn)] = (
                    None if calls is None else ProfileCost(float(calls), float(ns)))
            m = LINE.match(line.strip())
            if not m:
                continue
            case, _, val, unit, cached, ring, rest = m.groups()
            val = float(val)
            extra = dict(kv.split('=', 1) for kv in rest.split() if '=' in kv)
            if unit == 'pps':
                if val <= 0:
                    continue
                val, unit = 1e9 / val, 'ns/pkt'
            c = res.cases.setdefault(case, Case(unit))
            c.vals.append(val)
            if 'ppoll' in extra:
                c.ppoll.append(float(extra['ppoll']))
            if 'pps' in extra:
                c.pps.append(float(extra['pps']))
            if 'pkts' in extra:
                c.pkts += int(extra['pkts'])
            if 'busy' in extra:
                c.busy = (c.busy or 0) + int(extra['busy'])
            if cached != '-':
                c.cached += int(cached)
                c.ring += int(ring)
    return res


def ratio_of(b: Optional[Summary], k: Optional[Summary]) -> Optional[Ratio]:
    if b is None or k is None or not b.median:
        return None
    value = k.median / b.median
    noise = max(b.spread, k.spread)
    return Ratio(value, noise, abs(value - 1) > 3 * noise)


def fmt_ratio(r: Optional[Ratio]) -> str:
    if r is None:
        return '-'
    return f'**{r.value:.3f}**' if r.claimed else f'{r.value:.3f} (noise)'


def fmt_share(s: Optional[Summary]) -> str:
    return '-' if s is None or s.share is None else f'{s.share:.0f}%'


def table(files: Dict[str, BenchFile], mode) -> Tuple[List[Row], List[str]]:
    """The rows of one mode, and the determinism failures (icount)."""
    rows, det_bad = [], []
    cases = sorted(set().union(*(f.cases for f in files.values())))
    for case in cases:
        sums = {k: (files[k].cases[case].summary() if case in files[k].cases else None)
                for k in KERNELS}
        unit = next(files[k].cases[case].unit for k in KERNELS if case in files[k].cases)
        ratios = {k: ratio_of(sums['base'], sums[k]) for k in ('rfc', 'series')}
        if mode == 'icount' and case in SYNC_CASES:
            det_bad += [f'{NAME[k]} {case} {100 * s.spread:.1f}%' for k, s in sums.items()
                        if s is not None and s.spread > DETERMINISM_MAX_SPREAD]
        rows.append(Row(case, unit, sums, ratios))
    return rows, det_bad


def cell(files, k, s: Optional[Summary]) -> str:
    if s is None:
        return 'absent' if files[k].present else '-'
    return f'{s.median:.1f} ({100 * s.spread:.1f}%)'


def table_md(files, rows) -> List[str]:
    md = ['| case | unit | base (spread) | RFC (spread) | series (spread) | RFC/base '
          '| series/base | cached base / RFC / series | n |',
          '|---|---|---|---|---|---|---|---|---|']
    for r in rows:
        n = '/'.join('-' if r.sums[k] is None else str(r.sums[k].n) for k in KERNELS)
        md.append(f'| {r.case} | {r.unit} | '
                  + ' | '.join(cell(files, k, r.sums[k]) for k in KERNELS)
                  + f' | {fmt_ratio(r.ratios["rfc"])} | {fmt_ratio(r.ratios["series"])} | '
                  + ' / '.join(fmt_share(r.sums[k]) for k in KERNELS) + f' | {n} |')
    md.append('')
    return md


def napi_md(files, rows) -> List[str]:
    napi = [r.case for r in rows if r.case.startswith('napi:')]
    if not napi:
        return []

    def busy(c):
        if c is None or not c.pkts or c.busy is None:
            return '-'
        return f'{100.0 * c.busy / c.pkts:.0f}%'

    def med(v, f='.1f'):
        return format(statistics.median(v), f) if v else '-'

    md = ['NAPI-cost cases: packets per poll and the sender\'s (pktgen) rate, '
          'median (sender-bound, not a result):\n',
          '| case | pkts/poll base / RFC / series | pktgen pps base / RFC / series '
          '| busy polled base / RFC / series |',
          '|---|---|---|---|']
    for case in napi:
        cs = [files[k].cases.get(case) for k in KERNELS]
        md.append(f'| {case} | ' + ' / '.join(med(c.ppoll) if c else '-' for c in cs)
                  + ' | ' + ' / '.join(med(c.pps, '.0f') if c else '-' for c in cs)
                  + ' | ' + ' / '.join(busy(c) for c in cs) + ' |')
    md.append('')
    return md


# ---- per-function profile and the return path ----

class Calibration(NamedTuple):
    tramp: Optional[float]   # guest instructions per traced call, or None
    how: str


def calibration(prof) -> Calibration:
    cal = prof.get(ProfileKey('trampoline', CAL_FN))
    if cal and cal.calls > 0.5:
        return Calibration(cal.ns / cal.calls - CAL_BODY,
                           f'{CAL_FN}() per call ({cal.ns / cal.calls:.1f}) minus its '
                           f'{CAL_BODY}-instruction body')
    xrfb = prof.get(ProfileKey(PROFILE_CASE, 'xdp_return_frame_bulk'))
    if xrfb and xrfb.calls > 0.5:
        return Calibration(xrfb.ns / xrfb.calls - XRFB_FAST_PATH,
                           f'fallback (no {CAL_FN} line): xdp_return_frame_bulk per call '
                           f'minus its {XRFB_FAST_PATH}-instruction common path')
    return Calibration(None, f'none (no {CAL_FN} line, no traced xdp_return_frame_bulk)')


def own(v: Optional[ProfileCost], tramp: Optional[float]) -> Optional[float]:
    """A function's calibrated cost per packet (None: absent or no calibration)."""
    if v is None or tramp is None:
        return None
    return v.ns - tramp * v.calls


class ReturnPath(NamedTuple):
    value: Optional[float]
    how: str


def outermost_returns(prof, tramp) -> Tuple[Optional[float], List[str]]:
    """Sum of the calibrated return functions traced and called that are not
    nested in another one traced and called, and the terms."""
    called = {fn: prof.get(ProfileKey(PROFILE_CASE, fn)) for fn in RETURN_FNS}
    called = {fn: v for fn, v in called.items() if v is not None and v.calls > 0}
    if tramp is None or not called:
        return None, []
    total, terms = 0.0, []
    for fn, v in called.items():
        outer = [o for o in NESTED_IN.get(fn, ()) if o in called]
        if outer:
            terms.append(f'{fn} nested in {", ".join(outer)}')
            continue
        c = own(v, tramp)
        total += c
        terms.append(f'{fn} {c:.1f} ({v.calls:.2f} calls)')
    return total, terms


def return_paths(profs, cals):
    """{kernel: ReturnPath}, and the notes of how."""
    res, notes = {}, []
    bt = cals['base'].tramp
    rb, terms = outermost_returns(profs['base'], bt)
    res['base'] = ReturnPath(rb, 'outermost return functions: ' + ('; '.join(terms) or 'none traced'))
    wb = own(profs['base'].get(ProfileKey(PROFILE_CASE, WRAPPER_FN)), bt)
    for k in ('rfc', 'series'):
        if not profs[k]:
            res[k] = ReturnPath(None, 'not run')
            continue
        wk = own(profs[k].get(ProfileKey(PROFILE_CASE, WRAPPER_FN)), cals[k].tramp)
        direct, dterms = outermost_returns(profs[k], cals[k].tramp)
        dnote = (f'; cross-check, its outermost traceable return functions: {direct:.1f} '
                 f'({"; ".join(dterms)}; a static inline part is not traceable, so a lower bound)'
                 if direct is not None else '')
        if rb is None or wb is None or wk is None:
            res[k] = ReturnPath(None, f'n/a (needs the base return path and {WRAPPER_FN} '
                                      f'in base and {NAME[k]})' + dnote)
            continue
        res[k] = ReturnPath(rb - (wb - wk),
                            f'{rb:.1f} - ({WRAPPER_FN} base {wb:.1f} - {NAME[k]} {wk:.1f} '
                            f'= {wb - wk:+.1f})' + dnote)
    if rb is not None and wb is not None and rb > wb:
        notes.append(f'warning: the base return path ({rb:.1f}) exceeds {WRAPPER_FN} '
                     f'({wb:.1f}), which should contain it: some return function is '
                     'called outside the devmap flush, or nested in a way NESTED_IN misses')
    return res, notes


def profile_md(files, cals, rps, rp_notes) -> List[str]:
    profs = {k: files[k].profile for k in KERNELS}
    keys = [key for key in dict.fromkeys(key for k in KERNELS for key in profs[k])
            if key.case != 'trampoline']
    if not keys:
        return []

    def pcell(k, v):
        if not files[k].present:
            return '-'
        if v is None:
            return 'absent'
        if v.calls == 0:
            return 'not called'
        c = own(v, cals[k].tramp)
        return f'{v.ns:.1f} ({v.calls:.2f} calls' + (f', ~{c:.0f} own)' if c is not None else ')')

    md = ['Where the NAPI poll of the egress-drop case goes, per packet: each function '
          'timed alone with fentry/fexit over one pktgen run (no repeats: no spread), '
          'nested calls counting in their caller; "own" subtracts the trampoline a traced '
          'call pays between the two timestamps. Trampoline per traced call: '
          + '; '.join(f'{NAME[k]} ' + (f'{cals[k].tramp:.1f}' if cals[k].tramp is not None else 'n/a')
                      + f' ({cals[k].how})' for k in KERNELS if files[k].present) + '.\n',
          '| case | function | base ns/pkt (calls/pkt) | RFC ns/pkt (calls/pkt) '
          '| series ns/pkt (calls/pkt) |',
          '|---|---|---|---|---|']
    for key in keys:
        md.append(f'| {key.case} | {key.fn} | '
                  + ' | '.join(pcell(k, profs[k].get(key)) for k in KERNELS) + ' |')
    md.append('')
    md.append(f'Return path of that poll per packet (guest instructions, trampoline '
              f'subtracted). base: the outermost return functions traced; RFC and series: '
              f'base - ({WRAPPER_FN}(base) - {WRAPPER_FN}(kernel)), as {WRAPPER_FN}() wraps '
              'the egress program run (the same code in every kernel) plus the returns, so '
              'no return function needs to be traceable (the series may inline one):\n')
    for k in KERNELS:
        if not files[k].present:
            continue
        rp = rps[k]
        v = f'{rp.value:.1f}' if rp.value is not None else 'n/a'
        md.append(f'- {NAME[k]}: {v}: {rp.how}')
    md += [f'- {n}' for n in rp_notes]
    md.append('')
    return md


# ---- the memory-behaviour hook (cache model plugin) ----

def read_cache(path) -> Dict[Tuple[str, str], List[Tuple[int, int, int]]]:
    res: Dict[Tuple[str, str], List[Tuple[int, int, int]]] = {}
    if not os.path.exists(path):
        return res
    with open(path) as f:
        for line in f:
            m = CACHE.match(line.strip())
            if m:
                case, fn, acc, miss, pkts = m.groups()
                case = case[len('napi:'):] if case.startswith('napi:') else case
                res.setdefault((case, fn), []).append((int(acc), int(miss), int(pkts)))
    return res


class PerPkt(NamedTuple):
    misses: float
    accesses: float
    spread: Optional[float]   # over the lines (repeats), None for one line


def per_pkt(lines) -> Optional[PerPkt]:
    pk = sum(p for _, _, p in lines)
    if not pk:
        return None
    each = [m / p for _, m, p in lines if p]
    med = statistics.median(each)
    spread = (max(each) - min(each)) / med if len(each) > 1 and med else None
    return PerPkt(sum(m for _, m, _ in lines) / pk, sum(a for a, _, _ in lines) / pk, spread)


# the cache-model verdicts: (fn group of cache.txt, what it covers).
# 'egress': the devmap egress side (enqueue, flush, returns), where the
# three kernels' code differs; 'all': every function in the windows
# (sender, virtio and timers included: the noisier figure)
CACHE_VERDICTS = (('egress', 'the devmap egress side and the returns'),
                  ('all', 'all functions'))


def cache_verdict_name(fn, what) -> str:
    return f'L1D misses per packet, egress drop ({what}, fn={fn}): series below both RFC and base'


def cache_below(s, o) -> bool:
    """s below o: one line each, strictly; repeats, beyond 3x the larger spread."""
    noise = max(s.spread or 0, o.spread or 0)
    return s.misses < o.misses and (o.misses - s.misses) / o.misses > 3 * noise


def cache_md(out) -> Tuple[List[str], str]:
    """The table of OUT/<kernel>/cache.txt and the verdict lines."""
    caches, stale = {}, []
    for k in KERNELS:
        path = os.path.join(out, k, 'cache.txt')
        caches[k] = read_cache(path)
        bench = os.path.join(out, f'{k}-icount', 'bench.txt')
        if caches[k] and os.path.exists(bench) and os.path.getmtime(path) < os.path.getmtime(bench) - 3600:
            stale.append(NAME[k])
    if not any(caches.values()):
        return [], '\n'.join(f'- n/a: {cache_verdict_name(fn, what)}: no OUT_DIR/<kernel>/cache.txt '
                             '(cache-model plugin not run)' for fn, what in CACHE_VERDICTS)
    keys = sorted(set().union(*caches.values()))
    md = ['L1D behaviour (QEMU TCG cache-model plugin, OUT_DIR/<kernel>/cache.txt): misses '
          'per packet (accesses per packet, miss rate)'
          + (f'; older than that kernel\'s bench.txt by over an hour: {", ".join(stale)}' if stale else '')
          + ':\n',
          '| case | fn | base | RFC | series |', '|---|---|---|---|---|']

    def ccell(k, key):
        p = per_pkt(caches[k].get(key, []))
        if p is None:
            return '-'
        sp = f', spread {100 * p.spread:.1f}%' if p.spread is not None else ''
        rate = f'{100 * p.misses / p.accesses:.2f}%' if p.accesses else '-'
        return f'{p.misses:.2f} ({p.accesses:.1f}, {rate}{sp})'
    for key in keys:
        md.append(f'| {key[0]} | {key[1]} | ' + ' | '.join(ccell(k, key) for k in KERNELS) + ' |')
    md.append('')
    case = TARGET_CASE.split(':', 1)[1]
    verdicts = []
    for fn, what in CACHE_VERDICTS:
        name = cache_verdict_name(fn, what)
        pp = {k: per_pkt(caches[k].get((case, fn), [])) for k in KERNELS}
        if any(p is None for p in pp.values()):
            miss = ', '.join(NAME[k] for k, p in pp.items() if p is None)
            verdicts.append(f'- n/a: {name}: no "case={case} fn={fn}" line for {miss}')
            continue
        ok = cache_below(pp['series'], pp['base']) and cache_below(pp['series'], pp['rfc'])
        nums = ', '.join(f'{NAME[k]} {pp[k].misses:.3f}' for k in KERNELS)
        acc = ', '.join(f'{NAME[k]} {pp[k].accesses:.1f}' for k in KERNELS)
        sp = ', '.join(f'{NAME[k]} {100 * pp[k].spread:.1f}%' for k in KERNELS if pp[k].spread is not None)
        verdicts.append(f'- {"PASS" if ok else "FAIL"}: {name}: {nums} misses/pkt'
                        f'{f" (spread {sp})" if sp else ""}; accesses/pkt {acc}')
    return md, '\n'.join(verdicts)


# ---- verdicts ----

def verdicts_md(rows, files, rps, cache_verdict, det_bad) -> List[str]:
    res = {r.case: r for r in rows}
    md = ['## Target verdicts (series vs base; RFC reported, not judged)\n']
    # 1. the egress-drop NAPI poll
    r = res.get(TARGET_CASE)
    name = f'devmap egress drop ({TARGET_CASE}, softirq), NAPI poll cost: series/base <= {TARGET_RATIO}'
    if r is None or r.ratios['series'] is None:
        md.append(f'- n/a: {name}: the case is missing in base or series')
    else:
        s = r.ratios['series']
        ok = s.value <= TARGET_RATIO and s.claimed
        rfc = r.ratios['rfc']
        md.append(f'- {"PASS" if ok else "FAIL"}: {name}: {r.sums["base"].median:.1f} -> '
                  f'{r.sums["series"].median:.1f} = {s.value:.3f} (spread {100 * s.noise:.1f}%'
                  + ('' if s.claimed else ', within noise') + ')'
                  + (f'; RFC/base {rfc.value:.3f}' if rfc else ''))
    # 2. its return path
    name = f'return path of that poll (profile): series <= {RETURN_RATIO} x base'
    b, s = rps['base'].value, rps['series'].value
    if b is None or s is None or b <= 0:
        md.append(f'- n/a: {name}: {rps["series"].how if b is not None else rps["base"].how}')
    else:
        rfc = rps['rfc'].value
        md.append(f'- {"PASS" if s <= RETURN_RATIO * b else "FAIL"}: {name}: base {b:.1f}, '
                  f'series {s:.1f} = {s / b:.3f} x base (one profile run, no spread)'
                  + (f'; RFC {rfc:.1f} = {rfc / b:.3f} x base' if rfc is not None else ''))
    # 3. page_pool bench: NAPI-aware vs fast path, per kernel
    name = f'page_pool bench: NAPI-aware delegated return <= fast path + {100 * (PP_NAPI_MAX - 1):.0f}% (series)'
    per = {}
    for k in KERNELS:
        f, n = res.get(PP_FAST), res.get(PP_NAPI)
        if f and n and f.sums[k] and n.sums[k]:
            per[k] = (f.sums[k], n.sums[k], n.sums[k].median / f.sums[k].median)
    others = '; '.join(f'{NAME[k]} {per[k][2]:.3f}' for k in ('base', 'rfc') if k in per)
    if 'series' not in per:
        md.append(f'- n/a: {name}: no {PP_FAST} and {PP_NAPI} in the series run')
    else:
        fa, na, q = per['series']
        md.append(f'- {"PASS" if q <= PP_NAPI_MAX else "FAIL"}: {name}: {PP_NAPI} '
                  f'{na.median:.1f} ({100 * na.spread:.1f}%) / {PP_FAST} {fa.median:.1f} '
                  f'({100 * fa.spread:.1f}%) = {q:.3f}' + (f'; {others}' if others else ''))
    # 4. nothing else worse than +0.5%
    worse = [f'{r.case} {r.ratios["series"].value:.3f}' for r in rows
             if r.case != TARGET_CASE and r.unit.startswith('ns') and r.ratios['series']
             and r.ratios['series'].value > 1 + WORSE_MAX and r.ratios['series'].claimed]
    # pp_decide's process-context calls: 7.3 put those pages into the
    # lockless cache from process context (the unsafe case this series
    # removes); now they take the ring, which costs more by design.
    fixed = [w for w in worse if w.split()[0].endswith('/process')]
    worse = [w for w in worse if w not in fixed]
    judged = sum(1 for r in rows if r.ratios['series'] and r.case != TARGET_CASE)
    name = f'no other case worse than +{100 * WORSE_MAX:.1f}% (series/base, beyond 3x spread)'
    if not judged:
        md.append(f'- n/a: {name}: no case in both base and series')
    else:
        md.append(f'- {"PASS" if not worse else "FAIL"}: {name}: '
                  + (f'{judged} cases, none worse' if not worse else 'offenders: ' + ', '.join(worse)))
    if fixed:
        md.append('  - dearer by design, not counted (7.3 recycled these process-context returns '
                  'into the lockless cache; the series sends them to the ring): ' + ', '.join(fixed))
    # 5. memory behaviour
    md.append(cache_verdict)
    md.append(f'- {"PASS" if not det_bad else "FAIL"}: determinism (icount, synchronous test_run '
              f'cases {", ".join(SYNC_CASES)}: spread <= {100 * DETERMINISM_MAX_SPREAD:.0f}% in '
              'every kernel)' + (': ' + ', '.join(det_bad) if det_bad else ''))
    md.append('')
    return md


def plot(out, plot_rows):
    dat = os.path.join(out, 'bench.dat')
    with open(dat, 'w') as f:
        for i, (label, rfc, ser) in enumerate(plot_rows):
            def col(r):
                return '- -' if r is None else f'{r.value:.4f} {r.noise:.4f}'
            f.write(f'{i} "{label}" {col(rfc)} {col(ser)}\n')
    # one bar per kernel and case (RFC left, series right), the spread as
    # an error bar; a kernel without any ratio gets no bars
    plots = [f'"{dat}" using 1:(1/0):xtic(2) notitle']
    for col, dx, colour, title in ((3, -0.2, '#d08030', 'RFC / base'),
                                   (5, 0.2, '#3070c0', 'series / base')):
        if any(r[col // 2] for r in plot_rows):
            plots += [f'"{dat}" using ($1{dx:+}):{col} with boxes lc rgb "{colour}" title "{title}"',
                      f'"{dat}" using ($1{dx:+}):{col}:(${col}*${col + 1}) with yerrorbars '
                      'lc rgb "black" pt 0 notitle']
    plots.append('1 with lines lc rgb "red" notitle')
    gp = f'''set terminal pngcairo noenhanced size 1400,650
set output "{os.path.join(out, 'bench.png')}"
set title "RFC / base and series / base, cost per packet or op (lower is better)"
set datafile missing "-"
set style fill solid 0.6
set boxwidth 0.38
set xtics rotate by -40 font ",9"
set ylabel "ratio"
set grid ytics
set yrange [0.5:*]
set key top left
plot {", ".join(plots)}
'''
    subprocess.run(['gnuplot'], input=gp.encode(), check=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n', 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('out', metavar='OUT_DIR',
                    help='the bench output directory (bench.md, bench.dat, bench.png go there too)')
    out = ap.parse_args().out
    md, plot_rows, det_bad = [], [], []
    verdict = []
    for mode, title in (('icount', 'QEMU -icount shift=0, 1 vCPU: guest ns = guest instructions'),
                        ('wall', 'wall-clock under TCG emulation: NOISE, not performance'),
                        ('nic', 'real NIC (scripts/bench/bench-nic.sh): wall-clock, ns/pkt = 1e9/pps')):
        files = {k: read_bench(os.path.join(out, f'{k}-{mode}', 'bench.txt')) for k in KERNELS}
        rows, bad = table(files, mode)
        if not rows and not (mode == 'icount' and any(f.profile for f in files.values())):
            continue
        note = next((files[k].note for k in KERNELS if files[k].note), None)
        if mode == 'nic' and note:
            title = f'scripts/bench/bench-nic.sh, {note} (ns/pkt = 1e9/pps; napi: rows are NAPI poll cost)'
        det_bad += bad
        md.append(f'### {title}\n')
        md.append('Kernels: ' + ', '.join(f'{NAME[k]} ' + ('ran' if files[k].present else 'not run')
                                          for k in KERNELS) + '.\n')
        md += table_md(files, rows)
        if mode in ('icount', 'nic'):
            plot_rows += [(r.case if mode == 'icount' else f'{mode}:{r.case}',
                           r.ratios['rfc'], r.ratios['series'])
                          for r in rows if r.ratios['rfc'] or r.ratios['series']]
        md += napi_md(files, rows)
        if mode == 'icount':  # profile, cache model, verdicts: instructions, icount only
            cals = {k: calibration(files[k].profile) for k in KERNELS}
            rps, rp_notes = return_paths({k: files[k].profile for k in KERNELS}, cals)
            md += profile_md(files, cals, rps, rp_notes)
            cmd, cache_verdict = cache_md(out)
            md += cmd
            verdict = (rows, files, rps, cache_verdict)
    if verdict:
        md += verdicts_md(*verdict, det_bad)
    else:
        md.append('## Target verdicts\n\n- n/a: no icount run in this directory\n')
    text = '\n'.join(md)
    with open(os.path.join(out, 'bench.md'), 'w') as f:
        f.write(text)
    print(text)
    if plot_rows:
        plot(out, plot_rows)
    return 1 if det_bad else 0


if __name__ == '__main__':
    sys.exit(main())
