#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Snapshots for the NAPI-cost benchmark cases (VM and real NIC).

usage: benchsnap.py snap [--napi-dir D] [--pp IFNAME ...]
       benchsnap.py line CASE REP BEFORE AFTER --pkts IF --cost IF[,IF]
                         [--pp IF] [--pps N]

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
poll that consumes the frames.
"""
import argparse
import glob
import json
import os
import re
import socket
import subprocess
import sys


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
    ksrc = os.environ.get('KSRC', '/variant/src')
    lib = os.path.join(ksrc, 'tools/net/ynl/pyynl')
    spec = os.path.join(ksrc, 'Documentation/netlink/specs/netdev.yaml')
    if not (os.path.isdir(lib) and os.path.exists(spec)):
        return None
    sys.path.insert(0, lib)
    from lib import YnlFamily  # pylint: disable=import-outside-toplevel
    ifindex = socket.if_nametoindex(ifname)
    res = {'pools': 0, 'cached': 0, 'ring': 0}
    for st in YnlFamily(spec, schema='').dump('page-pool-stats-get', {}):
        if st.get('info', {}).get('ifindex') != ifindex:
            continue
        res['pools'] += 1
        res['cached'] += st.get('recycle-cached', 0)
        res['ring'] += st.get('recycle-ring', 0)
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


def line(args):
    b = json.load(open(args.before))
    a = json.load(open(args.after))
    zero = {'ns': 0, 'polls': 0, 'pkts': 0}

    def d(ifname, key):
        return a['napi'].get(ifname, zero)[key] - b['napi'].get(ifname, zero)[key]

    pkts, polls = d(args.pkts, 'pkts'), d(args.pkts, 'polls')
    ns = sum(d(i, 'ns') for i in args.cost.split(','))
    if pkts <= 0:
        print(f'# napi:{args.case} rep={args.rep}: no packet reached {args.pkts}')
        return 1
    cached = ring = '-'
    if args.pp and args.pp in a['pp']:
        cached = a['pp'][args.pp]['cached'] - b['pp'][args.pp]['cached']
        ring = a['pp'][args.pp]['ring'] - b['pp'][args.pp]['ring']
    extra = f' pps={args.pps}' if args.pps else ''
    print(f'case=napi:{args.case} rep={args.rep} value={ns / pkts:.1f} unit=ns/pkt '
          f'cached={cached} ring={ring} pkts={pkts} ppoll={pkts / max(polls, 1):.1f}{extra}')
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    s = sub.add_parser('snap')
    s.add_argument('--napi-dir', default='/sys/fs/bpf/napi_cost')
    s.add_argument('--pp', action='append')
    s = sub.add_parser('line')
    for k in ('case', 'rep', 'before', 'after'):
        s.add_argument(k)
    s.add_argument('--pkts', required=True)
    s.add_argument('--cost', required=True)
    s.add_argument('--pp')
    s.add_argument('--pps')
    args = ap.parse_args()
    return snap(args) if args.cmd == 'snap' else line(args)


if __name__ == '__main__':
    sys.exit(main())
