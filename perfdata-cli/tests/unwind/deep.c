/* The short-stack-copy test's C workload, built -O2 -fomit-frame-pointer: a recursion
 * whose depth goes up and down (1 to 199 frames of `down`, each with a 40-byte local
 * array), spinning in `leaf` at the bottom, so that a 1 KiB stack copy ends at every
 * frame of it, and an 8 KiB one holds more than perf's 127 frames. */
#include <stdlib.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void leaf(unsigned long n) {
    for (unsigned long i = 0; i < n; i++) sink += i ^ (sink >> 3);
}

__attribute__((noinline)) static void down(int depth, unsigned long n) {
    volatile char pad[40];
    pad[depth % 40] = (char)depth;
    if (depth > 0)
        down(depth - 1, n);
    else
        leaf(n);
    sink += pad[(depth + 1) % 40];
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 2000;
    for (int r = 0; r < rounds; r++) down(r % 200, 20000);
    return 0;
}
