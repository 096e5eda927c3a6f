#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Find the kernel's ynl library and netlink specs inside the harness VM.

The one way every guest script (ppstats, napimode, benchsnap, stress, demo)
gets a YnlFamily. Candidates, first match wins:
  1. $KSRC, a kernel source tree (tools/net/ynl/pyynl,
     Documentation/netlink/specs)
  2. /variant/src, the variant's source tree (the perf and base builds)
  3. /variant/kselftest/net/lib, the kselftest install's copy (ynl/pyynl,
     specs): the only one the debug kernel that make and make test boot has

usage: ynlfind.py   prints "PYYNL_DIR SPECS_DIR", or one line naming what
                    was tried and exits 1
"""
import os
import sys


def candidates(ksrc=None):
    """(pyynl dir, specs dir) pairs, in the order they are tried."""
    out = []
    for tree in (ksrc, os.environ.get('KSRC'), '/variant/src'):
        if tree:
            out.append((os.path.join(tree, 'tools/net/ynl/pyynl'),
                        os.path.join(tree, 'Documentation/netlink/specs')))
    out.append(('/variant/kselftest/net/lib/ynl/pyynl',
                '/variant/kselftest/net/lib/specs'))
    return out


def locate(ksrc=None):
    """The first (pyynl dir, specs dir) that has lib/ynl.py and netdev.yaml."""
    tried = candidates(ksrc)
    for pyynl, specs in tried:
        if (os.path.isfile(os.path.join(pyynl, 'lib/ynl.py')) and
                os.path.isfile(os.path.join(specs, 'netdev.yaml'))):
            return pyynl, specs
    raise FileNotFoundError(
        'no ynl library with the netdev spec in ' +
        ', '.join(p for p, _ in tried) +
        ' (the kernel build installs it with the kselftests: scripts/build.sh)')


def family(name='netdev', ksrc=None):
    """A YnlFamily of NAME (netdev by default)."""
    pyynl, specs = locate(ksrc)
    # /variant is read-only: compile the library once, under /tmp
    if not sys.pycache_prefix:
        sys.pycache_prefix = '/tmp/ynl-pycache'
    if pyynl not in sys.path:
        sys.path.insert(0, pyynl)
    from lib import YnlFamily  # pylint: disable=import-outside-toplevel
    return YnlFamily(os.path.join(specs, f'{name}.yaml'), schema='')


def main():
    try:
        print(' '.join(locate()))
    except FileNotFoundError as e:
        print(f'ynlfind: {e}', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
