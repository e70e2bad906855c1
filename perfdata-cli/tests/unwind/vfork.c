// The DWARF unwinding tests' vforking workload (built -O2 -fomit-frame-pointer):
// main -> outer -> spawn, which vforks in a loop; the child _exits at once, or execs
// /bin/true with argument "exec". glibc's __vfork keeps its return address in rdi
// while the parent waits (its CFI: DW_CFA_register rip in rdi), where most samples are.
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) static int spawn(int exec) {
    pid_t pid = vfork();
    if (pid == 0) {
        if (exec) {
            execl("/bin/true", "true", (char *)0);
        }
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
}

__attribute__((noinline)) static int outer(int n, int exec) {
    int s = 0;
    for (int i = 0; i < n; i++) {
        s += spawn(exec);
    }
    return s;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 2000;
    int exec = argc > 2 && strcmp(argv[2], "exec") == 0;
    return outer(n, exec) != 0;
}
