#!/usr/bin/env bash
# shell.sh - an interactive VM on a built kernel, for poking at a failure:
# the guest root, the two virtio NICs (eth0, eth1, wired back to back),
# this repo at /xdp-pp, the kernel's build (kselftests, KUnit module) at
# /variant, and a scratch dir at /out. The same VM as scripts/vm.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# the kernel make test boots (lib.sh's default is the benchmark's perf)
export FLAVOUR=${FLAVOUR:-debug}
# shellcheck source=lib.sh
. "$here/lib.sh"

usage() {
	cat <<'U'
usage: scripts/shell.sh [base|series]

Boots the series (default) or base kernel of $FLAVOUR (default debug, the
kernel `make test` runs) under TCG and gives a root shell on the terminal.
The kernel must be built (make test / scripts/build.sh; a missing one is
built first). Leave with Ctrl-D (or `poweroff -f`).
In the guest: /xdp-pp (this repo, read-only), /variant (the variant root:
/variant/build, /variant/kselftest, /variant/pp_decide), /out (host:
$CACHE/out/shell, rw).
Useful first commands:
  bash /xdp-pp/scripts/guest/init.sh true   # bpffs, debugfs, tracefs
  bash /xdp-pp/scripts/guest/run-tests.sh   # what make test runs
Environment: FLAVOUR, VM_CPUS, VM_MEM, VM_APPEND, VM_QEMU, KDIR.
Exit: QEMU's status; 1 when stdin is not a terminal.
U
}
case "${1:-}" in
-h|--help) usage; exit 0 ;;
''|series) variant=series ;;
base) variant=base ;;
*) usage >&2; exit 1 ;;
esac
# one run at a time; exec vng below keeps the lock for the session
run_lock shell "scripts/shell.sh $variant"
[ -t 0 ] || die "shell: stdin is not a terminal (run make shell from an interactive shell)"
need_tool vng "sudo scripts/setup-host.sh"
build=$(flavour_root "$(variant_root "$(kernel_repo)")" "$variant")/build
[ -f "$build/arch/x86/boot/bzImage" ] || "$here/build.sh" "$variant" >/dev/null
guest=$("$here/guest-root.sh")
out=$OUTS/shell
tools=$TOOLS
mkdir -p "$out" "$tools"
vng_args "$build" "$out" "$tools" "$guest"
log "shell: $variant kernel ($FLAVOUR), $build; Ctrl-D to leave"
cd "$guest"
exec "${VNG[@]}"
