// SPDX-License-Identifier: GPL-2.0
/*
 * cache_selftest.c - a bare-metal multiboot guest (32-bit, no paging) for
 * scripts/bench/cache-selftest.sh: known memory patterns inside windows opened
 * and closed by cw_start()/cw_stop(), so that the cache plugin's counts
 * (net-core/bench/cache_plugin.c) can be checked against exact figures.
 *   window 1: 10 passes over a 16 KiB array warmed before (fits L1D)
 *   window 2: 2 passes over 4 MiB with a 64-byte stride (misses L1D and L2)
 *   window 3: window 1 again, after window 2 evicted the array
 *   window 4: 4 passes over 16 bytes 4 KiB apart (one L1D set, twice its
 *             ways: every access misses, all in the same set)
 * Then it leaves QEMU through isa-debug-exit (iobase 0xf4): exit code 3.
 */
#define SMALL (16 * 1024 / 8)
#define BIG (4u << 20)
#define LINE 64

static volatile unsigned long long small[SMALL] __attribute__((aligned(LINE)));
static volatile unsigned char big[BIG] __attribute__((aligned(LINE)));
volatile unsigned int cw_marker;
unsigned long long cw_sink;

/* different bodies: identical ones could be folded into one address */
__attribute__((noinline)) void cw_start(void) { cw_marker = 1; }
__attribute__((noinline)) void cw_stop(void) { cw_marker = 2; }

__attribute__((noinline)) static unsigned long long friendly(int passes)
{
	unsigned long long s = 0;
	int p, i;

	for (p = 0; p < passes; p++)
		for (i = 0; i < SMALL; i++)
			s += small[i];
	return s;
}

__attribute__((noinline)) static unsigned long long hostile(int passes)
{
	unsigned long long s = 0;
	unsigned int i;
	int p;

	for (p = 0; p < passes; p++)
		for (i = 0; i < BIG; i += LINE)
			s += big[i];
	return s;
}

#define ALIAS 16
#define ALIAS_STRIDE 4096

__attribute__((noinline)) static unsigned long long aliased(int passes)
{
	unsigned long long s = 0;
	unsigned int i;
	int p;

	for (p = 0; p < passes; p++)
		for (i = 0; i < ALIAS; i++)
			s += big[i * ALIAS_STRIDE];
	return s;
}

static inline void outb(unsigned short port, unsigned char v)
{
	__asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

void cw_main(void)
{
	unsigned long long s = friendly(1); /* warm-up, outside any window */

	cw_start();
	s += friendly(10);
	cw_stop();
	cw_start();
	s += hostile(2);
	cw_stop();
	cw_start();
	s += friendly(10);
	cw_stop();
	cw_start();
	s += aliased(4);
	cw_stop();
	cw_sink = s;
	outb(0xf4, 1); /* isa-debug-exit: QEMU exits with (1 << 1) | 1 */
	for (;;)
		__asm__ volatile("hlt");
}

/* multiboot v1 header (ELF image: no address fields) and the entry */
__attribute__((section(".multiboot"), aligned(4), used))
static const unsigned int mb_header[3] = { 0x1BADB002, 0, -(0x1BADB002) };

static unsigned char stack[16384] __attribute__((aligned(16), used));

__asm__(".globl _start\n"
	"_start:\n"
	"	mov $stack + 16384, %esp\n"
	"	call cw_main\n"
	"1:	hlt\n"
	"	jmp 1b\n");
