#include <linux/bpf.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <unistd.h>
#include <string.h>
#include <stdio.h>
#include <stdint.h>
/* A BPF socket filter of 4000 additions, run on every datagram sent between a socket
 * pair, so that samples land in the JIT-compiled program (bpf_prog_<tag>_perfdata_hot),
 * which perf learns of from a KSYMBOL record. Exit status 2: the program cannot be
 * loaded here (no privilege, no BPF). Usage: bpf_hot [SENDS]. */
#include <stdlib.h>
#define N 4000
static struct bpf_insn insns[N + 3];
int main(int argc, char **argv) {
    int sends = argc > 1 ? atoi(argv[1]) : 300000;
    int n = 0;
    insns[n++] = (struct bpf_insn){.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0};
    for (int i = 0; i < N; i++)
        insns[n++] = (struct bpf_insn){.code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = 0, .imm = 1};
    insns[n++] = (struct bpf_insn){.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0xffff};
    insns[n++] = (struct bpf_insn){.code = BPF_JMP | BPF_EXIT};
    union bpf_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
    attr.insns = (uint64_t)(uintptr_t)insns;
    attr.insn_cnt = n;
    attr.license = (uint64_t)(uintptr_t)"GPL";
    strcpy(attr.prog_name, "perfdata_hot");
    int fd = syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof attr);
    if (fd < 0) { perror("bpf"); return 2; }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv)) { perror("socketpair"); return 1; }
    if (setsockopt(sv[1], SOL_SOCKET, SO_ATTACH_BPF, &fd, sizeof fd)) { perror("attach"); return 1; }
    char buf[16] = {0};
    for (int i = 0; i < sends; i++) {
        if (send(sv[0], buf, sizeof buf, 0) < 0) { perror("send"); return 1; }
        if (recv(sv[1], buf, sizeof buf, 0) < 0) { perror("recv"); return 1; }
    }
    return 0;
}
