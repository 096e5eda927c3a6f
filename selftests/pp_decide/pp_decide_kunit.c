// SPDX-License-Identifier: GPL-2.0
/*
 * pp_decide_kunit - where does page_pool's direct-recycle decision send a
 * returned page, context by context?
 *
 * Every case returns freshly allocated page_pool pages through one of the
 * return APIs (page_pool_put_full_page(), page_pool_put_netmem_bulk(),
 * xdp_return_frame(), xdp_return_frame_rx_napi(), xdp_return_frame_bulk(),
 * xdp_return_buff(), xdp_return_frag(), and multi-frag frames/buffers) from
 * one well defined context and asserts, through page_pool_get_stats(), that
 * each page landed in the lockless alloc cache (recycle.cached) or in the
 * ptr_ring (recycle.ring), and nowhere else.
 *
 * The decision under test is page_pool_napi_local() in net/core/page_pool.c:
 * "local" (may use the lockless cache) only in softirq/BH-disabled context
 * and only if pool->cpuid is this CPU or pool->p.napi is on this CPU's poll
 * list (napi->list_owner == this CPU).  Base 7.3's net/core/xdp.c bypasses
 * that decision for xdp_return_frame_rx_napi(), xdp_return_buff() and
 * xdp_return_frag() (napi_direct=true); the series under test removes the
 * bypass.  Module parameter "expect" selects which of the two behaviours the
 * cases assert for those APIs; everything else is identical on both.
 */

#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/filter.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/skbuff.h>
#include <linux/string.h>
#include <linux/timex.h>
#include <linux/tracepoint.h>
#include <linux/workqueue.h>
#include <net/busy_poll.h>
#include <net/page_pool/helpers.h>
#include <net/page_pool/types.h>
#include <net/xdp.h>

#ifndef CONFIG_NET_RX_BUSY_POLL
/* Not built (PREEMPT_RT with NETCONSOLE): the busy-poll cases skip. */
static void napi_busy_loop(unsigned int napi_id,
			   bool (*loop_end)(void *, unsigned long),
			   void *loop_end_arg, bool prefer_busy_poll, u16 budget)
{
}
#endif

#ifndef CONFIG_PAGE_POOL_STATS
#error "pp_decide_kunit needs CONFIG_PAGE_POOL_STATS=y"
#endif

static char *expect = "series";
module_param(expect, charp, 0444);
MODULE_PARM_DESC(expect,
		 "series (default): every return API lets page_pool decide; base: 7.3 forces napi_direct for xdp_return_frame_rx_napi/xdp_return_buff/xdp_return_frag; auto: base if xdp_return_frame_rx_napi is exported");

static int bench;
module_param(bench, int, 0444);
MODULE_PARM_DESC(bench,
		 "0: tests only (default); 1: benchmark at load, then tests; 2: benchmark only (test cases skip)");

static unsigned int bench_loops = 100000;
module_param(bench_loops, uint, 0444);
MODULE_PARM_DESC(bench_loops, "API calls per benchmark measurement (1..2000000)");

static bool hardirq_return;
module_param(hardirq_return, bool, 0444);
MODULE_PARM_DESC(hardirq_return,
		 "hardirq case: really return one page from a hard hrtimer (outside the page_pool API contract, see the case's comment)");

/* Expectation for the APIs that 7.3 runs with napi_direct=true. */
static bool pp_base;
/* Does the running kernel export xdp_return_frame_rx_napi (base 7.3)? */
static bool pp_probe_base;
/*
 * xdp_return_frame_rx_napi() of base 7.3, looked up at load time: the
 * series removes it, so the module cannot reference it directly.  NULL on
 * the series; the cases of the two _rx_napi APIs are then left out.
 */
static void (*pp_rx_napi)(struct xdp_frame *xdpf);

#define PP_POOL_SIZE		256	/* ptr_ring size; fills only where a case asks */
#define PP_MAX_PAGES		8
#define PP_MAX_NAPI		2
#define PP_MAX_POOL		2
#define PP_NR_FRAGS		3
#define PP_PKT_LEN		64
#define PP_WAIT			(5 * HZ)
#define PP_MIGRATE_POLLS	100000	/* polls to wait for a migration */
#define PP_SPIN_NS		(2 * NSEC_PER_SEC)
#define PP_TIMER_NS		(20 * NSEC_PER_USEC)
#define PP_BENCH_MAX_LOOPS	2000000U
#define PP_BENCH_WARMUP		1024U

enum pp_api {
	PP_PUT_PAGE,
	PP_PUT_BULK,
	PP_FRAME,
	PP_FRAME_RX_NAPI,
	PP_FRAME_BULK,
	PP_BUFF,
	PP_FRAG,
	PP_FRAME_MB,
	PP_FRAME_MB_RX_NAPI,
	PP_BUFF_MB,
	PP_NR_SINGLE_POOL_API,
	PP_MIX_BULK = PP_NR_SINGLE_POOL_API,
	PP_MIX_FRAME_BULK,
	PP_NR_API,
};

struct pp_api_desc {
	const char *name;
	unsigned int pages;	/* pages from pool 0 per call */
	unsigned int pages2;	/* pages from pool 1 per call (mixed bulk) */
	bool base_direct;	/* 7.3 passes napi_direct=true, no decision */
	bool rx_napi;		/* needs xdp_return_frame_rx_napi() */
};

static const struct pp_api_desc pp_apis[PP_NR_API] = {
	[PP_PUT_PAGE]		= { "page_pool_put_full_page", 1, 0, false },
	[PP_PUT_BULK]		= { "page_pool_put_netmem_bulk", 4, 0, false },
	[PP_FRAME]		= { "xdp_return_frame", 1, 0, false },
	[PP_FRAME_RX_NAPI]	= { "xdp_return_frame_rx_napi", 1, 0, true, true },
	[PP_FRAME_BULK]		= { "xdp_return_frame_bulk", 4, 0, false },
	[PP_BUFF]		= { "xdp_return_buff", 1, 0, true },
	[PP_FRAG]		= { "xdp_return_frag", 1, 0, true },
	[PP_FRAME_MB]		= { "xdp_return_frame_mb", 1 + PP_NR_FRAGS, 0,
				    false },
	[PP_FRAME_MB_RX_NAPI]	= { "xdp_return_frame_rx_napi_mb",
				    1 + PP_NR_FRAGS, 0, true, true },
	[PP_BUFF_MB]		= { "xdp_return_buff_mb", 1 + PP_NR_FRAGS, 0,
				    true },
	[PP_MIX_BULK]		= { "page_pool_put_netmem_bulk_2pools", 3, 3,
				    false },
	[PP_MIX_FRAME_BULK]	= { "xdp_return_frame_bulk_2pools", 3, 3,
				    false },
};

/*
 * Pool of each page of a mixed bulk.  The bulk starts with a page of the
 * pool that is NOT owned by the running NAPI, so page_pool_put_netmem_bulk()
 * decides for pool 1 first, then for pool 0 on its second round.
 */
static const u8 pp_mix_order[] = { 1, 0, 1, 0, 0, 1 };

/* Snapshot of the context a job (or a poll, a timer) ran in. */
struct pp_where {
	int cpu;
	int list_owner[PP_MAX_NAPI];
	bool softirq;		/* in_softirq(), what page_pool_napi_local() tests */
	bool serving;		/* in_serving_softirq() */
	bool hardirq;		/* in_hardirq() */
	bool irqs_off;		/* irqs_disabled() */
	bool recorded;
};

struct pp_pool {
	struct page_pool *pool;
	struct xdp_rxq_info rxq;
	bool rxq_reg;
};

/* One call of one return API, prepared in process context. */
struct pp_job {
	enum pp_api api;
	unsigned int nr_pages;
	struct page *pages[PP_MAX_PAGES];
	struct pp_pool *owner[PP_MAX_PAGES];
	unsigned int nr_frames;
	struct xdp_frame *frames[PP_MAX_PAGES];
	struct xdp_buff xdp;
	netmem_ref netmems[PP_MAX_PAGES];
	struct xdp_frame_bulk bq;
	struct pp_where where;
	bool prepared;
	bool done;
};

struct pp_bulk_job;
struct pp_destroy;

struct pp_bench {
	enum pp_api api;
	unsigned int loops;
	u64 ns;
	u64 cycles;
	u64 cached;
	u64 ring;
	int err;
};

struct pp_env {
	struct net_device *dev;
	struct napi_struct napi[PP_MAX_NAPI];
	unsigned int nr_napi;
	bool napi_enabled;
	struct pp_pool pp[PP_MAX_POOL];

	struct pp_job job;
	struct pp_bench bench;
	int err;
	unsigned long wait;		/* bound for poll/work completion */

	/* NAPI poll plumbing (napi[0] only) */
	struct completion poll_done;
	void (*poll_fn)(struct pp_env *env);
	struct pp_where poll_where;
	/* claim lifetime: what napi[0]'s Nth poll call does (N from 1) */
	unsigned int poll_calls;
	unsigned int job_call;		/* runs poll_fn; 0: the first call */
	unsigned int budget_call;	/* returns budget: not completed */
	unsigned int resched_call;	/* napi_schedule() before completing */
	unsigned int loop_end_calls;	/* busy poll loop_end calls */
	unsigned int job_cpu1;		/* job only on CPU job_cpu1 - 1 (0: any):
					 * polls elsewhere return budget */

	/* work item pinned to one CPU */
	struct work_struct work;
	struct completion work_done;
	atomic_t work_finished;
	void (*work_fn)(struct pp_env *env);
	int work_cpu;
	bool work_bh;
	struct pp_where work_where;

	/* hard-irq hrtimer */
	struct hrtimer timer;
	atomic_t timer_fired;
	bool timer_return;
	struct pp_where timer_where;

	/* bulk accounting cases: what pp_job_run_here() runs instead of job */
	void (*exec)(struct pp_env *env);
	struct pp_bulk_job *bulk;

	/* pool_size (ptr_ring size) of the pools added next; 0: PP_POOL_SIZE */
	unsigned int pool_size;
	/* destroy cases: the pool being destroyed and what the test holds */
	struct pp_destroy *destroy;
};

static void pp_where_record(struct pp_env *env, struct pp_where *w)
{
	unsigned int i;

	/* Callers pin the task (BH off, migrate_disable() or irq context). */
	w->cpu = raw_smp_processor_id();
	for (i = 0; i < PP_MAX_NAPI; i++)
		w->list_owner[i] = i < env->nr_napi ?
				   READ_ONCE(env->napi[i].list_owner) : -1;
	w->softirq = !!in_softirq();
	w->serving = !!in_serving_softirq();
	w->hardirq = !!in_hardirq();
	w->irqs_off = irqs_disabled();
	w->recorded = true;
}

/* ---- building and returning pages ---------------------------------- */

static void pp_build_buff(struct xdp_buff *xdp, struct pp_pool *p,
			  struct page *head, struct page **frags,
			  unsigned int nr_frags)
{
	struct skb_shared_info *sinfo;
	unsigned int i;

	xdp_init_buff(xdp, PAGE_SIZE, &p->rxq);
	xdp_prepare_buff(xdp, page_address(head), XDP_PACKET_HEADROOM,
			 PP_PKT_LEN, true);
	if (!nr_frags)
		return;

	sinfo = xdp_get_shared_info_from_buff(xdp);
	sinfo->xdp_frags_size = 0;
	sinfo->xdp_frags_truesize = 0;
	for (i = 0; i < nr_frags; i++) {
		skb_frag_fill_page_desc(&sinfo->frags[i], frags[i], 0,
					PP_PKT_LEN);
		sinfo->xdp_frags_size += PP_PKT_LEN;
		sinfo->xdp_frags_truesize += PAGE_SIZE;
	}
	sinfo->nr_frags = nr_frags;
	xdp_buff_set_frags_flag(xdp);
}

static struct xdp_frame *pp_build_frame(struct pp_job *job, unsigned int head,
					unsigned int nr_frags)
{
	struct xdp_buff xdp;

	pp_build_buff(&xdp, job->owner[head], job->pages[head],
		      &job->pages[head + 1], nr_frags);
	return xdp_convert_buff_to_frame(&xdp);
}

/* Give back the pages of a job that never ran (process context only). */
static void pp_job_abort(struct pp_job *job)
{
	unsigned int i;

	if (!job->prepared || job->done)
		return;
	for (i = 0; i < job->nr_pages; i++)
		page_pool_put_full_page(job->owner[i]->pool, job->pages[i],
					false);
	job->prepared = false;
}

static int pp_job_prep(struct pp_env *env, enum pp_api api)
{
	const struct pp_api_desc *d = &pp_apis[api];
	struct pp_job *job = &env->job;
	unsigned int i, n = d->pages + d->pages2;

	memset(job, 0, sizeof(*job));
	job->api = api;
	job->prepared = true;
	for (i = 0; i < n; i++) {
		struct pp_pool *p = d->pages2 ? &env->pp[pp_mix_order[i]] :
						&env->pp[0];
		struct page *page = page_pool_dev_alloc_pages(p->pool);

		if (!page) {
			pp_job_abort(job);
			return -ENOMEM;
		}
		job->pages[i] = page;
		job->owner[i] = p;
		job->nr_pages = i + 1;
	}

	switch (api) {
	case PP_FRAME:
	case PP_FRAME_RX_NAPI:
		job->frames[job->nr_frames++] = pp_build_frame(job, 0, 0);
		break;
	case PP_FRAME_MB:
	case PP_FRAME_MB_RX_NAPI:
		job->frames[job->nr_frames++] = pp_build_frame(job, 0,
							       PP_NR_FRAGS);
		break;
	case PP_FRAME_BULK:
	case PP_MIX_FRAME_BULK:
		for (i = 0; i < n; i++)
			job->frames[job->nr_frames++] =
				pp_build_frame(job, i, 0);
		break;
	case PP_BUFF:
		pp_build_buff(&job->xdp, job->owner[0], job->pages[0], NULL, 0);
		break;
	case PP_BUFF_MB:
		pp_build_buff(&job->xdp, job->owner[0], job->pages[0],
			      &job->pages[1], PP_NR_FRAGS);
		break;
	case PP_FRAG:
		xdp_init_buff(&job->xdp, PAGE_SIZE, &job->owner[0]->rxq);
		break;
	default:
		break;
	}

	for (i = 0; i < job->nr_frames; i++) {
		if (!job->frames[i]) {
			pp_job_abort(job);
			return -ENOSPC;
		}
	}
	return 0;
}

/* Return the job's pages through its API, from whatever context we are in. */
static void pp_job_exec(struct pp_job *job)
{
	struct bpf_net_context __bpf_net_ctx, *bpf_net_ctx;
	unsigned int i;

	/*
	 * Base 7.3's __xdp_return() dereferences current->bpf_net_context
	 * (xdp_return_frame_no_direct()) whenever napi_direct is true.  NAPI
	 * polls (softirq and threaded) have one; give our own BH-off, process
	 * and work contexts one too.  No-op if the task already has one.
	 */
	bpf_net_ctx = bpf_net_ctx_set(&__bpf_net_ctx);

	switch (job->api) {
	case PP_PUT_PAGE:
		page_pool_put_full_page(job->owner[0]->pool, job->pages[0],
					false);
		break;
	case PP_PUT_BULK:
	case PP_MIX_BULK:
		for (i = 0; i < job->nr_pages; i++)
			job->netmems[i] = page_to_netmem(job->pages[i]);
		page_pool_put_netmem_bulk(job->netmems, job->nr_pages);
		break;
	case PP_FRAME:
	case PP_FRAME_MB:
		xdp_return_frame(job->frames[0]);
		break;
	case PP_FRAME_RX_NAPI:
	case PP_FRAME_MB_RX_NAPI:
		pp_rx_napi(job->frames[0]);
		break;
	case PP_FRAME_BULK:
	case PP_MIX_FRAME_BULK:
		xdp_frame_bulk_init(&job->bq);
		rcu_read_lock();	/* 7.3 documents it for the bulk API */
		for (i = 0; i < job->nr_frames; i++)
			xdp_return_frame_bulk(job->frames[i], &job->bq);
		xdp_flush_frame_bulk(&job->bq);
		rcu_read_unlock();
		break;
	case PP_BUFF:
	case PP_BUFF_MB:
		xdp_return_buff(&job->xdp);
		break;
	case PP_FRAG:
		xdp_return_frag(page_to_netmem(job->pages[0]), &job->xdp);
		break;
	default:
		break;
	}

	bpf_net_ctx_clear(bpf_net_ctx);
	job->done = true;
}

static void pp_job_run_here(struct pp_env *env)
{
	pp_where_record(env, &env->job.where);
	if (env->exec)
		env->exec(env);
	else
		pp_job_exec(&env->job);
}

/* ---- environment: dummy netdev, NAPIs, pools ------------------------ */

static struct pp_env *pp_env_of(struct napi_struct *napi)
{
	return *(struct pp_env **)netdev_priv(napi->dev);
}

static int pp_poll(struct napi_struct *napi, int budget)
{
	struct pp_env *env = pp_env_of(napi);
	void (*fn)(struct pp_env *env) = env->poll_fn;
	unsigned int call;

	if (napi != &env->napi[0]) {
		napi_complete_done(napi, 0);
		return 0;
	}
	call = ++env->poll_calls;
	/* A case that wants the job on another CPU: repoll until the
	 * kthread got there (bounded).
	 */
	if (fn && env->job_cpu1 &&
	    smp_processor_id() != env->job_cpu1 - 1) {
		if (call < PP_MIGRATE_POLLS)
			return budget;
		env->err = -ETIMEDOUT;
		env->poll_fn = NULL;
		napi_complete_done(napi, 0);
		complete(&env->poll_done);
		return 0;
	}
	/* A busy poller calls the poll at least twice (the loop,
	 * busy_poll_stop()): the job runs in one call only, the first
	 * unless a case picked another (job_call).
	 */
	if (fn && (!env->job_call || call == env->job_call)) {
		env->poll_fn = NULL;
		pp_where_record(env, &env->poll_where);
		fn(env);
	}
	if (call == env->budget_call)
		return budget;		/* the poller polls again */
	/* SCHED is held: this only sets NAPI_STATE_MISSED, so that
	 * napi_complete_done() reschedules the instance on this CPU.
	 */
	if (call == env->resched_call)
		napi_schedule(napi);
	napi_complete_done(napi, 0);
	/* Softirq: signal with complete(), never with a mutex; once the
	 * job ran, or in every call when there is none.
	 */
	if (!fn || !env->poll_fn)
		complete(&env->poll_done);
	return 0;
}

static void pp_work_fn(struct work_struct *work)
{
	struct pp_env *env = container_of(work, struct pp_env, work);

	if (env->work_bh)
		local_bh_disable();
	else
		migrate_disable();

	pp_where_record(env, &env->work_where);
	if (env->work_fn)
		env->work_fn(env);

	if (env->work_bh)
		local_bh_enable();
	else
		migrate_enable();

	atomic_set_release(&env->work_finished, 1);
	complete(&env->work_done);
}

static enum hrtimer_restart pp_timer_fn(struct hrtimer *timer)
{
	struct pp_env *env = container_of(timer, struct pp_env, timer);

	pp_where_record(env, &env->timer_where);
	if (env->timer_return)
		pp_job_exec(&env->job);
	atomic_set_release(&env->timer_fired, 1);
	return HRTIMER_NORESTART;
}

static void pp_env_destroy(struct pp_env *env)
{
	unsigned int i;

	hrtimer_cancel(&env->timer);
	flush_work(&env->work);
	if (env->napi_enabled) {
		/* Waits for a scheduled poll; page_pool_destroy() needs it. */
		for (i = 0; i < env->nr_napi; i++)
			napi_disable(&env->napi[i]);
	}
	/* A case that bailed out may still own pages: give them back. */
	pp_job_abort(&env->job);

	for (i = 0; i < PP_MAX_POOL; i++) {
		struct pp_pool *p = &env->pp[i];

		/* Drops the reference xdp_rxq_info_reg_mem_model() took. */
		if (p->rxq_reg)
			xdp_rxq_info_unreg(&p->rxq);
		if (p->pool)
			page_pool_destroy(p->pool);
	}
	for (i = 0; i < env->nr_napi; i++)
		netif_napi_del(&env->napi[i]);	/* synchronize_net() */
	if (env->dev)
		free_netdev(env->dev);
	kfree(env);
}

static struct pp_env *pp_env_create(unsigned int nr_napi, bool threaded)
{
	struct pp_env *env;
	unsigned int i;
	int err;

	env = kzalloc_obj(*env, GFP_KERNEL);
	if (!env)
		return ERR_PTR(-ENOMEM);

	env->wait = PP_WAIT;
	init_completion(&env->poll_done);
	init_completion(&env->work_done);
	INIT_WORK(&env->work, pp_work_fn);
	hrtimer_setup(&env->timer, pp_timer_fn, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL_PINNED_HARD);

	env->dev = alloc_netdev_dummy(sizeof(env));
	if (!env->dev) {
		err = -ENOMEM;
		goto err;
	}
	*(struct pp_env **)netdev_priv(env->dev) = env;

	for (i = 0; i < nr_napi; i++)
		netif_napi_add(env->dev, &env->napi[i], pp_poll);
	env->nr_napi = nr_napi;

	if (threaded) {
		/* dev_set_threaded() is the exported, self-locking API. */
		err = dev_set_threaded(env->dev, NETDEV_NAPI_THREADED_ENABLED);
		if (err)
			goto err;
	}

	for (i = 0; i < nr_napi; i++)
		napi_enable(&env->napi[i]);
	env->napi_enabled = true;
	return env;

err:
	pp_env_destroy(env);
	return ERR_PTR(err);
}

/* @napi: NAPI owning the pool or NULL; @cpuid: pool->cpuid or -1. */
static int pp_env_add_pool(struct pp_env *env, unsigned int idx,
			   struct napi_struct *napi, int cpuid)
{
	struct page_pool_params params = {
		.flags		= 0,	/* no DMA mapping, no sync */
		.order		= 0,
		.pool_size	= env->pool_size ?: PP_POOL_SIZE,
		.nid		= NUMA_NO_NODE,
		.napi		= napi,
	};
	struct pp_pool *p = &env->pp[idx];
	struct page_pool *pool;
	int err;

	pool = page_pool_create_percpu(&params, cpuid);
	if (IS_ERR(pool))
		return PTR_ERR(pool);
	p->pool = pool;

	err = xdp_rxq_info_reg(&p->rxq, env->dev, idx, env->napi[0].napi_id);
	if (err)
		return err;
	err = xdp_rxq_info_reg_mem_model(&p->rxq, MEM_TYPE_PAGE_POOL, pool);
	if (err) {
		xdp_rxq_info_unreg(&p->rxq);
		return err;
	}
	p->rxq_reg = true;
	return 0;
}

/* ---- contexts ------------------------------------------------------- */

/*
 * Schedule napi[0] from this task with BH disabled; local_bh_enable() then
 * runs NET_RX on this CPU, so the kernel itself sets list_owner = this CPU
 * for the duration of the poll (nothing is hand-set).
 */
static int pp_kick_poll(struct pp_env *env, void (*fn)(struct pp_env *env))
{
	reinit_completion(&env->poll_done);
	env->poll_where.recorded = false;
	env->poll_fn = fn;
	env->err = 0;

	local_bh_disable();
	napi_schedule(&env->napi[0]);
	local_bh_enable();

	if (!wait_for_completion_timeout(&env->poll_done, env->wait))
		return -ETIMEDOUT;
	return env->err;
}

/* Run env->work_fn in a work item bound to env->work_cpu. */
static int pp_run_work(struct pp_env *env)
{
	int err = 0;

	reinit_completion(&env->work_done);
	atomic_set(&env->work_finished, 0);
	env->work_where.recorded = false;
	queue_work_on(env->work_cpu, system_percpu_wq, &env->work);
	if (!wait_for_completion_timeout(&env->work_done, env->wait))
		err = -ETIMEDOUT;
	flush_work(&env->work);
	return err;
}

/* Process context, BH enabled; migrate_disable() only pins the record. */
static int pp_ctx_process(struct pp_env *env)
{
	migrate_disable();
	pp_job_run_here(env);
	migrate_enable();
	return 0;
}

/* Inside napi[0]'s poll (NET_RX softirq on the CPU that scheduled it). */
static int pp_ctx_napi_poll(struct pp_env *env)
{
	return pp_kick_poll(env, pp_job_run_here);
}

/*
 * napi[0] polled by a busy poller: napi_busy_loop() from this task (no
 * loop_end: one poll, then busy_poll_stop() polls once more to re-arm).
 * The task owns the NAPI (SCHED | IN_BUSY_POLL) with BH disabled.
 */
static int pp_ctx_busy_poll(struct pp_env *env)
{
	reinit_completion(&env->poll_done);
	env->poll_where.recorded = false;
	env->poll_fn = pp_job_run_here;
	env->err = 0;

	napi_busy_loop(READ_ONCE(env->napi[0].napi_id), NULL, NULL, false, 8);

	if (!wait_for_completion_timeout(&env->poll_done, env->wait))
		return -ETIMEDOUT;
	return env->err;
}

/*
 * Claim lifetime.  The series lets the NAPI kthread and the busy poller
 * claim their instance (list_owner = this CPU) for each poll, and drop the
 * claim after it unless a later ____napi_schedule() made this CPU the
 * owner again.  Each context below looks at one end of a claim.
 */
static void pp_poll_plan(struct pp_env *env, unsigned int job_call,
			 unsigned int budget_call, unsigned int resched_call)
{
	reinit_completion(&env->poll_done);
	env->poll_where.recorded = false;
	env->poll_fn = pp_job_run_here;
	env->err = 0;
	env->poll_calls = 0;
	env->loop_end_calls = 0;
	env->job_call = job_call;
	env->budget_call = budget_call;
	env->resched_call = resched_call;
}

static int pp_poll_plan_wait(struct pp_env *env)
{
	int err = env->err;

	if (!wait_for_completion_timeout(&env->poll_done, env->wait))
		err = -ETIMEDOUT;
	env->job_call = 0;
	env->budget_call = 0;
	env->resched_call = 0;
	return err;
}

/* Between two polls of a busy loop, BH disabled by the caller: the claim
 * of the poll before must be gone.  Runs the job on the first call and
 * asks for one more poll.
 */
static bool pp_loop_end_job(void *arg, unsigned long start_time)
{
	struct pp_env *env = arg;

	if (env->loop_end_calls++)
		return true;
	local_bh_disable();
	pp_job_run_here(env);
	local_bh_enable();
	return false;
}

static int pp_ctx_busy_poll_between(struct pp_env *env)
{
	pp_poll_plan(env, 0, 0, 0);
	env->poll_fn = NULL;			/* the job runs in loop_end */
	napi_busy_loop(READ_ONCE(env->napi[0].napi_id), pp_loop_end_job, env,
		       false, 8);
	return pp_poll_plan_wait(env);
}

/* The job in busy_poll_stop()'s poll, the one that re-arms the NAPI. */
static int pp_ctx_busy_poll_stop(struct pp_env *env)
{
	pp_poll_plan(env, 2, 0, 0);
	napi_busy_loop(READ_ONCE(env->napi[0].napi_id), NULL, NULL, false, 8);
	return pp_poll_plan_wait(env);
}

/*
 * busy_poll_stop()'s poll finds NAPI_STATE_MISSED set (an IRQ during the
 * poll: here the poll's own napi_schedule()), so napi_complete_done()
 * reschedules the instance on this CPU's poll list, list_owner = this CPU.
 * NET_RX then polls it on local_bh_enable(): the job runs in that third
 * call, with list_owner as the release left it.
 */
static int pp_ctx_busy_poll_missed(struct pp_env *env)
{
	pp_poll_plan(env, 3, 0, 2);
	napi_busy_loop(READ_ONCE(env->napi[0].napi_id), NULL, NULL, false, 8);
	return pp_poll_plan_wait(env);
}

/* Threaded NAPI: the first poll uses its whole budget, the kthread polls
 * again at once and the job runs in that second poll.
 */
static int pp_ctx_threaded_repoll(struct pp_env *env)
{
	pp_poll_plan(env, 2, 1, 0);
	local_bh_disable();
	napi_schedule(&env->napi[0]);
	local_bh_enable();
	return pp_poll_plan_wait(env);
}

/*
 * Threaded NAPI whose kthread moves to another CPU between two polls: the
 * kthread runs on CPU a, its polls return budget until it runs on CPU b
 * (set_cpus_allowed_ptr() from here, effective at the kthread's next
 * preemption point between polls); the job runs in the first poll on b.
 */
static int pp_ctx_threaded_migrated(struct pp_env *env)
{
	struct task_struct *t = READ_ONCE(env->napi[0].thread);
	int a, b, err, err2;

	a = cpumask_first(cpu_online_mask);
	b = cpumask_next(a, cpu_online_mask);
	if (!t || b >= nr_cpu_ids)
		return -EOPNOTSUPP;
	err = set_cpus_allowed_ptr(t, cpumask_of(a));
	if (err)
		return err;
	pp_poll_plan(env, 0, 0, 0);
	env->job_cpu1 = b + 1;
	local_bh_disable();
	napi_schedule(&env->napi[0]);
	local_bh_enable();
	err = set_cpus_allowed_ptr(t, cpumask_of(b));
	err2 = pp_poll_plan_wait(env);
	env->job_cpu1 = 0;
	set_cpus_allowed_ptr(t, cpu_possible_mask);
	if (!err2 && env->poll_where.cpu != b)
		err2 = -EXDEV;
	return err ?: err2;
}

/* BH disabled, napi[0] scheduled on this CPU but its poll not yet run. */
static int pp_ctx_bh_napi_scheduled(struct pp_env *env)
{
	reinit_completion(&env->poll_done);
	env->poll_fn = NULL;

	local_bh_disable();
	napi_schedule(&env->napi[0]);
	pp_job_run_here(env);
	local_bh_enable();	/* runs the (empty) poll, list_owner -> -1 */

	if (!wait_for_completion_timeout(&env->poll_done, PP_WAIT))
		return -ETIMEDOUT;
	return 0;
}

/* BH disabled, no NAPI scheduled anywhere (list_owner == -1). */
static int pp_ctx_bh_napi_idle(struct pp_env *env)
{
	local_bh_disable();
	pp_job_run_here(env);
	local_bh_enable();
	return 0;
}

/* Work on env->work_cpu, BH disabled or not per env->work_bh. */
static int pp_ctx_work(struct pp_env *env)
{
	env->work_fn = pp_job_run_here;
	return pp_run_work(env);
}

static void pp_spin_until(struct pp_env *env, atomic_t *flag)
{
	u64 deadline = ktime_get_ns() + PP_SPIN_NS;

	while (!atomic_read_acquire(flag)) {
		if (ktime_get_ns() > deadline) {
			env->err = -ETIMEDOUT;
			return;
		}
		cpu_relax();
	}
}

/*
 * Poll callback: while this NAPI sits on this CPU's poll list (list_owner ==
 * this CPU), return the job's pages from a BH-disabled work item on another
 * CPU - the cpumap situation of commit 2b986b9e917b.  The poll spins (bounded)
 * until the work is done, so the owner never touches the pool concurrently.
 */
static void pp_poll_other_cpu(struct pp_env *env)
{
	unsigned int cpu = smp_processor_id();
	unsigned int other = cpumask_any_but(cpu_online_mask, cpu);

	if (other >= nr_cpu_ids) {
		env->err = -ENODEV;
		return;
	}
	env->work_cpu = other;
	env->work_bh = true;
	env->work_fn = pp_job_run_here;
	reinit_completion(&env->work_done);
	atomic_set(&env->work_finished, 0);
	queue_work_on(other, system_percpu_wq, &env->work);
	pp_spin_until(env, &env->work_finished);
}

static int pp_ctx_other_cpu_in_poll(struct pp_env *env)
{
	int err = pp_kick_poll(env, pp_poll_other_cpu);

	/* The work may outlive a timed-out spin: always wait for it. */
	flush_work(&env->work);
	return err;
}

/*
 * Poll callback: fire a pinned HARD hrtimer on this CPU while the poll runs
 * and spin (bounded) until its callback ran in hard-irq context.
 */
static void pp_poll_hardirq(struct pp_env *env)
{
	atomic_set(&env->timer_fired, 0);
	hrtimer_start(&env->timer, ns_to_ktime(PP_TIMER_NS),
		      HRTIMER_MODE_REL_PINNED_HARD);
	pp_spin_until(env, &env->timer_fired);
}

/*
 * Poll callback: return the job's page from the owner's poll with
 * interrupts disabled, not in a hard IRQ (netpoll's completion queue,
 * a driver's TX clean under spin_lock_irqsave()).
 */
static void pp_poll_irqs_off(struct pp_env *env)
{
	unsigned long flags;

	local_irq_save(flags);
	pp_job_run_here(env);
	local_irq_restore(flags);
}

/* ---- assertions ----------------------------------------------------- */

enum pp_owner_want {
	PP_OWN_ANY,
	PP_OWN_SELF,	/* list_owner == recording CPU */
	PP_OWN_NONE,	/* list_owner == -1 */
	PP_OWN_OTHER,	/* list_owner is another CPU */
};

struct pp_case {
	const char *ctx;
	int (*run)(struct pp_env *env);
	bool local[PP_MAX_POOL];	/* page_pool_napi_local() per pool */
	int softirq;			/* -1: don't care */
	int serving;			/* -1: don't care */
	int cpu;			/* -1: don't care */
	enum pp_owner_want owner[PP_MAX_NAPI];
};

/*
 * PREEMPT_RT: page_pool_napi_local() is always false there (the softirq
 * can be preempted by the consumer), on 7.3 and on the series, so every
 * return page_pool decides goes to the ring, in every context; only
 * 7.3's forced napi_direct (base_direct) still fills the cache.
 */
static bool pp_napi_local(bool local)
{
	return local && !IS_ENABLED(CONFIG_PREEMPT_RT);
}

static bool pp_expect_cached(bool local, enum pp_api api)
{
	return pp_napi_local(local) || (pp_base && pp_apis[api].base_direct);
}

static void pp_snap(struct pp_env *env, struct page_pool_stats *s)
{
	unsigned int i;

	memset(s, 0, sizeof(*s) * PP_MAX_POOL);
	for (i = 0; i < PP_MAX_POOL; i++)
		if (env->pp[i].pool)
			page_pool_get_stats(env->pp[i].pool, &s[i]);
}

static void pp_expect_delta(struct kunit *test, const char *api,
			    const char *ctx, unsigned int idx,
			    const struct page_pool_stats *b,
			    const struct page_pool_stats *a,
			    u64 cached, u64 ring)
{
	const struct page_pool_recycle_stats *rb = &b->recycle_stats;
	const struct page_pool_recycle_stats *ra = &a->recycle_stats;

	KUNIT_EXPECT_EQ_MSG(test, (u64)(ra->cached - rb->cached), cached,
			    "%s in %s: pool%u recycle.cached", api, ctx, idx);
	KUNIT_EXPECT_EQ_MSG(test, (u64)(ra->ring - rb->ring), ring,
			    "%s in %s: pool%u recycle.ring", api, ctx, idx);
	KUNIT_EXPECT_EQ_MSG(test, (u64)(ra->cache_full - rb->cache_full), 0ULL,
			    "%s in %s: pool%u recycle.cache_full", api, ctx,
			    idx);
	KUNIT_EXPECT_EQ_MSG(test, (u64)(ra->ring_full - rb->ring_full), 0ULL,
			    "%s in %s: pool%u recycle.ring_full", api, ctx,
			    idx);
	KUNIT_EXPECT_EQ_MSG(test,
			    (u64)(ra->released_refcnt - rb->released_refcnt),
			    0ULL, "%s in %s: pool%u recycle.released_refcnt",
			    api, ctx, idx);
}

static void pp_expect_where(struct kunit *test, const struct pp_case *c,
			    const struct pp_where *w, const char *api)
{
	unsigned int i;

	KUNIT_ASSERT_TRUE_MSG(test, w->recorded, "%s in %s: never ran", api,
			      c->ctx);
	if (c->softirq >= 0)
		KUNIT_EXPECT_EQ_MSG(test, w->softirq, !!c->softirq,
				    "%s in %s: in_softirq()", api, c->ctx);
	if (c->serving >= 0)
		KUNIT_EXPECT_EQ_MSG(test, w->serving, !!c->serving,
				    "%s in %s: in_serving_softirq()", api,
				    c->ctx);
	if (c->cpu >= 0)
		KUNIT_EXPECT_EQ_MSG(test, w->cpu, c->cpu, "%s in %s: CPU", api,
				    c->ctx);
	KUNIT_EXPECT_FALSE_MSG(test, w->hardirq, "%s in %s: in_hardirq()",
			       api, c->ctx);

	for (i = 0; i < PP_MAX_NAPI; i++) {
		switch (c->owner[i]) {
		case PP_OWN_SELF:
			KUNIT_EXPECT_EQ_MSG(test, w->list_owner[i], w->cpu,
					    "%s in %s: napi%u list_owner", api,
					    c->ctx, i);
			break;
		case PP_OWN_NONE:
			KUNIT_EXPECT_EQ_MSG(test, w->list_owner[i], -1,
					    "%s in %s: napi%u list_owner", api,
					    c->ctx, i);
			break;
		case PP_OWN_OTHER:
			KUNIT_EXPECT_GE_MSG(test, w->list_owner[i], 0,
					    "%s in %s: napi%u list_owner", api,
					    c->ctx, i);
			KUNIT_EXPECT_NE_MSG(test, w->list_owner[i], w->cpu,
					    "%s in %s: napi%u list_owner", api,
					    c->ctx, i);
			break;
		default:
			break;
		}
	}
}

static void pp_check_api(struct kunit *test, struct pp_env *env,
			 const struct pp_case *c, enum pp_api api)
{
	const struct pp_api_desc *d = &pp_apis[api];
	struct page_pool_stats before[PP_MAX_POOL], after[PP_MAX_POOL];
	unsigned int n[PP_MAX_POOL] = { d->pages, d->pages2 };
	unsigned int i;
	int err;

	err = pp_job_prep(env, api);
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "%s: preparing pages", d->name);

	pp_snap(env, before);
	err = c->run(env);
	pp_snap(env, after);

	KUNIT_EXPECT_EQ_MSG(test, err, 0, "%s in %s: context failed", d->name,
			    c->ctx);
	KUNIT_ASSERT_TRUE_MSG(test, env->job.done, "%s in %s: not returned",
			      d->name, c->ctx);
	pp_expect_where(test, c, &env->job.where, d->name);

	for (i = 0; i < PP_MAX_POOL; i++) {
		bool cached = pp_expect_cached(c->local[i], api);

		if (!n[i])
			continue;
		pp_expect_delta(test, d->name, c->ctx, i, &before[i], &after[i],
				cached ? n[i] : 0, cached ? 0 : n[i]);
		kunit_info(test, "%s: pool%u %u page(s) -> %s (cached +%llu ring +%llu)%s\n",
			   d->name, i, n[i], cached ? "cache" : "ring",
			   after[i].recycle_stats.cached -
			   before[i].recycle_stats.cached,
			   after[i].recycle_stats.ring -
			   before[i].recycle_stats.ring,
			   cached && !c->local[i] ?
			   " [base: forced napi_direct]" : "");
	}
}

/* The kernel has this API (the _rx_napi ones exist on base 7.3 only). */
static bool pp_api_available(enum pp_api api)
{
	return !pp_apis[api].rx_napi || pp_rx_napi;
}

static void pp_check_all(struct kunit *test, struct pp_env *env,
			 const struct pp_case *c)
{
	unsigned int api;

	for (api = 0; api < PP_NR_SINGLE_POOL_API; api++)
		if (pp_api_available(api))
			pp_check_api(test, env, c, api);
}

KUNIT_DEFINE_ACTION_WRAPPER(pp_env_destroy_action, pp_env_destroy,
			    struct pp_env *);

static void pp_case_start(struct kunit *test)
{
	if (bench == 2)
		kunit_skip(test, "bench=2: benchmark only");
}

static struct pp_env *pp_setup(struct kunit *test, unsigned int nr_napi,
			       bool threaded)
{
	struct pp_env *env;
	int err;

	pp_case_start(test);
	env = pp_env_create(nr_napi, threaded);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, env);
	err = kunit_add_action_or_reset(test, pp_env_destroy_action, env);
	KUNIT_ASSERT_EQ(test, err, 0);
	return env;
}

static void pp_add_pool(struct kunit *test, struct pp_env *env,
			unsigned int idx, struct napi_struct *napi, int cpuid)
{
	int err = pp_env_add_pool(env, idx, napi, cpuid);

	KUNIT_ASSERT_EQ_MSG(test, err, 0, "creating pool%u", idx);
}

/* An online CPU other than @cpu, or skip the case. */
static unsigned int pp_other_cpu(struct kunit *test, unsigned int cpu)
{
	unsigned int other = cpumask_any_but(cpu_online_mask, cpu);

	if (other >= nr_cpu_ids)
		kunit_skip(test, "needs two online CPUs");
	return other;
}

/* ---- test cases ----------------------------------------------------- */

/* The expectation in force must match what the running kernel looks like. */
static void pp_expect_mode(struct kunit *test)
{
	kunit_info(test, "expect=%s: asserting %s behaviour; kernel %s xdp_return_frame_rx_napi\n",
		   expect, pp_base ? "base 7.3" : "series",
		   pp_probe_base ? "exports" : "does not export");
	if (!strcmp(expect, "auto"))
		return;
	KUNIT_EXPECT_EQ_MSG(test, pp_probe_base, pp_base,
			    "expect=%s, but xdp_return_frame_rx_napi is %s (base 7.3 exports it, the series removes it)",
			    expect, pp_probe_base ? "exported" : "not exported");
}

/* Process context, BH enabled: in_softirq() is false -> ring. */
static void pp_process_bh_enabled(struct kunit *test)
{
	struct pp_env *env = pp_setup(test, 1, false);
	struct pp_case c = {
		.ctx = "process context", .run = pp_ctx_process,
		.local = { false }, .softirq = 0, .serving = 0, .cpu = -1,
		.owner = { PP_OWN_NONE },
	};

	pp_add_pool(test, env, 0, &env->napi[0], -1);
	pp_check_all(test, env, &c);
}

/* Inside the poll of the NAPI that owns the pool -> cached. */
static void pp_napi_poll_owner(struct kunit *test)
{
	struct pp_env *env = pp_setup(test, 1, false);
	struct pp_case c = {
		.ctx = "owner NAPI poll", .run = pp_ctx_napi_poll,
		.local = { true }, .softirq = 1, .serving = 1, .cpu = -1,
		.owner = { PP_OWN_SELF },
	};

	pp_add_pool(test, env, 0, &env->napi[0], -1);
	pp_check_all(test, env, &c);
}

/* Same, the pool handed to the NAPI by page_pool_enable_direct_recycling(). */
static void pp_napi_poll_owner_enable_direct(struct kunit *test)
{
	struct pp_env *env = pp_setup(test, 1, false);
	struct pp_case c = {
		.ctx = "owner NAPI poll (enable_direct_recycling)",
		.run = pp_ctx_napi_poll,
		.local = { true }, .softirq = 1, .serving = 1, .cpu = -1,
		.owner = { PP_OWN_SELF },
	};

	pp_add_pool(test, env, 0, NULL, -1);
	page_pool_enable_direct_recycling(env->pp[0].pool, &env->napi[0]);
	pp_check_all(test, env, &c);
}

/* BH disabled on the CPU the owner NAPI is scheduled on -> cached. */
static void pp_bh_owner_napi_scheduled(struct kunit *test)
{
	struct pp_env *env = pp_setup(test, 1, false);
	struct pp_case c = {
		.ctx = "BH off, owner NAPI scheduled here",
		.run = pp_ctx_bh_napi_scheduled,
		.local = { true }, .softirq = 1, .serving = 0, .cpu = -1,
		.owner = { PP_OWN_SELF },
	};

	pp_add_pool(test, env, 0, &env->napi[0], -1);
	pp_check_all(test, env, &c);
}

/* BH disabled, owner NAPI not scheduled (list_owner == -1) -> ring. */
static void pp_bh_owner_napi_idle(struct kunit *test)
{
	struct pp_env *env = pp_setup(test, 1, false);
	struct pp_case c = {
		.ctx = "BH off, owner NAPI idle", .run = pp_ctx_bh_napi_idle,
		.local = { false }, .softirq = 1, .serving = 0, .cpu = -1,
		.owner = { PP_OWN_NONE },
	};

	pp_add_pool(test, env, 0, &env->napi[0], -1);
	pp_check_all(test, env, &c);
}

/* BH off on another CPU while the owner NAPI polls -> ring (2b986b9e917b). */
static void pp_bh_other_cpu_owner_polling(struct kunit *test)
{
	struct pp_env *env = pp_setup(test, 1, false);
	struct pp_case c = {
		.ctx = "BH off on another CPU, owner NAPI polling",
		.run = pp_ctx_other_cpu_in_poll,
		.local = { false }, .softirq = 1, .serving = 0, .cpu = -1,
		.owner = { PP_OWN_OTHER },
	};
	pp_other_cpu(test, raw_smp_processor_id());
	pp_add_pool(test, env, 0, &env->napi[0], -1);
	pp_check_all(test, env, &c);
	KUNIT_EXPECT_EQ(test, env->poll_where.list_owner[0],
			env->poll_where.cpu);
}

/* Pool without NAPI and cpuid -1, returned inside some NAPI poll -> ring. */
static void pp_no_napi_pool_in_poll(struct kunit *test)
{
	struct pp_env *env = pp_setup(test, 1, false);
	struct pp_case c = {
		.ctx = "NAPI poll, pool without NAPI/cpuid",
		.run = pp_ctx_napi_poll,
		.local = { false }, .softirq = 1, .serving = 1, .cpu = -1,
		.owner = { PP_OWN_SELF },
	};

	pp_add_pool(test, env, 0, NULL, -1);
	pp_check_all(test, env, &c);
}

/* Per-CPU pool, BH disabled on its CPU -> cached. */
static void pp_percpu_pool_owner_cpu_bh(struct kunit *test)
{
	struct pp_env *env = pp_setup(test, 1, false);
	struct pp_case c = {
		.ctx = "per-CPU pool, BH off on its CPU", .run = pp_ctx_work,
		.local = { true }, .softirq = 1, .serving = 0,
		.owner = { PP_OWN_NONE },
	};
	unsigned int cpu = cpumask_first(cpu_online_mask);

	c.cpu = cpu;
	env->work_cpu = cpu;
	env->work_bh = true;
	pp_add_pool(test, env, 0, NULL, cpu);
	pp_check_all(test, env, &c);
}

/* Per-CPU pool, BH disabled on another CPU -> ring. */
static void pp_percpu_pool_other_cpu_bh(struct kunit *test)
{
	struct pp_env *env = pp_setup(test, 1, false);
	struct pp_case c = {
		.ctx = "per-CPU pool, BH off on another CPU",
		.run = pp_ctx_work,
		.local = { false }, .softirq = 1, .serving = 0,
		.owner = { PP_OWN_NONE },
	};
	unsigned int cpu = cpumask_first(cpu_online_mask);
	unsigned int other = pp_other_cpu(test, cpu);

	c.cpu = other;
	env->work_cpu = other;
	env->work_bh = true;
	pp_add_pool(test, env, 0, NULL, cpu);
	pp_check_all(test, env, &c);
}

/* Per-CPU pool, process context (BH enabled) on its CPU -> ring. */
static void pp_percpu_pool_owner_cpu_process(struct kunit *test)
{
	struct pp_env *env = pp_setup(test, 1, false);
	struct pp_case c = {
		.ctx = "per-CPU pool, process context on its CPU",
		.run = pp_ctx_work,
		.local = { false }, .softirq = 0, .serving = 0,
		.owner = { PP_OWN_NONE },
	};
	unsigned int cpu = cpumask_first(cpu_online_mask);

	c.cpu = cpu;
	env->work_cpu = cpu;
	env->work_bh = false;
	pp_add_pool(test, env, 0, NULL, cpu);
	pp_check_all(test, env, &c);
}

/*
 * Threaded NAPI: the poll runs in a kthread under local_bh_disable(), so
 * in_softirq() is true, but ____napi_schedule() wakes the thread instead of
 * queueing on a poll list.  Base 7.3: list_owner stays -1 -> ring, even in
 * the poll (only the APIs that force napi_direct reach the cache).  Series:
 * the kthread claims list_owner for the poll -> cached.
 */
static void pp_threaded_napi_poll(struct kunit *test)
{
	struct pp_env *env = pp_setup(test, 1, true);
	struct pp_case c = {
		.ctx = "threaded NAPI poll", .run = pp_ctx_napi_poll,
		.local = { !pp_base }, .softirq = 1, .serving = 0, .cpu = -1,
		.owner = { pp_base ? PP_OWN_NONE : PP_OWN_SELF },
	};

	pp_add_pool(test, env, 0, &env->napi[0], -1);
	pp_check_all(test, env, &c);
	KUNIT_EXPECT_NE(test, env->poll_where.cpu, -1);
	KUNIT_EXPECT_FALSE(test, env->poll_where.serving);
}

/*
 * Busy poll: napi_busy_loop() polls the NAPI from process context with BH
 * disabled; the instance is on no poll list.  Base 7.3: list_owner -1 ->
 * ring (but for the forced APIs).  Series: the busy poller claims it for
 * the poll -> cached.
 */
static void pp_busy_poll(struct kunit *test)
{
	struct pp_env *env = pp_setup(test, 1, false);
	struct pp_case c = {
		.ctx = "busy poll", .run = pp_ctx_busy_poll,
		.local = { !pp_base }, .softirq = 1, .serving = 0, .cpu = -1,
		.owner = { pp_base ? PP_OWN_NONE : PP_OWN_SELF },
	};

	if (!IS_ENABLED(CONFIG_NET_RX_BUSY_POLL))
		kunit_skip(test, "CONFIG_NET_RX_BUSY_POLL=n");
	pp_add_pool(test, env, 0, &env->napi[0], -1);
	pp_check_all(test, env, &c);
}

/* Busy poll of napi[0], pool owned by idle napi[1] -> ring on both. */
static void pp_busy_poll_other_napi(struct kunit *test)
{
	struct pp_env *env = pp_setup(test, 2, false);
	struct pp_case c = {
		.ctx = "busy poll of another NAPI", .run = pp_ctx_busy_poll,
		.local = { false }, .softirq = 1, .serving = 0, .cpu = -1,
		.owner = { PP_OWN_ANY, PP_OWN_NONE },
	};

	if (!IS_ENABLED(CONFIG_NET_RX_BUSY_POLL))
		kunit_skip(test, "CONFIG_NET_RX_BUSY_POLL=n");
	pp_add_pool(test, env, 0, &env->napi[1], -1);
	pp_check_all(test, env, &c);
}

/*
 * A claim-lifetime case: napi[0] (threaded or busy-polled) owns pool 0;
 * every API is returned in @c's context.  The env is the test's, for the
 * case's own check of how many polls ran.
 */
static struct pp_env *pp_claim_case(struct kunit *test,
				    const struct pp_case *c, bool threaded)
{
	struct pp_env *env = pp_setup(test, 1, threaded);

	if (!threaded && !IS_ENABLED(CONFIG_NET_RX_BUSY_POLL))
		kunit_skip(test, "CONFIG_NET_RX_BUSY_POLL=n");
	pp_add_pool(test, env, 0, &env->napi[0], -1);
	pp_check_all(test, env, c);
	return env;
}

/*
 * Between two polls of a busy loop (loop_end, BH disabled): the claim of
 * the poll before is gone, list_owner is -1 -> ring on base and series (but
 * for the APIs 7.3 forces direct).  A claim that outlives its poll fails.
 */
static void pp_busy_poll_between_polls(struct kunit *test)
{
	struct pp_env *env;
	struct pp_case c = {
		.ctx = "busy loop, between polls", .run = pp_ctx_busy_poll_between,
		.local = { false }, .softirq = 1, .serving = 0, .cpu = -1,
		.owner = { PP_OWN_NONE },
	};

	env = pp_claim_case(test, &c, false);
	KUNIT_EXPECT_GE(test, env->poll_calls, 2U);
}

/*
 * In busy_poll_stop()'s poll: the series claims that poll too -> cached;
 * base -> ring (but for the forced APIs).
 */
static void pp_busy_poll_stop_poll(struct kunit *test)
{
	struct pp_env *env;
	struct pp_case c = {
		.ctx = "busy_poll_stop() poll", .run = pp_ctx_busy_poll_stop,
		.local = { !pp_base }, .softirq = 1, .serving = 0, .cpu = -1,
		.owner = { pp_base ? PP_OWN_NONE : PP_OWN_SELF },
	};

	env = pp_claim_case(test, &c, false);
	KUNIT_EXPECT_EQ(test, env->poll_calls, 2U);
}

/*
 * busy_poll_stop()'s poll completes with NAPI_STATE_MISSED set, which
 * reschedules the instance on this CPU (list_owner = this CPU).  Releasing
 * the busy poller's claim must keep that owner: NET_RX's poll of the
 * instance, in_serving_softirq(), then recycles directly, as on base.  A
 * release that clears list_owner whenever it names this CPU leaves the
 * rescheduled instance with list_owner == -1 -> ring.
 */
static void pp_busy_poll_missed_resched(struct kunit *test)
{
	struct pp_env *env;
	struct pp_case c = {
		.ctx = "NET_RX poll after a MISSED reschedule in busy_poll_stop()",
		.run = pp_ctx_busy_poll_missed,
		.local = { true }, .softirq = 1, .serving = 1, .cpu = -1,
		.owner = { PP_OWN_SELF },
	};

	env = pp_claim_case(test, &c, false);
	KUNIT_EXPECT_EQ(test, env->poll_calls, 3U);
}

/*
 * Threaded NAPI, the job in the kthread's second poll after one that used
 * its whole budget: each poll makes its own claim -> cached on the series;
 * base -> ring (but for the forced APIs).
 */
static void pp_threaded_napi_repoll(struct kunit *test)
{
	struct pp_env *env;
	struct pp_case c = {
		.ctx = "threaded NAPI, poll after a full-budget poll",
		.run = pp_ctx_threaded_repoll,
		.local = { !pp_base }, .softirq = 1, .serving = 0, .cpu = -1,
		.owner = { pp_base ? PP_OWN_NONE : PP_OWN_SELF },
	};

	env = pp_claim_case(test, &c, true);
	KUNIT_EXPECT_EQ(test, env->poll_calls, 2U);
}

/*
 * Threaded NAPI, the job in the first poll after the kthread moved to
 * another CPU: each poll claims the CPU it runs on -> cached on the series,
 * list_owner that CPU.  A claim made once per kthread wake-up (outside the
 * poll loop) would still name the old CPU: ring, and the old CPU's softirqs
 * could recycle into the pool while the kthread refills it elsewhere.
 */
static void pp_threaded_napi_migrated(struct kunit *test)
{
	struct pp_case c = {
		.ctx = "threaded NAPI, poll after the kthread moved CPU",
		.run = pp_ctx_threaded_migrated,
		.local = { !pp_base }, .softirq = 1, .serving = 0, .cpu = -1,
		.owner = { pp_base ? PP_OWN_NONE : PP_OWN_SELF },
	};

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs 2 online CPUs");
	pp_claim_case(test, &c, true);
}

/*
 * One bulk mixing pool 0 (owned by the running napi0) and pool 1 (owned by
 * napi1, idle): page_pool_put_netmem_bulk() decides once per pool, so
 * pool 0's pages are cached and pool 1's go to the ring.
 */
static void pp_mixed_pool_bulk_in_poll(struct kunit *test)
{
	struct pp_env *env = pp_setup(test, 2, false);
	struct pp_case c = {
		.ctx = "owner NAPI poll, bulk of two pools",
		.run = pp_ctx_napi_poll,
		.local = { true, false }, .softirq = 1, .serving = 1,
		.cpu = -1, .owner = { PP_OWN_SELF, PP_OWN_NONE },
	};

	pp_add_pool(test, env, 0, &env->napi[0], -1);
	pp_add_pool(test, env, 1, &env->napi[1], -1);
	pp_check_api(test, env, &c, PP_MIX_BULK);
	pp_check_api(test, env, &c, PP_MIX_FRAME_BULK);
}

/* ---- bulk accounting ------------------------------------------------ */

/*
 * The cases above prove where one pool's decision sends a page.  These
 * prove that a bulk return accounts for every page exactly, in
 * page_pool_put_netmem_bulk() (one pass per run of one pool's pages, the
 * cache's count kept aside and written back at the end, the stats added
 * once per run, foreign pages kept for another round, arrays longer than
 * XDP_BULK_QUEUE_SIZE taken in chunks) and in xdp_return_frame_bulk() (an
 * inline fast path, the rest out of line): how many pages went to the
 * lockless cache (recycle.cached), how many did not fit (cache_full, then
 * the ring), how many went to the ring, how many left the pool
 * (released_refcnt); and that every page comes back exactly once: the
 * cache's count is what it should be, the pages can be allocated back from
 * the cache and the ring, each once and no other, and the pool's count of
 * pages in flight moved by the released ones only.
 *
 * Before each row the test takes every page out of both pools' cache and
 * ring (it allocates them) and gives a given number back to the cache
 * ("fill"), as the owner would (allow_direct, BH off), so that the room
 * the cache has is exact.  Each row states its expected deltas.  Base 7.3
 * accounts the same way, but it copies a pool's non-cached pages into a
 * 16-entry stack array: rows that send more than XDP_BULK_QUEUE_SIZE pages
 * of a pool to the ring in one call are series only.
 *
 * The ring-full rows (cases pp_ring_full_*) run on pools with a small
 * ptr_ring (PP_RING_SMALL) and also give a number of pages to the ring
 * before the call ("ring fill"), as a non-owner would, so that the room
 * the ring has is exact too; they state how many pages the ring refuses
 * (recycle.ring_full, one per page on the series, one per refusing
 * page_pool_recycle_ring_bulk() call on base 7.3).
 */

#define PP_BULK_MAX		48	/* netmems in one page_pool_put_netmem_bulk() */
#define PP_FBULK_MAX		24	/* frames in one xdp_return_frame_bulk() row */
#define PP_BULK_MAX_PAGES	(PP_FBULK_MAX * (1 + PP_NR_FRAGS))
#define PP_HELD_MAX		1024	/* pages of one pool in the test's hands */
#define PP_ROOM(k)		(PP_ALLOC_CACHE_SIZE - (k))	/* fill: k free */
#define PP_CANARY		((__force netmem_ref)0x5a5a5a5a5a5a5a5aUL)
#define PP_WANT(c, f, r, rel)	{ .cached = (c), .cache_full = (f), \
				  .ring = (r), .released = (rel) }
/* Not the owner: ring pages, released_refcnt, pages the ring refused and
 * base 7.3's ring_full for them (one per refusing producer call).
 */
#define PP_WANT_RF(r, rel, rf, rf_base) \
				{ .ring = (r), .released = (rel), \
				  .ring_full = (rf), .ring_full_base = (rf_base) }
#define PP_RING_SMALL		16	/* ptr_ring of the ring-full cases */
#define PP_FILLED_MAX		(PP_ALLOC_CACHE_SIZE + PP_RING_SMALL)

struct pp_bulk_want {
	unsigned int cached;
	unsigned int cache_full;	/* of which: did not fit, to the ring */
	unsigned int ring;
	unsigned int released;		/* released_refcnt */
	/*
	 * Pages the ptr_ring refused: released to the page allocator, each
	 * counted in recycle.ring_full (series, patch "page_pool: count every
	 * page a full ring refuses in bulk returns").  Base 7.3 counts one
	 * per page_pool_recycle_ring_bulk() call that met a full ring:
	 * ring_full_base, asserted with expect=base.
	 */
	unsigned int ring_full;
	unsigned int ring_full_base;
};

/*
 * A page_pool_put_netmem_bulk() row: @pattern, repeated to @nr entries,
 * one letter per netmem of the array:
 *   'a'  a page of pool 0 (A), its only reference
 *   'b'  a page of pool 1 (B), its only reference
 *   'g'  a page of A with an elevated page refcount (get_page()): it
 *        cannot be recycled, the pool lets it go (released_refcnt)
 *   'd'  a page of A with pp_ref_count 2 (page_pool_ref_netmem(), a
 *        fragment user's second reference); 'D' the same page again: the
 *        last reference, the page is recycled once, there
 *   'h'  a page of A with pp_ref_count 2, once: the caller keeps a
 *        reference, the page must be left alone
 */
struct pp_bulk_row {
	const char *name;
	const char *pattern;
	unsigned int nr;
	unsigned int fill[PP_MAX_POOL];	/* each pool's alloc.count before */
	const struct pp_case *ctx;
	struct pp_bulk_want want[PP_MAX_POOL];
	unsigned int ring_fill[PP_MAX_POOL];	/* pages in each ring before */
	/* more than XDP_BULK_QUEUE_SIZE pages of a pool for the ring in one
	 * call: base 7.3 would overflow its stack array; not run there
	 */
	bool series_only;
};

/*
 * An xdp_return_frame_bulk() row: @frames, one letter per frame, returned
 * through one bulk, then xdp_flush_frame_bulk():
 *   's'  a single-buffer frame of pool 0 (the inline fast path)
 *   'm'  a frame of pool 0 with PP_NR_FRAGS frags (out of line)
 *   'o'  a MEM_TYPE_PAGE_ORDER0 frame: freed at once, never bulked
 *   'b'  a single-buffer frame of pool 1 (B)
 * After each frame: the bulk's count, and how many of pool 0's pages were
 * returned to it by then (cached + ring), i.e. when the bulk flushed.
 */
struct pp_fbulk_row {
	const char *name;
	const char *frames;
	unsigned int fill;		/* pool 0's alloc.count before */
	const struct pp_case *ctx;
	u8 count[PP_FBULK_MAX];
	u8 returned[PP_FBULK_MAX];
	struct pp_bulk_want want;	/* pool 0, after the flush */
	struct pp_bulk_want want_b;	/* pool 1 ('b' frames) */
	unsigned int ring_fill[PP_MAX_POOL];	/* pages in each ring before */
};

struct pp_bulk_page {
	struct page *page;
	unsigned int pool;		/* PP_MAX_POOL: an ORDER0 page */
	char kind;
};

/* Pages of a pool in the test's hands: out of its cache and ring. */
struct pp_held {
	struct page **pages;
	unsigned int nr;
	struct page **filled;		/* given to the cache and ring as fill */
	unsigned int nr_filled;
};

/* One row's call, prepared in process context. */
struct pp_bulk_call {
	const struct pp_bulk_row *row;		/* one of the two */
	const struct pp_fbulk_row *frow;
	unsigned int nr;			/* netmems, or frames */
	netmem_ref data[PP_BULK_MAX];
	struct xdp_frame *frames[PP_FBULK_MAX];
	struct page *o0[PP_FBULK_MAX];		/* page of an 'o' frame */
	struct {
		struct xdp_frame_bulk bq;
		netmem_ref canary[2];		/* nothing writes past q[] */
	} b;
	/* recorded in the context, after each xdp_return_frame_bulk() */
	int count[PP_FBULK_MAX];
	u64 returned[PP_FBULK_MAX];		/* pool 0's cached + ring */
	int o0_ref[PP_FBULK_MAX];
	unsigned int nr_pages;
	struct pp_bulk_page pages[PP_BULK_MAX_PAGES];
	bool prepared;
	bool done;
};

struct pp_bulk_job {
	struct pp_bulk_call c;
	struct pp_held held[PP_MAX_POOL];
	struct pp_pool o0;			/* MEM_TYPE_PAGE_ORDER0 rxq */
};

static const struct pp_case pp_bulk_owner = {
	.ctx = "owner NAPI poll (of A; B's NAPI idle)",
	.run = pp_ctx_napi_poll,
	.local = { true, false }, .softirq = 1, .serving = 1, .cpu = -1,
	.owner = { PP_OWN_SELF, PP_OWN_NONE },
};

static const struct pp_case pp_bulk_process = {
	.ctx = "process context", .run = pp_ctx_process,
	.local = { false, false }, .softirq = 0, .serving = 0, .cpu = -1,
	.owner = { PP_OWN_NONE, PP_OWN_NONE },
};

/* cpumap/devmap: BH-disabled work on CPU B while A's owner polls on CPU A */
static const struct pp_case pp_bulk_other_cpu = {
	.ctx = "BH-disabled work on another CPU while A's owner polls",
	.run = pp_ctx_other_cpu_in_poll,
	.local = { false, false }, .softirq = 1, .serving = 0, .cpu = -1,
	.owner = { PP_OWN_OTHER, PP_OWN_NONE },
};

/* Base 7.3 (or expecting it): no more than 16 ring pages per call. */
static bool pp_kernel_is_base(void)
{
	return pp_base || pp_probe_base;
}

static int pp_pool_inflight(const struct page_pool *pool)
{
	return (int)(pool->pages_state_hold_cnt -
		     (u32)atomic_read(&pool->pages_state_release_cnt));
}

/* A pool's page counters: pages taken from the page allocator, given back */
struct pp_acct {
	u32 hold;
	u32 release;
};

static void pp_acct_read(const struct page_pool *pool, struct pp_acct *a)
{
	a->hold = READ_ONCE(pool->pages_state_hold_cnt);
	a->release = (u32)atomic_read(&pool->pages_state_release_cnt);
}

/*
 * A row's want for a pool as this kernel must give it (what
 * pp_bulk_check_pool() asserts): on PREEMPT_RT the owner context is not
 * local either (pp_napi_local()), so the pages the row caches go to the
 * ring with the others, which takes what room it has (@ring_size less
 * @ring_fill) and refuses the rest.  Base 7.3 on RT is not run
 * (ring_full_base: one refusing call assumed).
 */
static const struct pp_bulk_want *pp_want_here(const struct pp_bulk_want *w,
					       bool local, unsigned int ring_size,
					       unsigned int ring_fill,
					       struct pp_bulk_want *buf)
{
	unsigned int total = w->cached + w->ring + w->ring_full;
	unsigned int room = ring_size - ring_fill;

	if (!local || pp_napi_local(local))
		return w;
	*buf = *w;
	buf->cached = 0;
	buf->cache_full = 0;
	buf->ring = min(total, room);
	buf->ring_full = total - buf->ring;
	buf->ring_full_base = !!buf->ring_full;
	return buf;
}

/* The ring_full a row asserts: per page, or base 7.3's per call. */
static unsigned int pp_want_ring_full(const struct pp_bulk_want *w)
{
	return pp_base ? w->ring_full_base : w->ring_full;
}

/* Runs in the context under test. */
static void pp_fbulk_record(struct pp_env *env, struct pp_bulk_call *c,
			    unsigned int i)
{
	struct page_pool_stats s = {};

	c->count[i] = c->b.bq.count;
	page_pool_get_stats(env->pp[0].pool, &s);
	c->returned[i] = s.recycle_stats.cached + s.recycle_stats.ring;
	c->o0_ref[i] = c->o0[i] ? page_ref_count(c->o0[i]) : 0;
}

static void pp_bulk_exec(struct pp_env *env)
{
	struct bpf_net_context __bpf_net_ctx, *bpf_net_ctx;
	struct pp_bulk_call *c = &env->bulk->c;
	unsigned int i;

	bpf_net_ctx = bpf_net_ctx_set(&__bpf_net_ctx);
	if (c->row) {
		page_pool_put_netmem_bulk(c->data, c->nr);
	} else {
		xdp_frame_bulk_init(&c->b.bq);
		rcu_read_lock();
		for (i = 0; i < c->nr; i++) {
			xdp_return_frame_bulk(c->frames[i], &c->b.bq);
			pp_fbulk_record(env, c, i);
		}
		xdp_flush_frame_bulk(&c->b.bq);
		rcu_read_unlock();
	}
	bpf_net_ctx_clear(bpf_net_ctx);
	c->done = true;
}

static unsigned int pp_count_page(struct page **pages, unsigned int from,
				  unsigned int to, const struct page *page)
{
	unsigned int i, n = 0;

	for (i = from; i < to; i++)
		n += pages[i] == page;
	return n;
}

/*
 * Give back what the test holds: the call's pages (all of their references
 * if the call did not run; else the page reference of a 'g' page, the pp
 * reference of an 'h' page, ours on an ORDER0 page) and the pages taken
 * out of the pools.  Process context.
 */
static void pp_bulk_release(struct pp_env *env)
{
	struct pp_bulk_job *bj = env->bulk;
	struct pp_bulk_call *c;
	unsigned int i, j;

	if (!bj)
		return;
	c = &bj->c;
	for (i = 0; c->prepared && i < c->nr_pages; i++) {
		struct pp_bulk_page *bp = &c->pages[i];
		struct page_pool *pool;

		if (bp->pool == PP_MAX_POOL) {
			if (!c->done)
				put_page(bp->page);	/* the frame's */
			put_page(bp->page);		/* ours */
			continue;
		}
		pool = env->pp[bp->pool].pool;
		if (bp->kind == 'g')
			put_page(bp->page);
		if (!c->done)
			page_pool_put_full_page(pool, bp->page, false);
		if (!c->done && bp->kind == 'd')
			page_pool_put_full_page(pool, bp->page, false);
		/*
		 * The caller's reference of an 'h' page; unless a broken bulk
		 * recycled the page and the drain took it out again: then
		 * there is one reference left, the one in held.
		 */
		if (bp->kind == 'h' &&
		    (!c->done || !pp_count_page(bj->held[bp->pool].pages, 0,
						bj->held[bp->pool].nr,
						bp->page)))
			page_pool_put_full_page(pool, bp->page, false);
	}
	c->prepared = false;

	for (i = 0; i < PP_MAX_POOL; i++) {
		struct pp_held *h = &bj->held[i];

		for (j = 0; j < h->nr; j++)
			page_pool_put_full_page(env->pp[i].pool, h->pages[j],
						false);
		h->nr = 0;
		h->nr_filled = 0;
	}
}

static void pp_bulk_teardown(struct pp_env *env)
{
	struct pp_bulk_job *bj = env->bulk;

	pp_bulk_release(env);
	if (bj && bj->o0.rxq_reg)
		xdp_rxq_info_unreg(&bj->o0.rxq);
	env->exec = NULL;
	env->bulk = NULL;
}

KUNIT_DEFINE_ACTION_WRAPPER(pp_bulk_teardown_action, pp_bulk_teardown,
			    struct pp_env *);

/*
 * Two pools: A owned by napi0 (the one the owner context polls), B by napi1;
 * @pool_size: their ptr_ring's size (0: PP_POOL_SIZE).
 */
static struct pp_env *pp_bulk_setup_sized(struct kunit *test,
					  unsigned int pool_size)
{
	struct pp_env *env = pp_setup(test, 2, false);
	struct pp_bulk_job *bj;
	unsigned int i;
	int err;

	env->pool_size = pool_size;
	pp_add_pool(test, env, 0, &env->napi[0], -1);
	pp_add_pool(test, env, 1, &env->napi[1], -1);
	for (i = 0; pool_size && i < PP_MAX_POOL; i++) {
		const struct ptr_ring *r = &env->pp[i].pool->ring;

		/* page_pool_init(): ring size = pool_size (at most 16384) */
		KUNIT_ASSERT_EQ_MSG(test, r->size, (int)pool_size,
				    "pool%u: ptr_ring size", i);
		/* batch 1: a consumed slot is NULL at once, so the room
		 * of an emptied ring is its size, exactly
		 */
		KUNIT_ASSERT_EQ_MSG(test, r->batch, 1,
				    "pool%u: ptr_ring consumer batch", i);
	}

	bj = kunit_kzalloc(test, sizeof(*bj), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, bj);
	for (i = 0; i < PP_MAX_POOL; i++) {
		bj->held[i].pages = kunit_kcalloc(test, PP_HELD_MAX,
						  sizeof(struct page *),
						  GFP_KERNEL);
		bj->held[i].filled = kunit_kcalloc(test, PP_FILLED_MAX,
						   sizeof(struct page *),
						   GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, bj->held[i].pages);
		KUNIT_ASSERT_NOT_NULL(test, bj->held[i].filled);
	}
	env->bulk = bj;
	env->exec = pp_bulk_exec;
	err = kunit_add_action_or_reset(test, pp_bulk_teardown_action, env);
	KUNIT_ASSERT_EQ(test, err, 0);

	err = xdp_rxq_info_reg(&bj->o0.rxq, env->dev, PP_MAX_POOL, 0);
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "ORDER0 rxq");
	err = xdp_rxq_info_reg_mem_model(&bj->o0.rxq, MEM_TYPE_PAGE_ORDER0,
					 NULL);
	if (err)
		xdp_rxq_info_unreg(&bj->o0.rxq);
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "ORDER0 mem model");
	bj->o0.rxq_reg = true;
	return env;
}

static struct pp_env *pp_bulk_setup(struct kunit *test)
{
	return pp_bulk_setup_sized(test, 0);
}

/*
 * Leave exactly @fill pages in pool @idx's cache and @ring_fill in its
 * ring: take every page out of both (and at least @fill + @ring_fill),
 * then give @fill of them back to the cache as its owner would, and
 * @ring_fill to the ring as a non-owner would (process context).
 */
static void pp_bulk_fill(struct kunit *test, struct pp_env *env,
			 unsigned int idx, unsigned int fill,
			 unsigned int ring_fill)
{
	struct page_pool *pool = env->pp[idx].pool;
	struct pp_held *h = &env->bulk->held[idx];
	struct page_pool_stats b = {}, a = {};
	unsigned int i;

	KUNIT_ASSERT_LE(test, fill, PP_ALLOC_CACHE_SIZE);
	KUNIT_ASSERT_LE(test, ring_fill, PP_RING_SMALL);
	KUNIT_ASSERT_LE(test, ring_fill, (unsigned int)pool->ring.size);
	while (pool->alloc.count || !ptr_ring_empty(&pool->ring) ||
	       h->nr < fill + ring_fill) {
		struct page *page;

		KUNIT_ASSERT_LT_MSG(test, h->nr, PP_HELD_MAX,
				    "pool%u: emptying cache and ring", idx);
		page = page_pool_dev_alloc_pages(pool);
		KUNIT_ASSERT_NOT_NULL_MSG(test, page, "pool%u: allocating",
					  idx);
		h->pages[h->nr++] = page;
	}
	local_bh_disable();
	for (i = 0; i < fill; i++) {
		struct page *page = h->pages[--h->nr];

		h->filled[h->nr_filled++] = page;
		page_pool_put_full_page(pool, page, true);
	}
	local_bh_enable();
	KUNIT_ASSERT_EQ_MSG(test, pool->alloc.count, fill,
			    "pool%u: alloc.count after the fill", idx);
	KUNIT_ASSERT_TRUE_MSG(test, ptr_ring_empty(&pool->ring),
			      "pool%u: ring empty after the fill", idx);
	if (!ring_fill)
		return;

	page_pool_get_stats(pool, &b);
	for (i = 0; i < ring_fill; i++) {
		struct page *page = h->pages[--h->nr];

		h->filled[h->nr_filled++] = page;
		page_pool_put_full_page(pool, page, false);
	}
	page_pool_get_stats(pool, &a);
	KUNIT_ASSERT_EQ_MSG(test, a.recycle_stats.ring - b.recycle_stats.ring,
			    (u64)ring_fill, "pool%u: ring fill", idx);
	KUNIT_ASSERT_EQ_MSG(test,
			    a.recycle_stats.ring_full - b.recycle_stats.ring_full,
			    0ULL, "pool%u: ring fill: ring_full", idx);
	KUNIT_ASSERT_EQ_MSG(test, pool->alloc.count, fill,
			    "pool%u: alloc.count after the ring fill", idx);
}

/*
 * Allocate back every page pool @idx holds in its cache and ring: @want
 * pages, each once (a page recycled twice comes back twice: it is kept
 * once, so that it is given back once).  Returns where they start in
 * held->pages.
 */
static unsigned int pp_bulk_drain(struct kunit *test, struct pp_env *env,
				  unsigned int idx, unsigned int want,
				  const char *name)
{
	struct page_pool *pool = env->pp[idx].pool;
	struct pp_held *h = &env->bulk->held[idx];
	unsigned int first = h->nr, i, j;

	while (pool->alloc.count || !ptr_ring_empty(&pool->ring)) {
		struct page *page;

		KUNIT_ASSERT_LT_MSG(test, h->nr, PP_HELD_MAX,
				    "%s: pool%u: draining", name, idx);
		page = page_pool_dev_alloc_pages(pool);
		KUNIT_ASSERT_NOT_NULL_MSG(test, page, "%s: pool%u: draining",
					  name, idx);
		h->pages[h->nr++] = page;
	}
	KUNIT_EXPECT_EQ_MSG(test, h->nr - first, want,
			    "%s: pool%u: pages allocated back from its cache and ring",
			    name, idx);
	for (i = first; i < h->nr; i++) {
		KUNIT_EXPECT_PTR_EQ_MSG(test,
					netmem_get_pp(page_to_netmem(h->pages[i])),
					pool, "%s: pool%u: page of another pool",
					name, idx);
		for (j = i + 1; j < h->nr; j++) {
			if (h->pages[j] != h->pages[i])
				continue;
			KUNIT_FAIL(test, "%s: pool%u: a page came back twice (recycled twice)",
				   name, idx);
			h->pages[j--] = h->pages[--h->nr];
		}
	}
	return first;
}

/*
 * Everything about pool @idx after a call: the stats deltas, the cache's
 * count, the pages in flight, and each page back exactly once.  @acct: the
 * pool's hold and release counts moved by the call.
 */
static void pp_bulk_check_pool(struct kunit *test, struct pp_env *env,
			       unsigned int idx, const char *name,
			       const struct pp_case *cs,
			       const struct page_pool_stats *b,
			       const struct page_pool_stats *a,
			       const struct pp_bulk_want *w, unsigned int fill,
			       unsigned int ring_fill, u32 count,
			       const struct pp_acct *acct)
{
	const struct page_pool_recycle_stats *rb = &b->recycle_stats;
	const struct page_pool_recycle_stats *ra = &a->recycle_stats;
	struct pp_bulk_call *c = &env->bulk->c;
	struct pp_held *h = &env->bulk->held[idx];
	unsigned int i, first, nr_filled = h->nr_filled, back = 0, kept = 0;
	const char *ctx = cs->ctx;
	struct pp_bulk_want here;

	w = pp_want_here(w, cs->local[idx], env->pp[idx].pool->ring.size,
			 ring_fill, &here);

	kunit_info(test, "%s in %s: pool%u cached +%llu cache_full +%llu ring +%llu ring_full +%llu released_refcnt +%llu, alloc.count %u -> %u, hold +%u release +%u\n",
		   name, ctx, idx, ra->cached - rb->cached,
		   ra->cache_full - rb->cache_full, ra->ring - rb->ring,
		   ra->ring_full - rb->ring_full,
		   ra->released_refcnt - rb->released_refcnt, fill, count,
		   acct->hold, acct->release);
	KUNIT_EXPECT_EQ_MSG(test, (u64)(ra->cached - rb->cached),
			    (u64)w->cached, "%s in %s: pool%u recycle.cached",
			    name, ctx, idx);
	KUNIT_EXPECT_EQ_MSG(test, (u64)(ra->cache_full - rb->cache_full),
			    (u64)w->cache_full,
			    "%s in %s: pool%u recycle.cache_full", name, ctx,
			    idx);
	KUNIT_EXPECT_EQ_MSG(test, (u64)(ra->ring - rb->ring), (u64)w->ring,
			    "%s in %s: pool%u recycle.ring", name, ctx, idx);
	KUNIT_EXPECT_EQ_MSG(test, (u64)(ra->ring_full - rb->ring_full),
			    (u64)pp_want_ring_full(w),
			    "%s in %s: pool%u recycle.ring_full (%s: %u page(s) refused)",
			    name, ctx, idx,
			    pp_base ? "base 7.3 counts one per refusing call" :
				      "one per refused page", w->ring_full);
	KUNIT_EXPECT_EQ_MSG(test,
			    (u64)(ra->released_refcnt - rb->released_refcnt),
			    (u64)w->released,
			    "%s in %s: pool%u recycle.released_refcnt", name,
			    ctx, idx);
	KUNIT_EXPECT_EQ_MSG(test, count, fill + w->cached,
			    "%s in %s: pool%u alloc.count after the call",
			    name, ctx, idx);
	/* Pages leave the pool: released_refcnt, and what the ring refused */
	KUNIT_EXPECT_EQ_MSG(test, acct->hold, 0U,
			    "%s in %s: pool%u pages_state_hold_cnt moved by",
			    name, ctx, idx);
	KUNIT_EXPECT_EQ_MSG(test, acct->release, w->released + w->ring_full,
			    "%s in %s: pool%u pages_state_release_cnt moved by (released_refcnt + refused by the ring)",
			    name, ctx, idx);

	first = pp_bulk_drain(test, env, idx,
			      fill + ring_fill + w->cached + w->ring, name);
	for (i = 0; i < nr_filled; i++)
		KUNIT_EXPECT_EQ_MSG(test,
				    pp_count_page(h->pages, first, h->nr,
						  h->filled[i]), 1U,
				    "%s: pool%u: a page of the fill came back", name,
				    idx);
	for (i = 0; i < c->nr_pages; i++) {
		const struct pp_bulk_page *bp = &c->pages[i];
		bool keep = bp->kind == 'g' || bp->kind == 'h';
		unsigned int n;

		if (bp->pool != idx)
			continue;
		kept += bp->kind == 'h';
		n = pp_count_page(h->pages, first, h->nr, bp->page);
		back += n;
		/* The ring refuses the tail of what it is given: which of
		 * the pages come back depends on the order of the call
		 * (chunks, pools); that w->ring of them do is checked below.
		 */
		if (w->ring_full && !keep) {
			KUNIT_EXPECT_LE_MSG(test, n, 1U,
					    "%s in %s: pool%u: page %u ('%c') came back",
					    name, ctx, idx, i, bp->kind);
			continue;
		}
		KUNIT_EXPECT_EQ_MSG(test, n, (keep ? 0U : 1U),
				    "%s in %s: pool%u: page %u ('%c') came back",
				    name, ctx, idx, i, bp->kind);
	}
	KUNIT_EXPECT_EQ_MSG(test, back, w->cached + w->ring,
			    "%s in %s: pool%u: pages of the call that came back from the cache and the ring",
			    name, ctx, idx);
	/*
	 * The cache and the ring are empty now: every page the pool took
	 * from the page allocator and did not give back is in the test's
	 * hands (drained, or an 'h' page the caller keeps).  A page the
	 * ring refused and the pool did not release would count here.
	 */
	KUNIT_EXPECT_EQ_MSG(test, pp_pool_inflight(env->pp[idx].pool),
			    (int)(h->nr + kept),
			    "%s in %s: pool%u pages in flight after the drain (all in the test's hands)",
			    name, ctx, idx);
}

static void pp_bulk_run(struct kunit *test, struct pp_env *env,
			const char *name, const struct pp_case *ctx,
			const unsigned int *fill, const unsigned int *ring_fill,
			struct page_pool_stats *before,
			struct page_pool_stats *after, u32 *count,
			struct pp_acct *acct)
{
	struct pp_acct a[PP_MAX_POOL];
	unsigned int i;
	int err;

	for (i = 0; i < PP_MAX_POOL; i++)
		pp_bulk_fill(test, env, i, fill[i], ring_fill[i]);
	for (i = 0; i < PP_MAX_POOL; i++)
		pp_acct_read(env->pp[i].pool, &acct[i]);
	memset(&env->job.where, 0, sizeof(env->job.where));

	pp_snap(env, before);
	err = ctx->run(env);
	pp_snap(env, after);

	for (i = 0; i < PP_MAX_POOL; i++) {
		count[i] = env->pp[i].pool->alloc.count;
		pp_acct_read(env->pp[i].pool, &a[i]);
		acct[i].hold = a[i].hold - acct[i].hold;
		acct[i].release = a[i].release - acct[i].release;
	}
	KUNIT_EXPECT_EQ_MSG(test, err, 0, "%s in %s: context failed", name,
			    ctx->ctx);
	KUNIT_ASSERT_TRUE_MSG(test, env->bulk->c.done,
			      "%s in %s: not returned", name, ctx->ctx);
	pp_expect_where(test, ctx, &env->job.where, name);
}

static void pp_bulk_prep(struct kunit *test, struct pp_env *env,
			 const struct pp_bulk_row *r)
{
	struct pp_bulk_call *c = &env->bulk->c;
	size_t len = strlen(r->pattern);
	struct page *last_d = NULL;
	unsigned int i;

	KUNIT_ASSERT_GT(test, len, 0);
	KUNIT_ASSERT_LE(test, r->nr, PP_BULK_MAX);
	memset(c, 0, sizeof(*c));
	c->row = r;
	c->prepared = true;
	for (i = 0; i < r->nr; i++) {
		char kind = r->pattern[i % len];
		struct pp_bulk_page *bp;
		struct page *page;

		if (kind == 'D') {
			KUNIT_ASSERT_NOT_NULL_MSG(test, last_d,
						  "%s: 'D' without a 'd'",
						  r->name);
			c->data[c->nr++] = page_to_netmem(last_d);
			continue;
		}
		KUNIT_ASSERT_NOT_NULL_MSG(test, strchr("abgdh", kind),
					  "%s: letter '%c'", r->name, kind);
		page = page_pool_dev_alloc_pages(env->pp[kind == 'b'].pool);
		KUNIT_ASSERT_NOT_NULL(test, page);
		bp = &c->pages[c->nr_pages++];
		bp->page = page;
		bp->pool = kind == 'b';
		bp->kind = kind;
		if (kind == 'g')
			get_page(page);
		if (kind == 'd' || kind == 'h')
			page_pool_ref_page(page);
		if (kind == 'd')
			last_d = page;
		c->data[c->nr++] = page_to_netmem(page);
	}
}

/* The pages a bulk must leave alone, after the call. */
static void pp_bulk_check_kept(struct kunit *test, struct pp_env *env,
			       const char *name)
{
	struct pp_bulk_call *c = &env->bulk->c;
	unsigned int i;

	for (i = 0; i < c->nr_pages; i++) {
		struct page *page = c->pages[i].page;
		netmem_ref netmem = page_to_netmem(page);

		switch (c->pages[i].kind) {
		case 'g':
			KUNIT_EXPECT_FALSE_MSG(test, page_pool_page_is_pp(page),
					       "%s: page %u ('g') still a page_pool page",
					       name, i);
			KUNIT_EXPECT_EQ_MSG(test, page_ref_count(page), 1,
					    "%s: page %u ('g'): page refcount (the test's)",
					    name, i);
			break;
		case 'h':
			KUNIT_EXPECT_TRUE_MSG(test, page_pool_page_is_pp(page),
					      "%s: page %u ('h') left its pool",
					      name, i);
			KUNIT_EXPECT_EQ_MSG(test,
					    atomic_long_read(netmem_get_pp_ref_count_ref(netmem)),
					    1L,
					    "%s: page %u ('h'): pp_ref_count (the caller's)",
					    name, i);
			break;
		case 'o':
			KUNIT_EXPECT_EQ_MSG(test, page_ref_count(page), 1,
					    "%s: ORDER0 page: refcount (the test's)",
					    name);
			break;
		default:
			break;
		}
	}
}

static void pp_bulk_check_row(struct kunit *test, struct pp_env *env,
			      const struct pp_bulk_row *r)
{
	struct page_pool_stats before[PP_MAX_POOL], after[PP_MAX_POOL];
	struct pp_acct acct[PP_MAX_POOL];
	u32 count[PP_MAX_POOL];
	unsigned int i;

	if (r->series_only && pp_kernel_is_base()) {
		kunit_info(test, "%s: not run on base 7.3: more than %d pages of a pool for the ring in one call overflow its stack array (series-only row)\n",
			   r->name, XDP_BULK_QUEUE_SIZE);
		return;
	}
	for (i = 0; i < PP_MAX_POOL; i++) {
		if (pp_kernel_is_base() &&
		    r->want[i].ring + r->want[i].ring_full >
		    XDP_BULK_QUEUE_SIZE) {
			KUNIT_FAIL(test,
				   "%s: more than %d ring pages of a pool in one call overflow base 7.3's array: series-only row",
				   r->name, XDP_BULK_QUEUE_SIZE);
			return;
		}
	}
	pp_bulk_prep(test, env, r);
	pp_bulk_run(test, env, r->name, r->ctx, r->fill, r->ring_fill, before,
		    after, count, acct);
	for (i = 0; i < PP_MAX_POOL; i++)
		pp_bulk_check_pool(test, env, i, r->name, r->ctx,
				   &before[i], &after[i], &r->want[i],
				   r->fill[i], r->ring_fill[i], count[i],
				   &acct[i]);
	pp_bulk_check_kept(test, env, r->name);
	pp_bulk_release(env);
}

static void pp_bulk_check_rows(struct kunit *test,
			       const struct pp_bulk_row *rows, unsigned int nr)
{
	struct pp_env *env = pp_bulk_setup(test);
	unsigned int i;

	for (i = 0; i < nr; i++)
		pp_bulk_check_row(test, env, &rows[i]);
}

static void pp_fbulk_prep(struct kunit *test, struct pp_env *env,
			  const struct pp_fbulk_row *r)
{
	struct pp_bulk_job *bj = env->bulk;
	struct pp_bulk_call *c = &bj->c;
	unsigned int i, j;

	KUNIT_ASSERT_LE(test, strlen(r->frames), PP_FBULK_MAX);
	memset(c, 0, sizeof(*c));
	c->frow = r;
	c->prepared = true;
	c->b.canary[0] = PP_CANARY;
	c->b.canary[1] = PP_CANARY;
	for (i = 0; r->frames[i]; i++) {
		char kind = r->frames[i];
		unsigned int nr = kind == 'm' ? 1 + PP_NR_FRAGS : 1;
		struct page *pg[1 + PP_NR_FRAGS];
		struct xdp_buff xdp;

		unsigned int pool = kind == 'o' ? PP_MAX_POOL : kind == 'b';

		KUNIT_ASSERT_NOT_NULL_MSG(test, strchr("smob", kind),
					  "%s: letter '%c'", r->name, kind);
		for (j = 0; j < nr; j++) {
			struct pp_bulk_page *bp = &c->pages[c->nr_pages];

			pg[j] = kind == 'o' ? alloc_page(GFP_KERNEL) :
				page_pool_dev_alloc_pages(env->pp[pool].pool);
			KUNIT_ASSERT_NOT_NULL(test, pg[j]);
			bp->page = pg[j];
			bp->pool = pool;
			bp->kind = kind;
			c->nr_pages++;
			if (kind == 'o') {
				get_page(pg[j]);	/* ours, the witness */
				c->o0[i] = pg[j];
			}
		}
		pp_build_buff(&xdp, kind == 'o' ? &bj->o0 : &env->pp[pool],
			      pg[0], &pg[1], nr - 1);
		c->frames[i] = xdp_convert_buff_to_frame(&xdp);
		KUNIT_ASSERT_NOT_NULL(test, c->frames[i]);
		c->nr = i + 1;
	}
}

static void pp_fbulk_check_row(struct kunit *test, struct pp_env *env,
			       const struct pp_fbulk_row *r)
{
	const unsigned int fill[PP_MAX_POOL] = { r->fill, 0 };
	struct page_pool_stats before[PP_MAX_POOL], after[PP_MAX_POOL];
	struct pp_bulk_call *c = &env->bulk->c;
	const char *ctx = r->ctx->ctx;
	struct pp_acct acct[PP_MAX_POOL];
	u32 count[PP_MAX_POOL];
	u64 base;
	unsigned int i;

	pp_fbulk_prep(test, env, r);
	pp_bulk_run(test, env, r->name, r->ctx, fill, r->ring_fill, before,
		    after, count, acct);

	base = before[0].recycle_stats.cached + before[0].recycle_stats.ring;
	for (i = 0; i < c->nr; i++) {
		KUNIT_EXPECT_EQ_MSG(test, c->count[i], (int)r->count[i],
				    "%s in %s: after frame %u ('%c'): bulk count",
				    r->name, ctx, i, r->frames[i]);
		KUNIT_EXPECT_EQ_MSG(test, c->returned[i] - base,
				    (u64)r->returned[i],
				    "%s in %s: after frame %u ('%c'): pool0 pages returned (cached + ring)",
				    r->name, ctx, i, r->frames[i]);
		if (c->o0[i])
			KUNIT_EXPECT_EQ_MSG(test, c->o0_ref[i], 1,
					    "%s in %s: frame %u: ORDER0 page not freed at once",
					    r->name, ctx, i);
	}
	KUNIT_EXPECT_TRUE_MSG(test, c->b.canary[0] == PP_CANARY &&
			      c->b.canary[1] == PP_CANARY,
			      "%s in %s: written past the bulk's q[]", r->name,
			      ctx);
	pp_bulk_check_pool(test, env, 0, r->name, r->ctx, &before[0],
			   &after[0], &r->want, fill[0], r->ring_fill[0],
			   count[0], &acct[0]);
	pp_bulk_check_pool(test, env, 1, r->name, r->ctx, &before[1],
			   &after[1], &r->want_b, fill[1], r->ring_fill[1],
			   count[1], &acct[1]);
	pp_bulk_check_kept(test, env, r->name);
	pp_bulk_release(env);
}

/* 1. The direct cache fills up in the middle of one bulk of 16. */
static const struct pp_bulk_row pp_bulk_cache_fill_rows[] = {
	{ "16, room 16", "a", 16, { PP_ROOM(16) }, &pp_bulk_owner,
	  { PP_WANT(16, 0, 0, 0) } },
	{ "16, room 15", "a", 16, { PP_ROOM(15) }, &pp_bulk_owner,
	  { PP_WANT(15, 1, 1, 0) } },
	{ "16, room 10", "a", 16, { PP_ROOM(10) }, &pp_bulk_owner,
	  { PP_WANT(10, 6, 6, 0) } },
	{ "16, room 1", "a", 16, { PP_ROOM(1) }, &pp_bulk_owner,
	  { PP_WANT(1, 15, 15, 0) } },
	{ "16, cache full", "a", 16, { PP_ROOM(0) }, &pp_bulk_owner,
	  { PP_WANT(0, 16, 16, 0) } },
	/* not local: the cache is not tried, so not full either */
	{ "16, room 1, not the owner", "a", 16, { PP_ROOM(1) },
	  &pp_bulk_process, { PP_WANT(0, 0, 16, 0) } },
};

static void pp_bulk_cache_fills(struct kunit *test)
{
	pp_bulk_check_rows(test, pp_bulk_cache_fill_rows,
			   ARRAY_SIZE(pp_bulk_cache_fill_rows));
}

/* 2. Pages whose reference is not the pool's alone, inside one bulk. */
static const struct pp_bulk_row pp_bulk_ref_rows[] = {
	{ "page refcount 2 at entry 7", "aaaaaaagaaaaaaaa", 16,
	  { PP_ROOM(32) }, &pp_bulk_owner, { PP_WANT(15, 0, 0, 1) } },
	{ "page refcount 2 at entry 7", "aaaaaaagaaaaaaaa", 16,
	  { PP_ROOM(32) }, &pp_bulk_process, { PP_WANT(0, 0, 15, 1) } },
	{ "pp_ref_count 2, at entries 3 and 11", "aaadaaaaaaaDaaaa", 16,
	  { PP_ROOM(32) }, &pp_bulk_owner, { PP_WANT(15, 0, 0, 0) } },
	{ "pp_ref_count 2, at entries 3 and 11", "aaadaaaaaaaDaaaa", 16,
	  { PP_ROOM(32) }, &pp_bulk_process, { PP_WANT(0, 0, 15, 0) } },
	{ "pp_ref_count 2, once (the caller keeps one)", "aaaaaahaaaaaaaaa",
	  16, { PP_ROOM(32) }, &pp_bulk_owner, { PP_WANT(15, 0, 0, 0) } },
	/* d D: cached (7 left); 10 a: 7 cached, 3 full; g; 3 a: full */
	{ "pp_ref_count 2 twice, page refcount 2, room 8", "dDaaaaaaaaaagaaa",
	  16, { PP_ROOM(8) }, &pp_bulk_owner, { PP_WANT(8, 6, 6, 1) } },
};

static void pp_bulk_page_refs(struct kunit *test)
{
	pp_bulk_check_rows(test, pp_bulk_ref_rows,
			   ARRAY_SIZE(pp_bulk_ref_rows));
}

/* 3. Pages of two pools interleaved in one bulk; A owned, B not. */
static const struct pp_bulk_row pp_bulk_interleaved_rows[] = {
	{ "A,B,A,B,...", "ab", 16, { PP_ROOM(28), 64 }, &pp_bulk_owner,
	  { PP_WANT(8, 0, 0, 0), PP_WANT(0, 0, 8, 0) } },
	{ "B,A,B,A,...", "ba", 16, { PP_ROOM(28), 64 }, &pp_bulk_owner,
	  { PP_WANT(8, 0, 0, 0), PP_WANT(0, 0, 8, 0) } },
	{ "AAAABBBB,AAAABBBB", "aaaabbbb", 16, { PP_ROOM(28), 64 },
	  &pp_bulk_owner, { PP_WANT(8, 0, 0, 0), PP_WANT(0, 0, 8, 0) } },
	{ "A,B,A,B,..., A's room 5", "ab", 16, { PP_ROOM(5), 64 },
	  &pp_bulk_owner, { PP_WANT(5, 3, 3, 0), PP_WANT(0, 0, 8, 0) } },
	{ "one B at entry 7 among A's", "aaaaaaabaaaaaaaa", 16,
	  { PP_ROOM(28), 64 }, &pp_bulk_owner,
	  { PP_WANT(15, 0, 0, 0), PP_WANT(0, 0, 1, 0) } },
	{ "A,B,A,B,...", "ab", 16, { PP_ROOM(28), 64 }, &pp_bulk_process,
	  { PP_WANT(0, 0, 8, 0), PP_WANT(0, 0, 8, 0) } },
};

static void pp_bulk_interleaved_pools(struct kunit *test)
{
	pp_bulk_check_rows(test, pp_bulk_interleaved_rows,
			   ARRAY_SIZE(pp_bulk_interleaved_rows));
}

/* 4. More than XDP_BULK_QUEUE_SIZE netmems in one call: chunks of 16. */
static const struct pp_bulk_row pp_bulk_long_rows[] = {
	{ "40, room 48", "a", 40, { PP_ROOM(48) }, &pp_bulk_owner,
	  { PP_WANT(40, 0, 0, 0) } },
	{ "33, room 32", "a", 33, { PP_ROOM(32) }, &pp_bulk_owner,
	  { PP_WANT(32, 1, 1, 0) } },
	/* 'd' at 17, 'g' at 21, 'D' at 35: 39 pages, 38 recycled */
	{ "40 with pp_ref_count 2 and page refcount 2 across chunks, room 48",
	  "aaaaaaaaaaaaaaaaadaaagaaaaaaaaaaaaaDaaaa", 40, { PP_ROOM(48) },
	  &pp_bulk_owner, { PP_WANT(38, 0, 0, 1) } },
};

static void pp_bulk_longer_than_16(struct kunit *test)
{
	pp_bulk_check_rows(test, pp_bulk_long_rows,
			   ARRAY_SIZE(pp_bulk_long_rows));
}

/* 4b. The same, with more than 16 pages of a pool for the ring. */
static const struct pp_bulk_row pp_bulk_long_ring_rows[] = {
	{ "40", "a", 40, { PP_ROOM(48) }, &pp_bulk_process,
	  { PP_WANT(0, 0, 40, 0) } },
	{ "17", "a", 17, { PP_ROOM(48) }, &pp_bulk_process,
	  { PP_WANT(0, 0, 17, 0) } },
	{ "40, room 20", "a", 40, { PP_ROOM(20) }, &pp_bulk_owner,
	  { PP_WANT(20, 20, 20, 0) } },
	{ "A,B x 20", "ab", 40, { PP_ROOM(28), 64 }, &pp_bulk_owner,
	  { PP_WANT(20, 0, 0, 0), PP_WANT(0, 0, 20, 0) } },
};

static void pp_bulk_longer_than_16_ring(struct kunit *test)
{
	if (pp_kernel_is_base())
		kunit_skip(test,
			   "base 7.3: page_pool_put_netmem_bulk() copies a pool's non-cached pages into a %d-entry stack array; more in one call overflow it (the series takes them in chunks)",
			   XDP_BULK_QUEUE_SIZE);
	pp_bulk_check_rows(test, pp_bulk_long_ring_rows,
			   ARRAY_SIZE(pp_bulk_long_ring_rows));
}

/* 5. xdp_return_frame_bulk(): frame kinds mixed, the bulk-full boundary. */
static const struct pp_fbulk_row pp_fbulk_rows[] = {
	{ "17 single-buffer frames: the 17th flushes", "sssssssssssssssss",
	  0, &pp_bulk_owner,
	  { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 1 },
	  { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16 },
	  PP_WANT(17, 0, 0, 0) },
	/* the second 1+3 frame fills the bulk at its second frag */
	{ "single, multi-buffer and ORDER0 frames", "ssmossssssssmss", 0,
	  &pp_bulk_owner,
	  { 1, 2, 6, 6, 7, 8, 9, 10, 11, 12, 13, 14, 2, 3, 4 },
	  { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 16, 16 },
	  PP_WANT(20, 0, 0, 0) },
	{ "16 frames, then a multi-buffer frame", "ssssssssssssssssm", 0,
	  &pp_bulk_owner,
	  { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 4 },
	  { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16 },
	  PP_WANT(20, 0, 0, 0) },
	{ "16 frames, an ORDER0 frame (no flush), a frame",
	  "ssssssssssssssssos", 0, &pp_bulk_owner,
	  { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 16, 1 },
	  { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16 },
	  PP_WANT(17, 0, 0, 0) },
	{ "13 frames, a multi-buffer frame whose last frag fills the bulk",
	  "sssssssssssssms", 0, &pp_bulk_owner,
	  { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 1, 2 },
	  { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 16 },
	  PP_WANT(18, 0, 0, 0) },
	{ "single, multi-buffer and ORDER0 frames", "ssmossssssssmss", 0,
	  &pp_bulk_process,
	  { 1, 2, 6, 6, 7, 8, 9, 10, 11, 12, 13, 14, 2, 3, 4 },
	  { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 16, 16 },
	  PP_WANT(0, 0, 20, 0) },
	{ "17 single-buffer frames, room 10", "sssssssssssssssss",
	  PP_ROOM(10), &pp_bulk_owner,
	  { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 1 },
	  { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16 },
	  PP_WANT(10, 7, 7, 0) },
};

static void pp_frame_bulk_mixed(struct kunit *test)
{
	struct pp_env *env = pp_bulk_setup(test);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(pp_fbulk_rows); i++)
		pp_fbulk_check_row(test, env, &pp_fbulk_rows[i]);
}

/* ---- page_pool release watch ----------------------------------------- */

/*
 * page_pool_release() (net/core/page_pool.c, 7.3 and the series) scrubs
 * the pool, counts what is in flight (page_pool_inflight(pool, true), which
 * fires the page_pool:page_pool_release tracepoint with that count) and, at
 * 0, frees the pool (__page_pool_destroy(): kfree()) before it returns.
 * page_pool_destroy() runs it once; while pages are in flight the
 * release_dw worker runs it again every second (DEFER_TIME) and prints
 * "page_pool_release_retry() stalled pool shutdown" after 60 s
 * (DEFER_WARN_INTERVAL).  After page_pool_destroy() the test can thus not
 * look at the pool itself to learn that it was freed: the pool may be gone
 * as soon as its last page came back.  It watches the tracepoint instead
 * (the probe compares the pool pointer, never dereferences it): the call
 * that saw 0 in flight is the one that freed the pool.  The tracepoint is
 * not exported to modules: it is found by name with
 * for_each_kernel_tracepoint().
 */
struct pp_watch {
	struct tracepoint *tp;
	const struct page_pool *pool;	/* compared with, never dereferenced */
	atomic_t calls;			/* page_pool_release() calls seen */
	atomic_t over;			/* saw in flight <= 0: no more calls */
	int first;			/* in flight the first call saw */
	int last;			/* ... and the last */
	bool negative;
	struct completion done;		/* set with over */
};

static void pp_watch_probe(void *data, const struct page_pool *pool,
			   s32 inflight, u32 hold, u32 release)
{
	struct pp_watch *w = data;

	if (pool != smp_load_acquire(&w->pool) || atomic_read(&w->over))
		return;
	if (atomic_inc_return(&w->calls) == 1)
		w->first = inflight;
	w->last = inflight;
	if (inflight < 0)
		w->negative = true;	/* WARNs; never freed, no more retries */
	if (inflight <= 0) {
		atomic_set_release(&w->over, 1);
		complete(&w->done);
	}
}

static void pp_watch_find(struct tracepoint *tp, void *priv)
{
	struct pp_watch *w = priv;

	if (!strcmp(tp->name, "page_pool_release"))
		w->tp = tp;
}

static void pp_watch_stop(struct pp_watch *w)
{
	tracepoint_probe_unregister(w->tp, (void *)pp_watch_probe, w);
	/* no probe runs on w once this returns */
	tracepoint_synchronize_unregister();
}

KUNIT_DEFINE_ACTION_WRAPPER(pp_watch_stop_action, pp_watch_stop,
			    struct pp_watch *);

/* A case that cannot watch fails: it would prove nothing about the free. */
static struct pp_watch *pp_watch_start(struct kunit *test)
{
	struct pp_watch *w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
	int err;

	KUNIT_ASSERT_NOT_NULL(test, w);
	init_completion(&w->done);
	for_each_kernel_tracepoint(pp_watch_find, w);
	KUNIT_ASSERT_NOT_NULL_MSG(test, w->tp,
				  "tracepoint page_pool_release not found (CONFIG_TRACEPOINTS=n?)");
	err = tracepoint_probe_register(w->tp, (void *)pp_watch_probe, w);
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "registering a page_pool_release probe");
	/* runs before kunit frees w (cleanup is last added, first run) */
	err = kunit_add_action_or_reset(test, pp_watch_stop_action, w);
	KUNIT_ASSERT_EQ(test, err, 0);
	return w;
}

/* Watch @pool from now on; no probe runs for it yet (not destroyed). */
static void pp_watch_arm(struct pp_watch *w, const struct page_pool *pool)
{
	WRITE_ONCE(w->pool, NULL);
	atomic_set(&w->calls, 0);
	atomic_set(&w->over, 0);
	w->first = INT_MIN;
	w->last = INT_MIN;
	w->negative = false;
	reinit_completion(&w->done);
	smp_store_release(&w->pool, pool);
}

/*
 * Destroy pool @idx as a driver tears an rx queue down: its NAPI disabled
 * (page_pool_disable_direct_recycling() asserts it), the rxq's memory model
 * unregistered (drops the reference xdp_rxq_info_reg_mem_model() took),
 * page_pool_destroy().  The NAPIs are enabled again, so that the one that
 * owned the pool can still be polled.  The pool is forgotten by the env;
 * the caller touches it only while it holds one of its pages.
 */
static struct page_pool *pp_pool_destroy(struct pp_env *env, unsigned int idx,
					 struct pp_watch *w)
{
	struct pp_pool *p = &env->pp[idx];
	struct page_pool *pool = p->pool;
	unsigned int i;

	pp_watch_arm(w, pool);
	for (i = 0; i < env->nr_napi; i++)
		napi_disable(&env->napi[i]);
	if (p->rxq_reg) {
		xdp_rxq_info_unreg(&p->rxq);
		p->rxq_reg = false;
	}
	p->pool = NULL;
	page_pool_destroy(pool);
	for (i = 0; i < env->nr_napi; i++)
		napi_enable(&env->napi[i]);
	return pool;
}

/* ---- ring full -------------------------------------------------------- */

/*
 * Both pools get a PP_RING_SMALL (16) ptr_ring: pool_size 16, which
 * page_pool_init() takes as the ring size; a ring that small has a consumer
 * batch of 1, so the room of an emptied ring is exact (asserted).  A row's
 * ring fill leaves "room" = 16 - ring_fill.  Non-owner contexts only: every
 * recyclable page is for the ring, the ring takes the first "room" of them
 * and page_pool_recycle_ring_bulk() releases the rest.
 *
 * Each row asserts, per pool: recycle.ring == the pages the ring took;
 * recycle.ring_full == every page it refused (series) or, with
 * expect=base, what base 7.3 counts: one per page_pool_recycle_ring_bulk()
 * call that met a full ring (base calls it once per pool per round of
 * page_pool_put_netmem_bulk(), so once per pool per call of at most 16
 * pages); pages_state_release_cnt moved by exactly the refused pages (plus
 * released_refcnt), pages_state_hold_cnt not at all; the pages the ring
 * took, and the ring fill, come back once each from a drain, the refused
 * ones never; after the drain the pool's pages in flight are exactly the
 * pages in the test's hands.  At the end of the case both pools are
 * destroyed with nothing in flight: page_pool_destroy()'s own release must
 * see 0 and free the pool at once (page_pool_release tracepoint).
 *
 * Mutations: reverting "page_pool: count every page a full ring refuses in
 * bulk returns" (ring_full once per page_pool_recycle_ring_bulk() call)
 * fails every row with more than one refused page in a call on the series
 * (e.g. "16, room 6": 1, not 10; "40, room 6": 3 - once per chunk of 16 -,
 * not 34); counting bulk_len instead of the refused tail fails "16, room
 * 15" (16, not 1); a page_pool_recycle_ring_bulk() that drops the refused
 * pages without page_pool_return_netmem() fails the release count and the
 * in-flight check (and the pools' destroy: in flight != 0); one that
 * recycles them anyway fails the drain (the ring had no room: recycle.ring
 * and the pages back disagree).  Series patch "page_pool: recycle the pages
 * of one pool in a single pass in bulk returns": a chunk of 16 ring pages
 * produced into the wrong pool, or a chunk lost at a pool switch, fails the
 * interleaved and longer-than-16 rows.
 */
static const struct pp_bulk_row pp_ring_full_bulk_rows[] = {
	{ .name = "16, ring empty: fits exactly", .pattern = "a", .nr = 16,
	  .ctx = &pp_bulk_process, .want = { PP_WANT_RF(16, 0, 0, 0) } },
	{ .name = "16, room 15: one refused", .pattern = "a", .nr = 16,
	  .ctx = &pp_bulk_process, .ring_fill = { 1 },
	  .want = { PP_WANT_RF(15, 0, 1, 1) } },
	{ .name = "16, room 6", .pattern = "a", .nr = 16,
	  .ctx = &pp_bulk_process, .ring_fill = { 10 },
	  .want = { PP_WANT_RF(6, 0, 10, 1) } },
	{ .name = "16, ring full", .pattern = "a", .nr = 16,
	  .ctx = &pp_bulk_process, .ring_fill = { 16 },
	  .want = { PP_WANT_RF(0, 0, 16, 1) } },
	/* 15 recyclable, one released_refcnt: not counted as ring_full */
	{ .name = "page refcount 2 at entry 7, room 6",
	  .pattern = "aaaaaaagaaaaaaaa", .nr = 16, .ctx = &pp_bulk_process,
	  .ring_fill = { 10 }, .want = { PP_WANT_RF(6, 1, 9, 1) } },
	{ .name = "A,B,A,B,..., A room 3, B room 5", .pattern = "ab",
	  .nr = 16, .ctx = &pp_bulk_process, .ring_fill = { 13, 11 },
	  .want = { PP_WANT_RF(3, 0, 5, 1), PP_WANT_RF(5, 0, 3, 1) } },
	{ .name = "B,A,B,A,..., A full, B room 8", .pattern = "ba", .nr = 16,
	  .ctx = &pp_bulk_process, .ring_fill = { 16, 8 },
	  .want = { PP_WANT_RF(0, 0, 8, 1), PP_WANT_RF(8, 0, 0, 0) } },
	{ .name = "AAAABBBB,AAAABBBB, room 2 each", .pattern = "aaaabbbb",
	  .nr = 16, .ctx = &pp_bulk_process, .ring_fill = { 14, 14 },
	  .want = { PP_WANT_RF(2, 0, 6, 1), PP_WANT_RF(2, 0, 6, 1) } },
	/* series: chunks of 16 ring pages: 6 + 10 refused, 16, 8 */
	{ .name = "40, room 6", .pattern = "a", .nr = 40,
	  .ctx = &pp_bulk_process, .ring_fill = { 10 },
	  .want = { PP_WANT_RF(6, 0, 34, 0) }, .series_only = true },
	/* A: 16 (6 taken) then 4; B on the second round: 16 (10), then 4 */
	{ .name = "A,B x 20, A room 6, B room 10", .pattern = "ab", .nr = 40,
	  .ctx = &pp_bulk_process, .ring_fill = { 10, 6 },
	  .want = { PP_WANT_RF(6, 0, 14, 0), PP_WANT_RF(10, 0, 10, 0) },
	  .series_only = true },
};

/* 17 frames: the 17th flushes the first 16 */
#define PP_COUNT_17	{ 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, \
			  16, 1 }
#define PP_RET_AT_16(n)	{ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (n) }

/* xdp_return_frame_bulk() + xdp_flush_frame_bulk() meeting a full ring */
static const struct pp_fbulk_row pp_ring_full_fbulk_rows[] = {
	/* flush of 16 at frame 17: 6 taken, 10 refused; final flush: 1 */
	{ .name = "17 frames, room 6", .frames = "sssssssssssssssss",
	  .ctx = &pp_bulk_process, .count = PP_COUNT_17,
	  .returned = PP_RET_AT_16(6), .ring_fill = { 10 },
	  .want = PP_WANT_RF(6, 0, 11, 2) },
	/* 20 pages; the second 'm' flushes 16 at its second frag: 5 taken,
	 * 11 refused; the final flush of 4: refused
	 */
	{ .name = "single, multi-buffer and ORDER0 frames, room 5",
	  .frames = "ssmossssssssmss", .ctx = &pp_bulk_process,
	  .count = { 1, 2, 6, 6, 7, 8, 9, 10, 11, 12, 13, 14, 2, 3, 4 },
	  .returned = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 5, 5 },
	  .ring_fill = { 11 }, .want = PP_WANT_RF(5, 0, 15, 2) },
	/* flush of 8 A + 8 B at frame 17: A 3 taken, B 5; final flush: 1 A */
	{ .name = "A,B,A,B,... 17 frames, A room 3, B room 5",
	  .frames = "sbsbsbsbsbsbsbsbs", .ctx = &pp_bulk_process,
	  .count = PP_COUNT_17, .returned = PP_RET_AT_16(3),
	  .ring_fill = { 13, 11 }, .want = PP_WANT_RF(3, 0, 6, 2),
	  .want_b = PP_WANT_RF(5, 0, 3, 1) },
	{ .name = "16 frames, ring full: the final flush",
	  .frames = "ssssssssssssssss", .ctx = &pp_bulk_process,
	  .count = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 },
	  .ring_fill = { 16 }, .want = PP_WANT_RF(0, 0, 16, 1) },
};

/* The same in the cpumap/devmap context: BH on CPU B, the owner polls on A */
static const struct pp_bulk_row pp_ring_full_other_cpu_rows[] = {
	{ .name = "16, room 6", .pattern = "a", .nr = 16,
	  .ctx = &pp_bulk_other_cpu, .ring_fill = { 10 },
	  .want = { PP_WANT_RF(6, 0, 10, 1) } },
	{ .name = "A,B,A,B,..., A room 3, B room 5", .pattern = "ab",
	  .nr = 16, .ctx = &pp_bulk_other_cpu, .ring_fill = { 13, 11 },
	  .want = { PP_WANT_RF(3, 0, 5, 1), PP_WANT_RF(5, 0, 3, 1) } },
};

static const struct pp_fbulk_row pp_ring_full_other_cpu_frows[] = {
	{ .name = "17 frames, room 6", .frames = "sssssssssssssssss",
	  .ctx = &pp_bulk_other_cpu, .count = PP_COUNT_17,
	  .returned = PP_RET_AT_16(6), .ring_fill = { 10 },
	  .want = PP_WANT_RF(6, 0, 11, 2) },
	{ .name = "A,B,A,B,... 17 frames, A room 3, B room 5",
	  .frames = "sbsbsbsbsbsbsbsbs", .ctx = &pp_bulk_other_cpu,
	  .count = PP_COUNT_17, .returned = PP_RET_AT_16(3),
	  .ring_fill = { 13, 11 }, .want = PP_WANT_RF(3, 0, 6, 2),
	  .want_b = PP_WANT_RF(5, 0, 3, 1) },
};

static struct pp_env *pp_ring_full_setup(struct kunit *test,
					 struct pp_watch **w)
{
	struct pp_env *env = pp_bulk_setup_sized(test, PP_RING_SMALL);

	*w = pp_watch_start(test);
	return env;
}

/*
 * Every page of the case is back (each row gave back what it held): the
 * pools hold theirs in cache and ring only, so page_pool_destroy() must
 * release them all and free the pool at once - one page_pool_release()
 * call, 0 in flight, no deferred retry.
 */
static void pp_ring_full_destroy(struct kunit *test, struct pp_env *env,
				 struct pp_watch *w)
{
	unsigned int i;

	for (i = 0; i < PP_MAX_POOL; i++) {
		pp_pool_destroy(env, i, w);
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&w->calls), 1,
				    "pool%u: page_pool_destroy(): page_pool_release() calls",
				    i);
		KUNIT_EXPECT_EQ_MSG(test, w->last, 0,
				    "pool%u: page_pool_destroy(): pages in flight (not 0: a page lost, the pool never freed)",
				    i);
	}
}

static void pp_ring_full_bulk(struct kunit *test)
{
	struct pp_watch *w;
	struct pp_env *env = pp_ring_full_setup(test, &w);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(pp_ring_full_bulk_rows); i++)
		pp_bulk_check_row(test, env, &pp_ring_full_bulk_rows[i]);
	pp_ring_full_destroy(test, env, w);
}

static void pp_ring_full_frame_bulk(struct kunit *test)
{
	struct pp_watch *w;
	struct pp_env *env = pp_ring_full_setup(test, &w);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(pp_ring_full_fbulk_rows); i++)
		pp_fbulk_check_row(test, env, &pp_ring_full_fbulk_rows[i]);
	pp_ring_full_destroy(test, env, w);
}

static void pp_ring_full_other_cpu(struct kunit *test)
{
	struct pp_watch *w;
	struct pp_env *env = pp_ring_full_setup(test, &w);
	unsigned int i;

	pp_other_cpu(test, raw_smp_processor_id());	/* skip on 1 CPU */
	for (i = 0; i < ARRAY_SIZE(pp_ring_full_other_cpu_rows); i++)
		pp_bulk_check_row(test, env, &pp_ring_full_other_cpu_rows[i]);
	for (i = 0; i < ARRAY_SIZE(pp_ring_full_other_cpu_frows); i++)
		pp_fbulk_check_row(test, env, &pp_ring_full_other_cpu_frows[i]);
	pp_ring_full_destroy(test, env, w);
}

/* ---- destroy with pages in flight ------------------------------------ */

#define PP_DESTROY_PAGES	XDP_BULK_QUEUE_SIZE	/* returned after destroy */
#define PP_DESTROY_IN_RING	4	/* frame case: ring pages at destroy */
#define PP_DESTROY_RING_SMALL	8	/* ring case: pool_size, filled */
#define PP_RELEASE_WAIT		(10 * HZ)	/* retries every 1 s, warns at 60 s */

/*
 * What the test holds of a pool it destroys.  While it holds the witness,
 * the pool cannot be freed (a page in flight), so its counters and stats can
 * be read; once it gave the witness back, the pool is never touched again.
 */
struct pp_destroy {
	struct page_pool *pool;
	struct page *witness;
	bool witness_held;
	bool gone;			/* the pool may be freed: hands off */
	bool frames;			/* frames in @bq, else pages[] bulk */
	struct page *pages[PP_DESTROY_PAGES];
	unsigned int nr_pages;
	bool pages_held;		/* pages[] neither queued nor returned */
	struct xdp_frame_bulk bq;
	netmem_ref data[PP_DESTROY_PAGES];
	struct pp_where where;		/* of the return after destroy */
	bool done;
};

/* Give back whatever a failed case still holds (process context). */
static void pp_destroy_cleanup(struct pp_destroy *d)
{
	unsigned int i;

	if (d->gone)
		return;		/* leak rather than touch a freed pool */
	if (d->bq.count)
		xdp_flush_frame_bulk(&d->bq);
	for (i = 0; d->pages_held && i < d->nr_pages; i++)
		page_pool_put_full_page(d->pool, d->pages[i], false);
	d->pages_held = false;
	/* last: the witness kept the pool alive for the returns above */
	if (d->witness_held)
		page_pool_put_full_page(d->pool, d->witness, false);
	d->witness_held = false;
}

KUNIT_DEFINE_ACTION_WRAPPER(pp_destroy_cleanup_action, pp_destroy_cleanup,
			    struct pp_destroy *);

/* In the poll of the NAPI that owned the destroyed pool. */
static void pp_destroy_return(struct pp_env *env)
{
	struct pp_destroy *d = env->destroy;
	unsigned int i;

	pp_where_record(env, &d->where);
	if (d->frames) {
		xdp_flush_frame_bulk(&d->bq);
	} else {
		for (i = 0; i < d->nr_pages; i++)
			d->data[i] = page_to_netmem(d->pages[i]);
		page_pool_put_netmem_bulk(d->data, d->nr_pages);
		d->pages_held = false;
	}
	d->done = true;
}

/*
 * Wait (bounded) for the release worker to release what is in the ring,
 * until the witness is the pool's only page in flight.  The witness keeps
 * the pool alive, so reading its counters is safe - unless the kernel
 * released more pages than it had: then the pool may already be freed (the
 * watch saw in flight <= 0) and the case stops touching it.
 */
static bool pp_destroy_wait_witness(struct kunit *test, struct pp_destroy *d,
				    struct pp_watch *w)
{
	unsigned long deadline = jiffies + PP_RELEASE_WAIT;
	int n;

	for (;;) {
		if (atomic_read_acquire(&w->over)) {
			d->gone = true;
			KUNIT_FAIL(test, "pool released (in flight %d) while the test holds a page of it",
				   w->last);
			return false;
		}
		n = pp_pool_inflight(d->pool);
		if (n <= 1 || time_after(jiffies, deadline))
			break;
		msleep(20);
	}
	if (n < 1) {
		d->gone = true;
		KUNIT_FAIL(test, "pages in flight %d with the witness held: released twice", n);
		return false;
	}
	KUNIT_EXPECT_EQ_MSG(test, n, 1,
			    "pages in flight %d s after destroy (only the witness is left once the worker drained the ring)",
			    PP_RELEASE_WAIT / HZ);
	KUNIT_EXPECT_TRUE_MSG(test, ptr_ring_empty(&d->pool->ring),
			      "ring of the destroyed pool drained");
	KUNIT_EXPECT_EQ_MSG(test, d->pool->alloc.count, 0U,
			    "alloc cache of the destroyed pool");
	return true;
}

/*
 * Destroy a pool while PP_DESTROY_PAGES (16) of its pages are out: in an
 * unflushed xdp_frame_bulk (@frames) or in the test's hands for a
 * page_pool_put_netmem_bulk() (!@frames), with pages in its ring, and one
 * more page, the witness, held by the test.  Then return the 16 from the
 * poll of the NAPI that owned the pool, let the release worker drain the
 * ring, give the witness back and wait for the pool to be freed.
 *
 * Why a witness: page_pool_destroy() frees the pool as soon as a release
 * sees nothing in flight, at destroy or in the release_dw worker (every
 * second, on another CPU as well), so a pool whose pages all came back may
 * be gone the next instant; reading pool->pages_state_hold_cnt or stats
 * then would be a use after free.  With the witness in flight the pool
 * stays; the test reads it only then, gives the witness back last, and
 * learns that the pool was freed from the page_pool_release tracepoint
 * (pp_watch), without touching it.
 */
static void pp_destroy_case(struct kunit *test, bool frames)
{
	struct pp_env *env = pp_setup(test, 1, false);
	const unsigned int nr_ring = frames ? PP_DESTROY_IN_RING :
					      PP_DESTROY_RING_SMALL;
	struct page_pool_stats s0 = {}, s1 = {};
	const struct page_pool_recycle_stats *r0 = &s0.recycle_stats;
	const struct page_pool_recycle_stats *r1 = &s1.recycle_stats;
	struct pp_watch *w = pp_watch_start(test);
	struct xdp_frame *xdpf[PP_DESTROY_PAGES];
	struct pp_acct a0, a1;
	unsigned int i, cache, refused;
	struct page_pool *pool;
	struct pp_destroy *d;
	int err, n;

	env->pool_size = frames ? 0 : PP_DESTROY_RING_SMALL;
	pp_add_pool(test, env, 0, &env->napi[0], -1);
	pool = env->pp[0].pool;
	if (!frames)
		KUNIT_ASSERT_EQ_MSG(test, pool->ring.batch, 1,
				    "ptr_ring consumer batch (exact room)");

	d = kunit_kzalloc(test, sizeof(*d), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, d);
	d->pool = pool;
	d->frames = frames;
	xdp_frame_bulk_init(&d->bq);
	env->destroy = d;
	err = kunit_add_action_or_reset(test, pp_destroy_cleanup_action, d);
	KUNIT_ASSERT_EQ(test, err, 0);

	d->witness = page_pool_dev_alloc_pages(pool);
	KUNIT_ASSERT_NOT_NULL(test, d->witness);
	d->witness_held = true;
	d->pages_held = true;
	for (i = 0; i < PP_DESTROY_PAGES; i++) {
		d->pages[i] = page_pool_dev_alloc_pages(pool);
		KUNIT_ASSERT_NOT_NULL(test, d->pages[i]);
		d->nr_pages = i + 1;
	}
	/* pages in the ring at destroy, returned by a non-owner */
	page_pool_get_stats(pool, &s0);
	for (i = 0; i < nr_ring; i++) {
		struct page *page = page_pool_dev_alloc_pages(pool);

		KUNIT_ASSERT_NOT_NULL(test, page);
		page_pool_put_full_page(pool, page, false);
	}
	page_pool_get_stats(pool, &s1);
	KUNIT_ASSERT_EQ_MSG(test, r1->ring - r0->ring, (u64)nr_ring,
			    "pages put in the ring before destroy");
	KUNIT_ASSERT_EQ(test, r1->ring_full - r0->ring_full, 0ULL);

	if (frames) {
		for (i = 0; i < PP_DESTROY_PAGES; i++) {
			struct xdp_buff xdp;

			pp_build_buff(&xdp, &env->pp[0], d->pages[i], NULL, 0);
			xdpf[i] = xdp_convert_buff_to_frame(&xdp);
			KUNIT_ASSERT_NOT_NULL(test, xdpf[i]);
		}
		memset(&s0, 0, sizeof(s0));
		page_pool_get_stats(pool, &s0);
		rcu_read_lock();
		for (i = 0; i < PP_DESTROY_PAGES; i++)
			xdp_return_frame_bulk(xdpf[i], &d->bq);
		rcu_read_unlock();
		d->pages_held = false;		/* the bulk holds them */
		memset(&s1, 0, sizeof(s1));
		page_pool_get_stats(pool, &s1);
		KUNIT_EXPECT_EQ_MSG(test, d->bq.count, PP_DESTROY_PAGES,
				    "frames in the unflushed bulk");
		KUNIT_EXPECT_EQ_MSG(test, (r1->cached + r1->ring) -
				    (r0->cached + r0->ring), 0ULL,
				    "pages returned before the flush");
	}

	/* cache, ring, and the 17 outside: the witness, the bulk's 16 */
	cache = pool->alloc.count;
	pp_acct_read(pool, &a0);
	KUNIT_EXPECT_EQ_MSG(test, pp_pool_inflight(pool),
			    (int)(cache + nr_ring + PP_DESTROY_PAGES + 1),
			    "pages in flight before destroy (cache %u, ring %u, out 17)",
			    cache, nr_ring);

	pp_pool_destroy(env, 0, w);

	/* the witness is in flight: the pool is still there */
	pp_acct_read(pool, &a1);
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&w->calls), 1,
			    "page_pool_release() calls by page_pool_destroy()");
	KUNIT_EXPECT_EQ_MSG(test, w->first, PP_DESTROY_PAGES + 1,
			    "in flight seen by page_pool_destroy()'s release: deferred on the 16 and the witness");
	KUNIT_EXPECT_EQ_MSG(test, a1.hold - a0.hold, 0U,
			    "pages_state_hold_cnt moved by destroy");
	KUNIT_EXPECT_EQ_MSG(test, a1.release - a0.release, cache + nr_ring,
			    "pages released by destroy (its cache and ring)");
	KUNIT_EXPECT_EQ(test, pool->alloc.count, 0U);
	KUNIT_EXPECT_TRUE_MSG(test, ptr_ring_empty(&pool->ring),
			      "ring emptied by destroy");
	if (atomic_read(&w->over)) {
		d->gone = true;		/* the witness did not keep it */
		KUNIT_FAIL(test, "pool released by destroy (in flight %d) with pages in flight",
			   w->last);
		return;
	}

	/* return the 16 from the poll of the NAPI that owned the pool */
	memset(&s0, 0, sizeof(s0));
	memset(&s1, 0, sizeof(s1));
	page_pool_get_stats(pool, &s0);
	pp_acct_read(pool, &a0);
	err = pp_kick_poll(env, pp_destroy_return);
	page_pool_get_stats(pool, &s1);
	pp_acct_read(pool, &a1);
	n = pp_pool_inflight(pool);
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "poll of the former owner NAPI");
	KUNIT_ASSERT_TRUE(test, d->done);
	KUNIT_EXPECT_TRUE_MSG(test, d->where.serving,
			      "return in NET_RX (in_serving_softirq())");
	KUNIT_EXPECT_EQ_MSG(test, d->where.list_owner[0], d->where.cpu,
			    "return in the poll of the NAPI that owned the pool");

	/*
	 * Destroyed: no NAPI, cpuid -1, so not local even in its old owner's
	 * poll; the cache is not used (page_pool_empty_alloc_cache_once()
	 * ran: a page put there now would never be released).  Ring: 256,
	 * all 16 fit (frames); 8, emptied by destroy: 8 fit, 8 refused and
	 * released at once (!frames).
	 */
	refused = frames ? 0 : PP_DESTROY_PAGES - PP_DESTROY_RING_SMALL;
	KUNIT_EXPECT_EQ(test, r1->cached - r0->cached, 0ULL);
	KUNIT_EXPECT_EQ(test, r1->cache_full - r0->cache_full, 0ULL);
	KUNIT_EXPECT_EQ(test, r1->released_refcnt - r0->released_refcnt,
			0ULL);
	KUNIT_EXPECT_EQ_MSG(test, r1->ring - r0->ring,
			    (u64)(PP_DESTROY_PAGES - refused),
			    "recycle.ring after destroy");
	KUNIT_EXPECT_EQ_MSG(test, r1->ring_full - r0->ring_full,
			    (u64)(pp_base ? !!refused : refused),
			    "recycle.ring_full after destroy (%s)",
			    pp_base ? "base 7.3: one per refusing call" :
				      "one per refused page");
	KUNIT_EXPECT_EQ_MSG(test, pool->alloc.count, 0U,
			    "alloc cache of the destroyed pool after the return");
	KUNIT_EXPECT_EQ(test, a1.hold - a0.hold, 0U);
	/* the refused pages went at once; the worker (every 1 s) may have
	 * drained the ring since, leaving the witness alone
	 */
	KUNIT_EXPECT_TRUE_MSG(test,
			      n == (int)(PP_DESTROY_PAGES - refused + 1) ||
			      n == 1,
			      "pages in flight right after the return: %d, want %u (or 1: ring drained already)",
			      n, PP_DESTROY_PAGES - refused + 1);

	if (!pp_destroy_wait_witness(test, d, w))
		return;

	/* the last page: from here on the pool is not touched */
	d->gone = true;
	d->witness_held = false;
	page_pool_put_full_page(pool, d->witness, false);

	KUNIT_EXPECT_NE_MSG(test,
			    wait_for_completion_timeout(&w->done,
							PP_RELEASE_WAIT), 0UL,
			    "pool not freed %d s after its last page came back (page_pool_release_retry() warns \"stalled pool shutdown\" at 60 s)",
			    PP_RELEASE_WAIT / HZ);
	KUNIT_EXPECT_EQ_MSG(test, w->last, 0,
			    "in flight seen by the release that ended");
	KUNIT_EXPECT_FALSE(test, w->negative);
	KUNIT_EXPECT_GE_MSG(test, atomic_read(&w->calls), 2,
			    "page_pool_release() calls (destroy, then the worker)");
	kunit_info(test, "pool freed by the release worker after %d page_pool_release() calls\n",
		   atomic_read(&w->calls));
}

/*
 * Frames of a pool in an unflushed xdp_frame_bulk when the pool is
 * destroyed (a cpumap/devmap bulk, a driver's TX completion batch).
 *
 * Pins: page_pool_destroy() releases the cache and the 4 ring pages at once
 * and defers on the 17 out (first release sees exactly 17); queueing
 * frames returns nothing (bulk count 16, no stat moves); the flush after
 * destroy, even in the poll of the NAPI that owned the pool, sends all 16
 * to the ring (ring +16, cached 0, alloc.count 0); the worker releases them
 * (in flight falls to the witness); the witness back, the worker frees the
 * pool: a release sees 0 in flight, within 10 s - long before the 60 s
 * "stalled pool shutdown" warning (the warning can only follow a release
 * that saw pages in flight; the one that sees 0 frees the pool).
 * Mutations: series "page_pool: recycle the pages of one pool in a single
 * pass in bulk returns" taking its owner loop without allow_direct (e.g.
 * "if (!sync)" for "if (allow_direct && !sync)") puts the 16 in the
 * destroyed pool's cache, which is never emptied again: cached +16, in
 * flight stays 17, the pool is never freed; a page_pool_napi_local() that
 * trusts in_serving_softirq()/list_owner without the pool's NAPI (cleared
 * by page_pool_disable_direct_recycling()) does the same.  Series "xdp:
 * inline the common case of xdp_return_frame_bulk()": a fast path that
 * returned or flushed a page at queue time fails the bulk count and the
 * 17 in flight at destroy; one that stored past q[] or dropped an entry
 * loses a page: in flight never reaches the witness.
 */
static void pp_destroy_frame_bulk_unflushed(struct kunit *test)
{
	pp_destroy_case(test, true);
}

/*
 * A pool with an 8-entry ring, full at destroy, 16 pages out: destroy
 * releases the ring's 8 (and the cache) at once; the 16 come back in one
 * page_pool_put_netmem_bulk() from the old owner's poll after destroy: the
 * emptied ring takes 8, refuses 8, which are released at once.
 *
 * Pins: pages in the ring at destroy are released by destroy itself (in
 * flight 17 after it); after destroy a bulk return is not local and meets
 * a full ring: recycle.ring +8, recycle.ring_full +8 (one per page; base
 * 7.3: +1, asserted with expect=base), the 8 refused released in the call
 * (in flight 9, or 1 if the worker drained the ring already), the 8 in the
 * ring by the worker; the pool freed after the witness, as above.
 * Mutations: reverting "page_pool: count every page a full ring refuses in
 * bulk returns" gives ring_full +1 on the series; a
 * page_pool_recycle_ring_bulk() that forgets the refused tail leaves 8 in
 * flight for ever (never the witness alone, the pool never freed); one
 * that releases a page twice makes in flight fall below the witness (the
 * case stops touching the pool and fails); the single-pass patch sending
 * pages to the cache without allow_direct fails as in the frame case.
 */
static void pp_destroy_ring_full_in_flight(struct kunit *test)
{
	pp_destroy_case(test, false);
}

/*
 * Hard IRQ nested in the owner's NAPI poll, on the owner CPU.
 *
 * Neither 7.3 nor the series has a run-time guard against this:
 * page_pool_napi_local() tests in_softirq(), which is still true in a
 * hardirq that interrupted the poll, and list_owner is this CPU, so the
 * decision says "local".  The only check is lockdep_assert_no_hardirq() at
 * the top of __page_pool_put_page(): page_pool must not be called from hard
 * IRQ at all (the ring path takes producer_lock with plain spin_lock() when
 * in_softirq(), which would deadlock against an interrupted holder).  So by
 * default the case returns nothing from the timer: it proves the context
 * (hardirq, on the owner CPU, in_softirq() true, list_owner == CPU) and
 * that the cache and ring were untouched.  With hardirq_return=1 it really
 * returns one page from the timer - only safe here because the poll is
 * spinning and holds neither the cache nor the ring lock - and asserts
 * that it went to the cache: what a driver that broke the contract would
 * get.  On a lockdep kernel that return triggers the documented
 * lockdep_assert_no_hardirq() warning, which scripts/splat.sh expects
 * with pp_timer_fn in its trace.
 */
static void pp_hardirq_in_owner_poll(struct kunit *test)
{
	struct pp_env *env = pp_setup(test, 1, false);
	struct page_pool_stats before[PP_MAX_POOL], after[PP_MAX_POOL];
	const struct pp_where *w = &env->timer_where;
	/* PREEMPT_RT: not local, the ring's lock sleeps: never from here */
	bool do_return = hardirq_return && !IS_ENABLED(CONFIG_PREEMPT_RT);
	u64 cached, ring;
	int err;

	pp_add_pool(test, env, 0, &env->napi[0], -1);
	if (do_return) {
		err = pp_job_prep(env, PP_PUT_PAGE);
		KUNIT_ASSERT_EQ(test, err, 0);
		env->timer_return = true;
	}

	pp_snap(env, before);
	err = pp_kick_poll(env, pp_poll_hardirq);
	hrtimer_cancel(&env->timer);
	pp_snap(env, after);
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "hard timer did not fire in the poll");

	KUNIT_ASSERT_TRUE(test, w->recorded);
	KUNIT_EXPECT_TRUE(test, w->hardirq);
	KUNIT_EXPECT_EQ(test, w->cpu, env->poll_where.cpu);
	KUNIT_EXPECT_EQ(test, w->list_owner[0], w->cpu);
	KUNIT_EXPECT_TRUE_MSG(test, w->softirq,
			      "in_softirq() inside the nested hardirq");

	cached = after[0].recycle_stats.cached - before[0].recycle_stats.cached;
	ring = after[0].recycle_stats.ring - before[0].recycle_stats.ring;
	if (!do_return) {
		pp_expect_delta(test, "nothing", "hardirq in owner poll", 0,
				&before[0], &after[0], 0, 0);
		kunit_info(test, "hardirq on CPU%d: in_softirq()=%d list_owner=%d: page_pool_napi_local() would say local; only lockdep_assert_no_hardirq() guards\n",
			   w->cpu, w->softirq, w->list_owner[0]);
		return;
	}
	KUNIT_EXPECT_TRUE(test, env->job.done);
	kunit_info(test, "page returned from hardirq -> cached +%llu ring +%llu\n",
		   cached, ring);
	KUNIT_EXPECT_EQ(test, cached, 1ULL);
	KUNIT_EXPECT_EQ(test, ring, 0ULL);
}

/*
 * Interrupts disabled inside the owner's NAPI poll, on the owner CPU, not
 * in a hard IRQ: in_softirq() is true and list_owner is this CPU, so
 * page_pool_napi_local() (no interrupt test, on 7.3 and on the series)
 * says "local" and the page goes to the lockless cache.  Returning with
 * interrupts disabled is outside the page_pool contract (drivers must not
 * touch page_pool in netpoll's budget-0 poll, which runs with IRQs off):
 * lockdep_assert_no_hardirq() warns, once per boot, with pp_poll_irqs_off
 * in its trace (scripts/splat.sh expects it).  The case pins that the
 * series changes nothing here.
 */
static int pp_ctx_napi_poll_irqs_off(struct pp_env *env)
{
	return pp_kick_poll(env, pp_poll_irqs_off);
}

static void pp_irqs_off_in_owner_poll(struct kunit *test)
{
	struct pp_env *env = pp_setup(test, 1, false);
	struct pp_case c = {
		.ctx = "owner NAPI poll, IRQs disabled",
		.run = pp_ctx_napi_poll_irqs_off,
		.local = { true }, .softirq = 1, .serving = 1, .cpu = -1,
		.owner = { PP_OWN_SELF },
	};

	/* not local there: the ring, whose lock sleeps, with IRQs off */
	if (IS_ENABLED(CONFIG_PREEMPT_RT))
		kunit_skip(test, "PREEMPT_RT: a return with IRQs off would take the ring's sleeping lock");
	pp_add_pool(test, env, 0, &env->napi[0], -1);
	pp_check_api(test, env, &c, PP_PUT_PAGE);
	KUNIT_EXPECT_TRUE_MSG(test, env->job.where.irqs_off,
			      "%s in %s: irqs_disabled()",
			      pp_apis[PP_PUT_PAGE].name, c.ctx);
}

static struct kunit_case pp_decide_cases[] = {
	KUNIT_CASE(pp_expect_mode),
	KUNIT_CASE(pp_process_bh_enabled),
	KUNIT_CASE(pp_napi_poll_owner),
	KUNIT_CASE(pp_napi_poll_owner_enable_direct),
	KUNIT_CASE(pp_bh_owner_napi_scheduled),
	KUNIT_CASE(pp_bh_owner_napi_idle),
	KUNIT_CASE(pp_bh_other_cpu_owner_polling),
	KUNIT_CASE(pp_no_napi_pool_in_poll),
	KUNIT_CASE(pp_percpu_pool_owner_cpu_bh),
	KUNIT_CASE(pp_percpu_pool_other_cpu_bh),
	KUNIT_CASE(pp_percpu_pool_owner_cpu_process),
	KUNIT_CASE(pp_threaded_napi_poll),
	KUNIT_CASE(pp_busy_poll),
	KUNIT_CASE(pp_busy_poll_other_napi),
	KUNIT_CASE(pp_busy_poll_between_polls),
	KUNIT_CASE(pp_busy_poll_stop_poll),
	KUNIT_CASE(pp_busy_poll_missed_resched),
	KUNIT_CASE(pp_threaded_napi_repoll),
	KUNIT_CASE(pp_threaded_napi_migrated),
	KUNIT_CASE(pp_mixed_pool_bulk_in_poll),
	KUNIT_CASE(pp_bulk_cache_fills),
	KUNIT_CASE(pp_bulk_page_refs),
	KUNIT_CASE(pp_bulk_interleaved_pools),
	KUNIT_CASE(pp_bulk_longer_than_16),
	KUNIT_CASE(pp_bulk_longer_than_16_ring),
	KUNIT_CASE(pp_frame_bulk_mixed),
	KUNIT_CASE(pp_ring_full_bulk),
	KUNIT_CASE(pp_ring_full_frame_bulk),
	KUNIT_CASE(pp_ring_full_other_cpu),
	KUNIT_CASE(pp_destroy_frame_bulk_unflushed),
	KUNIT_CASE(pp_destroy_ring_full_in_flight),
	KUNIT_CASE(pp_hardirq_in_owner_poll),
	KUNIT_CASE(pp_irqs_off_in_owner_poll),
	{}
};

static struct kunit_suite pp_decide_suite = {
	.name = "pp_decide",
	.test_cases = pp_decide_cases,
};

kunit_test_suite(pp_decide_suite);

/* ---- benchmark ------------------------------------------------------ */

/* Runs in the context under measurement. */
static void pp_bench_loop(struct pp_env *env)
{
	struct pp_bench *b = &env->bench;
	struct page_pool_stats s0 = {}, s1 = {};
	u64 t0, t1, c0, c1, et, ec;
	unsigned int i;

	for (i = 0; i < min(b->loops, PP_BENCH_WARMUP); i++) {
		b->err = pp_job_prep(env, b->api);
		if (b->err)
			return;
		pp_job_exec(&env->job);
	}

	/* Loop overhead: same loop and clock reads, nothing inside. */
	c0 = get_cycles();
	t0 = ktime_get_ns();
	for (i = 0; i < b->loops; i++)
		barrier();
	t1 = ktime_get_ns();
	c1 = get_cycles();
	et = t1 - t0;
	ec = c1 - c0;

	page_pool_get_stats(env->pp[0].pool, &s0);
	c0 = get_cycles();
	t0 = ktime_get_ns();
	for (i = 0; i < b->loops; i++) {
		b->err = pp_job_prep(env, b->api);
		if (b->err)
			return;
		pp_job_exec(&env->job);
	}
	t1 = ktime_get_ns();
	c1 = get_cycles();
	page_pool_get_stats(env->pp[0].pool, &s1);

	b->ns = t1 - t0 > et ? t1 - t0 - et : 0;
	b->cycles = c1 - c0 > ec ? c1 - c0 - ec : 0;
	b->cached = s1.recycle_stats.cached - s0.recycle_stats.cached;
	b->ring = s1.recycle_stats.ring - s0.recycle_stats.ring;
}

enum pp_bench_ctx {
	PP_BENCH_NAPI_OWNER,
	PP_BENCH_BH_OTHER_CPU,
	PP_BENCH_PROCESS,
	PP_NR_BENCH_CTX,
};

static const char * const pp_bench_ctx_names[PP_NR_BENCH_CTX] = {
	[PP_BENCH_NAPI_OWNER]	= "napi-owner",
	[PP_BENCH_BH_OTHER_CPU]	= "bh-other-cpu",
	[PP_BENCH_PROCESS]	= "process",
};

static int pp_bench_one(struct pp_env *env, enum pp_bench_ctx ctx)
{
	int err = 0;

	switch (ctx) {
	case PP_BENCH_NAPI_OWNER:
		err = pp_kick_poll(env, pp_bench_loop);
		break;
	case PP_BENCH_BH_OTHER_CPU:
		env->work_bh = true;
		env->work_fn = pp_bench_loop;
		err = pp_run_work(env);
		break;
	case PP_BENCH_PROCESS:
		migrate_disable();
		pp_bench_loop(env);
		migrate_enable();
		break;
	default:
		break;
	}
	return err ?: env->bench.err;
}

static void pp_bench_ctx(enum pp_bench_ctx ctx, unsigned int loops)
{
	const char *cname = pp_bench_ctx_names[ctx];
	struct pp_env *env;
	unsigned int api;
	int err;

	env = pp_env_create(1, false);
	if (IS_ERR(env)) {
		pr_info("pp_decide_bench: ctx=%s error=%ld\n", cname,
			PTR_ERR(env));
		return;
	}
	/* Allow 20us per op on top of the usual bound, for slow guests. */
	env->wait = PP_WAIT + msecs_to_jiffies(loops / 50);
	err = pp_env_add_pool(env, 0, &env->napi[0], -1);
	if (err)
		goto out;

	if (ctx == PP_BENCH_BH_OTHER_CPU) {
		/* "other" than the CPU the NAPI would normally run on here */
		unsigned int other = cpumask_any_but(cpu_online_mask,
						     raw_smp_processor_id());

		if (other >= nr_cpu_ids) {
			pr_info("pp_decide_bench: ctx=%s skipped=single-cpu\n",
				cname);
			goto out;
		}
		env->work_cpu = other;
	}

	for (api = 0; api < PP_NR_SINGLE_POOL_API; api++) {
		struct pp_bench *b = &env->bench;
		u64 ns_milli;

		if (!pp_api_available(api))
			continue;
		memset(b, 0, sizeof(*b));
		b->api = api;
		b->loops = loops;
		err = pp_bench_one(env, ctx);
		if (err) {
			pr_info("pp_decide_bench: api=%s ctx=%s error=%d\n",
				pp_apis[api].name, cname, err);
			break;
		}
		ns_milli = div_u64(b->ns * 1000, loops);
		pr_info("pp_decide_bench: api=%s ctx=%s loops=%u ns_per_op=%llu.%03llu cycles_per_op=%llu cached=%llu ring=%llu\n",
			pp_apis[api].name, cname, loops,
			div_u64(ns_milli, 1000), ns_milli % 1000,
			div_u64(b->cycles, loops), b->cached, b->ring);
	}
out:
	if (err)
		pr_info("pp_decide_bench: ctx=%s error=%d\n", cname, err);
	pp_env_destroy(env);
}

static void pp_bench_run(void)
{
	unsigned int loops = clamp(bench_loops, 1U, PP_BENCH_MAX_LOOPS);
	enum pp_bench_ctx ctx;

	pr_info("pp_decide_bench: expect=%s loops=%u (op = alloc + build + one API call; pages per op: bulk 4, _mb 4, else 1)\n",
		pp_base ? "base" : "series", loops);
	for (ctx = 0; ctx < PP_NR_BENCH_CTX; ctx++)
		pp_bench_ctx(ctx, loops);
}

/* ---- module --------------------------------------------------------- */

static bool pp_kernel_exports_rx_napi(void)
{
	/* Base 7.3 exports it (GPL); the series removes it.  The reference
	 * is held until the module goes away.
	 */
	pp_rx_napi = __symbol_get("xdp_return_frame_rx_napi");
	return pp_rx_napi;
}

static int __init pp_decide_init(void)
{
	pp_probe_base = pp_kernel_exports_rx_napi();

	if (!strcmp(expect, "series")) {
		pp_base = false;
	} else if (!strcmp(expect, "base")) {
		pp_base = true;
	} else if (!strcmp(expect, "auto")) {
		pp_base = pp_probe_base;
	} else {
		pr_err("pp_decide: expect=%s: use series, base or auto\n",
		       expect);
		return -EINVAL;
	}
	pr_info("pp_decide: expecting %s behaviour (expect=%s, xdp_return_frame_rx_napi %s)\n",
		pp_base ? "base 7.3" : "series", expect,
		pp_probe_base ? "exported" : "not exported");

	if (bench)
		pp_bench_run();
	return 0;
}

/* The KUnit suite runs from the module notifier once init returned. */
static void __exit pp_decide_exit(void)
{
	if (pp_rx_napi)
		__symbol_put("xdp_return_frame_rx_napi");
}

module_init(pp_decide_init);
module_exit(pp_decide_exit);

MODULE_DESCRIPTION("KUnit test: where page_pool's direct-recycle decision sends returned pages");
MODULE_AUTHOR("xdp-pp project");
MODULE_LICENSE("GPL");
