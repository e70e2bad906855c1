/* A few call levels for the call graph oracle: main calls two paths of different
 * weight, one of them recursing, each ending in a busy leaf. noinline keeps every
 * level a frame; -fno-omit-frame-pointer keeps the chains whole. */
#include <stdlib.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void leaf(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i * 7;
}

__attribute__((noinline)) static void middle(unsigned long n, int depth)
{
	if (depth > 0)
		middle(n, depth - 1);
	else
		leaf(n);
}

__attribute__((noinline)) static void heavy(unsigned long n) { middle(n, 2); }

__attribute__((noinline)) static void light(unsigned long n) { leaf(n); }

int main(int argc, char **argv)
{
	unsigned long rounds = argc > 1 ? strtoul(argv[1], NULL, 0) : 200;
	for (unsigned long r = 0; r < rounds; r++) {
		heavy(300000);
		light(100000);
		if (r % 4 == 0)
			middle(50000, 0);
	}
	return 0;
}
