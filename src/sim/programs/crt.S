/* Start-up and control loop shared by the simulated user programs. The work itself is in C
 * (sim_work_step, thread_work_step); this file decides when to stop and which scripted action
 * (library load/unload, thread creation, exec, yield, sleep) runs between work steps. */
#include "simmeta.h"

    .text
FUNC(_start)
    stp x29, x30, [sp, #-16]!
    mov x29, sp
    bl sim_init
1:  bl sim_work_step
    adrp x9, sim_actions
    add x9, x9, :lo12:sim_actions
    ldr x10, [x9]
    SIMDEC(SIM_DEC_SCRIPT) blr x10
    SIMDEC(SIM_DEC_CONTINUE) cbnz x0, 1b
    mov x0, #0
    mov x8, #93
    svc #0
    b .
ENDF(_start)

FUNC(thread_entry)
    stp x29, x30, [sp, #-16]!
    mov x29, sp
1:  bl thread_work_step
    adrp x9, sim_actions
    add x9, x9, :lo12:sim_actions
    ldr x10, [x9, #8]
    SIMDEC(SIM_DEC_SCRIPT) blr x10
    SIMDEC(SIM_DEC_CONTINUE) cbnz x0, 1b
    mov x0, #0
    mov x8, #93
    svc #0
    b .
ENDF(thread_entry)

/* Scripted actions: each returns with x0 != 0 so that the caller keeps its loop state. */
FUNC(act_none)
    mov x0, #1
    ret
ENDF(act_none)

FUNC(act_getpid)
    mov x8, #172
    svc #0
    mov x0, #1
    ret
ENDF(act_getpid)

FUNC(act_write)
    mov x0, #1
    mov x2, #16
    mov x8, #64
    svc #0
    mov x0, #1
    ret
ENDF(act_write)

FUNC(act_yield)
    mov x8, #124
    svc #0
    mov x0, #1
    ret
ENDF(act_yield)

FUNC(act_sleep)
    mov x0, #0
    mov x8, #101
    svc #0
    mov x0, #1
    ret
ENDF(act_sleep)

FUNC(act_dlopen)
    stp x29, x30, [sp, #-16]!
    mov x29, sp
    mov x0, #0
    mov x1, #0x10000
    mov x8, #222
    svc #0
    bl sim_lib_opened
    mov x0, #1
    ldp x29, x30, [sp], #16
    ret
ENDF(act_dlopen)

FUNC(act_dlclose)
    stp x29, x30, [sp, #-16]!
    mov x29, sp
    bl sim_lib_closing
    mov x1, #0x10000
    mov x8, #215
    svc #0
    mov x0, #1
    ldp x29, x30, [sp], #16
    ret
ENDF(act_dlclose)

FUNC(act_clone)
    adrp x1, thread_entry
    add x1, x1, :lo12:thread_entry
    mov x0, #0
    mov x8, #220
    svc #0
    mov x0, #1
    ret
ENDF(act_clone)

FUNC(act_exec)
    mov x0, #0
    mov x8, #221
    svc #0
    mov x0, #1
    ret
ENDF(act_exec)

    .data
    .p2align 3
    .globl sim_actions
sim_actions:
    .quad act_none
    .quad act_none
