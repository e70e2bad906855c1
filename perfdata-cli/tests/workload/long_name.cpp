// report_long_names_oracle's workload: a function whose demangled name is over 1023
// characters (a template instantiated with six std::map types): perf cuts a column's
// header to its 1024-byte buffer.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

template <typename... T>
__attribute__((noinline)) long spin(long n) {
  long s = 0;
  for (long i = 0; i < n; i++) s += (i ^ (s >> 3)) + sizeof...(T);
  return s;
}

using M = std::map<int, std::string>;

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 100000000;
  printf("%ld\n", spin<M, M, M, M, M, M>(n));
  return 0;
}
