// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_pp_run - run one XDP return path N times in a single CPU and report
 * its cost per packet.
 *
 * BPF_PROG_TEST_RUN in live-frame mode (BPF_F_TEST_XDP_LIVE_FRAMES) builds
 * real xdp_frames from its own page_pool and pushes them through the
 * redirect machinery, so a whole redirect-map drop path runs inside one
 * syscall on one CPU. Under QEMU `-icount shift=0` guest time advances one
 * nanosecond per guest instruction: the figure printed is then guest
 * instructions per packet, not wall-clock time.
 *
 * The BPF programs are a handful of instructions, written out here so the
 * tool needs no compiler or libbpf in the guest (static binary).
 *
 * usage: xdp_pp_run CASE PACKETS [TARGET_IFNAME]
 * cases: devmap-egress-drop  redirect into a devmap entry whose egress
 *                            program drops (xdp-bench redirect-map -X -A drop)
 *        devmap-xmit-fail    devmap entry whose ndo_xdp_xmit refuses
 *                            (veth without XDP on its peer)
 *        devmap-bcast-empty  BPF_F_BROADCAST|BPF_F_EXCLUDE_INGRESS into a
 *                            map with no other entry
 *        veth-drop           redirect into a veth whose peer's XDP program
 *                            drops (returns from veth's NAPI)
 *        cpumap-drop         cpumap entry (this CPU) whose program drops
 *        xdp-drop            XDP_DROP (reference)
 * Output: one line
 *   case=<c> packets=<n> ns_per_pkt=<x> run_ns_per_pkt=<y> counted=<k>
 * ns_per_pkt covers the syscall and the asynchronous tail (veth NAPI,
 * cpumap kthread) until the dropping program counted every packet;
 * run_ns_per_pkt is BPF_PROG_TEST_RUN's own duration.
 *
 * usage: xdp_pp_run trace-run RUNS PINNED_PROG
 *   BPF_PROG_TEST_RUN of a pinned fentry/fexit program (or of the program of
 *   a pinned link, as bpftool's autoattach pins them) RUNS times: each run
 *   calls bpf_fentry_test1() and its siblings once (net/bpf/test_run.c).
 *   The bench's profile section times bpf_fentry_test1() so, to calibrate
 *   the trampoline share of a traced call. Output: trace-run runs=<n>
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/bpf.h>
#include <net/if.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), \
	.src_reg = (s), .off = (o), .imm = (i) })
#define MOV64_IMM(d, i)	INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV64_REG(d, s)	INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD64_IMM(d, i)	INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define ST_W(d, o, i)	INSN(BPF_ST | BPF_MEM | BPF_W, d, 0, o, i)
#define LD_MAP_FD(d, fd) INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd), \
			 INSN(0, 0, 0, 0, 0)
#define JEQ_IMM(d, i, o) INSN(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, i)
#define XADD64(d, s, o)	INSN(BPF_STX | BPF_DW | BPF_ATOMIC, d, s, o, BPF_ADD)
#define CALL(f)		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define EXIT()		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static void die(const char *what)
{
	fprintf(stderr, "xdp_pp_run: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int map_create(int type, int key, int val, int max)
{
	union bpf_attr a = { .map_type = type, .key_size = key,
			     .value_size = val, .max_entries = max };
	int fd = sys_bpf(BPF_MAP_CREATE, &a);

	if (fd < 0)
		die("map create");
	return fd;
}

static void map_update(int fd, const void *key, const void *val)
{
	union bpf_attr a = { .map_fd = fd, .key = (uintptr_t)key,
			     .value = (uintptr_t)val };

	if (sys_bpf(BPF_MAP_UPDATE_ELEM, &a))
		die("map update");
}

static uint64_t counter_read(int fd)
{
	uint32_t key = 0;
	uint64_t v = 0;
	union bpf_attr a = { .map_fd = fd, .key = (uintptr_t)&key,
			     .value = (uintptr_t)&v };

	if (sys_bpf(BPF_MAP_LOOKUP_ELEM, &a))
		die("map lookup");
	return v;
}

static int prog_load(struct bpf_insn *insns, int n, int attach)
{
	static char vlog[65536];
	union bpf_attr a = {
		.prog_type = BPF_PROG_TYPE_XDP,
		.insns = (uintptr_t)insns, .insn_cnt = n,
		.license = (uintptr_t)"GPL",
		.expected_attach_type = attach,
		.log_buf = (uintptr_t)vlog, .log_size = sizeof(vlog), .log_level = 1,
	};
	int fd = sys_bpf(BPF_PROG_LOAD, &a);

	if (fd < 0) {
		fprintf(stderr, "%s\n", vlog);
		die("prog load");
	}
	return fd;
}

/* count one packet in counter map @cnt, then return @action */
static int prog_count(int cnt, int action, int attach)
{
	struct bpf_insn p[] = {
		ST_W(BPF_REG_10, -4, 0),
		LD_MAP_FD(BPF_REG_1, cnt),
		MOV64_REG(BPF_REG_2, BPF_REG_10),
		ADD64_IMM(BPF_REG_2, -4),
		CALL(BPF_FUNC_map_lookup_elem),
		JEQ_IMM(BPF_REG_0, 0, 2),
		MOV64_IMM(BPF_REG_1, 1),
		XADD64(BPF_REG_0, BPF_REG_1, 0),
		MOV64_IMM(BPF_REG_0, action),
		EXIT(),
	};
	return prog_load(p, sizeof(p) / sizeof(p[0]), attach);
}

/* return bpf_redirect_map(@map, 0, @flags) */
static int prog_redirect(int map, int flags)
{
	struct bpf_insn p[] = {
		LD_MAP_FD(BPF_REG_1, map),
		MOV64_IMM(BPF_REG_2, 0),
		MOV64_IMM(BPF_REG_3, flags),
		CALL(BPF_FUNC_redirect_map),
		EXIT(),
	};
	return prog_load(p, sizeof(p) / sizeof(p[0]), 0);
}

static int if_index(const char *name)
{
	int i = if_nametoindex(name);

	if (!i)
		die(name);
	return i;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void attach_xdp(int ifindex, int prog)
{
	/* BPF_LINK_CREATE keeps this tool free of netlink code */
	union bpf_attr a = { .link_create = { .prog_fd = prog,
		.target_ifindex = ifindex, .attach_type = BPF_XDP } };

	if (sys_bpf(BPF_LINK_CREATE, &a) < 0)
		die("attach XDP to peer");
}

/* the program of a pinned link (bpftool loadall ... autoattach pins links) */
static int link_prog(int fd)
{
	struct bpf_link_info li = { 0 };
	union bpf_attr a = { .info = { .bpf_fd = fd, .info_len = sizeof(li),
				       .info = (uintptr_t)&li } };
	union bpf_attr b = { 0 };

	if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a))
		die("BPF_OBJ_GET_INFO_BY_FD of the pinned object");
	b.prog_id = li.prog_id;
	fd = sys_bpf(BPF_PROG_GET_FD_BY_ID, &b);
	if (fd < 0)
		die("BPF_PROG_GET_FD_BY_ID of the link's program");
	return fd;
}

static int trace_run(unsigned long n, const char *path)
{
	union bpf_attr g = { .pathname = (uintptr_t)path };
	union bpf_attr t = { 0 };
	unsigned long i;
	int fd = sys_bpf(BPF_OBJ_GET, &g);

	if (fd < 0)
		die(path);
	/* a pinned program runs as it is; a pinned link: its program */
	t.test.prog_fd = fd;
	i = 1;		/* that run counts */
	if (sys_bpf(BPF_PROG_TEST_RUN, &t)) {
		fd = link_prog(fd);
		i = 0;
	}
	for (; i < n; i++) {
		union bpf_attr a = { .test = { .prog_fd = fd } };

		if (sys_bpf(BPF_PROG_TEST_RUN, &a))
			die("BPF_PROG_TEST_RUN of a tracing program");
	}
	printf("trace-run runs=%lu\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";
	unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 0) : 0;
	const char *tgt = argc > 3 ? argv[3] : "veth0";
	unsigned char pkt[64] = {
		0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00, /* eth */
		0x45, 0, 0, 50, 0, 0, 0, 0, 64, 17, 0, 0,		/* ip */
		192, 0, 2, 2, 192, 0, 2, 1,
		0x27, 0x10, 0x27, 0x10, 0, 30, 0, 0,			/* udp */
	};
	int cnt, prog, map, async = 0, sync_count = 1;
	uint32_t key = 0;
	uint64_t t0, t1, got = 0, spins;

	if (argc < 3 || !n || n > 0xffffffffUL) {
		fprintf(stderr, "usage: %s CASE PACKETS [TARGET_IFNAME]\n"
			"       %s trace-run RUNS PINNED_PROG\n", argv[0], argv[0]);
		return 1;
	}
	if (!strcmp(c, "trace-run"))
		return argc > 3 ? trace_run(n, argv[3]) : 1;
	cnt = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 1);
	if (!strcmp(c, "devmap-egress-drop") || !strcmp(c, "devmap-xmit-fail") ||
	    !strcmp(c, "veth-drop") || !strcmp(c, "devmap-bcast-empty")) {
		struct bpf_devmap_val v = { .ifindex = if_index(tgt), .bpf_prog.fd = -1 };

		map = map_create(BPF_MAP_TYPE_DEVMAP, 4, sizeof(v), 4);
		if (!strcmp(c, "devmap-egress-drop"))
			v.bpf_prog.fd = prog_count(cnt, XDP_DROP, BPF_XDP_DEVMAP);
		if (!strcmp(c, "devmap-bcast-empty"))
			v.ifindex = 1; /* lo only: no valid destination */
		if (!strcmp(c, "devmap-xmit-fail") || !strcmp(c, "devmap-bcast-empty"))
			sync_count = 0; /* nothing runs after the drop */
		if (!strcmp(c, "veth-drop")) {
			char peer[IF_NAMESIZE + 8];

			snprintf(peer, sizeof(peer), "%s", argc > 4 ? argv[4] : "veth1");
			attach_xdp(if_index(peer), prog_count(cnt, XDP_DROP, 0));
			async = 1;
		}
		map_update(map, &key, &v);
		prog = prog_redirect(map, strcmp(c, "devmap-bcast-empty") ? 0 :
				     BPF_F_BROADCAST | BPF_F_EXCLUDE_INGRESS);
	} else if (!strcmp(c, "cpumap-drop")) {
		struct bpf_cpumap_val v = { .qsize = 2048 };

		v.bpf_prog.fd = prog_count(cnt, XDP_DROP, BPF_XDP_CPUMAP);
		map = map_create(BPF_MAP_TYPE_CPUMAP, 4, sizeof(v), 64);
		key = sched_getcpu();
		map_update(map, &key, &v);
		key = 0;
		/* redirect to this CPU's entry */
		{
			struct bpf_insn p[] = {
				LD_MAP_FD(BPF_REG_1, map),
				MOV64_IMM(BPF_REG_2, sched_getcpu()),
				MOV64_IMM(BPF_REG_3, 0),
				CALL(BPF_FUNC_redirect_map),
				EXIT(),
			};
			prog = prog_load(p, sizeof(p) / sizeof(p[0]), 0);
		}
		async = 1;
	} else if (!strcmp(c, "xdp-drop")) {
		prog = prog_count(cnt, XDP_DROP, 0);
	} else {
		fprintf(stderr, "xdp_pp_run: unknown case '%s'\n", c);
		return 1;
	}

	/* Asynchronous cases are fed in chunks the consumer can hold (the
	 * cpumap queue is 2048 frames), so no frame is lost to a full queue
	 * and the count of the dropping program must reach n.
	 */
	unsigned long chunk = async ? 1024 : n, sent = 0;
	uint64_t run_ns = 0, last = 0;

	t0 = now_ns();
	while (sent < n) {
		unsigned long c = n - sent < chunk ? n - sent : chunk;
		union bpf_attr a = { .test = {
			.prog_fd = prog, .data_in = (uintptr_t)pkt,
			.data_size_in = sizeof(pkt), .repeat = c,
			.flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = 64 } };

		if (sys_bpf(BPF_PROG_TEST_RUN, &a))
			die("BPF_PROG_TEST_RUN");
		run_ns += (uint64_t)a.test.duration * c;
		sent += c;
		if (!async)
			continue;
		/* let the veth NAPI / cpumap kthread catch up on this CPU */
		for (spins = 0; (got = counter_read(cnt)) < sent; spins++) {
			if (got != last) {
				last = got;
				spins = 0;
			}
			if (spins > 1000000)
				break;
			sched_yield();
		}
	}
	if (!async)
		got = sync_count ? counter_read(cnt) : n;
	t1 = now_ns();
	printf("case=%s packets=%lu ns_per_pkt=%.1f run_ns_per_pkt=%.1f counted=%llu\n",
	       c, n, (double)(t1 - t0) / n, (double)run_ns / n,
	       (unsigned long long)got);
	return got == n ? 0 : 1;
}
