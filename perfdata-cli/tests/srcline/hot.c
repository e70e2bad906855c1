/* The srcline and inline tests' workload: a busy loop whose step, mix(), is always
 * inlined into work(), so that at -O2 its addresses belong to two functions in DWARF
 * (mix inlined into work) and at -O0 to distinct lines of one file. It runs for the
 * CPU time given in milliseconds as its first argument (default 400), so that a
 * recording has a known number of task-clock samples however loaded the machine is. */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static inline __attribute__((always_inline)) unsigned long mix(unsigned long x)
{
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return x;
}

__attribute__((noinline)) unsigned long work(unsigned long n)
{
	unsigned long x = 88172645463325252UL;
	for (unsigned long i = 0; i < n; i++)
		x = mix(x + i);
	return x;
}

static double cpu_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	double until = argc > 1 ? strtod(argv[1], 0) : 400;

	while (cpu_ms() < until)
		sink += work(1000000);
	return 0;
}
