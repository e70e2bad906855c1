/* The DWARF unwinding tests' C workload, built -O2 -fomit-frame-pointer: a few call
 * levels of its own (work -> mid -> leaf_a | leaf_b) and calls into libc (memset). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char buf[1 << 20];

__attribute__((noinline)) double leaf_a(long n) {
    double s = 0;
    for (long i = 0; i < n; i++) s += i * 0.5 / (i + 1);
    return s;
}

__attribute__((noinline)) double leaf_b(long n) {
    double s = 0;
    for (long i = 0; i < n / 4096; i++) {
        memset(buf, (int)i, sizeof buf / 8);
        s += buf[i & 1023];
    }
    return s;
}

__attribute__((noinline)) double mid(long n, int k) {
    return k ? leaf_a(n) + 1 : leaf_b(n * 64) - 1;
}

__attribute__((noinline)) double work(int rounds) {
    double t = 0;
    for (int i = 0; i < rounds; i++) t += mid(200000, i % 3);
    return t;
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 1500;
    printf("%f\n", work(rounds));
    return 0;
}
