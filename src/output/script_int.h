/* Internal to src/output: a sample's perf-script line with what the previous lines of its
 * queue already made (script.c, used by script_out.c). */
#ifndef ETMKIT_OUTPUT_SCRIPT_INT_H
#define ETMKIT_OUTPUT_SCRIPT_INT_H

#include <stdint.h>

#include "etmkit/sbuf.h"
#include "etmkit/script.h"

#define SCRIPT_MEMO_FLAGS_BITS 4
/* even: a remembered head is copied in two fixed halves (script_format_head) */
#define SCRIPT_MEMO_HEAD 128 /* two halves of 64 bytes (ek_copy64) */
typedef struct script_memo_flags {
    uint32_t flags;
    uint8_t len; /* 0: empty */
    char text[63];
} script_memo_flags;

/* A decoder thread's memory of its last lines (zeroed to start; one field set throughout). */
typedef struct script_memo {
    /* the head of the last line: the comm, tid/pid and cpu columns of its thread (th_len
     * bytes of th_text), then its misc and time columns (up to hd_len) */
    int32_t th_tid, th_pid, th_cpu;
    const char *th_comm;
    uint16_t th_len; /* 0: none */
    uint16_t hd_len; /* th_len or more; the time columns are those of hd_has_t, hd_time */
    uint8_t hd_has_t;
    uint64_t hd_time;
    char th_text[SCRIPT_MEMO_HEAD];
    /* the flags column by flags value */
    script_memo_flags fl[1u << SCRIPT_MEMO_FLAGS_BITS];
} script_memo;

/* The line in two parts: the head (comm, tid/pid, cpu, misc and time: what only the thread and
 * the time decide) and the tail (the rest, which the thread's name and the time do not change:
 * r->comm is asked in the head only). */
void script_format_head(ek_sbuf *out, const ek_script_fields *f, const ek_sample *s,
                        const ek_script_resolver *r, script_memo *m);
void script_format_tail(ek_sbuf *out, const ek_script_fields *f, const ek_sample *s,
                        const ek_script_resolver *r, int evname_width, script_memo *m);
/* ek_script_format's line (head and tail); m may be NULL (nothing remembered). */
void script_format_memo(ek_sbuf *out, const ek_script_fields *f, const ek_sample *s,
                        const ek_script_resolver *r, int evname_width, script_memo *m);

#endif
