/* simjit's scripted action: make freshly written code executable (mprotect). The simulator
 * performs the JIT's work (compile, move, collect) in that system call. */
#include "simmeta.h"

    .text
FUNC(act_jit)
    mov x0, #0
    mov x1, #0x1000
    mov x2, #5
    mov x8, #226
    svc #0
    mov x0, #1
    ret
ENDF(act_jit)
