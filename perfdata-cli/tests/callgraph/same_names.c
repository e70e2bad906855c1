/* One function met both inlined and out of line under one caller, as perf's call
 * graph compares them: its match_chain compares an inlined function with any frame by
 * name, other functions by address.
 *
 * - merge() calls foo inlined, then out of line (through a volatile pointer), each
 *   taking n page faults: perf finds the out-of-line foo in merge's children by name,
 *   so the two are one branch (the node keeps the frame that made it,
 *   `foo (inlined)`).
 * - miss() calls zzz, mmm inlined, aaa, and mmm out of line, in that order, zzz placed
 *   below mmm and aaa above it (the functions are laid out as defined): the children's
 *   rb-tree holds zzz at its root, aaa left (higher address) and `mmm (inlined)`
 *   right (a smaller name). The out-of-line mmm goes left at zzz (by address) and
 *   right at aaa, and ends there without meeting `mmm (inlined)`: perf makes it a
 *   second node, the comparison not being one order.
 *
 * With `-e page-faults -c 1` each fault is one sample of period 1: every page is new
 * anonymous memory written once (under the 2 MiB a transparent huge page needs). */
#include <stdlib.h>
#include <sys/mman.h>

#define PAGE 4096

static char *fresh(int n)
{
    char *p = mmap(0, (size_t)n * PAGE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        exit(1);
    return p;
}

__attribute__((noinline)) void zzz(int n)
{
    volatile char *p = fresh(n);
    for (int i = 0; i < n; i++)
        p[(long)i * PAGE] = (char)(i + 5);
}

static inline __attribute__((always_inline)) void mmm(volatile char *p, int n)
{
    for (int i = 0; i < n; i++)
        p[(long)i * PAGE] = (char)(i * 7);
}

static inline __attribute__((always_inline)) void foo(volatile char *p, int n)
{
    for (int i = 0; i < n; i++)
        p[(long)i * PAGE] = (char)(i * 3);
}

__attribute__((noinline)) void aaa(int n)
{
    volatile char *p = fresh(n);
    for (int i = 0; i < n; i++)
        p[(long)i * PAGE] = (char)(i + 9);
}

/* Out-of-line copies, called where the compiler cannot see which. */
void (*volatile foo_ptr)(volatile char *, int) = foo;
void (*volatile mmm_ptr)(volatile char *, int) = mmm;

__attribute__((noinline)) void merge(int n)
{
    foo(fresh(n), n);
    foo_ptr(fresh(n), n);
}

__attribute__((noinline)) void miss(int n)
{
    zzz(n);
    mmm(fresh(n), n);
    aaa(n);
    mmm_ptr(fresh(n), n);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 40;
    merge(n);
    miss(n);
    return 0;
}
