/* Frames in anonymous memory, for the anonymous map names' oracle test (x86-64):
 * main spins with its frame pointer on a made-up frame in a writable anonymous map,
 * whose return address is in that map and whose caller's frame is in an executable
 * anonymous map, returning into it. The kernel's frame-pointer walk records both
 * return addresses; nothing runs there. */
#include <stdint.h>
#include <sys/mman.h>

int main(void)
{
	uint64_t *rw = mmap(0, 4096, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t *rwx = mmap(0, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (rw == MAP_FAILED || rwx == MAP_FAILED)
		return 1;
	rw[0] = (uint64_t)rwx;
	rw[1] = (uint64_t)rw + 0x100;
	rwx[0] = 0;
	rwx[1] = (uint64_t)rwx + 0x100;
	for (int i = 0; i < 5; i++)
		__asm__ volatile("push %%rbp\n\tmov %0, %%rbp\n\tmov $100000000, %%rcx\n"
				 "1:\tdec %%rcx\n\tjnz 1b\n\tpop %%rbp\n"
				 : : "r"(rw) : "rcx", "memory");
	return 0;
}
