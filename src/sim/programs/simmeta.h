/* Annotations that tell etmkit's simulator (src/sim/machine.c) how to take a few control-flow
 * decisions that depend on machine state rather than on chance. They live in the non-allocated
 * section .simmeta as pairs of 64-bit words {address of the next instruction, kind}; nothing is
 * added to the code itself, so the executed instructions are exactly what the listing shows.
 * Included by the assembly sources only. */
#ifndef SIMMETA_H
#define SIMMETA_H

#define SIM_DEC_SYSCALL   1 /* blr: target is the handler of the current system call */
#define SIM_DEC_NORESCHED 2 /* conditional branch: taken when no reschedule is pending */
#define SIM_DEC_SWITCH    3 /* ret: switch to the next thread and return on its stack */
#define SIM_DEC_ACTION    4 /* any instruction: perform the side effect of the system call */
#define SIM_DEC_IDLE_WAKE 5 /* conditional branch: taken when a thread is runnable here */
#define SIM_DEC_CONTINUE  6 /* conditional branch: taken while the thread has work left */
#define SIM_DEC_SCRIPT    7 /* blr: target is the next scripted action of the process */
#define SIM_DEC_NOTTAKEN  8 /* conditional branch the modelled machine state never takes */
#define SIM_DEC_IDLE      9 /* branch of the idle loop: the core sleeps until the next event */

#define SIMDEC(kind)                                                                       \
    .pushsection .simmeta, "", %progbits;                                                 \
    .quad 9990f;                                                                           \
    .quad kind;                                                                            \
    .popsection;                                                                           \
    9990:

#define FUNC(name)                                                                         \
    .globl name;                                                                           \
    .type name, %function;                                                                \
    .p2align 2;                                                                            \
    name:
#define LFUNC(name)                                                                        \
    .type name, %function;                                                                \
    .p2align 2;                                                                            \
    name:
#define ENDF(name) .size name, .- name

#endif
