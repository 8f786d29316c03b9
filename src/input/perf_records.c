/* perf.data records: the iterator (with COMPRESSED streams and resynchronisation after
 * damage) and the decoding of each record type into ek_perf_record. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "input/perf_internal.h"

#define PF_WIN_CAP    (3u << 16)     /* decompression window: > 2 maximal records */
#define PF_SEGS       64             /* remembered (stream position -> COMPRESSED record) pairs */
#define PF_STRCAP     65536u         /* scratch for strings that lack their NUL in the record */
/* Decompressed records allowed per file: PF_ZOUT_FLOOR bytes, and past them PF_ZOUT_RATIO per
 * compressed byte read. Everything kept per record (AUX index 104 bytes per 64-byte record,
 * slices, the session's sideband) grows with the records, so this bounds it by the file size.
 * perf record -z writes sideband at 4-9x (its own measurements; 6.5-9.3x for the recordings of
 * shared/testdata at zstd levels 1-19), and regular streams built to compress well (AUX or
 * SWITCH records 1000 ns apart) reach 17-23x; 22 KB of zstd expanded to 4 million AUX records
 * (256 MiB, 437 MB of index) under the earlier 256 MiB floor. */
#define PF_ZOUT_FLOOR (1ull << 20)
#define PF_ZOUT_RATIO 64ull

static const char *const rec_names[EK_PERF_RECORD_USER_MAX] = {
    [EK_PERF_RECORD_MMAP] = "MMAP",
    [EK_PERF_RECORD_LOST] = "LOST",
    [EK_PERF_RECORD_COMM] = "COMM",
    [EK_PERF_RECORD_EXIT] = "EXIT",
    [EK_PERF_RECORD_THROTTLE] = "THROTTLE",
    [EK_PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE",
    [EK_PERF_RECORD_FORK] = "FORK",
    [EK_PERF_RECORD_READ] = "READ",
    [EK_PERF_RECORD_SAMPLE] = "SAMPLE",
    [EK_PERF_RECORD_MMAP2] = "MMAP2",
    [EK_PERF_RECORD_AUX] = "AUX",
    [EK_PERF_RECORD_ITRACE_START] = "ITRACE_START",
    [EK_PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES",
    [EK_PERF_RECORD_SWITCH] = "SWITCH",
    [EK_PERF_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
    [EK_PERF_RECORD_NAMESPACES] = "NAMESPACES",
    [EK_PERF_RECORD_KSYMBOL] = "KSYMBOL",
    [EK_PERF_RECORD_BPF_EVENT] = "BPF_EVENT",
    [EK_PERF_RECORD_CGROUP] = "CGROUP",
    [EK_PERF_RECORD_TEXT_POKE] = "TEXT_POKE",
    [EK_PERF_RECORD_AUX_OUTPUT_HW_ID] = "AUX_OUTPUT_HW_ID",
    [EK_PERF_RECORD_HEADER_ATTR] = "HEADER_ATTR",
    [EK_PERF_RECORD_HEADER_EVENT_TYPE] = "HEADER_EVENT_TYPE",
    [EK_PERF_RECORD_HEADER_TRACING_DATA] = "HEADER_TRACING_DATA",
    [EK_PERF_RECORD_HEADER_BUILD_ID] = "HEADER_BUILD_ID",
    [EK_PERF_RECORD_FINISHED_ROUND] = "FINISHED_ROUND",
    [EK_PERF_RECORD_ID_INDEX] = "ID_INDEX",
    [EK_PERF_RECORD_AUXTRACE_INFO] = "AUXTRACE_INFO",
    [EK_PERF_RECORD_AUXTRACE] = "AUXTRACE",
    [EK_PERF_RECORD_AUXTRACE_ERROR] = "AUXTRACE_ERROR",
    [EK_PERF_RECORD_THREAD_MAP] = "THREAD_MAP",
    [EK_PERF_RECORD_CPU_MAP] = "CPU_MAP",
    [EK_PERF_RECORD_STAT_CONFIG] = "STAT_CONFIG",
    [EK_PERF_RECORD_STAT] = "STAT",
    [EK_PERF_RECORD_STAT_ROUND] = "STAT_ROUND",
    [EK_PERF_RECORD_EVENT_UPDATE] = "EVENT_UPDATE",
    [EK_PERF_RECORD_TIME_CONV] = "TIME_CONV",
    [EK_PERF_RECORD_HEADER_FEATURE] = "HEADER_FEATURE",
    [EK_PERF_RECORD_COMPRESSED] = "COMPRESSED",
    [EK_PERF_RECORD_FINISHED_INIT] = "FINISHED_INIT",
    [EK_PERF_RECORD_COMPRESSED2] = "COMPRESSED2",
};

const char *ek_perf_record_name(uint32_t type)
{
    if (type < EK_PERF_RECORD_USER_MAX && rec_names[type]) return rec_names[type];
    if (type >= EK_PERF_RECORD_SIMPLEPERF_FIRST) return "SIMPLEPERF";
    return "UNKNOWN";
}

int pf_is_known_type(uint32_t type)
{
    return type < EK_PERF_RECORD_USER_MAX && rec_names[type] != NULL;
}

int ek_perf_is_sideband(uint32_t type)
{
    switch (type) {
    case EK_PERF_RECORD_MMAP:
    case EK_PERF_RECORD_MMAP2:
    case EK_PERF_RECORD_COMM:
    case EK_PERF_RECORD_FORK:
    case EK_PERF_RECORD_EXIT:
    case EK_PERF_RECORD_SWITCH:
    case EK_PERF_RECORD_SWITCH_CPU_WIDE:
    case EK_PERF_RECORD_ITRACE_START:
    case EK_PERF_RECORD_TIME_CONV:
    case EK_PERF_RECORD_LOST:
    case EK_PERF_RECORD_AUX:
    case EK_PERF_RECORD_AUX_OUTPUT_HW_ID: return 1;
    default: return 0;
    }
}

uint64_t ek_perf_counter_to_time(const ek_perf_time_conv *tc, uint64_t cyc)
{
    if (tc->have_cycles && tc->cap_user_time_short)
        cyc = tc->time_cycles + ((cyc - tc->time_cycles) & tc->time_mask);
    uint64_t shift = tc->time_shift & 63;
    uint64_t quot = cyc >> shift;
    uint64_t rem = cyc & ((1ull << shift) - 1);
    return tc->time_zero + quot * tc->time_mult + ((rem * tc->time_mult) >> shift);
}

/* Smallest plausible header.size per record type (header included); 8 when unknown. */
static unsigned min_size(uint32_t type)
{
    switch (type) {
    case EK_PERF_RECORD_MMAP: return 48;
    case EK_PERF_RECORD_MMAP2: return 80;
    case EK_PERF_RECORD_COMM:
    case EK_PERF_RECORD_LOST: return 24;
    case EK_PERF_RECORD_FORK:
    case EK_PERF_RECORD_EXIT:
    case EK_PERF_RECORD_AUX:
    case EK_PERF_RECORD_TIME_CONV: return 32;
    case EK_PERF_RECORD_ITRACE_START:
    case EK_PERF_RECORD_AUX_OUTPUT_HW_ID:
    case EK_PERF_RECORD_LOST_SAMPLES:
    case EK_PERF_RECORD_AUXTRACE_INFO:
    case EK_PERF_RECORD_ID_INDEX:
    case EK_PERF_RECORD_THREAD_MAP:
    case EK_PERF_RECORD_HEADER_FEATURE:
    case EK_PERF_RECORD_SWITCH_CPU_WIDE: return 16;
    case EK_PERF_RECORD_HEADER_TRACING_DATA: return 12; /* header + u32 size (see below) */
    case EK_PERF_RECORD_AUXTRACE: return 48;
    case EK_PERF_RECORD_HEADER_ATTR: return 8 + 64;
    case EK_PERF_RECORD_HEADER_BUILD_ID: return 36;
    default: return 8;
    }
}

/* perf pads every record to a multiple of 8 bytes but these: COMPRESSED holds its zstd bytes
 * unpadded, a pipe-mode HEADER_FEATURE is as long as its feature's data, and HEADER_TRACING_DATA
 * was a 12-byte record (header + u32 size) until perf gave it a pad field in 2025. Any other
 * record whose size is not a multiple of 8 has a damaged size field. */
static int unpadded_type(uint32_t type)
{
    return type == EK_PERF_RECORD_COMPRESSED || type == EK_PERF_RECORD_HEADER_FEATURE ||
           type == EK_PERF_RECORD_HEADER_TRACING_DATA;
}

static int size_fits_grid(uint32_t type, uint64_t size)
{
    return size % 8 == 0 || unpadded_type(type);
}

/* ---- sample_id trailer -------------------------------------------------------------- */

static unsigned sid_words(uint64_t st)
{
    unsigned n = 0;
    n += !!(st & EK_PERF_SAMPLE_TID);
    n += !!(st & EK_PERF_SAMPLE_TIME);
    n += !!(st & EK_PERF_SAMPLE_ID);
    n += !!(st & EK_PERF_SAMPLE_STREAM_ID);
    n += !!(st & EK_PERF_SAMPLE_CPU);
    n += !!(st & EK_PERF_SAMPLE_IDENTIFIER);
    return n;
}

/* Which attr a kernel record belongs to; NULL when the file has no trailers. */
static const ek_perf_attr *trailer_attr(const ek_perf_file *f, const uint8_t *raw, size_t size)
{
    int swap = f->hdr.swapped;
    switch (f->sid_mode) {
    case PF_SID_SINGLE: return f->sid_attr;
    case PF_SID_IDENTIFIER:
    case PF_SID_ID_POS: {
        unsigned pos = f->sid_mode == PF_SID_IDENTIFIER ? 1 : f->sid_id_pos;
        if (size < 8 + 8 * (size_t)pos) return NULL;
        const ek_perf_attr *a = ek_perf_attr_by_id(f, pf_u64(raw + size - 8 * pos, swap));
        return a ? a : f->attrs.v[0];
    }
    default: return NULL;
    }
}

/* Parse the trailer of raw[0..size); returns the size of the record body (without it), or
 * 0 when the trailer does not fit. */
static size_t parse_trailer(const ek_perf_file *f, const uint8_t *raw, size_t size,
                            ek_perf_sample_id *sid)
{
    const ek_perf_attr *a = trailer_attr(f, raw, size);
    if (!a || !(a->flags & EK_PERF_ATTR_FLAG_SAMPLE_ID_ALL)) return size;
    uint64_t st = a->sample_type;
    size_t tsz = 8 * (size_t)sid_words(st);
    if (size < 8 + tsz) return 0;
    pf_rd r = pf_rd_make(raw + size - tsz, tsz, f->hdr.swapped);
    sid->attr = a;
    if (st & EK_PERF_SAMPLE_TID) {
        sid->pid = pf_r32(&r);
        sid->tid = pf_r32(&r);
    }
    if (st & EK_PERF_SAMPLE_TIME) sid->time = pf_r64(&r);
    if (st & EK_PERF_SAMPLE_ID) sid->id = pf_r64(&r);
    if (st & EK_PERF_SAMPLE_STREAM_ID) sid->stream_id = pf_r64(&r);
    if (st & EK_PERF_SAMPLE_CPU) {
        sid->cpu = pf_r32(&r);
        (void)pf_r32(&r);
    }
    if (st & EK_PERF_SAMPLE_IDENTIFIER) sid->id = pf_r64(&r);
    sid->present = st & (EK_PERF_SAMPLE_TID | EK_PERF_SAMPLE_TIME | EK_PERF_SAMPLE_ID |
                         EK_PERF_SAMPLE_STREAM_ID | EK_PERF_SAMPLE_CPU | EK_PERF_SAMPLE_IDENTIFIER);
    return size - tsz;
}

/* Leading fixed fields of a SAMPLE record. */
static void parse_sample(const ek_perf_file *f, const uint8_t *raw, size_t size,
                         ek_perf_record *rec)
{
    int swap = f->hdr.swapped;
    const ek_perf_attr *a = NULL;
    if (!f->attrs.n) return;
    /* IDENTIFIER leads every sample of its event: it names the attribute even when the
     * events' trailers look alike (PF_SID_SINGLE) but their samples do not */
    if ((f->sid_mode == PF_SID_IDENTIFIER ||
         (f->sid_mode == PF_SID_SINGLE &&
          (f->sid_attr->sample_type & EK_PERF_SAMPLE_IDENTIFIER))) &&
        size >= 16)
        a = ek_perf_attr_by_id(f, pf_u64(raw + 8, swap));
    if (!a) a = f->sid_attr ? f->sid_attr : f->attrs.v[0];
    uint64_t st = a->sample_type;
    pf_rd r = pf_rd_make(raw + 8, size - 8, swap);
    ek_perf_sample_id *s = &rec->sid;
    s->attr = a;
    if (st & EK_PERF_SAMPLE_IDENTIFIER) s->id = pf_r64(&r);
    if (st & EK_PERF_SAMPLE_IP) rec->u.sample.ip = pf_r64(&r);
    if (st & EK_PERF_SAMPLE_TID) {
        s->pid = pf_r32(&r);
        s->tid = pf_r32(&r);
    }
    if (st & EK_PERF_SAMPLE_TIME) s->time = pf_r64(&r);
    if (st & EK_PERF_SAMPLE_ADDR) rec->u.sample.addr = pf_r64(&r);
    if (st & EK_PERF_SAMPLE_ID) s->id = pf_r64(&r);
    if (st & EK_PERF_SAMPLE_STREAM_ID) s->stream_id = pf_r64(&r);
    if (st & EK_PERF_SAMPLE_CPU) {
        s->cpu = pf_r32(&r);
        (void)pf_r32(&r);
    }
    if (st & EK_PERF_SAMPLE_PERIOD) rec->u.sample.period = pf_r64(&r);
    s->present = st & (EK_PERF_SAMPLE_TID | EK_PERF_SAMPLE_TIME | EK_PERF_SAMPLE_ID |
                       EK_PERF_SAMPLE_STREAM_ID | EK_PERF_SAMPLE_CPU | EK_PERF_SAMPLE_IDENTIFIER);
    if (r.err) rec->damaged = 1;
}

/* A NUL-terminated string from p[0..len): in place when terminated, else a copy. */
static const char *rec_string(const uint8_t *p, size_t len, char *buf, size_t cap, int *damaged)
{
    if (memchr(p, 0, len)) return (const char *)p;
    *damaged = 1;
    size_t n = len < cap - 1 ? len : cap - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return buf;
}

void pf_decode_record(const ek_perf_file *f, const ek_diag *d, const uint8_t *raw, size_t size,
                      ek_perf_record *rec, char *strbuf, size_t strcap)
{
    int swap = f->hdr.swapped;
    rec->raw = raw;
    rec->type = pf_u32(raw, swap);
    rec->misc = pf_u16(raw + 4, swap);
    rec->size = pf_u16(raw + 6, swap);
    memset(&rec->sid, 0, sizeof rec->sid);
    memset(&rec->u, 0, sizeof rec->u);
    rec->payload_offset = -1;
    rec->payload_size = rec->payload_avail = 0;
    rec->damaged = 0;
    size_t body = size;
    uint32_t type = rec->type;
    if (type >= 1 && type < EK_PERF_RECORD_KERNEL_MAX && type != EK_PERF_RECORD_SAMPLE) {
        body = parse_trailer(f, raw, size, &rec->sid);
        if (!body) {
            rec->damaged = 1;
            body = size;
        }
    }
    if (body < min_size(type) && pf_is_known_type(type) && type != EK_PERF_RECORD_AUXTRACE) {
        rec->damaged = 1;
    }
    pf_rd r = pf_rd_make(raw + 8, body - 8, swap);
    int dmg = 0;
    switch (type) {
    case EK_PERF_RECORD_MMAP:
        rec->u.mmap.pid = pf_r32(&r);
        rec->u.mmap.tid = pf_r32(&r);
        rec->u.mmap.addr = pf_r64(&r);
        rec->u.mmap.len = pf_r64(&r);
        rec->u.mmap.pgoff = pf_r64(&r);
        if (!r.err) rec->u.mmap.filename = rec_string(raw + 40, body - 40, strbuf, strcap, &dmg);
        break;
    case EK_PERF_RECORD_MMAP2:
        rec->u.mmap.pid = pf_r32(&r);
        rec->u.mmap.tid = pf_r32(&r);
        rec->u.mmap.addr = pf_r64(&r);
        rec->u.mmap.len = pf_r64(&r);
        rec->u.mmap.pgoff = pf_r64(&r);
        if (rec->misc & EK_PERF_MISC_MMAP_BUILD_ID) {
            const uint8_t *b = pf_rbytes(&r, 24);
            if (b) {
                rec->u.mmap.has_build_id = 1;
                rec->u.mmap.build_id_size = b[0] <= 20 ? b[0] : 20;
                memcpy(rec->u.mmap.build_id, b + 4, 20);
            }
        } else {
            rec->u.mmap.maj = pf_r32(&r);
            rec->u.mmap.min = pf_r32(&r);
            rec->u.mmap.ino = pf_r64(&r);
            rec->u.mmap.ino_generation = pf_r64(&r);
        }
        rec->u.mmap.prot = pf_r32(&r);
        rec->u.mmap.flags = pf_r32(&r);
        if (!r.err) rec->u.mmap.filename = rec_string(raw + 72, body - 72, strbuf, strcap, &dmg);
        break;
    case EK_PERF_RECORD_COMM:
        rec->u.comm.pid = pf_r32(&r);
        rec->u.comm.tid = pf_r32(&r);
        if (!r.err && body > 16)
            rec->u.comm.comm = rec_string(raw + 16, body - 16, strbuf, strcap, &dmg);
        else
            r.err = 1;
        break;
    case EK_PERF_RECORD_FORK:
    case EK_PERF_RECORD_EXIT:
        rec->u.fork.pid = pf_r32(&r);
        rec->u.fork.ppid = pf_r32(&r);
        rec->u.fork.tid = pf_r32(&r);
        rec->u.fork.ptid = pf_r32(&r);
        rec->u.fork.time = pf_r64(&r);
        break;
    case EK_PERF_RECORD_AUX:
        rec->u.aux.aux_offset = pf_r64(&r);
        rec->u.aux.aux_size = pf_r64(&r);
        rec->u.aux.flags = pf_r64(&r);
        break;
    case EK_PERF_RECORD_ITRACE_START:
        rec->u.itrace_start.pid = pf_r32(&r);
        rec->u.itrace_start.tid = pf_r32(&r);
        break;
    case EK_PERF_RECORD_SWITCH_CPU_WIDE:
        rec->u.sw.next_prev_pid = pf_r32(&r);
        rec->u.sw.next_prev_tid = pf_r32(&r);
        break;
    case EK_PERF_RECORD_AUX_OUTPUT_HW_ID: rec->u.hw_id.hw_id = pf_r64(&r); break;
    case EK_PERF_RECORD_LOST:
        rec->u.lost.id = pf_r64(&r);
        rec->u.lost.lost = pf_r64(&r);
        break;
    case EK_PERF_RECORD_LOST_SAMPLES: rec->u.lost_samples.lost = pf_r64(&r); break;
    case EK_PERF_RECORD_SAMPLE: parse_sample(f, raw, size, rec); break;
    case EK_PERF_RECORD_AUXTRACE:
        rec->u.auxtrace.size = pf_r64(&r);
        rec->u.auxtrace.offset = pf_r64(&r);
        rec->u.auxtrace.reference = pf_r64(&r);
        rec->u.auxtrace.idx = pf_r32(&r);
        rec->u.auxtrace.tid = pf_r32(&r);
        rec->u.auxtrace.cpu = (int32_t)pf_r32(&r);
        rec->payload_size = rec->u.auxtrace.size;
        break;
    case EK_PERF_RECORD_AUXTRACE_INFO:
        rec->u.auxtrace_info.type = pf_r32(&r);
        (void)pf_r32(&r);
        rec->u.auxtrace_info.npriv = body >= 16 ? (body - 16) / 8 : 0;
        break;
    case EK_PERF_RECORD_HEADER_ATTR:
        for (size_t i = 0; i < f->attrs.n; i++)
            if (f->attrs.v[i]->record == rec->index) rec->u.header_attr.attr = f->attrs.v[i];
        if (body < 8 + 64) r.err = 1;
        break;
    case EK_PERF_RECORD_HEADER_FEATURE: rec->u.feature.feat_id = pf_r64(&r); break;
    case EK_PERF_RECORD_HEADER_BUILD_ID:
        rec->u.build_id.pid = (int32_t)pf_r32(&r);
        if (pf_rbytes(&r, 24) && body > 36)
            rec->u.build_id.filename = rec_string(raw + 36, body - 36, strbuf, strcap, &dmg);
        break;
    case EK_PERF_RECORD_HEADER_TRACING_DATA:
        rec->u.tracing_data.size = pf_r32(&r);
        rec->payload_size = ((uint64_t)rec->u.tracing_data.size + 7) & ~7ull;
        break;
    case EK_PERF_RECORD_ID_INDEX:
    case EK_PERF_RECORD_THREAD_MAP:
        rec->u.nr.nr = pf_r64(&r);
        if (!r.err) {
            size_t each = type == EK_PERF_RECORD_ID_INDEX ? 32 : 24;
            if (rec->u.nr.nr > pf_left(&r) / each) r.err = 1;
        }
        break;
    case EK_PERF_RECORD_CPU_MAP: {
        uint16_t t = pf_r16(&r);
        rec->u.cpu_map.type = t;
        if (t == 0) {
            uint16_t nr = pf_r16(&r);
            rec->u.cpu_map.nr = nr;
            if (nr > pf_left(&r) / 2)
                r.err = 1;
            else if (nr) {
                rec->u.cpu_map.start = pf_r16(&r);
                for (uint16_t i = 1; i < nr; i++)
                    rec->u.cpu_map.end = pf_r16(&r);
                if (nr == 1) rec->u.cpu_map.end = rec->u.cpu_map.start;
            }
        } else if (t == 1) {
            rec->u.cpu_map.nr = pf_r16(&r);
            uint16_t long_size = pf_r16(&r);
            if (long_size != 4 && long_size != 8) r.err = 1;
        } else if (t == 2) {
            rec->u.cpu_map.any_cpu = pf_r8(&r);
            (void)pf_r8(&r);
            rec->u.cpu_map.start = pf_r16(&r);
            rec->u.cpu_map.end = pf_r16(&r);
        } else {
            r.err = 1;
        }
        break;
    }
    case EK_PERF_RECORD_TIME_CONV: {
        ek_perf_time_conv *tc = &rec->u.time_conv;
        tc->time_shift = pf_r64(&r);
        tc->time_mult = pf_r64(&r);
        tc->time_zero = pf_r64(&r);
        if (body >= 56) {
            tc->time_cycles = pf_r64(&r);
            tc->time_mask = pf_r64(&r);
            tc->cap_user_time_zero = pf_r8(&r);
            tc->cap_user_time_short = pf_r8(&r);
            tc->have_cycles = 1;
        }
        break;
    }
    case EK_PERF_RECORD_COMPRESSED: rec->u.compressed.data_size = body - 8; break;
    case EK_PERF_RECORD_COMPRESSED2:
        rec->u.compressed.data_size = pf_r64(&r);
        if (!r.err && rec->u.compressed.data_size > body - 16) r.err = 1;
        break;
    default: break;
    }
    if (r.err || dmg) rec->damaged = 1;
    (void)d;
}

/* ---- the iterator ------------------------------------------------------------------- */

typedef struct seg {
    uint64_t stream_pos, file_off;
} seg;

struct ek_perf_iter {
    const ek_perf_file *f;
    ek_perf_file *fw; /* the same object, writable during the indexing pass */
    unsigned flags;
    const ek_diag *diag;
    uint64_t pos; /* next main-stream record */
    uint64_t released; /* file pages before this offset were handed back (release_behind) */
    int64_t index;
    /* COMPRESSED streams */
    ZSTD_DStream *zd;
    const uint8_t *zin;
    size_t zin_len, zin_pos;
    uint64_t zin_off; /* file offset of the COMPRESSED record being consumed */
    int64_t zin_rec;  /* and its record number */
    uint8_t *win;
    size_t wlen, wpos;
    uint64_t wstream; /* stream position of win[wpos] */
    uint64_t zskip;   /* stream bytes still to drop (payload of an in-stream AUXTRACE) */
    uint64_t zout, zin_total;
    int zdisabled; /* decompression budget exhausted */
    int unaligned; /* an unpadded record (or payload) was seen: records may be unaligned */
    seg segs[PF_SEGS];
    unsigned nseg;
    char *strbuf;
};

static void it_diag(ek_perf_iter *it, ek_severity sev, const char *kind, int status, int64_t record,
                    uint64_t offset, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
static void it_diag(ek_perf_iter *it, ek_severity sev, const char *kind, int status, int64_t record,
                    uint64_t offset, const char *fmt, ...)
{
    if (!it->diag || !it->diag->fn) return;
    va_list ap;
    va_start(ap, fmt);
    ek_diag_vemit(it->diag, sev, kind, status, it->f->name, record, (int64_t)offset, -1, fmt, ap);
    va_end(ap);
}

int ek_perf_iter_new(const ek_perf_file *f, unsigned flags, const ek_diag *diag, ek_perf_iter **out)
{
    *out = NULL;
    ek_perf_iter *it = calloc(1, sizeof *it);
    if (!it) return EK_ERR_NOMEM;
    it->f = f;
    it->fw = f->opening ? (ek_perf_file *)f : NULL;
    it->flags = flags;
    it->diag = diag;
    it->pos = f->hdr.data_begin;
    it->strbuf = malloc(PF_STRCAP);
    if (!it->strbuf) {
        free(it);
        return EK_ERR_NOMEM;
    }
    *out = it;
    return 0;
}

void ek_perf_iter_free(ek_perf_iter *it)
{
    if (!it) return;
    if (it->zd) ZSTD_freeDStream(it->zd);
    free(it->win);
    free(it->strbuf);
    free(it);
}

/* Is there a plausible record header at q?  'chain' also requires the following record to be
 * plausible (or the end of the data). */
static int plausible(const ek_perf_file *f, uint64_t q, uint64_t end, int chain)
{
    int swap = f->hdr.swapped;
    if (q > end || end - q < 8) return 0;
    const uint8_t *p = f->data + q;
    uint32_t type = pf_u32(p, swap);
    uint16_t size = pf_u16(p + 6, swap);
    if (!pf_is_known_type(type) || type == 0) return 0;
    if (size < 8 || !size_fits_grid(type, size) || size < min_size(type) || size > end - q)
        return 0;
    if ((type == EK_PERF_RECORD_FINISHED_ROUND || type == EK_PERF_RECORD_FINISHED_INIT) &&
        size != 8)
        return 0;
    uint64_t next = q + size;
    if (type == EK_PERF_RECORD_AUXTRACE) {
        if (size != 48) return 0;
        uint64_t psz = pf_u64(p + 8, swap);
        /* a payload reaching past the end is how a file cut inside its last payload ends: a
         * candidate may be followed by it, but is not one */
        if (psz > end - next) return !chain;
        next += psz;
    }
    if (!chain || next == end) return 1;
    return plausible(f, next, end, 0);
}

/* How many records of types this reader does not know (perf's newer ones, simpleperf's) may
 * stand in a row before a known one; a longer run is taken for records too. */
#define PF_UNKNOWN_RUN 8

/* Do records go on at q: the end of the data, a plausible record, or a run of records of
 * unknown types (nonzero, with sizes that fit) leading to one of these? Tells an unknown record
 * type from garbage that the reader landed on after a wrong size. */
static int records_follow(const ek_perf_file *f, uint64_t q, uint64_t end)
{
    int swap = f->hdr.swapped;
    for (unsigned k = 0; k < PF_UNKNOWN_RUN; k++) {
        if (q == end || plausible(f, q, end, 0)) return 1;
        if (q > end || end - q < 8) return 0;
        uint32_t type = pf_u32(f->data + q, swap);
        uint16_t size = pf_u16(f->data + q + 6, swap);
        if (type == 0 || pf_is_known_type(type) || size < 8 || size % 8 || size > end - q) return 0;
        q += size;
    }
    return 1;
}

/* The first offset where a record may start after damage at p: the record at p had at least
 * its 8-byte header, and while every record so far was padded, records stay on the 8-byte grid
 * (once an unpadded one was seen, any offset). */
static uint64_t resync_start(const ek_perf_iter *it, uint64_t p)
{
    return p + (it->unaligned ? 1 : 8);
}

/* The next plausible record at 'first' or after it (every 8 bytes; every byte once unpadded
 * records were seen); the end of the data when there is none. */
static uint64_t resync_scan(const ek_perf_iter *it, uint64_t first)
{
    const ek_perf_file *f = it->f;
    uint64_t end = f->hdr.data_end;
    uint64_t q = first;
    while (q < end && end - q >= 8) {
        if (plausible(f, q, end, 1)) break;
        q += it->unaligned ? 1 : 8;
    }
    if (q > end || end - q < 8) q = end;
    return q;
}

/* Count and report the skip from 'first' to q (resync_scan's answer) after damage at 'from';
 * returns q. */
static uint64_t resync_report(ek_perf_iter *it, uint64_t from, uint64_t first, uint64_t q)
{
    uint64_t end = it->f->hdr.data_end;
    uint64_t skipped = q - first;
    /* a zstd frame cut by the damage cannot go on in the next COMPRESSED record: that one's
     * bytes would be read as the rest of the frame (its magic as the checksum) and dropped */
    if (it->zd) ZSTD_DCtx_reset(it->zd, ZSTD_reset_session_only);
    if (it->fw) {
        it->fw->stats.resyncs++;
        it->fw->stats.bytes_skipped += skipped;
    }
    if (q < end)
        it_diag(it, EK_SEV_NOTE, "perf.resync", 0, it->index, from,
                "skipped %llu bytes after the damaged record; records continue at offset 0x%llx",
                (unsigned long long)skipped, (unsigned long long)q);
    else
        it_diag(it, EK_SEV_NOTE, "perf.resync", 0, it->index, from,
                "no further record found after the damage (%llu bytes to the end skipped)",
                (unsigned long long)skipped);
    return q;
}

/* Find the next plausible record after damage at 'from', from 'first' on; count and report
 * the skip. Returns its offset or the end of the data. */
static uint64_t resync(ek_perf_iter *it, uint64_t from, uint64_t first)
{
    return resync_report(it, from, first, resync_scan(it, first));
}

static void count_damage(ek_perf_iter *it)
{
    if (it->fw) it->fw->stats.damaged++;
}

/* Main-stream record at it->pos. Returns 1 with rec filled, 0 at the end. */
static int main_next(ek_perf_iter *it, ek_perf_record *rec)
{
    const ek_perf_file *f = it->f;
    int swap = f->hdr.swapped;
    uint64_t end = f->hdr.data_end;
    for (;;) {
        uint64_t p = it->pos;
        if (p >= end) return 0;
        if (end - p < 8) {
            it_diag(it, EK_SEV_WARN, "perf.truncated", EK_ERR_TRUNCATED, it->index, p,
                    "%llu bytes at the end of the data are too short for a record header",
                    (unsigned long long)(end - p));
            count_damage(it);
            it->pos = end;
            return 0;
        }
        const uint8_t *raw = f->data + p;
        uint32_t type = pf_u32(raw, swap);
        uint16_t size = pf_u16(raw + 6, swap);
        if (size < 8) {
            it_diag(it, EK_SEV_WARN, "perf.bad-size", EK_ERR_FORMAT, it->index, p,
                    "%s record (type %u) with size %u < 8", ek_perf_record_name(type), type, size);
            count_damage(it);
            it->pos = resync(it, p, resync_start(it, p));
            continue;
        }
        if (size > end - p) {
            it_diag(it, EK_SEV_WARN, "perf.truncated", EK_ERR_TRUNCATED, it->index, p,
                    "%s record (type %u) of %u bytes reaches past the end of the data (%llu "
                    "bytes left)",
                    ek_perf_record_name(type), type, size, (unsigned long long)(end - p));
            count_damage(it);
            it->pos = resync(it, p, resync_start(it, p));
            continue;
        }
        if (!size_fits_grid(type, size)) {
            /* taken as it is, the size would put the reader between records */
            it_diag(it, EK_SEV_WARN, "perf.bad-size", EK_ERR_FORMAT, it->index, p,
                    "%s record (type %u) with size %u, not a multiple of 8",
                    ek_perf_record_name(type), type, size);
            count_damage(it);
            it->pos = resync(it, p, resync_start(it, p));
            continue;
        }
        if (type == 0 || (!pf_is_known_type(type) && !records_follow(f, p + size, end))) {
            /* no record has type 0; an unknown type that no record follows is garbage that a
             * wrong size led to, not a record to skip by its size */
            it_diag(it, EK_SEV_WARN, "perf.not-a-record", EK_ERR_FORMAT, it->index, p,
                    type ? "no record here: type %u with size %u, and no record after it"
                         : "no record here: type %u (size %u)",
                    type, size);
            count_damage(it);
            it->pos = resync(it, p, resync_start(it, p));
            continue;
        }
        if (size % 8) it->unaligned = 1;
        uint64_t next = p + size;
        uint64_t payload = 0, avail = 0;
        uint64_t resume = 0; /* the payload reaches past the end: where records go on */
        int payload_bad = 0;
        if (type == EK_PERF_RECORD_AUXTRACE || type == EK_PERF_RECORD_HEADER_TRACING_DATA) {
            if (type == EK_PERF_RECORD_AUXTRACE && size >= 16)
                payload = pf_u64(raw + 8, swap);
            else if (type == EK_PERF_RECORD_HEADER_TRACING_DATA && size >= 12)
                payload = ((uint64_t)pf_u32(raw + 8, swap) + 7) & ~7ull;
            avail = payload <= end - next ? payload : end - next;
            if (payload > end - next) {
                /* the file was cut inside the payload, or the size field is damaged: then the
                 * scan finds records inside the declared payload, and the payload ends where
                 * they begin (the bytes after it are theirs, and later buffers') */
                resume = resync_scan(it, next);
                payload_bad = 1;
                if (resume < end) {
                    avail = resume - next;
                    it_diag(it, EK_SEV_WARN, "perf.bad-size", EK_ERR_FORMAT, it->index, p,
                            "%s payload of %llu bytes reaches past the end of the data (%llu "
                            "present), and a record follows at 0x%llx: the %llu bytes up to it "
                            "are kept as the payload",
                            ek_perf_record_name(type), (unsigned long long)payload,
                            (unsigned long long)(end - next), (unsigned long long)resume,
                            (unsigned long long)avail);
                    if (it->fw) it->fw->stats.resyncs++;
                } else {
                    it_diag(it, EK_SEV_WARN, "perf.truncated", EK_ERR_TRUNCATED, it->index, p,
                            "%s payload of %llu bytes reaches past the end of the data (%llu "
                            "present)",
                            ek_perf_record_name(type), (unsigned long long)payload,
                            (unsigned long long)avail);
                }
            }
            if (avail % 8) it->unaligned = 1; /* perf pads payloads; another writer may not */
        }
        if (type == EK_PERF_RECORD_AUXTRACE && size != 48)
            /* perf reads the payload after the header's size, whatever it is (so does this
             * reader); a header that is not perf's 48 bytes is damage, and the trace is then
             * read from the wrong place */
            it_diag(it, EK_SEV_WARN, "perf.bad-size", EK_ERR_FORMAT, it->index, p,
                    "AUXTRACE record header of %u bytes, not 48: its payload is read after the "
                    "%u",
                    (unsigned)size, (unsigned)size);
        rec->index = it->index; /* HEADER_ATTR finds its attribute by it */
        pf_decode_record(f, it->diag, raw, size, rec, it->strbuf, PF_STRCAP);
        rec->offset = p;
        rec->compressed = 0;
        rec->stream_offset = 0;
        if (type == EK_PERF_RECORD_AUXTRACE || type == EK_PERF_RECORD_HEADER_TRACING_DATA) {
            rec->payload_offset = (int64_t)next;
            rec->payload_size = payload;
            rec->payload_avail = avail;
        }
        if (payload_bad) {
            /* payload_avail < payload_size tells the consumer: the declared payload is cut by
             * the end of the file, or (payload_offset + payload_avail before the end of the
             * data) by the records found inside it */
            it->pos = resume < end ? resume : resync_report(it, p, next, resume);
        } else {
            it->pos = next + payload;
        }
        return 1;
    }
}

static void seg_push(ek_perf_iter *it, uint64_t stream_pos, uint64_t file_off)
{
    if (it->nseg && it->segs[it->nseg - 1].file_off == file_off) return;
    if (it->nseg == PF_SEGS) {
        memmove(it->segs, it->segs + 1, (PF_SEGS - 1) * sizeof *it->segs);
        it->nseg--;
    }
    it->segs[it->nseg].stream_pos = stream_pos;
    it->segs[it->nseg].file_off = file_off;
    it->nseg++;
}

static uint64_t seg_lookup(const ek_perf_iter *it, uint64_t stream_pos)
{
    uint64_t off = it->nseg ? it->segs[0].file_off : it->zin_off;
    for (unsigned i = 0; i < it->nseg; i++)
        if (it->segs[i].stream_pos <= stream_pos) off = it->segs[i].file_off;
    return off;
}

static void z_drop_stream(ek_perf_iter *it)
{
    it->wstream += it->wlen - it->wpos;
    it->wlen = it->wpos = 0;
    it->zin_pos = it->zin_len;
    it->zskip = 0;
    if (it->zd) ZSTD_DCtx_reset(it->zd, ZSTD_reset_session_only);
}

/* Decompress more of the current COMPRESSED input into the window. 1: progress made. */
static int z_fill(ek_perf_iter *it)
{
    if (it->zin_pos >= it->zin_len || it->zdisabled) return 0;
    if (it->wpos) {
        memmove(it->win, it->win + it->wpos, it->wlen - it->wpos);
        it->wlen -= it->wpos;
        it->wpos = 0;
    }
    if (it->wlen == PF_WIN_CAP) return 0;
    ZSTD_inBuffer in = {it->zin, it->zin_len, it->zin_pos};
    ZSTD_outBuffer out = {it->win, PF_WIN_CAP, it->wlen};
    size_t r = ZSTD_decompressStream(it->zd, &out, &in);
    if (ZSTD_isError(r)) {
        it_diag(it, EK_SEV_WARN, "perf.zstd", EK_ERR_FORMAT, it->zin_rec, it->zin_off,
                "zstd: %s; rest of the compressed stream up to the next COMPRESSED record "
                "dropped",
                ZSTD_getErrorName(r));
        count_damage(it);
        z_drop_stream(it);
        return 0;
    }
    size_t produced = out.pos - it->wlen;
    size_t consumed = in.pos - it->zin_pos;
    if (produced) seg_push(it, it->wstream + it->wlen, it->zin_off);
    it->zin_total += consumed;
    it->zout += produced;
    it->wlen = out.pos;
    it->zin_pos = in.pos;
    if (it->zout > PF_ZOUT_FLOOR && it->zout / PF_ZOUT_RATIO > it->zin_total) {
        it_diag(it, EK_SEV_WARN, "perf.zstd-limit", EK_ERR_LIMIT, it->zin_rec, it->zin_off,
                "compressed records expand more than %llu times (past the first %llu MiB); "
                "decompression stopped, the rest of the compressed records is not read",
                (unsigned long long)PF_ZOUT_RATIO, (unsigned long long)(PF_ZOUT_FLOOR >> 20));
        it->zdisabled = 1;
        z_drop_stream(it);
        return 0;
    }
    return produced || consumed;
}

/* A complete record from the window. 1: rec filled; 0: need more input. */
static int z_take(ek_perf_iter *it, ek_perf_record *rec)
{
    const ek_perf_file *f = it->f;
    for (;;) {
        size_t avail = it->wlen - it->wpos;
        if (it->zskip) {
            size_t n = avail < it->zskip ? avail : (size_t)it->zskip;
            it->wpos += n;
            it->wstream += n;
            it->zskip -= n;
            if (it->zskip) return 0;
            continue;
        }
        if (avail < 8) return 0;
        const uint8_t *raw = it->win + it->wpos;
        uint16_t size = pf_u16(raw + 6, f->hdr.swapped);
        if (size < 8) {
            uint32_t type = pf_u32(raw, f->hdr.swapped);
            it_diag(it, EK_SEV_WARN, "perf.bad-size", EK_ERR_FORMAT, it->index,
                    seg_lookup(it, it->wstream),
                    "compressed stream position 0x%llx: %s record (type %u) with size %u < 8; "
                    "rest of the stream up to the next COMPRESSED record dropped",
                    (unsigned long long)it->wstream, ek_perf_record_name(type), type, size);
            count_damage(it);
            z_drop_stream(it);
            return 0;
        }
        if (avail < size) return 0;
        rec->index = it->index; /* HEADER_ATTR finds its attribute by it */
        pf_decode_record(f, it->diag, raw, size, rec, it->strbuf, PF_STRCAP);
        rec->offset = seg_lookup(it, it->wstream);
        rec->compressed = 1;
        rec->stream_offset = it->wstream;
        it->wpos += size;
        it->wstream += size;
        if (rec->payload_size) {
            /* AUXTRACE / TRACING_DATA inside compressed data: not addressable in the file */
            it_diag(it, EK_SEV_WARN, "perf.compressed-payload", EK_ERR_UNSUPPORTED, it->index,
                    rec->offset, "%s inside compressed data: its %llu-byte payload is skipped",
                    ek_perf_record_name(rec->type), (unsigned long long)rec->payload_size);
            it->zskip = rec->payload_size;
            rec->payload_avail = 0;
        }
        return 1;
    }
}

static int start_compressed(ek_perf_iter *it, const ek_perf_record *rec)
{
    if (!it->zd) {
        it->zd = ZSTD_createDStream();
        it->win = malloc(PF_WIN_CAP);
        if (!it->zd || !it->win) return EK_ERR_NOMEM;
        ZSTD_initDStream(it->zd);
    }
    size_t hdr = rec->type == EK_PERF_RECORD_COMPRESSED2 ? 16 : 8;
    size_t len = rec->size - hdr;
    if (rec->type == EK_PERF_RECORD_COMPRESSED2 && rec->u.compressed.data_size < len)
        len = (size_t)rec->u.compressed.data_size;
    it->zin = rec->raw + hdr;
    it->zin_len = len;
    it->zin_pos = 0;
    it->zin_off = rec->offset;
    it->zin_rec = rec->index;
    return 0;
}

static void finish_stats(ek_perf_iter *it, const ek_perf_record *rec)
{
    ek_perf_file *f = it->fw;
    if (!f) return;
    f->stats.records++;
    if (rec->compressed) f->stats.compressed_records++;
    if (rec->type < EK_PERF_RECORD_USER_MAX && pf_is_known_type(rec->type))
        f->stats.by_type[rec->type]++;
    else if (rec->type >= EK_PERF_RECORD_SIMPLEPERF_FIRST)
        f->stats.simpleperf++;
    else
        f->stats.unknown++;
    if (rec->damaged) f->stats.damaged++;
}

static void report_record(ek_perf_iter *it, const ek_perf_record *rec)
{
    if (rec->type >= EK_PERF_RECORD_SIMPLEPERF_FIRST) {
        if (it->fw && !it->fw->note_simpleperf_once) {
            it->fw->note_simpleperf_once = 1;
            it_diag(it, EK_SEV_NOTE, "perf.simpleperf-record", 0, rec->index, rec->offset,
                    "simpleperf-private record type %u skipped (Linux perf rejects these)",
                    rec->type);
        }
    } else if (!pf_is_known_type(rec->type)) {
        it_diag(it, EK_SEV_WARN, "perf.unknown-record", EK_ERR_UNSUPPORTED, rec->index, rec->offset,
                "unknown record type %u (%u bytes) skipped", rec->type, rec->size);
    } else if (rec->damaged && rec->payload_avail == rec->payload_size) {
        it_diag(it, EK_SEV_WARN, "perf.bad-record", EK_ERR_FORMAT, rec->index, rec->offset,
                "%s record of %u bytes is malformed (fields too short for its size%s)",
                ek_perf_record_name(rec->type), rec->size,
                rec->compressed ? ", in compressed data" : "");
    }
}

/* A walk over the records touches a page in every few of a large recording (a record header
 * between AUX data, and the kernel maps pages around each one it faults in): 65 MB resident
 * after opening a 1 GiB recording, before any trace was decoded. The walk does not come back,
 * so the pages of our mapping of the file behind the record at 'off' are handed back every
 * PF_RELEASE_STEP bytes. Whatever still points into them (names in records) reads them back
 * from the file; a copy in memory (pipes, ek_perf_open_mem) is never released. */
#define PF_RELEASE_STEP (8u << 20)
static void release_behind(ek_perf_iter *it, uint64_t off)
{
    const ek_perf_file *f = it->f;
    if (off < it->released || off - it->released < PF_RELEASE_STEP || off > f->size) return;
    /* whole pages before the record's own (ek_perf_release rounds outwards) */
    long psz = sysconf(_SC_PAGESIZE);
    uint64_t pg = psz > 0 ? (uint64_t)psz : 4096;
    uint64_t a = (it->released + pg - 1) / pg * pg, e = off / pg * pg;
    if (e > a) ek_perf_release(f, f->data + a, (size_t)(e - a));
    it->released = off;
}

int ek_perf_iter_next(ek_perf_iter *it, ek_perf_record *rec)
{
    for (;;) {
        int have = 0;
        if (it->zin || it->wlen > it->wpos) {
            for (;;) {
                if (z_take(it, rec)) {
                    have = 1;
                    break;
                }
                if (!z_fill(it)) break;
            }
        }
        if (!have) {
            if (!main_next(it, rec)) {
                if (it->wlen > it->wpos)
                    it_diag(it, EK_SEV_WARN, "perf.truncated", EK_ERR_TRUNCATED, it->index,
                            it->zin_off,
                            "compressed stream ends inside a record (%zu bytes dropped)",
                            it->wlen - it->wpos);
                it->wlen = it->wpos = 0;
                return EK_ERR_EOS;
            }
            release_behind(it, rec->offset);
            if (rec->type == EK_PERF_RECORD_COMPRESSED || rec->type == EK_PERF_RECORD_COMPRESSED2) {
                if (!rec->damaged) {
                    rec->index = it->index;
                    int rc = start_compressed(it, rec);
                    if (rc) return rc;
                }
            } else if (it->wlen > it->wpos || it->zskip) {
                it_diag(it, EK_SEV_WARN, "perf.truncated", EK_ERR_TRUNCATED, it->index, it->zin_off,
                        "compressed stream ends inside a record (%zu bytes dropped)",
                        it->wlen - it->wpos);
                it->wstream += it->wlen - it->wpos;
                it->wlen = it->wpos = 0;
                it->zskip = 0;
            }
            if (it->zin && it->zin_pos >= it->zin_len && rec->type != EK_PERF_RECORD_COMPRESSED &&
                rec->type != EK_PERF_RECORD_COMPRESSED2)
                it->zin = NULL;
        }
        rec->index = it->index++;
        report_record(it, rec);
        finish_stats(it, rec);
        if ((it->flags & EK_PERF_ITER_SIDEBAND) && !ek_perf_is_sideband(rec->type)) continue;
        return 0;
    }
}
