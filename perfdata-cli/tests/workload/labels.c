/* Sized functions with size-0 labels inside them, as V8's builtins have in node
 * (Builtins_JSConstructStubGeneric, 412 bytes, and construct_stub_create_deopt_addr
 * in it). perf 6.1 extends each label to the next symbol and names an address in
 * its range after the symbol its walk down its rb-tree meets first: the function or
 * the label, by the tree's shape. The bindings differ so that the symbols come in
 * .symtab (locals first, globals after) in an order that gives both answers. */
#include <stdlib.h>

#define SPIN(n, bind, label_bind)                                        \
    __asm__(".text\n"                                                    \
            bind " spin_" #n "\n"                                        \
            label_bind " spin_" #n "_loop\n"                             \
            ".type spin_" #n ", @function\n"                             \
            "spin_" #n ":\n"                                             \
            "  mov %edi, %ecx\n"                                         \
            "  nop\n"                                                    \
            "spin_" #n "_loop:\n"                                        \
            "1: dec %ecx\n"                                              \
            "  jnz 1b\n"                                                 \
            "  ret\n"                                                    \
            ".size spin_" #n ", .-spin_" #n "\n");                      \
    void spin_##n(int count);

SPIN(0, ".globl", ".local")
SPIN(1, ".local", ".local")
SPIN(2, ".globl", ".globl")
SPIN(3, ".local", ".globl")
SPIN(4, ".globl", ".local")
SPIN(5, ".local", ".local")
SPIN(6, ".globl", ".globl")
SPIN(7, ".local", ".globl")

int main(int argc, char **argv)
{
    int count = argc > 1 ? atoi(argv[1]) : 10000000;
    spin_0(count); spin_1(count); spin_2(count); spin_3(count);
    spin_4(count); spin_5(count); spin_6(count); spin_7(count);
    return 0;
}
