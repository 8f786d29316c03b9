/* simmod.ko: a kernel module of the simulated kernel (scenario kernel-module). As tracing
 * modules that patch sys_call_table do, it wraps the write and getpid system calls: its
 * handlers call the kernel's own functions (R_AARCH64_CALL26 / JUMP26 relocations, applied by
 * the module loader) and log into a ring buffer in .bss -- a 5 MiB object, so that the one
 * allocated section with a symbol besides .text is larger than the user programs' addresses.
 * Compiled without PIC (as kbuild compiles modules), linked with `ld -r`. */
extern void copy_from_user(void);
extern void flush_tlb_range(void);
extern void copy_process(void);

#define SIMMOD_RING (5u << 20)

static struct {
    unsigned head;
    unsigned char buf[SIMMOD_RING];
} simmod_log;

__attribute__((noinline)) static void simmod_note(int v)
{
    for (int i = 0; i < (v & 3); i++) {
        simmod_log.buf[simmod_log.head++ % SIMMOD_RING] = (unsigned char)v;
        if (v & 0x10) flush_tlb_range();
    }
}

__attribute__((noinline)) static int simmod_filter(long n)
{
    if (n > 64) return 2;
    if (n & 1) return 1;
    return 0;
}

long simmod_sys_write(long fd, long buf, long n)
{
    (void)buf;
    for (long i = 0; i < n; i += 8)
        copy_from_user();
    if (simmod_filter(n)) simmod_note((int)fd);
    return n;
}

long simmod_sys_getpid(void)
{
    simmod_note(simmod_log.head);
    copy_process();
    return 1000;
}
