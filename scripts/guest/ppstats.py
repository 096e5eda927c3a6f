#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Sum the page_pool stats of one netdev over netlink (netdev family).

usage: ppstats.py [--ksrc DIR] IFNAME

Prints one JSON object: pools, cached, ring, ring_full, cache_full,
released_refcnt, alloc_fast, alloc_slow, inflight. Uses the kernel's own
ynl library and netdev spec, found by ynlfind.py. Exits 1 with one line
when they cannot be found or read.
"""
import argparse
import json
import os
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ynlfind  # pylint: disable=wrong-import-position


def netdev_pp_stats(ifname, ksrc=None, ynl=None):
    """The page_pool stats of IFNAME's pools, summed (ynl, netdev family)."""
    if ynl is None:
        ynl = ynlfind.family('netdev', ksrc)
    ifindex = socket.if_nametoindex(ifname)
    out = {'ifindex': ifindex, 'pools': 0, 'cached': 0, 'ring': 0,
           'ring_full': 0, 'cache_full': 0, 'released_refcnt': 0,
           'alloc_fast': 0, 'alloc_slow': 0, 'inflight': 0}
    for st in ynl.dump('page-pool-stats-get', {}):
        if st.get('info', {}).get('ifindex') != ifindex:
            continue
        out['pools'] += 1
        out['cached'] += st.get('recycle-cached', 0)
        out['ring'] += st.get('recycle-ring', 0)
        out['ring_full'] += st.get('recycle-ring-full', 0)
        out['cache_full'] += st.get('recycle-cache-full', 0)
        out['released_refcnt'] += st.get('recycle-released-refcnt', 0)
        out['alloc_fast'] += st.get('alloc-fast', 0)
        out['alloc_slow'] += st.get('alloc-slow', 0)
    for pp in ynl.dump('page-pool-get', {}):
        if pp.get('ifindex') == ifindex:
            out['inflight'] += pp.get('inflight', 0)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--ksrc', help='a kernel tree (default: ynlfind.py)')
    ap.add_argument('ifname')
    args = ap.parse_args()
    try:
        print(json.dumps(netdev_pp_stats(args.ifname, args.ksrc)))
    except Exception as e:  # pylint: disable=broad-except
        print(f'ppstats: cannot read the page_pool stats of {args.ifname}: {e!r}',
              file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
