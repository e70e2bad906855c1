/* The inline oracle's workload: work() calls step(), always inlined, which calls mix(),
 * always inlined into it, so that at -O2 most of work()'s addresses are three functions
 * deep in DWARF (mix in step in work) and a `--call-graph dwarf` recording has perf 6.1
 * list `mix (inlined)` and `step (inlined)` above work. It runs for the CPU time given
 * in milliseconds as its first argument (default 300). */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static inline __attribute__((always_inline)) unsigned long mix(unsigned long x)
{
	x ^= x >> 13;
	x *= 0x9e3779b97f4a7c15UL;
	return x ^ (x >> 29);
}

static inline __attribute__((always_inline)) unsigned long step(unsigned long x, int n)
{
	for (int i = 0; i < n; i++)
		x = mix(x + i);
	return x;
}

__attribute__((noinline)) unsigned long work(unsigned long seed, long loops)
{
	unsigned long acc = seed;

	for (long i = 0; i < loops; i++)
		acc += step(acc, 16);
	return acc;
}

static double cpu_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	double until = argc > 1 ? strtod(argv[1], 0) : 300;

	while (cpu_ms() < until)
		sink += work(sink, 20000);
	return 0;
}
