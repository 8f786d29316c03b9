/* Trace snapshot folders (snapshot.ini, device files, trace.ini): typed, not raw strings.
 * Format: ../shared/docs/snapshot-format.md. All structures are read-only for callers and
 * live until ek_snapshot_free(). Problems (missing files, malformed lines) go to the diag
 * sink with file and line; loading continues with what is usable.
 *
 * Names (devices, buffers, registers, sections, keys) are matched ignoring ASCII case.
 * Diagnostics (kind, severity):
 *   ini.malformed-line            W  a line of any INI file was skipped (see src/input/ini.h)
 *   snapshot.missing-file         E  snapshot.ini, trace.ini or a trace buffer file is missing
 *                                 W  a device file or a memory dump file is missing
 *   snapshot.missing-key          W  a required key is absent (dump file/address, buffer file)
 *   snapshot.bad-value            W  a number, list or name that cannot be used
 *   snapshot.unknown-key          N  a key the reader does not know (kept in the INI only)
 *   snapshot.unknown-format       W  a buffer format other than coresight / source_data /
 *                                    dstream_coresight (buffer kept, format EK_BUF_UNKNOWN)
 *   snapshot.unknown-device-type  W  a trace source type that names no known protocol
 *   snapshot.unknown-core         W  a core type with no known architecture (arch UNKNOWN)
 *   snapshot.unknown-device       W  trace.ini names a device or buffer that does not exist
 *   snapshot.no-buffer            W  a trace source is not assigned to any buffer
 *   snapshot.no-core              W  an instruction trace source is not assigned to a core
 *   snapshot.missing-register     W  a register the protocol needs is absent (value 0); not
 *                                    said of one whose value was no number (bad-value said it)
 *   snapshot.default-register     N  an optional register is absent: the reference decoder's
 *                                    default value is used (present bit stays clear)
 *   snapshot.duplicate            N  a repeated buffer or register (first kept)
 *                                 W  a device file listed again, or a device name used again:
 *                                    the later device is left out
 */
#ifndef ETMKIT_SNAPSHOT_H
#define ETMKIT_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/config.h"
#include "etmkit/diag.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

typedef enum ek_buffer_format {
    EK_BUF_UNKNOWN = 0,
    EK_BUF_CORESIGHT,   /* 16-byte CoreSight formatter frames */
    EK_BUF_SOURCE_DATA, /* raw bytes of a single source */
    EK_BUF_DSTREAM,     /* DSTREAM capture of CoreSight frames (TPIU-style sync) */
    /* no trace.ini format= says these: a bare trace file's (ek_snapshot_from_trace) */
    EK_BUF_TPIU,       /* TPIU capture: frames found by FSYNCs (as listed with --tpiu) */
    EK_BUF_TPIU_HSYNC, /* ... with HSYNCs to drop (--tpiu-hsync) */
} ek_buffer_format;

typedef struct ek_snap_reg {
    char *name;     /* as written, e.g. "TRCIDR0" (upper-cased) */
    int64_t offset; /* NAME(0x078) form, or -1 */
    int64_t id;     /* NAME(id:0x..) form, or -1 */
    uint64_t value;
    int size_bits; /* NAME(size:64) form, or 0 */
    uint64_t line; /* line in the device file (for diagnostics) */
} ek_snap_reg;

typedef struct ek_snap_dump {
    char *path;       /* resolved path of the image file */
    uint64_t address; /* load address of the first byte used */
    uint64_t offset;  /* first byte of the file used (offset= key, default 0) */
    uint64_t length;  /* length= key, else file size - offset (0 if unknown); the image uses
                         no more than the file has from offset (the reader warns of the rest) */
    int has_length;   /* a length= other than 0 (length=0 is none, as the reference reader
                         takes it: the file from offset on) */
    ek_mem_space space; /* space= key, EK_MS_ANY when absent */
    char *section;      /* INI section name, e.g. "dump1" or "dump.text" */
    int present;        /* 1: the file exists and could be opened */
    uint64_t file_size; /* size of the file when present */
} ek_snap_dump;

typedef struct ek_snap_device {
    char *name;
    char *devclass; /* "core", "trace_source", ... (lower-cased) */
    char *type;     /* "ETM4", "ETE", "Cortex-A53", ... as written */
    char *ini_path;
    ek_snap_reg *regs;
    size_t nregs;
    ek_snap_dump *dumps;
    size_t ndumps;
    /* Cores (devclass "core"): architecture and profile from 'type' (ek_core_arch()).
     * Trace sources: the protocol named by 'type' (ETM4 on any core, before the M-profile
     * check; see ek_snap_source.cfg.protocol for the final one). */
    ek_arch arch;
    ek_arch_profile profile;
    ek_protocol protocol;
} ek_snap_device;

typedef struct ek_snap_buffer {
    char *name;
    char *path; /* resolved path of the trace file, NULL when the section has no file= */
    ek_buffer_format format; /* format= key; CORESIGHT when absent (as the reference lister) */
    char *section;           /* INI section name, e.g. "buffer0" */
    int present;             /* 1: the trace file exists and could be opened */
    uint64_t file_size;      /* size of the trace file when present */
} ek_snap_buffer;

/* A trace source: a device of class trace_source.
 * cfg.protocol: from the device type (ETM4*, ETE, ETM3*, PTM1*, PFT1*, STM, ITM; the text
 *   before the first '.' is compared); ETM4 tracing an M-profile core is EK_PROTO_ETMV4M.
 * cfg.trace_id: TRCTRACEIDR & 0x7f (ETMv4/ETE), ETMTRACEIDR & 0x7f (ETMv3/PTM),
 *   bits 22:16 of STMTCSR (STM) or ITMTCR (ITM). In a formatted buffer (not source_data) an
 *   ID that frames cannot carry, the null ID 0 or a reserved one (0x70-0x7f), is kept and
 *   warned of (snapshot.bad-value, at the register's line): no trace of the source is found.
 * cfg.regs.etm4: TRCCONFIGR, TRCTRACEIDR, TRCAUTHSTATUS, TRCDEVARCH, TRCIDR0..13 with
 *   'present' bits for the ones the file gives. Absent ones hold the reference decoder's
 *   defaults: TRCIDR1 0x4100F403, TRCDEVARCH 0x47705A13 (ETE only), everything else 0.
 * cfg.arch/profile: those of 'core' (UNKNOWN without one). */
typedef struct ek_snap_source {
    size_t device;        /* index into devices[] */
    ek_source_config cfg; /* typed configuration from the device's [regs] and its core */
    long buffer;          /* index into buffers[] or -1 */
    long core;            /* index into devices[] of the core it traces, or -1 */
} ek_snap_source;

typedef struct ek_snapshot {
    char *dir;
    char *description;
    ek_snap_device *devices;
    size_t ndevices;
    ek_snap_buffer *buffers; /* in the order of [trace_buffers] buffers= */
    size_t nbuffers;
    ek_snap_source *sources; /* trace sources, in device-list order */
    size_t nsources;
    char *version;   /* [snapshot] version=, or NULL */
    char *trace_ini; /* resolved path of the trace metadata file */
    /* Indices into buffers[] in the order their [bufferN] sections appear in trace.ini.
     * This is the order the reference lister (trc_pkt_lister) uses: without -multi_session
     * it decodes only buffer_order[0]; with it, each buffer in this order. Within a buffer
     * the reference creates decoders for its sources in strcmp order of their names, and
     * for a source_data (single-source) buffer only for the first of them. */
    size_t *buffer_order;
    uint64_t timestamp_frequency; /* [timestamp] frequency=, 0 when absent */
} ek_snapshot;

/* Read a snapshot folder. Returns 0 (possibly with diagnostics), or a negative status when
 * nothing usable was found (no snapshot.ini, no readable trace metadata). */
int ek_snapshot_open(const char *dir, const ek_diag *diag, ek_snapshot **out);
void ek_snapshot_free(ek_snapshot *ss);

/* Helpers. */
const ek_snap_device *ek_snapshot_find_device(const ek_snapshot *ss, const char *name);
/* Value of a register by name (case-insensitive); returns 1 if found. */
int ek_snap_device_reg(const ek_snap_device *dev, const char *name, uint64_t *value);
/* Index of the buffer called 'name' (case-insensitive), or -1. */
long ek_snapshot_find_buffer(const ek_snapshot *ss, const char *name);

/* ---- a bare trace file: the snapshot its options describe --------------------------------
 * A trace file without a folder (a probe's capture, ETB/ETR memory) and what a snapshot's ini
 * files would say about it: one buffer (the file, in 'format'), and per trace source its
 * device type (as a device file's type=: ETM4, ETE, ETM3.5, PTM1.1, STM, ITM), registers (the
 * device files' [regs] names: TRCIDR0, TRCCONFIGR, ETMCR, STMTCSR, ...) and the type of the
 * core it traces (Cortex-A53, ARMv8-A, ...). The result is the snapshot those ini files would
 * give (same typed configuration, same diagnostics), with no memory dumps (code comes as
 * --image specs: etmkit/image.h). */
typedef struct ek_bare_reg {
    const char *name; /* as a [regs] key: NAME (case ignored) */
    uint64_t value;
} ek_bare_reg;

typedef struct ek_bare_source {
    const char *name;      /* device name; NULL: "<type>_<n>" (n: its position) */
    const char *type;      /* device type= */
    const char *core_type; /* the traced core's type=, NULL: no core */
    const ek_bare_reg *regs;
    size_t nregs;
    int trace_id; /* 0..0x7f: the trace ID, written into the ID register (TRCTRACEIDR,
                     ETMTRACEIDR, or bits 22:16 of STMTCSR / ITMTCR) over a value in regs;
                     -1: the registers' */
} ek_bare_source;

/* The snapshot of trace file 'path' (buffer named after the file's base name, the snapshot's
 * dir the file's folder, trace_ini the file itself) read as 'format' with sources srcs[0..n).
 * Returns 0, EK_ERR_ARG (no source, a source without a type, trace_id > 0x7f, format
 * UNKNOWN), EK_ERR_NOT_FOUND (the file cannot be read: diag "snapshot.missing-file" with the
 * reason) or EK_ERR_NOMEM. */
int ek_snapshot_from_trace(const char *path, ek_buffer_format format, const ek_bare_source *srcs,
                           size_t n, const ek_diag *diag, ek_snapshot **out);

/* Architecture and profile of a core type name, as the reference decoder maps them
 * (OpenCSD's core-name table and its "ARMv<maj>[.<min>]-<A|R|M>" / "ARM-AA64[-R|-M]"
 * patterns), plus Armv8.1-M for Cortex-M52/M55/M85 and "ARMv8.1-M". ARM-AA64 and A-profile
 * names from Armv8.4 on map to EK_ARCH_V9A (OpenCSD's ARCH_AA64: every A64 feature).
 * Returns 1 when the name is known; otherwise 0 with both set to UNKNOWN. */
int ek_core_arch(const char *name, ek_arch *arch, ek_arch_profile *profile);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
