#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Snapshots for the NAPI-cost benchmark cases (VM and real NIC).

usage: benchsnap.py snap [--napi-dir D] [--pp IFNAME ...]
       benchsnap.py line CASE REP BEFORE AFTER --pkts IF --cost IF[,IF]
                         [--pp IF] [--pps N]
       benchsnap.py nic CASE REP BEFORE AFTER --pps N [--pp IF]
       benchsnap.py rate [LABEL ...] < xdp-bench output
       benchsnap.py profile CASE FN PACKETS < snapshot

snap prints one JSON object: the napi_cost accumulators of every object
pinned under --napi-dir (default /sys/fs/bpf/napi_cost; one subdir per
poll function, maps in <subdir>/m) keyed by ifname ("fn:<subdir>" for a
-DPLAIN object), and the page_pool
recycle counters of each --pp netdev (netlink page-pool stats through the
kernel tree's ynl when KSRC has it, else ethtool -S rx_pp_recycle_*).

line compares two snapshots (files) and prints one result line:
  case=napi:CASE rep=REP value=<ns per packet in the polls of --cost>
  unit=ns/pkt cached=<n> ring=<n> pkts=<n> ppoll=<packets per poll>
  [pps=<sender rate>]
value divides the poll time of the --cost netdevs by the packets --pkts's
polls reported: a redirect into veth costs the virtio poll plus the veth
poll that consumes the frames. nic prints the real-NIC line
(case=nic:CASE ... value=<pps> unit=pps cached= ring=), rate the mean
rx/s of xdp-bench lines, profile one -DPLAIN function's per-packet share.
"""
import argparse
import glob
import json
import os
import re
import socket
import subprocess
import sys

# ynlfind.py (and ppstats.py) live with the core's guest scripts: scripts/guest/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', '..', 'guest'))
from ppstats import netdev_pp_stats  # noqa: E402 pylint: disable=wrong-import-position
import ynlfind  # noqa: E402 pylint: disable=wrong-import-position


def napi_acc(napi_dir):
    out = {}
    for path in sorted(glob.glob(os.path.join(napi_dir, '*', 'm', 'napi_cost_acc'))):
        raw = subprocess.run(['bpftool', '-j', 'map', 'dump', 'pinned', path],
                             check=True, capture_output=True, text=True).stdout
        for ent in json.loads(raw):
            ent = ent.get('formatted', ent)
            key, val = int(ent['key']), ent['value']
            if key == 0:  # -DPLAIN object: one function, key 0
                name = 'fn:' + path.split(os.sep)[-3]
            else:
                try:
                    name = socket.if_indextoname(key)
                except OSError:
                    name = str(key)
            acc = out.setdefault(name, {'ns': 0, 'polls': 0, 'pkts': 0})
            for k in acc:
                acc[k] += int(val[k])
    return out


def pp_ynl(ifname):
    try:
        ynlfind.locate()
    except FileNotFoundError:
        return None
    res = netdev_pp_stats(ifname)
    return res if res['pools'] else None


def pp_ethtool(ifname):
    res = {'pools': 0, 'cached': 0, 'ring': 0}
    txt = subprocess.run(['ethtool', '-S', ifname], capture_output=True,
                         text=True).stdout
    # the netdev-wide sums only (mlx5 also prints per-ring rxN_pp_*)
    for m in re.finditer(r'^\s*rx_pp_recycle_(cached|ring):\s*(\d+)$', txt, re.M):
        res['pools'] = 1
        res[m.group(1)] += int(m.group(2))
    return res


def snap(args):
    out = {'napi': napi_acc(args.napi_dir), 'pp': {}}
    for ifname in args.pp or []:
        try:
            pp = pp_ynl(ifname)
        except Exception:  # pylint: disable=broad-except # e.g. no PAGE_POOL_STATS
            pp = None
        out['pp'][ifname] = pp or pp_ethtool(ifname)
    print(json.dumps(out))
    return 0


def load_pair(args):
    return json.load(open(args.before)), json.load(open(args.after))


def pp_delta(b, a, ifname):
    """'cached=<n> ring=<n>' between two snapshots ('-' without stats)."""
    pb, pa = b['pp'].get(ifname or ''), a['pp'].get(ifname or '')
    if not (pb and pa and pa['pools']):
        return 'cached=- ring=-'
    return f'cached={pa["cached"] - pb["cached"]} ring={pa["ring"] - pb["ring"]}'


def line(args):
    b, a = load_pair(args)
    zero = {'ns': 0, 'polls': 0, 'pkts': 0}

    def d(ifname, key):
        return a['napi'].get(ifname, zero)[key] - b['napi'].get(ifname, zero)[key]

    pkts, polls = d(args.pkts, 'pkts'), d(args.pkts, 'polls')
    ns = sum(d(i, 'ns') for i in args.cost.split(','))
    if pkts <= 0:
        print(f'# napi:{args.case} rep={args.rep}: no packet reached {args.pkts}')
        return 1
    extra = f' pps={args.pps}' if args.pps else ''
    print(f'case=napi:{args.case} rep={args.rep} value={ns / pkts:.1f} unit=ns/pkt '
          f'{pp_delta(b, a, args.pp)} pkts={pkts} ppoll={pkts / max(polls, 1):.1f}{extra}')
    return 0


def nic(args):
    b, a = load_pair(args)
    print(f'case=nic:{args.case} rep={args.rep} value={args.pps} unit=pps {pp_delta(b, a, args.pp)}')
    return 0


def rate(args):
    """Mean of xdp-bench's top-level "N rx/s" lines on stdin. xdp-bench
    prints "%-23s%'10.0f rx/s": a long label and a big rate touch
    ("enp1s0f0np0->enp1s0f0np014,435,123 rx/s"), so a known label is cut
    off by name before the number is read."""
    labels = sorted(args.labels, key=len, reverse=True)
    vals = []
    for text in sys.stdin:
        if text[:1].isspace() or ' rx/s' not in text:
            continue
        rest = next((text[len(lab):] for lab in labels if text.startswith(lab)), None)
        if rest is None:
            rest = text.split(None, 1)[1] if ' ' in text.strip() else ''
        m = re.match(r'\s*([0-9][0-9,]*) rx/s', rest)
        if m:
            vals.append(float(m.group(1).replace(',', '')))
    print('%.0f' % (sum(vals) / len(vals)) if vals else 0)
    return 0


def profile(args):
    """One -DPLAIN function's share per packet, from a snapshot on stdin."""
    v = json.load(sys.stdin)['napi'].get('fn:' + args.fn, {'ns': 0, 'polls': 0})
    print(f'profile case={args.case} fn={args.fn} calls_per_pkt={v["polls"] / args.packets:.3f} '
          f'ns_per_pkt={v["ns"] / args.packets:.1f}')
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    s = sub.add_parser('snap')
    s.add_argument('--napi-dir', default='/sys/fs/bpf/napi_cost')
    s.add_argument('--pp', action='append')
    for cmd in ('line', 'nic'):
        s = sub.add_parser(cmd)
        for k in ('case', 'rep', 'before', 'after'):
            s.add_argument(k)
        s.add_argument('--pp')
        s.add_argument('--pps', required=cmd == 'nic')
        if cmd == 'line':
            s.add_argument('--pkts', required=True)
            s.add_argument('--cost', required=True)
    s = sub.add_parser('rate')
    s.add_argument('labels', nargs='*')
    s = sub.add_parser('profile')
    s.add_argument('case')
    s.add_argument('fn')
    s.add_argument('packets', type=int)
    args = ap.parse_args()
    return {'snap': snap, 'line': line, 'nic': nic, 'rate': rate,
            'profile': profile}[args.cmd](args)


if __name__ == '__main__':
    sys.exit(main())
