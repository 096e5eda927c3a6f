#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Put the NAPIs of a netdev's page_pools into one poll mode (netdev family).

usage: napimode.py [--ksrc DIR] IFNAME softirq|threaded|busypoll

softirq   NAPI threaded mode off, napi_defer_hard_irqs and
          gro_flush_timeout 0 (the default: polled from NET_RX softirq)
threaded  napi-set threaded=enabled on each NAPI that a page_pool of
          IFNAME names (not the whole device: turning threaded mode off
          for a NAPI that was never enabled, e.g. virtio_net's tx NAPIs
          with tx-frames 0, waits forever in 7.3's napi_stop_kthread())
busypoll  softirq, plus napi_defer_hard_irqs 100 and gro_flush_timeout
          10 ms: the IRQ stays masked while a busy poller
          (net-core/bench/busy_poll.c) polls the NAPI

Prints the NAPI ids it set, fails when IFNAME has no page_pool with a NAPI
or a NAPI did not take the mode (threaded: no kthread pid).
Uses the kernel's own ynl library and netdev spec (ynlfind.py).
"""
import argparse
import os
import socket
import sys

# ynlfind.py (and ppstats.py) live with the core's guest scripts: scripts/guest/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', '..', 'guest'))
import ynlfind  # noqa: E402 pylint: disable=wrong-import-position

DEFER_HARD_IRQS = 100
GRO_FLUSH_TIMEOUT = 10 * 1000 * 1000  # ns


def sysfs_set(ifname, name, val):
    with open(f'/sys/class/net/{ifname}/{name}', 'w', encoding='ascii') as f:
        f.write(f'{val}\n')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n', maxsplit=1)[0])
    ap.add_argument('--ksrc', help='a kernel tree (default: ynlfind.py)')
    ap.add_argument('ifname')
    ap.add_argument('mode', choices=('softirq', 'threaded', 'busypoll'))
    args = ap.parse_args()

    try:
        ynl = ynlfind.family('netdev', args.ksrc)
    except FileNotFoundError as e:
        print(f'napimode: {e}', file=sys.stderr)
        return 1
    ifindex = socket.if_nametoindex(args.ifname)
    ids = sorted({pp['napi-id'] for pp in ynl.dump('page-pool-get', {})
                  if pp.get('ifindex') == ifindex and pp.get('napi-id')})
    if not ids:
        print(f'napimode: {args.ifname} has no page_pool with a NAPI', file=sys.stderr)
        return 1
    want = 'enabled' if args.mode == 'threaded' else 'disabled'
    for napi_id in ids:
        if ynl.do('napi-get', {'id': napi_id}).get('threaded') != want:
            ynl.do('napi-set', {'id': napi_id, 'threaded': want})
        napi = ynl.do('napi-get', {'id': napi_id})
        if napi.get('threaded') != want or (want == 'enabled') != ('pid' in napi):
            print(f'napimode: NAPI {napi_id} did not take threaded={want}: {napi}',
                  file=sys.stderr)
            return 1
    busy = args.mode == 'busypoll'
    sysfs_set(args.ifname, 'napi_defer_hard_irqs', DEFER_HARD_IRQS if busy else 0)
    sysfs_set(args.ifname, 'gro_flush_timeout', GRO_FLUSH_TIMEOUT if busy else 0)
    print(f'napimode: {args.ifname} {args.mode}: NAPI {" ".join(map(str, ids))}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
