/* The AArch64 images built from src/sim/programs at build time (see programs.cmake),
 * embedded read-only so that the simulator needs no toolchain at run time. */
#include "sim/image.h"

#ifndef ETMKIT_SIMPROG_DIR
#error "ETMKIT_SIMPROG_DIR must name the folder of the built simulator programs"
#endif

#define SIM_INCBIN(sym, file)                                                                      \
    __asm__(".section .rodata\n"                                                                   \
            ".balign 16\n"                                                                         \
            ".globl " #sym "\n" #sym ":\n"                                                         \
            ".incbin \"" ETMKIT_SIMPROG_DIR "/" file "\"\n"                                        \
            ".globl " #sym "_end\n" #sym "_end:\n"                                                 \
            ".previous\n")

SIM_INCBIN(ek_simblob_simloop, "simloop");
SIM_INCBIN(ek_simblob_simchild, "simchild");
SIM_INCBIN(ek_simblob_libsima, "libsima.so");
SIM_INCBIN(ek_simblob_libsimb, "libsimb.so");
SIM_INCBIN(ek_simblob_vmlinux, "vmlinux");
SIM_INCBIN(ek_simblob_simjit, "simjit");
SIM_INCBIN(ek_simblob_jitcode, "jitcode.so");
SIM_INCBIN(ek_simblob_simreal, "simreal");

extern const unsigned char ek_simblob_simloop[], ek_simblob_simloop_end[];
extern const unsigned char ek_simblob_simchild[], ek_simblob_simchild_end[];
extern const unsigned char ek_simblob_libsima[], ek_simblob_libsima_end[];
extern const unsigned char ek_simblob_libsimb[], ek_simblob_libsimb_end[];
extern const unsigned char ek_simblob_vmlinux[], ek_simblob_vmlinux_end[];
extern const unsigned char ek_simblob_simjit[], ek_simblob_simjit_end[];
extern const unsigned char ek_simblob_jitcode[], ek_simblob_jitcode_end[];
extern const unsigned char ek_simblob_simreal[], ek_simblob_simreal_end[];

static const sim_blob blobs[] = {
    {"simloop", "/usr/bin/simloop", ek_simblob_simloop, ek_simblob_simloop_end, 0},
    {"simchild", "/usr/bin/simchild", ek_simblob_simchild, ek_simblob_simchild_end, 0},
    {"libsima.so", "/usr/lib/libsima.so", ek_simblob_libsima, ek_simblob_libsima_end, 0},
    {"libsimb.so", "/usr/lib/libsimb.so", ek_simblob_libsimb, ek_simblob_libsimb_end, 0},
    {"vmlinux", "[kernel.kallsyms]", ek_simblob_vmlinux, ek_simblob_vmlinux_end, 0},
    {"simjit", "/usr/bin/simjit", ek_simblob_simjit, ek_simblob_simjit_end, 1},
    /* the JIT's code templates: only their copies in a code cache are ever executed */
    {"jitcode", "[jit templates]", ek_simblob_jitcode, ek_simblob_jitcode_end, 1},
    /* workload-real's program, linked against Debian's AArch64 libc (loaded at gen time) */
    {"simreal", "/usr/bin/simreal", ek_simblob_simreal, ek_simblob_simreal_end, 1},
};

size_t sim_blob_count(void)
{
    return sizeof(blobs) / sizeof(blobs[0]);
}

const sim_blob *sim_blob_get(size_t i)
{
    return i < sim_blob_count() ? &blobs[i] : NULL;
}
