// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cache_plugin.c - QEMU TCG plugin (system mode): a data cache model
 * (L1D, optionally L2, set-associative, LRU, write-allocate) fed with the
 * guest's memory accesses, each access and miss attributed to the guest
 * *virtual* address of the instruction that made it (so that kernel
 * symbols in System.map name them). Written for the xdp-pp harness
 * (scripts/bench/cache-plugin.sh builds it, scripts/bench/cache-report.py
 * reads its output); not derived from QEMU's contrib/plugins/cache.c.
 *
 * Arguments (-plugin xdp-cache.so,arg=value,...; QEMU splits on commas):
 *   out=PATH        CSV output (required), written at each window's close
 *                   and at exit
 *   map=PATH        System.map of the guest kernel: lets start/stop be
 *                   symbol names
 *   start=SYM|ADDR  counting starts (a window opens) when any vCPU executes
 *                   the instruction at this guest virtual address
 *   stop=SYM|ADDR   ... and stops (the window closes) here; without
 *                   start/stop everything from boot to exit is one window
 *   model=always    the caches see every access from boot on (default), or
 *   model=armed     only from the first window's opening on: until then no
 *                   access is instrumented (boot at plain TCG speed); the
 *                   first opening flushes the translations (qemu_plugin_reset)
 *                   and re-instruments everything, asynchronously, so the
 *                   first window must be a warm-up. Either way the caches are
 *                   never flushed: they stay warm across windows
 *   l1size=32K l1assoc=8 line=64     L1D geometry (per vCPU)
 *   l2size=1M  l2assoc=16            L2 (per vCPU, non-inclusive); l2size=0: none
 *   user=on|off     count user-space instructions (vaddr < kbase) too, all
 *                   in one row with insn 0x0 (default on)
 *   kbase=ADDR      where kernel space starts (0xffff800000000000)
 *   icache=on       also an L1I (l1isize=32K l1iassoc=8, per vCPU) fed with
 *                   the lines each executed translation block spans (by host
 *                   address of the code: unique per guest physical page), its
 *                   misses looked up in the (unified) L2; adds two columns
 *   sets=on         also, per instruction, the L1D sets its misses fell in:
 *                   adds two columns, l1d_miss_sets (the set indexes modulo
 *                   64 as a hex bit mask) and l1d_last_set (the set of its
 *                   last miss, -1 if none), after the icache ones
 *
 * Cache lines are indexed by guest physical address (MMIO accesses bypass
 * the caches and are counted as io). A misaligned access that crosses a
 * line is one access touching two lines (it can miss twice). Page-table
 * walks, instruction fetches and DMA by devices are not seen.
 *
 * Output (CSV; lines starting with '#' are comments):
 *   # xdp-cache v1 l1size=... l1assoc=... line=... l2size=... l2assoc=... start=0x... stop=0x...
 *   window,insn,accesses,l1d_misses,l2_misses,io[,l1i_fetches,l1i_misses]
 *   1,0xffffffff81234567,1200,30,2,0
 * l2_misses: of the instruction's data accesses (and, with icache=on, of
 * the fetches of the code lines it begins); l1i_fetches: executions of a
 * translation block that fetched a code line beginning with this
 * instruction (a line is charged to the first instruction of the block in it).
 *   # window 1 closed: insns=<guest insns executed> accesses=... l1d_misses=... l2_misses=... io=... records=...
 * one row per instruction address with a non-zero count in that window.
 * insns= counts the instructions of each executed translation block (an
 * inline add per block): a REP string instruction looping inside its block
 * counts once per block execution, its memory accesses once per iteration;
 * under -icount the guest clock is the exact figure.
 * A window still open at exit is written with "# window N partial".
 *
 * Thread safety: with more than one vCPU every callback that touches
 * shared state takes one mutex (each vCPU has its own caches); the
 * instruction table is grown under that mutex at translation time.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

/* ---- cache model ---- */

struct cache {
	uint64_t *tags;   /* sets * assoc, per set most recent first; 0 = empty */
	unsigned int sets, assoc, line_shift;
};

static bool cache_init(struct cache *c, uint64_t size, unsigned int assoc,
		       unsigned int line_shift)
{
	uint64_t lines = size >> line_shift;

	if (!assoc || lines < assoc || lines % assoc)
		return false;
	c->sets = lines / assoc;
	if (c->sets & (c->sets - 1))
		return false; /* power of two sets */
	c->assoc = assoc;
	c->line_shift = line_shift;
	c->tags = calloc((size_t)c->sets * assoc, sizeof(*c->tags));
	return c->tags != NULL;
}

/* access LINE (address >> line_shift); true on a hit. LRU: move to front. */
static inline bool cache_access(struct cache *c, uint64_t line)
{
	uint64_t tag = line + 1; /* never 0 */
	uint64_t *set = c->tags + (size_t)(line & (c->sets - 1)) * c->assoc;
	unsigned int i;

	if (set[0] == tag)
		return true;
	for (i = 1; i < c->assoc; i++) {
		if (set[i] == tag) {
			memmove(set + 1, set, i * sizeof(*set));
			set[0] = tag;
			return true;
		}
	}
	/* miss: evict the least recently used (the last) */
	memmove(set + 1, set, (c->assoc - 1) * sizeof(*set));
	set[0] = tag;
	return false;
}

struct vcpu_caches {
	struct cache l1, l2, l1i;
};

/* ---- per-instruction records ---- */

struct rec {
	uint64_t insn;
	uint64_t acc, l1m, l2m, io, ifetch, l1im;
	uint64_t miss_sets; /* sets=on: bit (set % 64) per L1D miss */
	int64_t last_set;   /* sets=on: set of the last L1D miss (valid if miss_sets) */
};

#define CHUNK 4096
static struct rec **chunks;
static size_t nchunks, nrecs;
/* open addressing: pointers into chunks, keyed by insn vaddr */
static struct rec **table;
static size_t table_size; /* power of two */

static inline size_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (size_t)x;
}

static void table_insert(struct rec *r)
{
	size_t i = hash64(r->insn) & (table_size - 1);

	while (table[i])
		i = (i + 1) & (table_size - 1);
	table[i] = r;
}

static struct rec *rec_get(uint64_t insn)
{
	size_t i;
	struct rec *r;

	if (table_size) {
		for (i = hash64(insn) & (table_size - 1); table[i];
		     i = (i + 1) & (table_size - 1))
			if (table[i]->insn == insn)
				return table[i];
	}
	if ((nrecs + 1) * 2 > table_size) {
		size_t old = table_size, j;
		struct rec **ot = table;

		table_size = old ? old * 2 : 1 << 16;
		table = calloc(table_size, sizeof(*table));
		if (!table)
			abort();
		for (j = 0; j < old; j++)
			if (ot[j])
				table_insert(ot[j]);
		free(ot);
	}
	if (nrecs == nchunks * CHUNK) {
		chunks = realloc(chunks, (nchunks + 1) * sizeof(*chunks));
		if (!chunks)
			abort();
		chunks[nchunks] = calloc(CHUNK, sizeof(struct rec));
		if (!chunks[nchunks])
			abort();
		nchunks++;
	}
	r = &chunks[nrecs / CHUNK][nrecs % CHUNK];
	nrecs++;
	r->insn = insn;
	table_insert(r);
	return r;
}

/* ---- state ---- */

static struct vcpu_caches *vc;
static unsigned int max_vcpus;
static bool use_lock;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t start_addr, stop_addr;
static bool have_window;          /* start/stop given */
static bool counting;             /* a window is open */
static bool modelling;            /* the caches see accesses */
static bool model_armed;
static bool instrument = true;    /* tb_trans adds the memory callbacks */
static bool rearming;             /* model=armed: the reset is under way */
static qemu_plugin_id_t plugin_id;
static bool count_user = true;
static bool icache;
static bool track_sets;
static uint64_t l1i_size = 32768;
static unsigned int l1i_assoc = 8;
static unsigned int window;       /* number of the open/last window */
static uint64_t l1_size = 32768, l2_size = 1 << 20;
static unsigned int l1_assoc = 8, l2_assoc = 16, line_size = 64, line_shift = 6;
static FILE *out;
static char *out_path;

/* window totals */
static uint64_t w_acc, w_l1m, w_l2m, w_io, w_reopen, w_if, w_l1im;
/* instructions executed, per vCPU (inline adds) */
static struct qemu_plugin_scoreboard *insn_sb;
static qemu_plugin_u64 insn_count;
static uint64_t w_insn0;

static inline void lock_maybe(void)
{
	if (use_lock)
		pthread_mutex_lock(&lock);
}

static inline void unlock_maybe(void)
{
	if (use_lock)
		pthread_mutex_unlock(&lock);
}

static uint64_t kbase = 0xffff800000000000ULL;

/* ---- callbacks ---- */

static void mem_cb(unsigned int vcpu, qemu_plugin_meminfo_t info,
		   uint64_t vaddr, void *udata)
{
	struct rec *r = udata;
	struct qemu_plugin_hwaddr *hw;
	uint64_t addr, first, last, l;
	unsigned int size;
	int l1m = 0, l2m = 0;
	int64_t mset = -1;
	uint64_t msets = 0;
	bool io;

	if (!modelling)
		return;
	hw = qemu_plugin_get_hwaddr(info, vaddr);
	io = hw && qemu_plugin_hwaddr_is_io(hw);
	addr = hw ? qemu_plugin_hwaddr_phys_addr(hw) : vaddr;
	size = 1u << qemu_plugin_mem_size_shift(info);
	lock_maybe();
	if (vcpu >= max_vcpus)
		vcpu = 0;
	if (!io) {
		first = addr >> line_shift;
		last = (addr + size - 1) >> line_shift;
		for (l = first; l <= last; l++) {
			if (cache_access(&vc[vcpu].l1, l))
				continue;
			l1m++;
			if (track_sets) {
				mset = l & (vc[vcpu].l1.sets - 1);
				msets |= 1ull << (mset & 63);
			}
			if (l2_size && !cache_access(&vc[vcpu].l2, l))
				l2m++;
		}
	}
	if (counting && r) {
		r->acc++;
		r->l1m += l1m;
		r->l2m += l2m;
		r->io += io;
		if (mset >= 0) {
			r->miss_sets |= msets;
			r->last_set = mset;
		}
		w_acc++;
		w_l1m += l1m;
		w_l2m += l2m;
		w_io += io;
	}
	unlock_maybe();
}

static void dump_window(bool partial)
{
	size_t i;
	uint64_t n = 0, insns;

	if (!out)
		return;
	for (i = 0; i < nrecs; i++) {
		struct rec *r = &chunks[i / CHUNK][i % CHUNK];

		if (!r->acc && !r->ifetch && !r->l2m)
			continue;
		fprintf(out, "%u,0x%016" PRIx64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%" PRIu64, window, r->insn, r->acc, r->l1m, r->l2m, r->io);
		if (icache)
			fprintf(out, ",%" PRIu64 ",%" PRIu64, r->ifetch, r->l1im);
		if (track_sets)
			fprintf(out, ",0x%016" PRIx64 ",%" PRId64, r->miss_sets,
				r->miss_sets ? r->last_set : (int64_t)-1);
		fputc('\n', out);
		r->acc = r->l1m = r->l2m = r->io = r->ifetch = r->l1im = 0;
		r->miss_sets = 0;
		n++;
	}
	insns = qemu_plugin_u64_sum(insn_count) - w_insn0;
	fprintf(out, "# window %u %s: insns=%" PRIu64 " accesses=%" PRIu64
		" l1d_misses=%" PRIu64 " l2_misses=%" PRIu64 " io=%" PRIu64
		" records=%" PRIu64 " reopen=%" PRIu64, window,
		partial ? "partial" : "closed", insns, w_acc, w_l1m, w_l2m,
		w_io, n, w_reopen);
	if (icache)
		fprintf(out, " l1i_fetches=%" PRIu64 " l1i_misses=%" PRIu64, w_if, w_l1im);
	fputc('\n', out);
	fflush(out);
	w_acc = w_l1m = w_l2m = w_io = w_reopen = w_if = w_l1im = 0;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
static void at_exit(qemu_plugin_id_t id, void *udata);

/* model=armed: the reset is done, every callback gone and the translations
 * flushed: from now on everything is instrumented */
static void rearmed(qemu_plugin_id_t id)
{
	instrument = true;
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
}

static void window_open(unsigned int vcpu, void *udata)
{
	lock_maybe();
	if (counting) {
		w_reopen++;
	} else {
		window++;
		counting = true;
		modelling = true;
		w_insn0 = qemu_plugin_u64_sum(insn_count);
		if (!instrument && !rearming) {
			rearming = true;
			qemu_plugin_reset(plugin_id, rearmed);
		}
	}
	unlock_maybe();
}

static void window_close(unsigned int vcpu, void *udata)
{
	lock_maybe();
	if (counting) {
		counting = false;
		dump_window(false);
	}
	unlock_maybe();
}

/* the code lines a translation block spans, each charged to the first
 * instruction of the block in it */
struct tb_lines {
	unsigned int n;
	struct {
		uint64_t line;
		struct rec *r;
	} e[];
};

#define ILINE_SPACE (1ULL << 60) /* code lines (host addresses) in the L2 */

static void tb_exec(unsigned int vcpu, void *udata)
{
	struct tb_lines *t = udata;
	unsigned int i;

	if (!modelling)
		return;
	lock_maybe();
	if (vcpu >= max_vcpus)
		vcpu = 0;
	for (i = 0; i < t->n; i++) {
		bool hit = cache_access(&vc[vcpu].l1i, t->e[i].line);
		bool l2miss = false;

		if (!hit && l2_size)
			l2miss = !cache_access(&vc[vcpu].l2, t->e[i].line | ILINE_SPACE);
		if (counting && t->e[i].r) {
			t->e[i].r->ifetch++;
			t->e[i].r->l1im += !hit;
			t->e[i].r->l2m += l2miss;
			w_if++;
			w_l1im += !hit;
			w_l2m += l2miss;
		}
	}
	unlock_maybe();
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	struct tb_lines *t = NULL;

	if (icache && instrument) {
		/* at most two lines per instruction (x86: <= 15 bytes) */
		t = calloc(1, sizeof(*t) + 2 * n * sizeof(t->e[0]));
		if (!t)
			abort();
	}

	qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(tb,
		QEMU_PLUGIN_INLINE_ADD_U64, insn_count, n);
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t va = qemu_plugin_insn_vaddr(insn);
		struct rec *r = NULL;

		if (have_window && va == start_addr)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, window_open,
				QEMU_PLUGIN_CB_NO_REGS, NULL);
		if (have_window && va == stop_addr)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, window_close,
				QEMU_PLUGIN_CB_NO_REGS, NULL);
		/* the record is made on translation (any instruction may
		 * access memory; plain ALU ones never call mem_cb) */
		if (!instrument)
			continue;
		/* user space: one record, address 0 (a vaddr names nothing
		 * across processes) */
		if (count_user || va >= kbase) {
			pthread_mutex_lock(&lock);
			r = rec_get(va >= kbase ? va : 0);
			pthread_mutex_unlock(&lock);
		}
		qemu_plugin_register_vcpu_mem_cb(insn, mem_cb, QEMU_PLUGIN_CB_NO_REGS,
						 QEMU_PLUGIN_MEM_RW, r);
		if (t) {
			uintptr_t h = (uintptr_t)qemu_plugin_insn_haddr(insn);
			uint64_t l, first, last;

			/* no host address (code in MMIO): by vaddr */
			if (!h)
				h = (uintptr_t)va;
			first = h >> line_shift;
			last = (h + qemu_plugin_insn_size(insn) - 1) >> line_shift;
			for (l = first; l <= last; l++) {
				if (t->n && t->e[t->n - 1].line == l)
					continue;
				t->e[t->n].line = l;
				t->e[t->n].r = r;
				t->n++;
			}
		}
	}
	if (t && t->n)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QEMU_PLUGIN_CB_NO_REGS, t);
	else
		free(t);
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
	lock_maybe();
	if (counting)
		dump_window(true);
	if (out) {
		fprintf(out, "# exit: windows=%u records=%zu\n", window, nrecs);
		fclose(out);
		out = NULL;
	}
	unlock_maybe();
}

/* ---- arguments ---- */

static bool parse_size(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno || end == s)
		return false;
	switch (*end) {
	case 'k': case 'K': x <<= 10; end++; break;
	case 'm': case 'M': x <<= 20; end++; break;
	case 'g': case 'G': x <<= 30; end++; break;
	}
	if (*end)
		return false;
	*v = x;
	return true;
}

/* SYM (with map=) or a number */
static bool resolve(const char *map, const char *s, uint64_t *v)
{
	char line[512], name[256], type;
	unsigned long long a;
	FILE *f;

	if (parse_size(s, v))
		return true;
	if (!map)
		return false;
	f = fopen(map, "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &a, &type, name) == 3 &&
		    !strcmp(name, s) && (type == 'T' || type == 't')) {
			fclose(f);
			*v = a;
			return true;
		}
	}
	fclose(f);
	return false;
}

static int fail(const char *msg, const char *arg)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "xdp-cache: %s%s%s\n", msg, arg ? ": " : "",
		 arg ? arg : "");
	qemu_plugin_outs(buf);
	fputs(buf, stderr);
	return -1;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *map = NULL, *start = NULL, *stop = NULL;
	uint64_t v;
	unsigned int i;
	int k;

	if (!info->system_emulation)
		return fail("system emulation only", NULL);
	for (k = 0; k < argc; k++) {
		char *eq = strchr(argv[k], '=');
		const char *key = argv[k], *val;
		size_t kl;
		bool b;

		if (!eq)
			return fail("argument without '='", argv[k]);
		kl = eq - key;
		val = eq + 1;
#define KEY(s) (kl == strlen(s) && !strncmp(key, s, kl))
		if (KEY("out")) {
			out_path = strdup(val);
		} else if (KEY("map")) {
			map = val;
		} else if (KEY("start")) {
			start = val;
		} else if (KEY("stop")) {
			stop = val;
		} else if (KEY("model")) {
			if (!strcmp(val, "always"))
				model_armed = false;
			else if (!strcmp(val, "armed"))
				model_armed = true;
			else
				return fail("model= takes always or armed", val);
		} else if (KEY("l1size") && parse_size(val, &v)) {
			l1_size = v;
		} else if (KEY("l2size") && parse_size(val, &v)) {
			l2_size = v;
		} else if (KEY("l1assoc") && parse_size(val, &v)) {
			l1_assoc = v;
		} else if (KEY("l2assoc") && parse_size(val, &v)) {
			l2_assoc = v;
		} else if (KEY("line") && parse_size(val, &v) && v && !(v & (v - 1))) {
			line_size = v;
		} else if (KEY("kbase") && parse_size(val, &v)) {
			kbase = v;
		} else if (KEY("l1isize") && parse_size(val, &v)) {
			l1i_size = v;
		} else if (KEY("l1iassoc") && parse_size(val, &v)) {
			l1i_assoc = v;
		} else if (KEY("icache")) {
			char name[] = "icache";

			if (!qemu_plugin_bool_parse(name, val, &b))
				return fail("icache= takes on or off", val);
			icache = b;
		} else if (KEY("sets")) {
			char name[] = "sets";

			if (!qemu_plugin_bool_parse(name, val, &b))
				return fail("sets= takes on or off", val);
			track_sets = b;
		} else if (KEY("user")) {
			char name[] = "user";

			if (!qemu_plugin_bool_parse(name, val, &b))
				return fail("user= takes on or off", val);
			count_user = b;
		} else {
			return fail("unknown or bad argument", argv[k]);
		}
#undef KEY
	}
	if (!out_path)
		return fail("out=PATH is required", NULL);
	if (!start != !stop)
		return fail("start= and stop= go together", NULL);
	if (start) {
		if (!resolve(map, start, &start_addr))
			return fail(map ? "start: no such text symbol in map" :
				    "start: not a number (symbols need map=)", start);
		if (!resolve(map, stop, &stop_addr))
			return fail(map ? "stop: no such text symbol in map" :
				    "stop: not a number (symbols need map=)", stop);
		if (start_addr == stop_addr)
			return fail("start and stop are the same address", start);
		have_window = true;
	}
	for (line_shift = 0; (1u << line_shift) < line_size; line_shift++)
		;
	max_vcpus = info->system.max_vcpus > 0 ? info->system.max_vcpus : 1;
	use_lock = max_vcpus > 1;
	vc = calloc(max_vcpus, sizeof(*vc));
	if (!vc)
		return fail("out of memory", NULL);
	for (i = 0; i < max_vcpus; i++) {
		if (!cache_init(&vc[i].l1, l1_size, l1_assoc, line_shift))
			return fail("bad L1 geometry (size/assoc/line: power-of-two sets)", NULL);
		if (l2_size && !cache_init(&vc[i].l2, l2_size, l2_assoc, line_shift))
			return fail("bad L2 geometry (size/assoc/line: power-of-two sets)", NULL);
		if (icache && !cache_init(&vc[i].l1i, l1i_size, l1i_assoc, line_shift))
			return fail("bad L1I geometry (size/assoc/line: power-of-two sets)", NULL);
	}
	out = fopen(out_path, "w");
	if (!out)
		return fail("cannot write", out_path);
	fprintf(out, "# xdp-cache v1 l1size=%" PRIu64 " l1assoc=%u line=%u l2size=%"
		PRIu64 " l2assoc=%u start=0x%" PRIx64 " stop=0x%" PRIx64
		" model=%s user=%s vcpus=%u", l1_size, l1_assoc, line_size,
		l2_size, l2_assoc, start_addr, stop_addr,
		model_armed ? "armed" : "always", count_user ? "on" : "off", max_vcpus);
	if (icache)
		fprintf(out, " icache=on l1isize=%" PRIu64 " l1iassoc=%u", l1i_size, l1i_assoc);
	if (track_sets)
		fprintf(out, " sets=on");
	fprintf(out, "\nwindow,insn,accesses,l1d_misses,l2_misses,io%s%s\n",
		icache ? ",l1i_fetches,l1i_misses" : "",
		track_sets ? ",l1d_miss_sets,l1d_last_set" : "");
	fflush(out);

	insn_sb = qemu_plugin_scoreboard_new(sizeof(uint64_t));
	insn_count = (qemu_plugin_u64){ .score = insn_sb, .offset = 0 };
	plugin_id = id;
	modelling = !model_armed;
	instrument = !(model_armed && have_window);
	if (!have_window) {
		/* one window: everything */
		window = 1;
		counting = true;
		modelling = true;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
