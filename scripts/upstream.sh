#!/usr/bin/env bash
# upstream.sh - upstream's own tests of the code the series changes, on the
# base and on the series debug kernel with the same test binaries; their
# per-test verdicts compared. `make upstream`, and a check of `make check`;
# not in make test: its cold path is ~56 min already and test_progs alone
# builds in ~15 min here (docs/timings.md, docs/results.md).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export FLAVOUR=${FLAVOUR:-debug}
# shellcheck source=lib.sh
. "$here/lib.sh"

usage() {
	cat <<'U'
usage: scripts/upstream.sh

Upstream's own tests, base against series. Builds (or reuses), in
$CACHE/upstream from UP_TREE's sources (series; the series changes none
of them), net's busy_poller (libynl) and bpf selftests' test_progs (909 s
here, 2026-12-04):
  make -C tools/testing/selftests/bpf OUTPUT=$CACHE/upstream/bpf
    CLANG=$UP_CLANG VMLINUX_BTF=<.BTF of the kernel> BPF_STRICT_BUILD=0
    SKIP_DOCS=1 LIBARENA_SKEL= test_progs
(a BPF program the clang cannot build is left out: "SKIP (not built)"),
and per kernel bpf_testmod.ko and, as external modules, what its config
lacks of bonding (xdp_bonding), sch_ingress and cls_bpf (clsact, tc).
Boots the base and the series kernel of $FLAVOUR in turn (built, of the
base and of patches/: scripts/build.sh), each running guest/upstream.sh:
test_progs -a UP_BPF_TESTS; the drivers/net tests UP_DRV_TESTS
(napi_threaded.py on netdevsim, netpoll_basic.py on the virtio NIC pair
as make test's drv-net test); net/busy_poll_test.sh (netdevsim). The
debug config has what they need (selftests/config.upstream); ns_xsk_*
are left out by default (their verdicts flap under TCG on both kernels).
Prints a row per test, and per subtest whose verdicts differ (PASS, FAIL,
SKIP); $OUT (default $CACHE/out/upstream): table.txt, {base,series}/
(results.tap, test_progs.log, drv_*.tap, console.log, dmesg.log).
Environment: UP_CLANG (clang-16 when installed, else clang: clang-14
cannot build xdp_context_test_run's program), UP_TREE, UP_BPF_TESTS
(test_progs -a list; empty: none), UP_DRV_TESTS (nsim:T or nic:T, T a
drivers/net test), UP_BPF_TIMEOUT (2400 s),
UP_DRV_TIMEOUT (1500 s a test), VM_TIMEOUT (3600 s a boot), OUT, JOBS,
KDIR, RUN_LOCK_WAIT=1 (wait for a run already going).
One run at a time (run lock); the builds under the build lock.
Exit: 0 every test has the same verdict on both kernels; 1 one differs,
or a VM gave no results; 4 a prerequisite is absent (a kernel not built
or not of patches/, no clang).
U
}
case "${1:-}" in -h|--help) usage; exit 0 ;; '') ;; *) usage >&2; exit 1 ;; esac

UP=$CACHE/upstream
UP_TREE=${UP_TREE:-series}
# ns_xsk_skb and ns_xsk_drv are left out: under TCG their subtests pass
# or fail from run to run on either kernel (timing), so they compare noise
UP_BPF_TESTS=${UP_BPF_TESTS-xdp_do_redirect,xdp_devmap_attach,xdp_cpumap_attach,xdp_bonding,xdp_context_test_run,xdp_context_veth,xdp,xdp_adjust_tail,xdp_adjust_frags,xdp_attach,xdp_bpf2bpf,xdp_info,xdp_link,xdp_metadata,xdp_noinline,xdp_pull_data,xdp_veth_redirect,xdp_veth_broadcast_redirect,xdp_veth_egress,xdp_vlan_change,xdp_vlan_remove}
# DEV:TEST - nsim: NETIF unset, lib/py makes a netdevsim device (with the
# queue count the test asks for: vng's looped virtio NICs have one queue);
# nic: NETIF and the remote netns on the virtio pair
UP_DRV_TESTS=${UP_DRV_TESTS-nsim:napi_threaded.py nic:netpoll_basic.py}
# clang-14 leaves test_xdp_meta's __builtin_memcmp a call to memcmp (its
# skeleton, and so xdp_context_test_run, is not built); clang-16 expands it
UP_CLANG=${UP_CLANG:-$(command -v clang-16 || echo clang)}
command -v "$UP_CLANG" >/dev/null ||
	skip "no $UP_CLANG (fix: apt-get install clang-16; bookworm's clang-14 leaves xdp_context_test_run out)"
for t in rsync vng; do command -v $t >/dev/null || skip "no $t (fix: sudo scripts/setup-host.sh)"; done
run_lock upstream "scripts/upstream.sh"
trap 'stop_children' EXIT; trap 'log "upstream: interrupted, stopping"; stop_children; trap - INT; kill -INT $$' INT
trap 'stop_children; exit 143' TERM HUP

# genuine V: V's build is of its tree's HEAD (build.sh stamps the HEAD's
# author date into UTS_VERSION) and that HEAD is the base, or patches/'
# last patch for series (not a mutation or PATCHES= experiment left there)
genuine() {
	local v=$1 last
	grep -qF "$(git -C "${S[$v]}" log -1 --format=%aD)\"" \
		"${B[$v]}/include/generated/utsversion.h" 2>/dev/null || return 1
	if [ "$v" = base ]; then
		[ "$(git -C "${S[$v]}" rev-parse HEAD)" = "$(base_commit "${KDIR:-$BASE_REPO}")" ]
	else
		last=$(series_patches | tail -n 1)
		[ "$(git -C "${S[$v]}" show HEAD | git patch-id --stable | cut -d' ' -f1)" = \
		  "$(git patch-id --stable < "$last" | cut -d' ' -f1)" ]
	fi
}
kid() { cat "${B[$1]%/build}/build.id" 2>/dev/null || stat -c %Y "${B[$1]}/vmlinux"; }

vroot=$(cache_vroot)
declare -A B S
for v in base series; do
	B[$v]=$(flavour_root "$vroot" $v)/build
	S[$v]=$vroot/$v/src
	if [ ! -f "${B[$v]}/vmlinux" ] || [ ! -f "${B[$v]}/Module.symvers" ] ||
	   [ ! -d "${B[$v]%/build}/kselftest/drivers/net" ]; then
		skip "no $FLAVOUR $v kernel with kselftests in ${B[$v]} (fix: FLAVOUR=$FLAVOUR scripts/build.sh $v)"
	fi
	[ -e "${S[$v]}/.git" ] || skip "no $v tree in ${S[$v]} (fix: scripts/tree.sh $v)"
	genuine $v || skip "the $FLAVOUR $v build is not of $v as patches/ has it (tree HEAD: $(git -C "${S[$v]}" log -1 --format='%h %s')) (fix: FLAVOUR=$FLAVOUR scripts/build.sh $v)"
	log "upstream: $v: $(git -C "${S[$v]}" log -1 --format='%h %s'), $(kid $v)"
done

# ---- builds, one at a time with the kernel builds ----
mkdir -p "$UP" && exec 9>>"$BUILD_LOCK"
lock_take 9 "$BUILD_LOCK" build "scripts/upstream.sh (test_progs, modules)${XDP_PP_RUN:+ for $XDP_PP_RUN}"
src=$UP/src
# the sources of test_progs and busy_poller (the series changes none:
# base and series agree)
want=$(git -C "${S[$UP_TREE]}" rev-parse HEAD:tools/testing/selftests/bpf HEAD:tools/lib \
	HEAD:tools/bpf HEAD:tools/include HEAD:kernel/bpf/disasm.c HEAD:MAINTAINERS \
	HEAD:include/uapi |
	sha256sum | cut -c1-16)
if [ "$(cat "$UP/src.stamp" 2>/dev/null)" != "$want" ]; then
	# and what they use outside tools/: disasm.c, pci_ids.h, bpf_doc.py, YNL
	# specs and the uapi headers libynl includes, and MAINTAINERS: YNL's
	# ynl_gen_c.py finds the tree's root by it and, without it, loops for
	# ever (find_kernel_root())
	rm -rf "$src" "$UP/vmlinux.btf" "$UP/net" && mkdir -p "$src"
	git -C "${S[$UP_TREE]}" archive HEAD tools scripts kernel/bpf/disasm.c \
		kernel/bpf/disasm.h include/linux/pci_ids.h include/uapi \
		Documentation/netlink MAINTAINERS | tar -x -C "$src"
	echo "$want" > "$UP/src.stamp"
fi
# test_progs, and the modules it loads: only when UP_BPF_TESTS names tests
if [ -n "$UP_BPF_TESTS" ]; then
	bpfdir=$src/tools/testing/selftests/bpf
	# the kernel's BTF, copied: vmlinux.h is made from it (the same for base
	# and series: the series changes no type), and a kernel build rewriting
	# vmlinux under a running make would break it. Its types follow the
	# config: a new config, a new copy (and test_progs built again)
	cfg=$(grep '^CONFIG_' "${B[$UP_TREE]}/.config" | sha256sum | cut -c1-16)
	if [ ! -s "$UP/vmlinux.btf" ] || [ "$(cat "$UP/btf.stamp" 2>/dev/null)" != "$cfg" ]; then
		objcopy --dump-section .BTF="$UP/vmlinux.btf" "${B[$UP_TREE]}/vmlinux" /dev/null ||
			die "upstream: no .BTF in ${B[$UP_TREE]}/vmlinux (fix: CONFIG_DEBUG_INFO_BTF, rebuild)"
		echo "$cfg" > "$UP/btf.stamp"
	fi
	stamp="$want $("$UP_CLANG" -dumpversion) $cfg"
	if [ "$(cat "$UP/bpf.stamp" 2>/dev/null)" != "$stamp" ]; then
		# make does not see a new compiler or source archive: from scratch
		rm -rf "$UP/bpf" && mkdir -p "$UP/bpf"
		log "upstream: building test_progs ($UP_CLANG $("$UP_CLANG" -dumpversion); ~15 min here)"
		t0=$(date +%s)
		# LIBARENA_SKEL=: libarena needs clang >= 19 (BPF address space
		# casts) and is not optional in the Makefile; only its own tests use it
		make -C "$bpfdir" OUTPUT="$UP/bpf" CLANG="$UP_CLANG" VMLINUX_BTF="$UP/vmlinux.btf" \
			BPF_STRICT_BUILD=0 SKIP_DOCS=1 LIBARENA_SKEL= -j"$JOBS" test_progs \
			> "$UP/bpf.log" 2>&1 ||
			{ tail -20 "$UP/bpf.log" >&2; die "upstream: test_progs build failed ($UP/bpf.log)"; }
		log "upstream: test_progs built in $(( $(date +%s) - t0 )) s; left out: $(grep -c 'SKIP-BPF' "$UP/bpf.log" || true) BPF objects, $(grep -c 'SKIP-TEST' "$UP/bpf.log" || true) tests ($UP/bpf.log)"
		echo "$stamp" > "$UP/bpf.stamp"
	fi
	for v in base series; do
		# what test_progs needs and the kernel's config lacks, as external
		# modules: bonding always (built in, it makes bond0 at boot); clsact
		# and cls_bpf only for a flavour without selftests/config.upstream
		d=$UP/kmods/$v c=${B[$v]}/.config mods=(testmod) sched=()
		grep -q '^CONFIG_BONDING=' "$c" || mods+=(bonding)
		grep -q '^CONFIG_NET_SCH_INGRESS=' "$c" || sched+=(sch_ingress)
		grep -q '^CONFIG_NET_CLS_BPF=' "$c" || sched+=(cls_bpf)
		[ ${#sched[@]} = 0 ] || mods+=(sched)
		[ "$(cat "$d.stamp" 2>/dev/null)" != "$(kid $v) ${mods[*]} ${sched[*]}" ] || continue
		log "upstream: ${mods[*]} ${sched[*]} for the $v kernel"
		rm -rf "$d" && mkdir -p "$d/sched"
		cp -r "$bpfdir/test_kmods" "$d/testmod"
		[[ " ${mods[*]} " != *" bonding "* ]] || cp -r "${S[$v]}/drivers/net/bonding" "$d/bonding"
		for m in "${sched[@]}"; do
			cp "${S[$v]}/net/sched/$m.c" "$d/sched/" && echo "obj-m += $m.o" >> "$d/sched/Kbuild"
		done
		for m in "${mods[@]}"; do
			make -C "${S[$v]}" O="${B[$v]}" M="$d/$m" CONFIG_BONDING=m CC="ccache gcc" \
				modules >> "$d.log" 2>&1 ||
				{ tail -20 "$d.log" >&2; die "upstream: $m for $v failed (log: $d.log)"; }
			cp "$d/$m"/*.ko "$d/"
		done
		echo "$(kid $v) ${mods[*]} ${sched[*]}" > "$d.stamp"
	done
else
	log "upstream: no test_progs tests (UP_BPF_TESTS empty): test_progs not built"
fi
# busy_poller (libynl, netdev family only). Its output path is the
# target: the Makefile attaches the YNL rules to it, not to the name
if [ ! -x "$UP/net/busy_poller" ]; then
	mkdir -p "$UP/net"; make -C "$src/tools/testing/selftests/net" OUTPUT="$UP/net" \
		KHDR_INCLUDES="-isystem ${B[$UP_TREE]}/usr/include" "$UP/net/busy_poller" \
		> "$UP/net.log" 2>&1 ||
		{ tail -20 "$UP/net.log" >&2; die "upstream: busy_poller build failed ($UP/net.log)"; }
fi
cp "$src/tools/testing/selftests/net/busy_poll_test.sh" "$UP/net/"
exec 9>&-

# ---- one boot per kernel ----
out=${OUT:-$OUTS/upstream}
rm -rf "$out"
novm=''
for v in base series; do
	mkdir -p "$out/$v"
	t0=$(date +%s) rc=0
	VM_TOOLS=$UP VM_TIMEOUT=${VM_TIMEOUT:-3600} "$here/vm.sh" "${B[$v]}" "$out/$v" \
		env UP_BPF_TESTS="$UP_BPF_TESTS" UP_DRV_TESTS="$UP_DRV_TESTS" \
		UP_BPF_TIMEOUT="${UP_BPF_TIMEOUT:-2400}" UP_DRV_TIMEOUT="${UP_DRV_TIMEOUT:-1500}" \
		bash /xdp-pp/scripts/guest/upstream.sh "$v" || rc=$?
	res=$out/$v/results.tap
	[ -f "$res" ] || { echo "not ok - vm: no results (exit $rc)" > "$res"; novm+=" $v"; }
	if grep -q '^splat: 0 unexpected' "$out/$v/splats.txt" 2>/dev/null; then echo "ok - kernel log"
	else echo "not ok - kernel log (splats or no log: $out/$v/splats.txt)"; fi >> "$res"
	log "upstream: $v kernel took $(( $(date +%s) - t0 )) s (exit $rc)"
done

# ---- base against series ----
awk '
function key(l) { sub(/^(not )?ok - /, "", l); sub(/ (# SKIP|\().*$/, "", l); return l }
function verdict(l) { return l ~ /^not ok/ ? "FAIL" : l ~ /# SKIP/ ? "SKIP" : "PASS" }
FNR == 1 { f++ }
/^(not )?ok - / { k = key($0); v[f, k] = verdict($0); if (!(k in seen)) { seen[k]; order[++n] = k } }
END {
	printf "%-56s %-5s %-5s\n", "test", "base", "series"
	for (i = 1; i <= n; i++) {
		k = order[i]; b = v[1, k]; s = v[2, k]
		if (b == "") b = "-"; if (s == "") s = "-"
		if (b != s) { d++; note = "  <- differs" } else note = ""
		if (s == "FAIL" && b == "PASS") reg++
		cnt[1, b]++; cnt[2, s]++
		if (k !~ /\// || note != "") printf "%-56s %-5s %-5s%s\n", k, b, s, note
	}
	printf "upstream: %d tests and subtests, %d differ, %d fail on the series that pass on base; base %d passed %d failed %d skipped, series %d passed %d failed %d skipped\n", \
		n, d, reg, cnt[1, "PASS"], cnt[1, "FAIL"], cnt[1, "SKIP"], cnt[2, "PASS"], cnt[2, "FAIL"], cnt[2, "SKIP"]
	exit (d + reg > 0) ? 1 : 0
}' "$out/base/results.tap" "$out/series/results.tap" | tee "$out/table.txt"
[ -z "$novm" ] || die "upstream: no results from the VM of:$novm (see $out/*/console.log)"
