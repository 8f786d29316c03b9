/* A session's account as data: what the recording is, and every part of its trace that did not
 * become samples, grouped by cause, with the facts a remedy needs.
 *
 *     ek_account *a;
 *     if (ek_session_account(s, &a) == 0) {       // after ek_session_run (or before: only
 *         for (size_t i = 0; i < a->nitems; i++)  // what the file itself shows)
 *             if (a->items[i].problem) ...;
 *         ek_account_free(a);
 *     }
 *
 * The session makes no text: the doctor's prose and its JSON are renderings of this
 * (etmkit/account_out.h, src/output). Strings and the DSOs' facts point into the session and
 * stay valid until ek_session_free; the account owns its arrays. */
#ifndef ETMKIT_ACCOUNT_H
#define ETMKIT_ACCOUNT_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/session.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

/* What an item of the account is about (ek_account_item.kind). */
typedef enum ek_account_kind {
    EK_ACCT_AUX_NO_DATA = 0, /* AUX records whose trace is not in the file (count, bytes) */
    EK_ACCT_AUX_OVERWRITTEN, /* note: snapshot mode overwrote their trace (count, bytes) */
    EK_ACCT_AUX_CLIPPED,     /* AUX records cut short by the end of the file (count, bytes) */
    EK_ACCT_AUX_TRUNCATED,   /* flagged TRUNCATED: the buffer was full (count, first_offset) */
    EK_ACCT_AUX_REFUSED,     /* empty and TRUNCATED: tracing could not start (count, first) */
    EK_ACCT_AUX_COLLISION,   /* flagged COLLISION: the sink was shared (count, first_offset) */
    EK_ACCT_AUX_PARTIAL,     /* note: flagged PARTIAL (count) */
    EK_ACCT_LOST,            /* LOST records (count; extra: sideband events lost) */
    EK_ACCT_CODE,            /* code that could not be read (code, pid, lo..hi, dso, jit) */
    EK_ACCT_KMOD_RELOCS,     /* a module's branch relocations naming unknown kernel symbols
                              * (dso: relocs, relocs_unresolved) */
    EK_ACCT_GAP,             /* trace bytes lost for another reason (name: why; count, bytes) */
    EK_ACCT_DIAG,            /* a kind of diagnostic from the reader or decoders (diag) */
    EK_ACCT_NKINDS
} ek_account_kind;

/* Why code could not be read (ek_account_item.code, with EK_ACCT_CODE). */
typedef enum ek_account_code {
    EK_ACCT_CODE_NO_MAP = 0, /* a user address no map of the process covers */
    EK_ACCT_CODE_NO_KMAP,    /* a kernel address no kernel map covers */
    EK_ACCT_CODE_DSO,        /* a map covers it; its file could not be used (dso->status) */
    EK_ACCT_CODE_KERNEL,     /* a kernel map, but no kernel image */
    EK_ACCT_CODE_OUTSIDE,    /* the file is there but holds no code at that offset */
    EK_ACCT_CODE_NO_IMAGE,   /* a trace snapshot: no memory dump (nor --image) holds it */
} ek_account_code;

/* Which gap (ek_account_item.code, with EK_ACCT_GAP). */
enum {
    EK_ACCT_GAP_OTHER = 0,
    EK_ACCT_GAP_NO_ID, /* formatter data before the slice's first trace ID */
};

/* What to do about an item (ek_account_item.remedy); the renderers word it. */
typedef enum ek_remedy {
    EK_REMEDY_NONE = 0,
    EK_REMEDY_RECORD_AGAIN,       /* record again with a bigger AUX / user buffer */
    EK_REMEDY_COPY_AGAIN,         /* the file is truncated: copy it again */
    EK_REMEDY_BIGGER_AUX,         /* a bigger AUX buffer, address filters, less code */
    EK_REMEDY_ONE_SESSION,        /* one perf session per sink; a bigger AUX buffer */
    EK_REMEDY_UNSHARED_SINK,      /* do not share the sink between perf sessions */
    EK_REMEDY_BIGGER_PERF_BUFFER, /* a bigger perf buffer (-m) */
    EK_REMEDY_KERNEL_IMAGE,       /* -k vmlinux, --kcore DIR, or --kallsyms FILE */
    EK_REMEDY_KALLSYMS,           /* --kallsyms FILE or -k vmlinux */
    EK_REMEDY_SYMFS,              /* the file under --symfs DIR or in the build-id cache */
    EK_REMEDY_NO_FILE,            /* none from files; for JIT code, record with jitdump */
    EK_REMEDY_JIT_WRITE,          /* have the JIT write a jitdump, record with -k 1 */
    EK_REMEDY_JIT_COPY,           /* copy the jitdump to symfs, or --jitdump FILE */
    EK_REMEDY_JIT_CLOCK,          /* record with perf record -k 1 (the jitdump's clock) */
    EK_REMEDY_GIVE_CODE,          /* a snapshot: --image ELF@ADDR / FILE@ADDR, or a [dump]
                                   * section in the core's ini file (item.name) */
    EK_REMEDY_N
} ek_remedy;

/* The file behind a map (ek_account_dso.kind, .status). */
enum {
    EK_ACCT_DSO_USER = 0, EK_ACCT_DSO_KERNEL, EK_ACCT_DSO_KMODULE, EK_ACCT_DSO_VDSO,
    EK_ACCT_DSO_ANON, EK_ACCT_DSO_JIT
};
enum {
    EK_ACCT_FILE_NOT_TRIED = 0, EK_ACCT_FILE_OK, EK_ACCT_FILE_NOT_FOUND,
    EK_ACCT_FILE_BUILD_ID_MISMATCH, EK_ACCT_FILE_BAD, EK_ACCT_FILE_NONE
};

typedef struct ek_account_dso {
    const char *name;      /* as recorded */
    const char *tried;     /* the first file looked for (NULL: none) */
    int kind;              /* EK_ACCT_DSO_* */
    int status;            /* EK_ACCT_FILE_* */
    uint8_t build_id[20];  /* as recorded */
    uint8_t build_id_len;  /* 0: none recorded */
    uint8_t found_id[20];  /* BUILD_ID_MISMATCH: the file's */
    uint8_t found_id_len;
    uint64_t relocs, relocs_unresolved; /* kernel module: branch relocations applied / not */
} ek_account_dso;

/* Anonymous executable memory of a process (JIT code?): what the recording says of its
 * jitdump. */
typedef struct ek_account_jit {
    int mapped;            /* the process mapped a jitdump, or one was given (--jitdump) */
    int read;              /* mapped: it was found and read */
    const char *recorded;  /* the name in its MMAP2 record (NULL: given with --jitdump) */
    int64_t record;        /* that record (-1: none) */
    const char *path;      /* read: the file */
    const char *tried;     /* !read: where it was looked for */
    int status;            /* 0; EK_ERR_NOT_FOUND, EK_ERR_FORMAT, EK_ERR_UNSUPPORTED (clock) */
    uint64_t loads, moves; /* its records turned into maps */
    const char *perf_map;  /* a perf-PID.map that exists (names only, no code); NULL: none */
} ek_account_jit;

/* A kind of diagnostic, grouped: how often, and its example (the earliest in the file). */
typedef struct ek_account_diag {
    const char *kind;      /* its id ("perf.aux-no-data") */
    int sev;               /* ek_severity */
    uint64_t count;
    const char *first;     /* the example as the diagnostic sink formatted it */
    const char *msg, *file; /* its message and file (may be NULL) */
    int64_t record;        /* its record (-1: none) */
    int trace_id;          /* its trace ID (-1: none) */
    int64_t example_offset; /* its offset (-1: none) */
    int64_t offsets[8];    /* the lowest offsets, ascending */
    unsigned noffsets;
} ek_account_diag;

/* One AUX record whose trace is not in the file. */
typedef struct ek_account_aux {
    int64_t record;        /* its number among the file's records */
    uint64_t offset;       /* its file offset */
    int32_t cpu;           /* -1: unknown */
    uint64_t aux_offset, aux_size;
    int overwritten;       /* snapshot mode overwrote it (a note, not a problem) */
} ek_account_aux;

/* A trace snapshot's trace source as decoded from one of its buffers (ek_account.sources). */
typedef struct ek_account_source {
    const char *name;       /* the source's device name ("ETM_0") */
    const char *buffer;     /* the buffer it was decoded from ("ETB_0") */
    int trace_id;
    int protocol;           /* ek_protocol */
    int32_t cpu;            /* its core's index among the snapshot's cores (-1: no core) */
    const char *core;       /* its core's device name (NULL: none) */
    const char *core_ini;   /* the core's device file, where [dump] sections go (NULL: none) */
    const char *source_ini; /* the source's device file */
    int decoded;            /* 0: etmkit does not decode its protocol */
    int time_stamps;        /* configured to emit time stamps (its samples carry times) */
    uint64_t bytes;         /* trace bytes of its trace ID */
    uint64_t packets, bad_packets;
    uint64_t instructions;  /* instructions decoded */
    uint64_t sync_losses;   /* times the decoder lost synchronisation after it had it */
    uint64_t errors;        /* decode errors (diagnostics of severity WARN or above) */
    uint64_t nacc;          /* ADDR_NACC elements: code that could not be read */
    uint64_t samples;       /* samples made */
} ek_account_source;

/* One cause (problem) or note, in the order the doctor lists them. */
typedef struct ek_account_item {
    int kind;              /* ek_account_kind */
    int problem;           /* 1: trace that did not become samples; 0: a note */
    int remedy;            /* ek_remedy */
    int code;              /* EK_ACCT_CODE: ek_account_code; EK_ACCT_GAP: EK_ACCT_GAP_* */
    int32_t pid;           /* EK_ACCT_CODE: the process (-1: kernel) */
    uint64_t lo, hi;       /* EK_ACCT_CODE: the addresses seen */
    uint64_t count;        /* records, places or events */
    uint64_t bytes;        /* trace bytes concerned */
    uint64_t extra;        /* EK_ACCT_LOST: sideband events lost */
    int64_t first_offset;  /* file offset of the first (-1: none) */
    const char *name;      /* EK_ACCT_GAP: what kind of trace */
    const ek_account_dso *dso;  /* EK_ACCT_CODE (may be NULL), EK_ACCT_KMOD_RELOCS */
    const ek_account_jit *jit;  /* EK_ACCT_CODE of anonymous memory of a process */
    const ek_account_diag *diag; /* EK_ACCT_DIAG */
} ek_account_item;

typedef struct ek_account {
    const char *path;      /* the recording */
    int coresight;         /* it holds a CoreSight (cs_etm) trace configuration */
    size_t ncpus;
    uint32_t protocols;    /* bit p: a CPU traces with ek_protocol p (ETMv4-M counts as ETMv4) */
    int snapshot;          /* recorded in snapshot mode */
    int timeless;          /* no CoreSight time stamps used */
    int ran;               /* the session was decoded (the rest are 0 before) */
    ek_session_stats stats;
    uint64_t frame_bytes;  /* ran: trace bytes that were frame headers and padding */
    const char *kernel_release;   /* the kernel that ran (NULL: not recorded) */
    const uint8_t *kernel_build_id;
    size_t kernel_build_id_len;   /* 0: none recorded */
    const char *buildid_dir;      /* the build-id cache in use (NULL: ~/.debug) */
    const ek_account_aux *aux_no_data; /* every AUX record without data, in slice order */
    size_t naux_no_data;
    const ek_account_item *items; /* causes and notes, in the doctor's order */
    size_t nitems;
    int problems;                 /* ek_session_problems */
    /* a trace snapshot folder (not a perf recording: the perf fields above are 0, ncpus
     * counts the cores, EK_ACCT_CODE items have code NO_IMAGE, pid = the trace ID or -1 when
     * the range was traced by several, name = the ini file where a [dump] would go,
     * first_offset = the trace index of the first unreadable place); 2: a bare trace file
     * described by options (ek_session_opts.snapshot), path the file */
    int trace_snapshot;
    const ek_account_source *sources; /* in decode order: buffer after buffer */
    size_t nsources;
} ek_account;

/* Take the account of s (after a run: everything; before one: what the file shows). Returns 0
 * or EK_ERR_NOMEM. */
int ek_session_account(ek_session *s, ek_account **out);
void ek_account_free(ek_account *a);

/* Stable names for the JSON and for programs ("aux-no-data", "symfs", ...). */
const char *ek_account_kind_name(int kind);
const char *ek_account_code_name(int code);
const char *ek_remedy_name(int remedy);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
