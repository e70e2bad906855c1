/* Two busy threads: main and one it starts while perf records, so that the second
 * thread's FORK comes long after its process's maps (the strip oracle keeps it alone).
 * Built by the tests: gcc -O1 -g -fno-omit-frame-pointer -pthread. */
#include <pthread.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void *work(void *arg)
{
	(void)arg;
	for (unsigned long i = 0; i < 30000000UL; i++)
		sink += i;
	return 0;
}

int main(void)
{
	pthread_t t;
	work(0);
	pthread_create(&t, 0, work, 0);
	work(0);
	pthread_join(t, 0);
	return 0;
}
