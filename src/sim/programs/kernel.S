/* The simulated kernel ("vmlinux"): exception vectors, system-call entry and dispatch, the
 * return-to-user path with its reschedule check, a scheduler whose cpu_switch_to returns on
 * the next thread's stack, the timer interrupt and the idle loop. The simulator walks these
 * instructions; .simmeta annotations mark the few branches that depend on machine state. */
#include "simmeta.h"

    .text
    .globl _text
_text:
FUNC(primary_entry)
    mov x0, #0
    b cpu_idle_loop
ENDF(primary_entry)

/* ---- exception vectors: 16 entries of 0x80 bytes, 2 KiB aligned ---- */
    .p2align 11
    .globl vectors
    .type vectors, %function
vectors:
    .p2align 7
    b .                     /* EL1t sync */
    .p2align 7
    b .                     /* EL1t irq */
    .p2align 7
    b .
    .p2align 7
    b .
    .p2align 7
    b .                     /* EL1h sync */
    .p2align 7
    b .                     /* EL1h irq */
    .p2align 7
    b .
    .p2align 7
    b .
    .p2align 7
    sub sp, sp, #272        /* EL0 64-bit sync */
    b el0_sync
    .p2align 7
    sub sp, sp, #272        /* EL0 64-bit irq */
    b el0_irq
    .p2align 7
    b .
    .p2align 7
    b .
    .p2align 7
    b .                     /* EL0 32-bit */
    .p2align 7
    b .
    .p2align 7
    b .
    .p2align 7
    b .
    .p2align 7
    .size vectors, . - vectors

LFUNC(kernel_entry_save)
    stp x0, x1, [sp, #0]
    stp x2, x3, [sp, #16]
    stp x4, x5, [sp, #32]
    stp x6, x7, [sp, #48]
    stp x8, x9, [sp, #64]
    mrs x21, sp_el0
    mrs x22, elr_el1
    mrs x23, spsr_el1
    stp x22, x23, [sp, #256]
    ret
ENDF(kernel_entry_save)

LFUNC(el0_sync)
    stp x29, x30, [sp, #240]
    bl kernel_entry_save
    mrs x25, esr_el1
    lsr x24, x25, #26
    cmp x24, #0x15
    SIMDEC(SIM_DEC_NOTTAKEN) b.ne 2f
    bl el0_svc
    b ret_to_user
2:
    bl bad_mode
    b ret_to_user
ENDF(el0_sync)

LFUNC(el0_irq)
    stp x29, x30, [sp, #240]
    bl kernel_entry_save
    bl handle_irq
    b ret_to_user
ENDF(el0_irq)

FUNC(el0_svc)
    stp x29, x30, [sp, #-16]!
    mov x29, sp
    ldr x8, [sp, #80]
    cmp x8, #300
    SIMDEC(SIM_DEC_NOTTAKEN) b.hs 1f
    adrp x9, sys_call_table
    add x9, x9, :lo12:sys_call_table
    ldr x10, [x9, x8, lsl #3]
    SIMDEC(SIM_DEC_SYSCALL) blr x10
    str x0, [sp, #16]
1:  ldp x29, x30, [sp], #16
    ret
ENDF(el0_svc)

FUNC(bad_mode)
    mov x0, #0
    ret
ENDF(bad_mode)

FUNC(ret_to_user)
    mrs x0, tpidr_el1
    ldr x1, [x0, #8]
    SIMDEC(SIM_DEC_NORESCHED) cbz x1, 1f
    bl schedule
1:  bl do_notify_resume
    ldp x22, x23, [sp, #256]
    msr elr_el1, x22
    msr spsr_el1, x23
    ldp x0, x1, [sp, #0]
    ldp x2, x3, [sp, #16]
    ldp x29, x30, [sp, #240]
    add sp, sp, #272
    eret
ENDF(ret_to_user)

FUNC(do_notify_resume)
    ldr x2, [x0, #16]
    cbz x2, 1f
    and x3, x2, #3
    add x2, x2, x3
1:  ret
ENDF(do_notify_resume)

/* ---- system calls ---- */
FUNC(sys_ni_syscall)
    mov x0, #-38
    ret
ENDF(sys_ni_syscall)

FUNC(sys_getpid)
    mrs x0, tpidr_el1
    ldr w0, [x0, #24]
    ret
ENDF(sys_getpid)

FUNC(sys_write)
    stp x29, x30, [sp, #-16]!
    mov x29, sp
    mov x3, #0
1:  bl copy_from_user
    add x3, x3, #8
    cmp x3, x2
    b.lo 1b
    mov x0, x2
    ldp x29, x30, [sp], #16
    ret
ENDF(sys_write)

FUNC(copy_from_user)
    ldr x4, [x1]
    tbz x4, #0, 1f
    eor x4, x4, x3
1:  str x4, [sp, #-8]
    ret
ENDF(copy_from_user)

FUNC(sys_sched_yield)
    mrs x0, tpidr_el1
    SIMDEC(SIM_DEC_ACTION) mov x1, #1
    str x1, [x0, #8]
    mov x0, #0
    ret
ENDF(sys_sched_yield)

FUNC(sys_nanosleep)
    mrs x0, tpidr_el1
    SIMDEC(SIM_DEC_ACTION) mov x1, #1
    str x1, [x0, #8]
    mov x0, #0
    ret
ENDF(sys_nanosleep)

FUNC(sys_exit)
    stp x29, x30, [sp, #-16]!
    mov x29, sp
    bl exit_mm
    mrs x0, tpidr_el1
    SIMDEC(SIM_DEC_ACTION) mov x1, #1
    str x1, [x0, #8]
    bl schedule
    b .
ENDF(sys_exit)

FUNC(exit_mm)
    ldr x1, [x0, #32]
    cbz x1, 1f
    str xzr, [x0, #32]
1:  ret
ENDF(exit_mm)

FUNC(sys_clone)
    stp x29, x30, [sp, #-16]!
    mov x29, sp
    bl copy_process
    SIMDEC(SIM_DEC_ACTION) mov x0, x1
    bl wake_up_new_task
    ldp x29, x30, [sp], #16
    ret
ENDF(sys_clone)

FUNC(copy_process)
    mov x2, #0
1:  add x2, x2, #1
    cmp x2, #4
    b.lo 1b
    ret
ENDF(copy_process)

FUNC(wake_up_new_task)
    mrs x0, tpidr_el1
    ldr x1, [x0, #40]
    cbz x1, 1f
    add x1, x1, #1
1:  ret
ENDF(wake_up_new_task)

FUNC(sys_execve)
    stp x29, x30, [sp, #-16]!
    mov x29, sp
    bl flush_old_exec
    SIMDEC(SIM_DEC_ACTION) mov x0, #0
    bl start_thread
    ldp x29, x30, [sp], #16
    ret
ENDF(sys_execve)

FUNC(flush_old_exec)
    ldr x1, [x0]
    cbnz x1, 1f
    mov x1, #1
1:  ret
ENDF(flush_old_exec)

FUNC(start_thread)
    str x0, [sp, #256]
    ret
ENDF(start_thread)

FUNC(sys_mmap)
    stp x29, x30, [sp, #-16]!
    mov x29, sp
    bl get_unmapped_area
    SIMDEC(SIM_DEC_ACTION) mov x0, x2
    ldp x29, x30, [sp], #16
    ret
ENDF(sys_mmap)

FUNC(get_unmapped_area)
    mov x2, #0x1000
1:  lsl x2, x2, #1
    cmp x2, x1
    b.lo 1b
    ret
ENDF(get_unmapped_area)

FUNC(sys_munmap)
    stp x29, x30, [sp, #-16]!
    mov x29, sp
    SIMDEC(SIM_DEC_ACTION) mov x0, #0
    bl flush_tlb_range
    ldp x29, x30, [sp], #16
    ret
ENDF(sys_munmap)

FUNC(flush_tlb_range)
    mov x2, #0
1:  add x2, x2, #1
    cmp x2, #2
    b.lo 1b
    ret
ENDF(flush_tlb_range)

/* ---- interrupts ---- */
FUNC(handle_irq)
    stp x29, x30, [sp, #-16]!
    mov x29, sp
    bl gic_read_iar
    cmp x0, #1023
    SIMDEC(SIM_DEC_NOTTAKEN) b.eq 1f
    bl timer_interrupt
    bl gic_eoi
1:  ldp x29, x30, [sp], #16
    ret
ENDF(handle_irq)

FUNC(gic_read_iar)
    mov x0, #27
    ret
ENDF(gic_read_iar)

FUNC(gic_eoi)
    mov x1, x0
    ret
ENDF(gic_eoi)

FUNC(timer_interrupt)
    stp x29, x30, [sp, #-16]!
    mov x29, sp
    bl update_process_times
    bl scheduler_tick
    ldp x29, x30, [sp], #16
    ret
ENDF(timer_interrupt)

FUNC(update_process_times)
    mrs x0, tpidr_el1
    ldr x1, [x0, #48]
    add x1, x1, #1
    str x1, [x0, #48]
    tbz x1, #3, 1f
    mov x2, #0
1:  ret
ENDF(update_process_times)

FUNC(scheduler_tick)
    mrs x0, tpidr_el1
    ldr x1, [x0, #56]
    cbz x1, 1f
    SIMDEC(SIM_DEC_ACTION) mov x2, #1
    str x2, [x0, #8]
1:  ret
ENDF(scheduler_tick)

/* ---- scheduler ---- */
FUNC(schedule)
    stp x29, x30, [sp, #-16]!
    mov x29, sp
    bl pick_next_task
    bl __switch_to
    bl cpu_switch_to
    bl finish_task_switch
    ldp x29, x30, [sp], #16
    ret
ENDF(schedule)

FUNC(pick_next_task)
    mrs x0, tpidr_el1
    mov x1, #0
1:  ldr x2, [x0, x1, lsl #3]
    add x1, x1, #1
    cbnz x2, 2f
    cmp x1, #3
    b.lo 1b
2:  ret
ENDF(pick_next_task)

FUNC(__switch_to)
    mrs x0, tpidr_el1
    ldr x1, [x0, #24]
    msr contextidr_el1, x1
    ret
ENDF(__switch_to)

FUNC(cpu_switch_to)
    stp x19, x20, [x0, #0]
    stp x29, x30, [x0, #16]
    mov x9, sp
    str x9, [x0, #32]
    ldp x19, x20, [x1, #0]
    ldp x29, x30, [x1, #16]
    ldr x9, [x1, #32]
    mov sp, x9
    SIMDEC(SIM_DEC_SWITCH) ret
ENDF(cpu_switch_to)

FUNC(finish_task_switch)
    mrs x0, tpidr_el1
    str xzr, [x0, #8]
    ret
ENDF(finish_task_switch)

FUNC(ret_from_fork)
    bl schedule_tail
    b ret_to_user
ENDF(ret_from_fork)

FUNC(schedule_tail)
    mrs x0, tpidr_el1
    str xzr, [x0, #8]
    ret
ENDF(schedule_tail)

FUNC(cpu_idle_loop)
    mrs x0, tpidr_el1
    ldr x1, [x0, #8]
    SIMDEC(SIM_DEC_IDLE_WAKE) cbnz x1, 1f
    mov x2, #64
2:  subs x2, x2, #1
    b.ne 2b
    SIMDEC(SIM_DEC_IDLE) b cpu_idle_loop
1:  bl schedule
    b cpu_idle_loop
ENDF(cpu_idle_loop)

/* mprotect: a JIT makes the code it wrote executable (appended here so that the code above
 * keeps its addresses) */
FUNC(sys_mprotect)
    stp x29, x30, [sp, #-16]!
    mov x29, sp
    SIMDEC(SIM_DEC_ACTION) mov x0, #0
    bl flush_icache_range
    ldp x29, x30, [sp], #16
    ret
ENDF(sys_mprotect)

FUNC(flush_icache_range)
    mov x2, #0
1:  add x2, x2, #1
    cmp x2, #4
    b.lo 1b
    ret
ENDF(flush_icache_range)

    .section .rodata
    .p2align 3
    .globl sys_call_table
sys_call_table:
    .rept 300
    .quad sys_ni_syscall
    .endr
