/* Two functions inlined into one, each taking the same number of page faults: with
 * `-e page-faults -c 1` every fault is one sample of period 1, so under `work` the
 * call graph has two branches of one percentage, `beta (inlined)` met first and
 * `alpha (inlined)` after it. perf orders such branches by its children's rb-tree
 * (inlined functions compared by name): report_graph_oracle checks perfdata's order.
 * Each page is new anonymous memory, written once: one fault each (the pages stay
 * under the 2 MiB a transparent huge page would need). */
#include <stdlib.h>
#include <sys/mman.h>

#define PAGE 4096

static inline __attribute__((always_inline)) void beta(volatile char *p, int n)
{
    for (int i = 0; i < n; i++)
        p[(long)i * PAGE] = (char)(i * 3);
}

static inline __attribute__((always_inline)) void alpha(volatile char *p, int n)
{
    for (int i = 0; i < n; i++)
        p[(long)i * PAGE] = (char)(i + 1);
}

__attribute__((noinline)) void work(int n)
{
    char *b = mmap(0, (size_t)n * PAGE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *a = mmap(0, (size_t)n * PAGE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (b == MAP_FAILED || a == MAP_FAILED)
        exit(1);
    beta(b, n);
    alpha(a, n);
}

int main(int argc, char **argv)
{
    work(argc > 1 ? atoi(argv[1]) : 40);
    return 0;
}
