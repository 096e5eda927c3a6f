#!/bin/bash
# textpoke-dense.sh - inside the VM: make the kernel live-patch hot text as
# often as it can while the other vCPUs run exactly that text. vCPU 0 flips
# static keys, tracepoints and ftrace sites back to back (every flip is a
# text_poke_bp batch: int3 first, sync IPI, the tail, IPI, the first byte,
# IPI); every other vCPU runs a pipe ping-pong + nanosleep + open/close loop
# and a dd-to-dd pipe pinned to it: the scheduler, hrtimer, pipe and slab
# paths those sites are in. A TCG that keeps a translation of a site made
# while it held the temporary int3 runs that int3 after the batch is done:
# "Oops: int3".
#
# Phases (DENSE_PHASES, DENSE_SLICE s each, rotated until DENSE_SECONDS):
#   sched   kernel.sched_schedstats: the schedstat_* jump labels
#   timer   kernel.timer_migration: timers_migration_enabled (hrtimer, timer)
#   tp      5 tracepoints (sched_switch, sched_wakeup, kmalloc, kfree,
#           hrtimer_start): static keys and static_call sites
#   ftrace  the function tracer on/off over up to 12 hot functions (fentry)
# panic_on_oops is set, so an Oops stops the VM with the Oops on the
# console (vng boots with panic=-1, QEMU runs with -no-reboot); the host
# (scripts/vm.sh, scripts/splat.sh, scripts/forensics/qemu-check.sh) fails
# the boot.
# Prints a "textpoke-dense:" line per slice and a last one with the flip
# count (a flip: one key/tracer state change, i.e. one patch batch).
# Exit: 0 done, 1 an int3 report in the kernel log or a workload error,
# 4 fewer than 2 vCPUs.
# shellcheck source=../../guest/inguest.sh
. "${BASH_SOURCE[0]%/*}/../../guest/inguest.sh" # inside the harness VM only
set -uo pipefail
SECS=${DENSE_SECONDS:-300}
SLICE=${DENSE_SLICE:-30}
PHASES=${DENSE_PHASES:-"sched timer tp ftrace"}
T=/sys/kernel/tracing
n=$(nproc)
[ "$n" -ge 2 ] || { echo "textpoke-dense: need >= 2 vCPUs, have $n"; exit 4; }
mountpoint -q $T || mount -t tracefs tracefs $T 2>/dev/null
echo 1 > /proc/sys/kernel/panic_on_oops
# the events and the function tracer run, but record nothing
echo 0 > $T/tracing_on 2>/dev/null
echo 64 > $T/buffer_size_kb 2>/dev/null
migr0=$(cat /proc/sys/kernel/timer_migration)
stats0=$(cat /proc/sys/kernel/sched_schedstats)

# the function tracer's filter: 12 hot functions; an empty filter would
# mean every function (tracefs files have no size: count the lines)
if [ -w $T/set_ftrace_filter ]; then
	: > $T/set_ftrace_filter
	for f in hrtimer_start_range_ns do_nanosleep try_to_wake_up pipe_read \
		pipe_write ksys_write kfree kmem_cache_free __kmalloc_noprof \
		kmem_cache_alloc_noprof enqueue_task_fair dequeue_task_fair; do
		echo "$f" >> $T/set_ftrace_filter 2>/dev/null
	done
	echo "textpoke-dense: function filter: $(grep -vc '^#' $T/set_ftrace_filter) functions"
fi

# one hot loop per other vCPU, for the whole run: a pipe ping-pong pair
# pinned to it (a context switch each way), a 20 us nanosleep (hrtimer)
# and an open/close (slab) per iteration; SIGTERM ends it with its rate
rm -f /tmp/tpd.ready.*
hot=()
for ((c = 1; c < n; c++)); do
	python3 - "$c" <<'P' &
import os, signal, sys, time
cpu = int(sys.argv[1])
os.sched_setaffinity(0, {cpu})
r1, w1 = os.pipe(); r2, w2 = os.pipe()
if os.fork() == 0:
    os.close(w1); os.close(r2)
    while (b := os.read(r1, 1)):
        os.write(w2, b)
    os._exit(0)
os.close(r1); os.close(w2)
i = 0; t0 = time.monotonic(); stop = False
def term(*_):
    global stop
    stop = True
signal.signal(signal.SIGTERM, term)
open(f"/tmp/tpd.ready.{cpu}", "w").close()
while not stop:
    os.write(w1, b'x'); os.read(r2, 1); time.sleep(0.00002)
    os.close(os.open('/proc/self/stat', os.O_RDONLY))
    i += 1
os.close(w1); os.wait()
print(f"textpoke-dense: hot loop on vCPU {cpu}: {i} iterations,"
      f" {i / (time.monotonic() - t0):.0f}/s", flush=True)
P
	hot+=($!)
	# and two dd on that vCPU moving a byte per syscall through a pipe:
	# pipe_write/pipe_read, wakeups and switches at C speed
	taskset -c "$c" dd if=/dev/zero bs=1 status=none 2>/dev/null |
		taskset -c "$c" dd of=/dev/null bs=1 status=none 2>/dev/null &
	hot+=($!)
done
for ((w = 0; w < 120; w++)); do
	[ "$(find /tmp -maxdepth 1 -name 'tpd.ready.*' | wc -l)" -ge $((n - 1)) ] && break
	sleep 1
done

# the flipper, pinned to vCPU 0: writes "on" then "off" to each file of a
# phase until its slice is up, phases in turn until SECS are up
# shellcheck disable=SC2086 # PHASES: one word per phase
python3 - "$SECS" "$SLICE" "$T" $PHASES <<'P'
import os, sys, time
os.sched_setaffinity(0, {0})
secs, slice_, T, phases = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4:]
E = T + "/events"
files = {
    "sched": [("/proc/sys/kernel/sched_schedstats", b"1", b"0")],
    "timer": [("/proc/sys/kernel/timer_migration", b"0", b"1")],
    "tp": [(f"{E}/{e}/enable", b"1", b"0") for e in
           ("sched/sched_switch", "sched/sched_wakeup", "kmem/kmalloc",
            "kmem/kfree", "timer/hrtimer_start")],
    "ftrace": [(f"{T}/current_tracer", b"function", b"nop")],
}
def put(fd, v):
    os.lseek(fd, 0, os.SEEK_SET); os.write(fd, v)
ops = {}
for ph in phases:
    if ph not in files:
        sys.exit(f"textpoke-dense: unknown phase {ph}")
    ops[ph] = [(os.open(f, os.O_WRONLY), on, off) for f, on, off in files[ph]
               if os.path.exists(f)]
    if not ops[ph]:
        print(f"textpoke-dense: phase {ph}: none of its files exist, skipped", flush=True)
total = dict.fromkeys(phases, 0); errors = 0
with open("/proc/uptime") as f:
    up = f.read().split()[0]
print(f"textpoke-dense: flipping from {up} s of uptime", flush=True)
t0 = time.monotonic(); end = t0 + secs
while time.monotonic() < end:
    for ph in phases:
        now = time.monotonic()
        if now >= end:
            break
        if not ops[ph]:
            continue
        s_end = min(end, now + slice_); k = 0
        while time.monotonic() < s_end:
            for half in (1, 2):
                for fd, on, off in ops[ph]:
                    try:
                        put(fd, on if half == 1 else off); k += 1
                    except OSError as e:
                        errors += 1
                        if errors <= 5:
                            print(f"textpoke-dense: {ph}: {e}", flush=True)
        total[ph] += k
        dt = time.monotonic() - now
        print(f"textpoke-dense: {ph} {dt:.0f}s: {k} flips ({k / dt:.1f}/s)", flush=True)
dt = time.monotonic() - t0
flips = sum(total.values())
print(f"textpoke-dense: {flips} flips in {dt:.0f} s ("
      + ", ".join(f"{ph} {total[ph]}" for ph in phases)
      + f"; {errors} write errors)", flush=True)
sys.exit(1 if errors and not flips else 0)
P
rc=$?
kill -TERM "${hot[@]}" 2>/dev/null
wait "${hot[@]}" 2>/dev/null
echo nop > $T/current_tracer 2>/dev/null
: > $T/set_ftrace_filter 2>/dev/null
echo "$migr0" > /proc/sys/kernel/timer_migration
echo "$stats0" > /proc/sys/kernel/sched_schedstats
bad=$(dmesg | grep -c 'int3')
echo "textpoke-dense: int3 reports in the kernel log: $bad"
[ "$rc" -eq 0 ] && [ "$bad" -eq 0 ]
