// The C++ demangling test's workload: a template member function and a function taking
// references and pointers, hot for the CPU time given in milliseconds (default 300).
#include <vector>
#include <ctime>
#include <cstdlib>
namespace busy {
template <typename T> struct Mixer {
	T state;
	__attribute__((noinline)) T step(T x, int rounds) {
		for (int i = 0; i < rounds; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; }
		return state += x;
	}
};
__attribute__((noinline)) unsigned long run(std::vector<unsigned long> &v, const char *) {
	Mixer<unsigned long> m{1};
	for (auto &x : v) x = m.step(x, 1000);
	return m.state;
}
}
static double cpu_ms() { timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
volatile unsigned long sink;
int main(int argc, char **argv) { std::vector<unsigned long> v(1000, 3); while (cpu_ms() < (argc > 1 ? atof(argv[1]) : 300)) sink += busy::run(v, "x"); }
