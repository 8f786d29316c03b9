/* Memory images: what the traced code looked like, by address and memory space.
 *
 * An image is a set of regions. Each region maps [address, address + length) to bytes held
 * in a file (mapped once per file and shared by every region of that file, never copied),
 * in a caller's buffer (borrowed: it must outlive the image), or to nothing at all, in which
 * case an optional read callback is asked. Every region has a memory space (ek_mem_space in
 * etmkit/config.h); a read in space S sees the regions whose space shares a bit with S.
 * EK_MS_ANY, and also EK_MS_NONE (no space information), match everything.
 *
 * Overlaps: where regions visible in the same space overlap, the one added LAST wins (so a
 * patched page or a newer mapping can be laid over an older one). A snapshot's memory dumps
 * follow the reference decoder's rule instead (ek_image_add_snapshot_buffer).
 *
 * Speed: lookups binary-search a flattened, sorted list of non-overlapping runs (built
 * lazily per query space after regions change) and try the last hit first.
 * An image is not safe for concurrent use: reads update the last-hit cache. Use one image
 * per thread, or lock around calls.
 *
 * Files: a file that is shorter than a region asks for is clipped with a warning; a file
 * removed after it was added stays readable (the mapping holds it). A file truncated after
 * it was mapped can fault on access (SIGBUS), as with any mapped file.
 */
#ifndef ETMKIT_IMAGE_H
#define ETMKIT_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/config.h"
#include "etmkit/diag.h"
#include "etmkit/sbuf.h"
#include "etmkit/snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

typedef struct ek_image ek_image;

/* Fill buf with up to len bytes at addr in space; return how many were filled (0: none). It
 * is asked only for addresses no region covers, and never for more than reaches the next
 * region. */
typedef size_t (*ek_image_read_fn)(void *ctx, ek_mem_space space, uint64_t addr, uint8_t *buf,
                                   size_t len);

/* diag (may be NULL) receives problems found while adding files; it is copied. */
int ek_image_new(const ek_diag *diag, ek_image **out);
void ek_image_free(ek_image *img);

/* Map bytes [file_offset, file_offset + length) of a file at load_addr. length 0 means "to
 * the end of the file". Returns 0; EK_ERR_IO (cannot open or map: diag "image.missing-file");
 * EK_ERR_RANGE (offset at or past the end, or the file is empty: diag "image.short-file").
 * A file shorter than asked is clipped (warning "image.short-file") and 0 is returned. */
int ek_image_add_file(ek_image *img, const char *path, uint64_t file_offset, uint64_t length,
                      uint64_t load_addr, ek_mem_space space);

/* Map a caller's buffer at addr (borrowed, not copied). Returns 0 or EK_ERR_ARG/NOMEM. */
int ek_image_add_buffer(ek_image *img, const void *data, size_t len, uint64_t addr,
                        ek_mem_space space);

/* Ask fn for addresses that no region covers (one callback per image; NULL removes it). */
void ek_image_set_callback(ek_image *img, ek_image_read_fn fn, void *ctx);

/* Map the loadable segments (PT_LOAD with file bytes) of an ELF file at p_vaddr + bias. The
 * bytes past p_filesz (.bss) are not mapped. Returns the number of segments mapped (>= 0),
 * EK_ERR_IO, EK_ERR_FORMAT (not an ELF file) or EK_ERR_UNSUPPORTED (no program headers,
 * e.g. a relocatable .ko: see etmkit/symbols.h for its symbols). */
int ek_image_add_elf(ek_image *img, const char *path, uint64_t bias, ek_mem_space space);

/* The code a snapshot's trace buffer `buffer` was recorded on, as OpenCSD's trc_pkt_lister
 * maps it (the one rule for snapshots: `etmkit dump`, the bench, the fuzzers and the tests use
 * it): the present [dump*] sections of the cores of the buffer's trace sources (sources in
 * name order, each core once, its dumps in their order), each with its memory space. A dump
 * whose first or last byte falls inside an earlier accepted dump of an overlapping space is
 * not used (note "dump.overlapping-image", as OpenCSD's memory-accessor map refuses it);
 * where accepted dumps overlap, the earlier one is read. Missing dump files were reported when
 * the snapshot was read and are skipped. Returns the number of regions added or a negative
 * status. */
int ek_image_add_snapshot_buffer(ek_image *img, const ek_snapshot *ss, size_t buffer);

/* ---- code given as files: --image FILE@ADDR -------------------------------------------
 * For a capture whose memory dumps lack the traced program (a snapshot folder), code can be
 * given without editing its ini files:
 *   ELF@ADDR   an ELF file (recognised by its magic): its executable PT_LOAD segments (PF_X,
 *              file bytes only) at p_vaddr + bias, bias = ADDR - the lowest p_vaddr of its
 *              PT_LOAD segments -- ADDR is where the ELF's first loadable byte is, as a perf
 *              map's start is for a binary mapped from its first page (a PIE linked at 0:
 *              ADDR is its load base; an executable linked at 0x400000 and given @0x400000:
 *              its link addresses)
 *   ELF        the same at its link addresses (bias 0)
 *   FILE@ADDR  any other file: raw bytes, the whole file at ADDR
 * The last '@' separates the address (0x... hex, or decimal). */
typedef struct ek_image_spec {
    char *path;    /* the file (owned: ek_image_spec_free) */
    uint64_t addr; /* with has_addr */
    int has_addr;
} ek_image_spec;

/* Parse "FILE@ADDR" or "FILE". Returns 0, EK_ERR_NOMEM, or EK_ERR_ARG with a one-line reason
 * in err (may be NULL). */
int ek_image_spec_parse(const char *arg, ek_image_spec *out, ek_sbuf *err);
void ek_image_spec_free(ek_image_spec *sp);

/* Where an image spec's code went (ek_image_add_spec). */
typedef struct ek_image_placed {
    int elf;         /* 1: ELF segments; 0: raw bytes */
    uint64_t bias;   /* ELF: added to p_vaddr (raw: ADDR) */
    uint64_t lo, hi; /* the lowest and highest address + 1 of the code mapped */
    size_t regions;  /* regions added */
} ek_image_placed;

/* Add the code of one spec (see above) to img, laid over what img already holds (later
 * regions win). Returns 0; EK_ERR_IO (cannot read: diag "image.missing-file"); EK_ERR_ARG (raw
 * bytes without @ADDR: diag "image.no-address"); EK_ERR_UNSUPPORTED (an ELF without an
 * executable PT_LOAD segment with file bytes: diag "image.no-code"); EK_ERR_FORMAT (a broken
 * ELF); EK_ERR_RANGE (an empty file). out (may be NULL) says where the code went. */
int ek_image_add_spec(ek_image *img, const ek_image_spec *sp, ek_mem_space space,
                      ek_image_placed *out);

/* Copy up to len bytes at addr; returns how many contiguous bytes were copied (0: addr is not
 * mapped). Reads continue across region edges while the addresses stay mapped. */
size_t ek_image_read(ek_image *img, ek_mem_space space, uint64_t addr, void *buf, size_t len);

/* Zero-copy: *ptr = the bytes at addr; returns how many bytes from there on belong to the same
 * region (0 and *ptr = NULL when addr is not mapped by a region -- callback addresses have no
 * stable bytes to point at: use ek_image_read for them). Pointers stay valid until the
 * image is freed. */
size_t ek_image_map(ek_image *img, ek_mem_space space, uint64_t addr, const uint8_t **ptr);

/* Number of regions added so far (for tests and dumps). */
size_t ek_image_region_count(const ek_image *img);

/* ---- code access for the flow decoders --------------------------------------------------
 * The one interface through which every instruction-flow decoder (ETMv4/ETE in etmkit/flow.h,
 * PTM in etmkit/ptm.h, ETMv3 in etmkit/etm3.h) reads code. It lives here, with the images,
 * so that a decoder depends on code access and not on another protocol's decoder. */

/* A contiguous run of readable code bytes. */
typedef struct ek_mem_span {
    uint64_t start; /* address of data[0] */
    uint64_t size;  /* bytes readable from data */
    const uint8_t *data;
} ek_mem_span;

/* How a flow decoder reads code. find() returns 1 and the span that contains addr in memory
 * space `space` (an ek_mem_space bit set), or 0 when addr is not mapped there. The span's bytes
 * must stay valid and unchanged until generation() returns a different value (or, without a
 * generation function, for the decoder's lifetime). An instruction is decoded only when 4
 * bytes are readable at its address inside one span (OpenCSD's rule, also for 16-bit T32);
 * otherwise the decoder reports ADDR_NACC and waits for the next address.
 * This is the hook for per-process DSO maps: find() may consult whatever address-space model
 * the caller keeps (the space and the decoder's trace ID are given). */
typedef struct ek_flow_mem {
    int (*find)(void *ctx, uint64_t addr, uint32_t space, uint8_t trace_id, ek_mem_span *out);
    uint64_t (*generation)(void *ctx); /* may be NULL: memory never changes */
    void *ctx;
} ek_flow_mem;

/* Code access through a memory image: zero-copy spans from its regions; the generation
 * follows the number of regions (images only grow). The image must outlive the decoder. */
ek_flow_mem ek_flow_mem_image(ek_image *img);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
