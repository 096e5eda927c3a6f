# inguest.sh - sourced first by every guest script (scripts/guest/*.sh,
# scripts/bench/guest/*.sh, scripts/forensics/guest/*.sh): they run only
# inside the harness's VM (scripts/vm.sh, scripts/shell.sh: this repo at
# /xdp-pp over 9p, results at /out). On any other machine they would mount
# filesystems, change sysctls and tracing, or move NICs between netns: they
# stop here, before touching anything. -h/--help prints the script's header
# comment, anywhere.
# shellcheck shell=bash
xdp_pp_guest_script=${BASH_SOURCE[1]:-$0}
case "${1:-}" in
-h|--help)
	sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$xdp_pp_guest_script"
	echo "Runs only inside the harness VM (make test, make shell, scripts/vm.sh)."
	exit 0 ;;
esac
if ! grep -qs '^[^ ]* /xdp-pp 9p ' /proc/mounts || ! [ -d /out ]; then
	echo "${xdp_pp_guest_script##*/}: runs only inside the harness VM (scripts/vm.sh mounts this repo at /xdp-pp); on the host use make test, make shell or scripts/vm.sh" >&2
	exit 1
fi
unset xdp_pp_guest_script
