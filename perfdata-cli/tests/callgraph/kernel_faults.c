/* Page faults the kernel takes on behalf of an inlined function: fill() (always
 * inlined into reader()) read()s /dev/zero into fresh anonymous pages, one page a
 * call, and the kernel's copy to user memory faults on each. With `-e page-faults -c 1
 * --call-graph dwarf` each such sample has a recorded kernel callchain (the fault
 * inside read's system call) and a user stack whose unwound frames hold an inlined
 * function (`fill (inlined)` at reader's frame): `--max-stack` cuts the two parts
 * apart, and perf still lists the inlined functions at the unwound frames it keeps.
 * Fewer pages than a transparent huge page needs, so each page is one fault. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096

static inline __attribute__((always_inline)) void fill(int fd, char *p, int n)
{
    for (int i = 0; i < n; i++)
        if (read(fd, p + (long)i * PAGE, PAGE) != PAGE)
            exit(1);
}

__attribute__((noinline)) void reader(int fd, int n)
{
    char *p = mmap(0, (size_t)n * PAGE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        exit(1);
    fill(fd, p, n);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 8;
    int fd = open("/dev/zero", O_RDONLY);
    if (fd < 0)
        return 1;
    reader(fd, n);
    return 0;
}
