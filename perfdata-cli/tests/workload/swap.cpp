// The demangling oracle's workload: std::swap<int>, whose GCC mangling has a full type
// after `sr` (cpp_demangle 0.4.5 could not read it), hot for the CPU time given in
// milliseconds (default 200). Built with -O0 so that std::swap is called, not inlined.
#include <ctime>
#include <cstdlib>
#include <utility>
static double cpu_ms() { timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
volatile int sink;
int main(int argc, char **argv) {
	int a = 1, b = 2;
	double until = argc > 1 ? atof(argv[1]) : 200;
	while (cpu_ms() < until)
		for (int i = 0; i < 100000; i++) std::swap(a, b);
	sink = a;
}
