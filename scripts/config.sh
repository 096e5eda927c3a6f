#!/usr/bin/env bash
# config.sh - write the harness kernel config into $O/.config.
#
# Layers, in order (like virtme-ng): x86_64 defconfig -> virtme-ng's
# minimal VM items (virtme-configkernel --defconfig) -> the fragments kept in
# this repo (net-core, drivers-*, selftests) -> olddefconfig. Every option a
# fragment asks for must survive olddefconfig, or this fails naming it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

read -r -a FRAGMENTS <<<"$(config_fragments | tr '\n' ' ')"

case "${1:-}" in
-h|--help)
	cat <<'U'
usage: SRC=<kernel tree> O=<build dir> scripts/config.sh

Makes the harness config in $O/.config: defconfig + virtme-ng's VM items +
net-core/config, drivers-*/config, selftests/config (and, with
FLAVOUR=debug, selftests/config.debug), then checks that every
requested option is set as asked.
U
	exit 0 ;;
esac

: "${SRC:?SRC=<kernel source tree> is required}"
need_tool virtme-configkernel "sudo scripts/setup-host.sh"
mkdir -p "$O"
frag=$O/.xdp-pp-fragments
# later fragments win: keep the last value of each option
cat "${FRAGMENTS[@]}" | grep -E '^CONFIG_' |
	awk -F= '{ v[$1] = $0; if (!($1 in seen)) { seen[$1] = 1; o[++n] = $1 } }
		 END { for (i = 1; i <= n; i++) print v[o[i]] }' > "$frag"
(cd "$SRC" && virtme-configkernel --defconfig --custom "$frag" "O=$O" >/dev/null 2>&1) ||
	die "config: virtme-configkernel failed in $SRC"
# virtme-configkernel applies the snippet before its own items; apply ours
# last and let Kconfig resolve the rest.
"$SRC/scripts/kconfig/merge_config.sh" -m -O "$O" "$O/.config" "$frag" >/dev/null 2>&1
make -s -C "$SRC" "O=$O" olddefconfig >/dev/null
bad=0
while IFS='=' read -r k v; do
	case "$v" in
	n) grep -q "^$k=" "$O/.config" && { log "config: $k should be off"; bad=1; } ;;
	*) grep -qx "$k=$v" "$O/.config" || { log "config: $k=$v did not stick (got: $(grep "^$k=" "$O/.config" || echo unset))"; bad=1; } ;;
	esac
done < "$frag"
[ "$bad" = 0 ] || die "config: fragment options lost; check their dependencies"
log "config: $O/.config ready"
