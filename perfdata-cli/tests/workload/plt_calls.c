/* Calls into libc through the PLT, many times: the report_plt_oracle tests' workload,
 * built with -O0 so that every call goes through a PLT entry (malloc, memset, free),
 * enough for the entries' rows to be above 0.1%. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 4000000, s = 0;
  for (long i = 0; i < n; i++) {
    char *p = malloc(16 + (i & 7));
    memset(p, 1, 8);
    s += p[3];
    free(p);
  }
  printf("%ld\n", s);
  return 0;
}
