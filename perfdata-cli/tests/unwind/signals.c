/* The signal-frame unwinding test's workload, built -O2 -fomit-frame-pointer: most of
 * its time is in a SIGPROF handler (setitimer, every 1 ms of CPU time) that runs
 * handler -> in_handler -> handler_leaf, interrupting code at several call depths
 * (main -> spin_at(depth) -> spin_at(depth - 1) -> ... -> spin_leaf). */
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

static volatile double sink;

__attribute__((noinline)) double handler_leaf(long n) {
    double s = 0;
    for (long i = 0; i < n; i++) s += i * 0.25 / (i + 3);
    return s;
}

__attribute__((noinline)) double in_handler(long n) {
    return handler_leaf(n) + handler_leaf(n / 2);
}

__attribute__((noinline)) static void on_prof(int sig) {
    (void)sig;
    sink += in_handler(4000000);
}

__attribute__((noinline)) double spin_leaf(long n) {
    double s = 0;
    for (long i = 0; i < n; i++) s += i * 0.5 / (i + 1);
    return s;
}

__attribute__((noinline)) double spin_at(int depth, long n) {
    if (depth == 0) return spin_leaf(n);
    double r = spin_at(depth - 1, n) + depth;
    sink += r;
    return r * 0.5;
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 400;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_prof;
    sigaction(SIGPROF, &sa, NULL);
    struct itimerval it = {{0, 10000}, {0, 10000}};
    setitimer(ITIMER_PROF, &it, NULL);
    double t = 0;
    for (int i = 0; i < rounds; i++) t += spin_at(i % 4, 100000);
    printf("%f\n", t + sink);
    return 0;
}
