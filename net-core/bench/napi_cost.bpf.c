// SPDX-License-Identifier: GPL-2.0
/*
 * napi_cost - what a driver's NAPI poll costs per packet, per netdev.
 *
 * fentry/fexit on one poll function (POLL_FN: virtnet_poll, veth_poll,
 * mlx5e_napi_poll, mvneta_poll, i40e_napi_poll, ...) add up, per ifindex,
 * the time spent in the poll, the number of polls and the packets the polls
 * report (their return value). That is the receiver's cost, whatever the
 * sender's rate: everything the poll does for a packet (XDP program,
 * redirect, devmap flush, egress program, page_pool returns, refill) and
 * nothing else. On hardware it is ns per packet; under QEMU -icount shift=0
 * guest ns are guest instructions.
 *
 * With -DPLAIN the function is any function: one accumulator (key 0),
 * counting calls; used to split a poll's cost per function.
 *
 * Self-contained (no vmlinux.h, no libbpf headers; CO-RE through
 * preserve_access_index), so any clang with the BPF target builds it:
 *   clang -O2 -g -target bpf -DPOLL_FN=virtnet_poll -c napi_cost.bpf.c \
 *         -o napi_cost-virtnet_poll.o
 *   bpftool prog loadall napi_cost-virtnet_poll.o /sys/fs/bpf/nc/p \
 *           autoattach pinmaps /sys/fs/bpf/nc/m
 *   bpftool -j map dump pinned /sys/fs/bpf/nc/m/napi_cost_acc
 * The fentry/fexit trampoline adds a constant per poll (not per packet),
 * the same on both kernels compared.
 */
#define SEC(n) __attribute__((section(n), used))
#define __uint(n, v) int (*n)[v]
#define __type(n, t) typeof(t) *n
#define STR_(x) #x
#define STR(x) STR_(x)
#ifndef POLL_FN
#define POLL_FN virtnet_poll
#endif

typedef unsigned long long __u64;
typedef unsigned int __u32;

struct net_device {
	int ifindex;
} __attribute__((preserve_access_index));

struct napi_struct {
	struct net_device *dev;
} __attribute__((preserve_access_index));

struct acc {
	__u64 ns;
	__u64 polls;
	__u64 pkts;
	__u64 maxpkts;
};

enum { MAP_HASH = 1, MAP_PERCPU_ARRAY = 6, UPDATE_NOEXIST = 1 };

struct {
	__uint(type, MAP_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} napi_cost_start SEC(".maps");

struct {
	__uint(type, MAP_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct acc);
} napi_cost_acc SEC(".maps");

static void *(*map_lookup)(void *map, const void *key) = (void *)1;
static long (*map_update)(void *map, const void *key, const void *val,
			  __u64 flags) = (void *)2;
static __u64 (*ktime_get_ns)(void) = (void *)5;

SEC("fentry/" STR(POLL_FN))
int napi_cost_in(__u64 *ctx)
{
	__u32 z = 0;
	__u64 *t = map_lookup(&napi_cost_start, &z);

	if (t)
		*t = ktime_get_ns();
	return 0;
}

SEC("fexit/" STR(POLL_FN))
int napi_cost_out(__u64 *ctx)
{
	__u64 now = ktime_get_ns();
	__u32 z = 0, key;
	__u64 *t = map_lookup(&napi_cost_start, &z);
	struct acc *a, init = {};
	int work;

	if (!t || !*t)
		return 0;
#ifdef PLAIN
	key = 0;
	work = 1;
#else
	key = ((struct napi_struct *)ctx[0])->dev->ifindex;
	work = (int)ctx[2];
#endif
	a = map_lookup(&napi_cost_acc, &key);
	if (!a) {
		/* NOEXIST: another CPU may have created it meanwhile */
		map_update(&napi_cost_acc, &key, &init, UPDATE_NOEXIST);
		a = map_lookup(&napi_cost_acc, &key);
		if (!a)
			return 0;
	}
	/* several rx queues poll on several CPUs at once */
	__sync_fetch_and_add(&a->ns, now - *t);
	__sync_fetch_and_add(&a->polls, 1);
	if (work > 0) {
		__sync_fetch_and_add(&a->pkts, work);
		if (work > a->maxpkts)
			a->maxpkts = work;	/* a hint, racy by design */
	}
	*t = 0;
	return 0;
}

char _license[] SEC("license") = "GPL";
