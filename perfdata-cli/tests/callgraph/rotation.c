/* Ten functions, each met inlined, out of line (its own copy, through a volatile
 * pointer) and beside an unrelated out-of-line function (o_NAME), all under parent(),
 * which is called six times. perf's call graph finds a chain's frame among parent's
 * children by walking their rb-tree with match_chain (inlined functions by name,
 * others by address), which is not one order: a chain met again after the tree of
 * children has rotated can end at another node than the first time, and perf makes a
 * second node of the same function (zc, kd (inlined) under parent in the Children
 * view). Called once (one round) the two agree.
 *
 * With `-e page-faults -c 1` each fault is one sample of period 1. main sleeps 0.2 s
 * first: recorded with `-D 100`, the dynamic loader's faults are not sampled (perf's
 * hist entries of ld.so's `_start` and `_dl_start_final (inlined)` are looked up with
 * a comparison that is not one order either, and now and then split an entry in two,
 * which perfdata does not model: see docs/report.md). */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096

static char *fresh(int n)
{
    char *p = mmap(0, (size_t)n * PAGE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        exit(1);
    return p;
}

#define DEF(NAME, M)                                                         \
    static inline __attribute__((always_inline)) void NAME(volatile char *p, \
                                                           int k)            \
    {                                                                        \
        for (int i = 0; i < k; i++)                                          \
            p[(long)i * PAGE] = (char)(i * (M));                             \
    }                                                                        \
    void (*volatile NAME##_ptr)(volatile char *, int) = NAME;                \
    __attribute__((noinline)) void o_##NAME(int k)                           \
    {                                                                        \
        volatile char *p = fresh(k);                                         \
        for (int i = 0; i < k; i++)                                          \
            p[(long)i * PAGE] = (M) - 3;                                     \
    }

DEF(qa, 3) DEF(mb, 4) DEF(zc, 5) DEF(kd, 6) DEF(ae, 7)
DEF(xf, 8) DEF(hg, 9) DEF(th, 10) DEF(bi, 11) DEF(oj, 12)

#define IN(NAME) NAME(fresh(1 + r % 3), 1 + r % 3)
#define PTR(NAME) NAME##_ptr(fresh(1 + (r + 1) % 2), 1 + (r + 1) % 2)
#define OUT(NAME) o_##NAME(1 + r % 2)

__attribute__((noinline)) void parent(int r)
{
    IN(th); OUT(mb); IN(xf); OUT(oj); PTR(zc); PTR(oj); IN(kd); IN(qa);
    PTR(ae); OUT(zc); IN(oj); PTR(th); OUT(bi); OUT(ae); OUT(th); IN(bi);
    PTR(hg); IN(zc); PTR(xf); PTR(bi); IN(hg); OUT(kd); IN(mb); OUT(xf);
    OUT(qa); PTR(qa); OUT(hg); IN(ae); PTR(mb); PTR(kd);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 6;
    usleep(200000);
    for (int r = 0; r < rounds; r++)
        parent(r);
    return 0;
}
