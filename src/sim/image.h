/* Embedded AArch64 images of the simulator: ELF parsing, symbols and a pre-decoded view of
 * the executable segment (what each instruction slot is, and where the next instruction that
 * needs attention is), which makes walking code a table lookup per basic block. */
#ifndef ETMKIT_SIM_IMAGE_H
#define ETMKIT_SIM_IMAGE_H

#include <stddef.h>
#include <stdint.h>

typedef struct sim_blob {
    const char *name; /* short name, also the file name under symfs */
    const char *path; /* path the recording names ("[kernel.kallsyms]" for the kernel) */
    const unsigned char *start, *end;
    int optional; /* not in a recording unless a scenario uses it (no symfs file, no build-id) */
} sim_blob;

size_t sim_blob_count(void);
const sim_blob *sim_blob_get(size_t i);

/* Instruction classes the simulator distinguishes. */
enum {
    SIM_I_OTHER = 0,
    SIM_I_B,     /* B imm */
    SIM_I_BL,    /* BL imm */
    SIM_I_BCOND, /* B.cond, CBZ/CBNZ, TBZ/TBNZ */
    SIM_I_BR,    /* BR Xn */
    SIM_I_BLR,   /* BLR Xn */
    SIM_I_RET,   /* RET */
    SIM_I_ERET,  /* ERET */
    SIM_I_SVC,   /* SVC #imm */
    SIM_I_MOVZ,  /* MOVZ Xd/Wd, #imm (the simulator tracks constants in x0..x8) */
    SIM_I_BAD,   /* ISB, WFI/WFE, BRK, HLT, UDF...: not allowed in simulated code */
};

typedef struct sim_insn {
    uint8_t cls;
    uint8_t dec; /* SIM_DEC_* annotation (src/sim/programs/simmeta.h), 0 if none */
    uint8_t reg; /* MOVZ: destination register */
    uint8_t shift;
    int32_t imm; /* direct branch: byte offset; MOVZ: imm16 */
} sim_insn;

typedef struct sim_sym {
    uint64_t addr; /* link-time address */
    uint64_t size;
    const char *name;
    int global;
} sim_sym;

typedef struct sim_image {
    const sim_blob *blob;
    const uint8_t *data;
    size_t size;
    int is_kernel;
    int is_shared;
    int jit;        /* a function a JIT copied into its code cache (sim_image_slice) */
    int no_code;    /* a mapping without code for the machine (anonymous memory, a data file) */
    int hidden;     /* not a file of the recording: no build-id, nothing in symfs */
    int real;       /* a real binary walked under realcode.c's rules */
    uint64_t *seen; /* real binaries: a bit per instruction slot that ran (the footprint) */
    /* the executable PT_LOAD segment (link-time addresses) */
    uint64_t seg_vaddr, seg_off, seg_filesz;
    uint8_t build_id[20];
    unsigned build_id_len;
    sim_sym *syms; /* FUNC symbols, sorted by address */
    size_t nsyms;
    uint64_t *cb, *api; /* link-time addresses of cb_* and global api_* functions */
    unsigned ncb, napi;
    uint32_t ninsn;
    sim_insn *insn;
    uint32_t *next_stop; /* index of the first slot at or after i that is not plain OTHER */
    struct sim_stop {
        uint32_t idx;  /* next_stop[i] */
        sim_insn insn; /* insn[next_stop[i]]: one load per basic block in the interpreter */
    } * stop;
} sim_image;

/* Parse an embedded image; returns 0 or a negative ek_status. */
int sim_image_load(sim_image *img, const sim_blob *blob);
/* An image of one function of tmpl (its code only, its symbol, itself as the one callable
 * entry): what a JIT copies into its code cache. blob names it. */
int sim_image_slice(sim_image *img, const sim_blob *blob, const sim_image *tmpl, const sim_sym *fn);
/* An image without code: anonymous memory or a file that is mapped but never executed. */
void sim_image_nocode(sim_image *img, const sim_blob *blob);
void sim_image_free(sim_image *img);

/* Decode one A64 instruction into a sim_insn. Pure. */
void sim_a64_decode(uint32_t op, sim_insn *out);

/* FUNC symbol containing a link-time address, or NULL. */
const sim_sym *sim_image_symbol_at(const sim_image *img, uint64_t addr);
/* FUNC symbol by exact name, or NULL. */
const sim_sym *sim_image_symbol(const sim_image *img, const char *name);
/* Instruction word at a link-time address inside the executable segment; 0 if outside. */
uint32_t sim_image_word(const sim_image *img, uint64_t addr);

#endif
