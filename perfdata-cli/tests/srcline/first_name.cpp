// The first-name oracle's workload (inline_first_name_oracle.rs): a quicksort whose
// templates live in an anonymous namespace, so g++ -O2 -g gives their DWARF no linkage
// name; partition and less are inlined into quicksort, out of line.
// binutils' addr2line names the first address it is asked in each such function by its
// ELF symbol, later ones by DWARF's name. No std:: templates: perfdata's demangler does
// not yet print the enable_if return types of some libstdc++ symbols as perf does.
#include <stdlib.h>

namespace {
template <typename T> inline bool less(const T &a, const T &b) { return a < b; }

template <typename T> T *partition(T *first, T *last, T *pivot) {
  while (true) {
    while (less(*first, *pivot))
      ++first;
    --last;
    while (less(*pivot, *last))
      --last;
    if (!(first < last))
      return first;
    T t = *first;
    *first = *last;
    *last = t;
    ++first;
  }
}

// Out of line (its DWARF subprogram starts at its symbol: binutils renames it for good),
// and without recursion: a sample at the ret of a recursive call is one perf 6.1 unwinds
// no further (its CFI has the popped registers below the stack copy), a difference of
// unwinding this test is not about.
template <typename T> __attribute__((noinline)) void quicksort(T *first, T *last) {
  T *stack[128];
  int depth = 0;
  stack[depth++] = first;
  stack[depth++] = last;
  while (depth > 0) {
    last = stack[--depth];
    first = stack[--depth];
    while (last - first > 16 && depth < 126) {
      T *mid = first + (last - first) / 2;
      T *cut = partition(first + 1, last, mid);
      stack[depth++] = cut;
      stack[depth++] = last;
      last = cut;
    }
    for (T *i = first + 1; i < last; ++i)
      for (T *j = i; j > first && less(*j, *(j - 1)); --j) {
        T t = *j;
        *j = *(j - 1);
        *(j - 1) = t;
      }
  }
}
} // namespace

static int values[20000];

__attribute__((noinline)) long sort_round(unsigned seed) {
  for (int &x : values) {
    seed = seed * 1103515245u + 12345u;
    x = (int)(seed >> 8);
  }
  quicksort(values, values + 20000);
  return values[10000];
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 200;
  long s = 0;
  for (long i = 0; i < n; i++)
    s += sort_round((unsigned)i);
  return (int)(s & 1);
}
