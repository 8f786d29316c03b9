/* Text and JSON listings of perf.data files (etmkit dump FILE). */
#include <inttypes.h>
#include <string.h>

#include "etmkit/perf_dump.h"

#define X(v) ((unsigned long long)(v))

/* Text strings from the file: printable ASCII, the rest escaped. */
static void text_string(ek_sbuf *out, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p < 0x20 || *p >= 0x7f || *p == '\\')
            ek_sbuf_printf(out, "\\x%02x", *p);
        else
            ek_sbuf_putc(out, (char)*p);
    }
}

static void str_any(ek_sbuf *out, const char *s, int json)
{
    if (json)
        ek_json_string(out, s);
    else
        text_string(out, s);
}

static const struct {
    uint64_t bit;
    const char *name;
} sample_bits[] = {
    {1ull << 0, "IP"},         {1ull << 1, "TID"},         {1ull << 2, "TIME"},
    {1ull << 3, "ADDR"},       {1ull << 4, "READ"},        {1ull << 5, "CALLCHAIN"},
    {1ull << 6, "ID"},         {1ull << 7, "CPU"},         {1ull << 8, "PERIOD"},
    {1ull << 9, "STREAM_ID"},  {1ull << 10, "RAW"},        {1ull << 11, "BRANCH_STACK"},
    {1ull << 12, "REGS_USER"}, {1ull << 13, "STACK_USER"}, {1ull << 14, "WEIGHT"},
    {1ull << 15, "DATA_SRC"},  {1ull << 16, "IDENTIFIER"}, {1ull << 17, "TRANSACTION"},
    {1ull << 18, "REGS_INTR"}, {1ull << 19, "PHYS_ADDR"},  {1ull << 20, "AUX"},
    {1ull << 21, "CGROUP"},
};

static void sample_type_names(ek_sbuf *out, uint64_t st)
{
    int first = 1;
    for (size_t i = 0; i < sizeof sample_bits / sizeof sample_bits[0]; i++)
        if (st & sample_bits[i].bit) {
            ek_sbuf_puts(out, first ? "" : "|");
            ek_sbuf_puts(out, sample_bits[i].name);
            first = 0;
        }
    if (first) ek_sbuf_puts(out, "-");
}

static const char *const flag_names[64] = {
    [0] = "disabled",
    [1] = "inherit",
    [2] = "pinned",
    [3] = "exclusive",
    [4] = "exclude_user",
    [5] = "exclude_kernel",
    [6] = "exclude_hv",
    [7] = "exclude_idle",
    [8] = "mmap",
    [9] = "comm",
    [10] = "freq",
    [11] = "inherit_stat",
    [12] = "enable_on_exec",
    [13] = "task",
    [14] = "watermark",
    [17] = "mmap_data",
    [18] = "sample_id_all",
    [19] = "exclude_host",
    [20] = "exclude_guest",
    [21] = "exclude_callchain_kernel",
    [22] = "exclude_callchain_user",
    [23] = "mmap2",
    [24] = "comm_exec",
    [25] = "use_clockid",
    [26] = "context_switch",
    [27] = "write_backward",
    [28] = "namespaces",
    [29] = "ksymbol",
    [30] = "bpf_event",
    [31] = "aux_output",
    [32] = "cgroup",
    [33] = "text_poke",
    [34] = "build_id",
    [35] = "inherit_thread",
    [36] = "remove_on_exec",
    [37] = "sigtrap",
};

static void flag_list(ek_sbuf *out, uint64_t flags)
{
    int first = 1;
    for (int b = 0; b < 64; b++) {
        if (!(flags >> b & 1)) continue;
        ek_sbuf_puts(out, first ? "" : ",");
        if (b == 15 || b == 16) {
            if (b == 16 && (flags >> 15 & 1)) continue;
            ek_sbuf_printf(out, "precise_ip=%u", (unsigned)(flags >> 15 & 3));
        } else if (flag_names[b]) {
            ek_sbuf_puts(out, flag_names[b]);
        } else {
            ek_sbuf_printf(out, "bit%d", b);
        }
        first = 0;
    }
    if (first) ek_sbuf_puts(out, "-");
}

static void aux_flag_letters(ek_sbuf *out, uint64_t fl)
{
    ek_sbuf_putc(out, '[');
    if (fl & EK_PERF_AUX_FLAG_TRUNCATED) ek_sbuf_putc(out, 'T');
    if (fl & EK_PERF_AUX_FLAG_OVERWRITE) ek_sbuf_putc(out, 'O');
    if (fl & EK_PERF_AUX_FLAG_PARTIAL) ek_sbuf_putc(out, 'P');
    if (fl & EK_PERF_AUX_FLAG_COLLISION) ek_sbuf_putc(out, 'C');
    ek_sbuf_putc(out, ']');
    ek_sbuf_puts(out, (fl & EK_PERF_AUX_FLAG_CORESIGHT_RAW) ? " raw" : " formatted");
}

/* ---- header, attrs, features -------------------------------------------------------- */

static void dump_attr_text(ek_sbuf *out, size_t i, const ek_perf_attr *a)
{
    ek_sbuf_printf(out, "attr %zu: type %u size %u config 0x%llx sample_type 0x%llx (", i, a->type,
                   a->size, X(a->config), X(a->sample_type));
    sample_type_names(out, a->sample_type);
    ek_sbuf_printf(out, ") read_format 0x%llx flags 0x%llx (", X(a->read_format), X(a->flags));
    flag_list(out, a->flags);
    ek_sbuf_printf(out, ") period %llu config1 0x%llx config2 0x%llx", X(a->sample_period),
                   X(a->config1), X(a->config2));
    if (a->size >= 136 || a->config3) ek_sbuf_printf(out, " config3 0x%llx", X(a->config3));
    ek_sbuf_printf(out, " ids %zu:", a->nids);
    for (size_t k = 0; k < a->nids && k < 16; k++)
        ek_sbuf_printf(out, " %llu", X(a->ids[k]));
    if (a->nids > 16) ek_sbuf_puts(out, " ...");
    if (a->record >= 0) ek_sbuf_printf(out, " (HEADER_ATTR record #%lld)", (long long)a->record);
    ek_sbuf_putc(out, '\n');
}

static void dump_attr_json(ek_sbuf *out, const ek_perf_attr *a)
{
    ek_sbuf_printf(out,
                   "{\"type\":%u,\"size\":%u,\"config\":%llu,\"sample_period\":%llu,"
                   "\"sample_type\":%llu,\"read_format\":%llu,\"flags\":%llu,\"config1\":%llu,"
                   "\"config2\":%llu,\"config3\":%llu,\"offset\":%llu,\"record\":%lld,\"ids\":[",
                   a->type, a->size, X(a->config), X(a->sample_period), X(a->sample_type),
                   X(a->read_format), X(a->flags), X(a->config1), X(a->config2), X(a->config3),
                   X(a->offset), (long long)a->record);
    for (size_t k = 0; k < a->nids; k++)
        ek_sbuf_printf(out, "%s%llu", k ? "," : "", X(a->ids[k]));
    ek_sbuf_puts(out, "]}");
}

static void feature_value(ek_sbuf *out, const ek_perf_features *ft, unsigned bit, int json)
{
    switch (bit) {
    case EK_PERF_FEAT_HOSTNAME: str_any(out, ft->hostname, json); break;
    case EK_PERF_FEAT_OSRELEASE: str_any(out, ft->osrelease, json); break;
    case EK_PERF_FEAT_VERSION: str_any(out, ft->version, json); break;
    case EK_PERF_FEAT_ARCH: str_any(out, ft->arch, json); break;
    case EK_PERF_FEAT_CPUDESC: str_any(out, ft->cpudesc, json); break;
    case EK_PERF_FEAT_CPUID: str_any(out, ft->cpuid, json); break;
    case EK_PERF_FEAT_NRCPUS:
        ek_sbuf_printf(out, json ? "{\"avail\":%u,\"online\":%u}" : "avail %u online %u",
                       ft->nr_cpus_avail, ft->nr_cpus_online);
        break;
    case EK_PERF_FEAT_TOTAL_MEM:
        ek_sbuf_printf(out, json ? "%llu" : "%llu kB", X(ft->total_mem_kb));
        break;
    case EK_PERF_FEAT_CMDLINE:
        if (json) ek_sbuf_putc(out, '[');
        for (size_t i = 0; i < ft->ncmdline; i++) {
            if (i) ek_sbuf_putc(out, json ? ',' : ' ');
            str_any(out, ft->cmdline[i], json);
        }
        if (json) ek_sbuf_putc(out, ']');
        break;
    case EK_PERF_FEAT_PMU_MAPPINGS:
        if (json) ek_sbuf_putc(out, '{');
        for (size_t i = 0; i < ft->npmu_mappings; i++) {
            if (json) {
                ek_sbuf_puts(out, i ? "," : "");
                ek_json_string(out, ft->pmu_mappings[i].name);
                ek_sbuf_printf(out, ":%u", ft->pmu_mappings[i].type);
            } else {
                ek_sbuf_puts(out, i ? " " : "");
                text_string(out, ft->pmu_mappings[i].name);
                ek_sbuf_printf(out, "=%u", ft->pmu_mappings[i].type);
            }
        }
        if (json) ek_sbuf_putc(out, '}');
        break;
    case EK_PERF_FEAT_AUXTRACE: {
        const char *kind = ft->index_kind == EK_PERF_INDEX_PERF         ? "perf"
                           : ft->index_kind == EK_PERF_INDEX_SIMPLEPERF ? "simpleperf"
                           : ft->index_kind == EK_PERF_INDEX_BAD        ? "bad"
                                                                        : "none";
        if (json) {
            ek_sbuf_printf(out, "{\"variant\":\"%s\",\"entries\":[", kind);
            for (size_t i = 0; i < ft->nindex; i++)
                ek_sbuf_printf(out, "%s[%llu,%llu]", i ? "," : "", X(ft->index[i].offset),
                               X(ft->index[i].size));
            ek_sbuf_puts(out, "]}");
        } else {
            ek_sbuf_printf(out, "index (%s layout), %zu entries:", kind, ft->nindex);
            for (size_t i = 0; i < ft->nindex; i++)
                ek_sbuf_printf(out, " 0x%llx/%llu", X(ft->index[i].offset), X(ft->index[i].size));
        }
        break;
    }
    case EK_PERF_FEAT_CLOCKID:
        ek_sbuf_printf(out, json ? "{\"res_ns\":%llu}" : "resolution %llu ns",
                       X(ft->clockid_res_ns));
        break;
    case EK_PERF_FEAT_CLOCK_DATA:
        ek_sbuf_printf(out,
                       json ? "{\"version\":%u,\"clockid\":%u,\"tod_ns\":%llu,\"clockid_ns\":%llu}"
                            : "version %u clockid %u tod_ns %llu clockid_ns %llu",
                       ft->clock_data_version, ft->clockid, X(ft->clock_tod_ns),
                       X(ft->clock_clockid_ns));
        break;
    case EK_PERF_FEAT_COMPRESSED:
        ek_sbuf_printf(out,
                       json ? "{\"version\":%u,\"type\":%u,\"level\":%u,\"ratio\":%u,"
                              "\"mmap_len\":%u}"
                            : "version %u type %u level %u ratio %u mmap_len %u",
                       ft->comp_ver, ft->comp_type, ft->comp_level, ft->comp_ratio,
                       ft->comp_mmap_len);
        break;
    case EK_PERF_FEAT_BUILD_ID:
        if (json)
            ek_sbuf_putc(out, '[');
        else
            ek_sbuf_printf(out, "%zu entries", ft->nbuild_ids);
        for (size_t i = 0; i < ft->nbuild_ids; i++) {
            const ek_perf_build_id *b = &ft->build_ids[i];
            if (json) {
                ek_sbuf_printf(out, "%s{\"pid\":%d,\"build_id\":\"", i ? "," : "", b->pid);
                for (unsigned k = 0; k < b->size; k++)
                    ek_sbuf_printf(out, "%02x", b->id[k]);
                ek_sbuf_puts(out, "\",\"filename\":");
                ek_json_string(out, b->filename);
                ek_sbuf_putc(out, '}');
            } else {
                ek_sbuf_puts(out, "\n  build-id ");
                for (unsigned k = 0; k < b->size; k++)
                    ek_sbuf_printf(out, "%02x", b->id[k]);
                ek_sbuf_printf(out, " pid %d ", b->pid);
                text_string(out, b->filename);
            }
        }
        if (json) ek_sbuf_putc(out, ']');
        break;
    case EK_PERF_FEAT_SP_META_INFO:
        if (json)
            ek_sbuf_putc(out, '{');
        else
            ek_sbuf_printf(out, "%zu entries", ft->nmeta_info / 2);
        for (size_t i = 0; i + 1 < ft->nmeta_info; i += 2) {
            if (json) {
                ek_sbuf_puts(out, i ? "," : "");
                ek_json_string(out, ft->meta_info[i]);
                ek_sbuf_putc(out, ':');
                ek_json_string(out, ft->meta_info[i + 1]);
            } else {
                ek_sbuf_puts(out, "\n  ");
                text_string(out, ft->meta_info[i]);
                ek_sbuf_puts(out, " = ");
                text_string(out, ft->meta_info[i + 1]);
            }
        }
        if (json) ek_sbuf_putc(out, '}');
        break;
    default: ek_sbuf_puts(out, json ? "null" : "(not decoded)");
    }
}

void ek_perf_dump_file(ek_sbuf *out, const ek_perf_file *f, ek_perf_dump_format fmt)
{
    const ek_perf_header_info *h = ek_perf_header(f);
    const ek_perf_features *ft = ek_perf_features_get(f);
    size_t na = ek_perf_nattrs(f), nfs = ek_perf_nfeature_sections(f);
    int json = fmt == EK_PERF_DUMP_JSON;
    if (json) {
        ek_sbuf_puts(out, "\"header\":{\"file\":");
        ek_json_string(out, ek_perf_name(f));
        ek_sbuf_printf(out,
                       ",\"file_size\":%llu,\"byte_order\":\"%s\",\"pipe\":%s,\"header_size\":%llu,"
                       "\"attr_size\":%llu,\"attrs\":[%llu,%llu],\"data\":[%llu,%llu],"
                       "\"event_types\":[%llu,%llu],\"features\":[%llu,%llu,%llu,%llu]},\n",
                       X(h->file_size), h->swapped ? "big" : "little", h->pipe ? "true" : "false",
                       X(h->header_size), X(h->attr_size), X(h->attrs.offset), X(h->attrs.size),
                       X(h->data.offset), X(h->data.size), X(h->event_types.offset),
                       X(h->event_types.size), X(h->features[0]), X(h->features[1]),
                       X(h->features[2]), X(h->features[3]));
        ek_sbuf_puts(out, "\"attrs\":[");
        for (size_t i = 0; i < na; i++) {
            ek_sbuf_puts(out, i ? ",\n" : "\n");
            dump_attr_json(out, ek_perf_attr_at(f, i));
        }
        ek_sbuf_puts(out, "],\n\"features\":[");
        for (size_t i = 0; i < nfs; i++) {
            const ek_perf_feature_section *s = ek_perf_feature_section_at(f, i);
            const char *name = ek_perf_feature_name(s->bit);
            ek_sbuf_printf(out, "%s{\"bit\":%u,\"name\":", i ? ",\n" : "\n", s->bit);
            if (name)
                ek_json_string(out, name);
            else
                ek_sbuf_puts(out, "null");
            ek_sbuf_printf(out, ",\"offset\":%llu,\"size\":%llu,\"status\":\"%s\",\"value\":",
                           X(s->offset), X(s->size),
                           s->parsed > 0    ? "ok"
                           : s->parsed == 0 ? "skipped"
                                            : "damaged");
            if (s->parsed > 0)
                feature_value(out, ft, s->bit, 1);
            else
                ek_sbuf_puts(out, "null");
            ek_sbuf_putc(out, '}');
        }
        ek_sbuf_puts(out, "]");
        return;
    }
    ek_sbuf_puts(out, "# file: ");
    text_string(out, ek_perf_name(f));
    ek_sbuf_printf(out, " (%llu bytes, %s-endian, %s)\n", X(h->file_size),
                   h->swapped ? "big" : "little", h->pipe ? "pipe mode" : "file mode");
    if (h->pipe)
        ek_sbuf_printf(out, "# header: size %llu; data 0x%llx..0x%llx\n", X(h->header_size),
                       X(h->data_begin), X(h->data_end));
    else
        ek_sbuf_printf(out,
                       "# header: size %llu, attr_size %llu, attrs 0x%llx+0x%llx, data "
                       "0x%llx+0x%llx, event_types 0x%llx+0x%llx\n",
                       X(h->header_size), X(h->attr_size), X(h->attrs.offset), X(h->attrs.size),
                       X(h->data.offset), X(h->data.size), X(h->event_types.offset),
                       X(h->event_types.size));
    ek_sbuf_puts(out, "# features:");
    for (unsigned b = 0; b < 256; b++)
        if (h->features[b / 64] >> (b % 64) & 1) {
            const char *name = ek_perf_feature_name(b);
            if (name)
                ek_sbuf_printf(out, " %s", name);
            else
                ek_sbuf_printf(out, " FEAT_%u", b);
        }
    ek_sbuf_putc(out, '\n');
    for (size_t i = 0; i < na; i++)
        dump_attr_text(out, i, ek_perf_attr_at(f, i));
    for (size_t i = 0; i < nfs; i++) {
        const ek_perf_feature_section *s = ek_perf_feature_section_at(f, i);
        const char *name = ek_perf_feature_name(s->bit);
        if (name)
            ek_sbuf_printf(out, "feature %s (%u) @0x%llx+0x%llx: ", name, s->bit, X(s->offset),
                           X(s->size));
        else
            ek_sbuf_printf(out, "feature FEAT_%u @0x%llx+0x%llx: ", s->bit, X(s->offset),
                           X(s->size));
        if (s->parsed > 0)
            feature_value(out, ft, s->bit, 0);
        else
            ek_sbuf_puts(out, s->parsed == 0 ? "(not decoded)" : "(damaged)");
        ek_sbuf_putc(out, '\n');
    }
}

/* ---- records ------------------------------------------------------------------------ */

static void sid_text(ek_sbuf *out, const ek_perf_sample_id *s)
{
    if (!s->present) return;
    ek_sbuf_puts(out, " {");
    const char *sep = "";
    if (s->present & EK_PERF_SAMPLE_TID) {
        ek_sbuf_printf(out, "%s%u/%u", sep, s->pid, s->tid);
        sep = " ";
    }
    if (s->present & EK_PERF_SAMPLE_TIME) {
        ek_sbuf_printf(out, "%stime %llu", sep, X(s->time));
        sep = " ";
    }
    if (s->present & EK_PERF_SAMPLE_CPU) {
        ek_sbuf_printf(out, "%scpu %u", sep, s->cpu);
        sep = " ";
    }
    if (s->present & (EK_PERF_SAMPLE_ID | EK_PERF_SAMPLE_IDENTIFIER)) {
        ek_sbuf_printf(out, "%sid %llu", sep, X(s->id));
        sep = " ";
    }
    if (s->present & EK_PERF_SAMPLE_STREAM_ID)
        ek_sbuf_printf(out, "%sstream %llu", sep, X(s->stream_id));
    ek_sbuf_putc(out, '}');
}

static void sid_json(ek_sbuf *out, const ek_perf_sample_id *s)
{
    if (!s->present) return;
    ek_sbuf_puts(out, ",\"sample_id\":{");
    const char *sep = "";
    if (s->present & EK_PERF_SAMPLE_TID) {
        ek_sbuf_printf(out, "\"pid\":%u,\"tid\":%u", s->pid, s->tid);
        sep = ",";
    }
    if (s->present & EK_PERF_SAMPLE_TIME) {
        ek_sbuf_printf(out, "%s\"time\":%llu", sep, X(s->time));
        sep = ",";
    }
    if (s->present & EK_PERF_SAMPLE_CPU) {
        ek_sbuf_printf(out, "%s\"cpu\":%u", sep, s->cpu);
        sep = ",";
    }
    if (s->present & (EK_PERF_SAMPLE_ID | EK_PERF_SAMPLE_IDENTIFIER)) {
        ek_sbuf_printf(out, "%s\"id\":%llu", sep, X(s->id));
        sep = ",";
    }
    if (s->present & EK_PERF_SAMPLE_STREAM_ID)
        ek_sbuf_printf(out, "%s\"stream_id\":%llu", sep, X(s->stream_id));
    ek_sbuf_putc(out, '}');
}

static void prot_text(ek_sbuf *out, uint32_t prot, uint32_t flags)
{
    ek_sbuf_putc(out, prot & 1 ? 'r' : '-');
    ek_sbuf_putc(out, prot & 2 ? 'w' : '-');
    ek_sbuf_putc(out, prot & 4 ? 'x' : '-');
    ek_sbuf_putc(out, flags & 1 ? 's' : 'p');
}

/* Fields of a record: text ("k v" pairs) or JSON members (leading comma). */
static void record_fields(ek_sbuf *out, const ek_perf_record *r, int json)
{
    const char *fs = json ? ",\"%s\":%llu" : " %s %llu";
    const char *fx = json ? ",\"%s\":%llu" : " %s 0x%llx";
#define FD(name, v) ek_sbuf_printf(out, fs, name, X(v))
#define FX(name, v) ek_sbuf_printf(out, fx, name, X(v))
#define FS(name, s)                                                                                \
    do {                                                                                           \
        ek_sbuf_printf(out, json ? ",\"%s\":" : " %s ", name);                                     \
        str_any(out, (s) ? (s) : "", json);                                                        \
    } while (0)
    switch (r->type) {
    case EK_PERF_RECORD_MMAP:
    case EK_PERF_RECORD_MMAP2:
        if (!json) {
            ek_sbuf_printf(out, " %u/%u: [0x%llx(0x%llx) @ 0x%llx", r->u.mmap.pid, r->u.mmap.tid,
                           X(r->u.mmap.addr), X(r->u.mmap.len), X(r->u.mmap.pgoff));
            if (r->type == EK_PERF_RECORD_MMAP2) {
                if (r->u.mmap.has_build_id) {
                    ek_sbuf_puts(out, " build-id ");
                    for (unsigned k = 0; k < r->u.mmap.build_id_size; k++)
                        ek_sbuf_printf(out, "%02x", r->u.mmap.build_id[k]);
                } else {
                    ek_sbuf_printf(out, " %02x:%02x %llu %llu", r->u.mmap.maj, r->u.mmap.min,
                                   X(r->u.mmap.ino), X(r->u.mmap.ino_generation));
                }
                ek_sbuf_puts(out, "]: ");
                prot_text(out, r->u.mmap.prot, r->u.mmap.flags);
                ek_sbuf_putc(out, ' ');
            } else {
                ek_sbuf_puts(out, "]: ");
            }
            text_string(out, r->u.mmap.filename);
        } else {
            FD("pid", r->u.mmap.pid);
            FD("tid", r->u.mmap.tid);
            FD("addr", r->u.mmap.addr);
            FD("len", r->u.mmap.len);
            FD("pgoff", r->u.mmap.pgoff);
            if (r->type == EK_PERF_RECORD_MMAP2) {
                if (r->u.mmap.has_build_id) {
                    ek_sbuf_puts(out, ",\"build_id\":\"");
                    for (unsigned k = 0; k < r->u.mmap.build_id_size; k++)
                        ek_sbuf_printf(out, "%02x", r->u.mmap.build_id[k]);
                    ek_sbuf_putc(out, '"');
                } else {
                    FD("maj", r->u.mmap.maj);
                    FD("min", r->u.mmap.min);
                    FD("ino", r->u.mmap.ino);
                    FD("ino_generation", r->u.mmap.ino_generation);
                }
                FD("prot", r->u.mmap.prot);
                FD("flags", r->u.mmap.flags);
            }
            FS("filename", r->u.mmap.filename);
        }
        break;
    case EK_PERF_RECORD_COMM:
        if (!json) {
            ek_sbuf_puts(out, " ");
            text_string(out, r->u.comm.comm);
            ek_sbuf_printf(out, ":%u/%u%s", r->u.comm.pid, r->u.comm.tid,
                           r->misc & EK_PERF_MISC_COMM_EXEC ? " exec" : "");
        } else {
            FD("pid", r->u.comm.pid);
            FD("tid", r->u.comm.tid);
            FS("comm", r->u.comm.comm);
            FD("exec", !!(r->misc & EK_PERF_MISC_COMM_EXEC));
        }
        break;
    case EK_PERF_RECORD_FORK:
    case EK_PERF_RECORD_EXIT:
        if (!json)
            ek_sbuf_printf(out, " %u:%u (ppid %u:%u) time %llu", r->u.fork.pid, r->u.fork.tid,
                           r->u.fork.ppid, r->u.fork.ptid, X(r->u.fork.time));
        else {
            FD("pid", r->u.fork.pid);
            FD("ppid", r->u.fork.ppid);
            FD("tid", r->u.fork.tid);
            FD("ptid", r->u.fork.ptid);
            FD("time", r->u.fork.time);
        }
        break;
    case EK_PERF_RECORD_AUX:
        FX("offset", r->u.aux.aux_offset);
        FX("size", r->u.aux.aux_size);
        FX("flags", r->u.aux.flags);
        if (!json) {
            ek_sbuf_putc(out, ' ');
            aux_flag_letters(out, r->u.aux.flags);
        }
        break;
    case EK_PERF_RECORD_ITRACE_START:
        FD("pid", r->u.itrace_start.pid);
        FD("tid", r->u.itrace_start.tid);
        break;
    case EK_PERF_RECORD_SWITCH:
    case EK_PERF_RECORD_SWITCH_CPU_WIDE:
        if (!json)
            ek_sbuf_printf(out, " %s%s", r->misc & EK_PERF_MISC_SWITCH_OUT ? "OUT" : "IN",
                           (r->misc & EK_PERF_MISC_SWITCH_OUT) &&
                                   (r->misc & EK_PERF_MISC_SWITCH_OUT_PREEMPT)
                               ? " preempt"
                               : "");
        else {
            FD("out", !!(r->misc & EK_PERF_MISC_SWITCH_OUT));
            FD("preempt", !!(r->misc & EK_PERF_MISC_SWITCH_OUT_PREEMPT));
        }
        if (r->type == EK_PERF_RECORD_SWITCH_CPU_WIDE) {
            FD(json ? "next_prev_pid" : "next_prev_pid", r->u.sw.next_prev_pid);
            FD("next_prev_tid", r->u.sw.next_prev_tid);
        }
        break;
    case EK_PERF_RECORD_AUX_OUTPUT_HW_ID:
        FX("hw_id", r->u.hw_id.hw_id);
        if (!json)
            ek_sbuf_printf(
                out, " (version %u.%u trace ID 0x%x sink %u)", (unsigned)(r->u.hw_id.hw_id >> 60),
                (unsigned)(r->u.hw_id.hw_id >> 56 & 0xf), (unsigned)(r->u.hw_id.hw_id & 0xff),
                (unsigned)(r->u.hw_id.hw_id >> 8 & 0xffffffffu));
        break;
    case EK_PERF_RECORD_LOST:
        FD("id", r->u.lost.id);
        FD("lost", r->u.lost.lost);
        break;
    case EK_PERF_RECORD_LOST_SAMPLES: FD("lost", r->u.lost_samples.lost); break;
    case EK_PERF_RECORD_SAMPLE:
        FX("ip", r->u.sample.ip);
        FX("addr", r->u.sample.addr);
        FD("period", r->u.sample.period);
        break;
    case EK_PERF_RECORD_AUXTRACE:
        FX("size", r->u.auxtrace.size);
        FX("offset", r->u.auxtrace.offset);
        FX("ref", r->u.auxtrace.reference);
        FD("idx", r->u.auxtrace.idx);
        FD("tid", r->u.auxtrace.tid);
        ek_sbuf_printf(out, json ? ",\"cpu\":%d" : " cpu %d", r->u.auxtrace.cpu);
        if (r->payload_offset >= 0) FX("data", (uint64_t)r->payload_offset);
        if (r->payload_avail != r->payload_size) FX("present", r->payload_avail);
        break;
    case EK_PERF_RECORD_AUXTRACE_INFO:
        FD("type", r->u.auxtrace_info.type);
        FD("words", r->u.auxtrace_info.npriv);
        break;
    case EK_PERF_RECORD_HEADER_ATTR:
        if (r->u.header_attr.attr) {
            FD("attr_type", r->u.header_attr.attr->type);
            FX("config", r->u.header_attr.attr->config);
            FD("ids", r->u.header_attr.attr->nids);
        }
        break;
    case EK_PERF_RECORD_HEADER_FEATURE: {
        const char *name = ek_perf_feature_name((unsigned)(r->u.feature.feat_id & 0xff));
        FD("feature", r->u.feature.feat_id);
        if (r->size <= 16)
            FS("name", "end of features");
        else if (name && r->u.feature.feat_id < 256)
            FS("name", name);
        break;
    }
    case EK_PERF_RECORD_HEADER_BUILD_ID:
        ek_sbuf_printf(out, json ? ",\"pid\":%d" : " pid %d", r->u.build_id.pid);
        FS("filename", r->u.build_id.filename);
        break;
    case EK_PERF_RECORD_HEADER_TRACING_DATA: FD("size", r->u.tracing_data.size); break;
    case EK_PERF_RECORD_ID_INDEX:
    case EK_PERF_RECORD_THREAD_MAP: FD("nr", r->u.nr.nr); break;
    case EK_PERF_RECORD_CPU_MAP:
        FD("map_type", r->u.cpu_map.type);
        FD("nr", r->u.cpu_map.nr);
        if (r->u.cpu_map.type != 1) {
            FD("first", r->u.cpu_map.start);
            FD("last", r->u.cpu_map.end);
        }
        if (r->u.cpu_map.type == 2) FD("any_cpu", r->u.cpu_map.any_cpu);
        break;
    case EK_PERF_RECORD_TIME_CONV:
        FD("time_shift", r->u.time_conv.time_shift);
        FD("time_mult", r->u.time_conv.time_mult);
        FD("time_zero", r->u.time_conv.time_zero);
        if (r->u.time_conv.have_cycles) {
            FD("time_cycles", r->u.time_conv.time_cycles);
            FX("time_mask", r->u.time_conv.time_mask);
            FD("cap_user_time_zero", r->u.time_conv.cap_user_time_zero);
            FD("cap_user_time_short", r->u.time_conv.cap_user_time_short);
        }
        break;
    case EK_PERF_RECORD_COMPRESSED:
    case EK_PERF_RECORD_COMPRESSED2: FD("data_size", r->u.compressed.data_size); break;
    default: break;
    }
#undef FD
#undef FX
#undef FS
}

void ek_perf_dump_record(ek_sbuf *out, const ek_perf_record *r, ek_perf_dump_format fmt)
{
    const char *name = ek_perf_record_name(r->type);
    if (fmt == EK_PERF_DUMP_JSON) {
        ek_sbuf_printf(out, "{\"index\":%lld,\"offset\":%llu,", (long long)r->index, X(r->offset));
        if (r->compressed) ek_sbuf_printf(out, "\"stream_offset\":%llu,", X(r->stream_offset));
        ek_sbuf_printf(out, "\"type\":%u,\"name\":\"%s\",\"misc\":%u,\"size\":%u", r->type, name,
                       r->misc, r->size);
        if (r->damaged) ek_sbuf_puts(out, ",\"damaged\":true");
        record_fields(out, r, 1);
        sid_json(out, &r->sid);
        ek_sbuf_putc(out, '}');
        return;
    }
    ek_sbuf_printf(out, "0x%08llx", X(r->offset));
    if (r->compressed) ek_sbuf_printf(out, "/z0x%llx", X(r->stream_offset));
    ek_sbuf_printf(out, " #%lld %s", (long long)r->index, name);
    if (r->type >= EK_PERF_RECORD_SIMPLEPERF_FIRST || !strcmp(name, "UNKNOWN"))
        ek_sbuf_printf(out, "(%u)", r->type);
    ek_sbuf_printf(out, " [0x%x]", r->size);
    if (r->misc & EK_PERF_MISC_CPUMODE_MASK) ek_sbuf_printf(out, " misc 0x%x", r->misc);
    ek_sbuf_putc(out, ':');
    record_fields(out, r, 0);
    sid_text(out, &r->sid);
    if (r->damaged) ek_sbuf_puts(out, " DAMAGED");
    ek_sbuf_putc(out, '\n');
}

/* ---- cs_etm configuration ----------------------------------------------------------- */

static const char *id_source_name(ek_perf_traceid_source s)
{
    return s == EK_TRACEID_METADATA ? "metadata" : s == EK_TRACEID_HW_ID ? "hw_id" : "none";
}

static const char *pid_source_name(ek_perf_pid_source s)
{
    return s == EK_PID_CONTEXTIDR_EL1   ? "CONTEXTIDR_EL1"
           : s == EK_PID_CONTEXTIDR_EL2 ? "CONTEXTIDR_EL2"
                                        : "none";
}

static void cpu_regs(ek_sbuf *out, const ek_perf_etm_cpu *c, int json)
{
    const char *fx = json ? ",\"%s\":%llu" : " %s 0x%llx";
    if (c->cfg.protocol == EK_PROTO_ETMV3 || c->cfg.protocol == EK_PROTO_PTM) {
        const ek_etm3_regs *r = &c->cfg.regs.etm3;
        ek_sbuf_printf(out, fx, "ETMCR", X(r->etmcr));
        ek_sbuf_printf(out, fx, "ETMTRACEIDR", X(r->etmtraceidr));
        ek_sbuf_printf(out, fx, "ETMCCER", X(r->etmccer));
        ek_sbuf_printf(out, fx, "ETMIDR", X(r->etmidr));
        return;
    }
    const ek_etm4_regs *r = &c->cfg.regs.etm4;
    ek_sbuf_printf(out, fx, "TRCCONFIGR", X(r->configr));
    ek_sbuf_printf(out, fx, "TRCTRACEIDR", X(c->nparams > 1 ? c->params[1] : 0));
    ek_sbuf_printf(out, fx, "TRCIDR0", X(r->idr[0]));
    ek_sbuf_printf(out, fx, "TRCIDR1", X(r->idr[1]));
    ek_sbuf_printf(out, fx, "TRCIDR2", X(r->idr[2]));
    ek_sbuf_printf(out, fx, "TRCIDR8", X(r->idr[8]));
    ek_sbuf_printf(out, fx, "TRCAUTHSTATUS", X(r->authstatus));
    if (c->cfg.protocol == EK_PROTO_ETE) ek_sbuf_printf(out, fx, "TRCDEVARCH", X(r->devarch));
}

void ek_perf_dump_config(ek_sbuf *out, const ek_perf_file *f, ek_perf_dump_format fmt)
{
    const ek_perf_cs_etm *e = ek_perf_cs_etm_get(f);
    int json = fmt == EK_PERF_DUMP_JSON;
    if (!e->present) {
        ek_sbuf_puts(out, json ? "null" : "cs_etm: no CoreSight AUXTRACE_INFO in this file\n");
        return;
    }
    if (json) {
        ek_sbuf_printf(out,
                       "{\"record\":%lld,\"offset\":%llu,\"header_version\":%llu,\"pmu_type\":%u,"
                       "\"cpu_blocks\":%u,\"snapshot\":%llu,\"config\":%llu,\"have_attr\":%s,"
                       "\"timestamp\":%d,\"contextid1\":%d,\"contextid2\":%d,\"retstack\":%d,"
                       "\"cycacc\":%d,\"branch_broadcast\":%d,\"timeless\":%d,"
                       "\"all_ts_virtual\":%d,\"have_hw_id\":%d,\"hw_id_minor\":%u,\"cpus\":[",
                       (long long)e->info_record, X(e->info_offset), X(e->header_version),
                       e->pmu_type, e->nr_cpu_blocks, X(e->snapshot), X(e->config),
                       e->attr ? "true" : "false", e->timestamp, e->contextid1, e->contextid2,
                       e->retstack, e->cycacc, e->branch_broadcast, e->timeless, e->all_ts_virtual,
                       e->have_hw_id, e->hw_id_minor);
        for (size_t i = 0; i < e->ncpus; i++) {
            const ek_perf_etm_cpu *c = &e->cpus[i];
            ek_sbuf_printf(out,
                           "%s\n{\"cpu\":%u,\"protocol\":\"%s\",\"magic\":%llu,\"nparams\":%u,"
                           "\"trace_id\":%u,\"trace_id_source\":\"%s\",\"meta_trace_id\":%u,"
                           "\"meta_unused_flag\":%d,\"ts_source\":%lld,\"pid_source\":\"%s\"",
                           i ? "," : "", c->cpu, ek_protocol_name(c->cfg.protocol), X(c->magic),
                           c->nparams, c->cfg.trace_id, id_source_name(c->id_source),
                           c->meta_trace_id, c->meta_unused_flag, (long long)c->ts_source,
                           pid_source_name(c->pid_source));
            if (c->have_sink) ek_sbuf_printf(out, ",\"sink\":%u", c->sink_id);
            cpu_regs(out, c, 1);
            ek_sbuf_putc(out, '}');
        }
        ek_sbuf_puts(out, "]}");
        return;
    }
    ek_sbuf_printf(out,
                   "cs_etm: AUXTRACE_INFO #%lld @0x%llx: header version %llu, PMU type %u, %u CPU "
                   "blocks (%zu read), snapshot %llu\n",
                   (long long)e->info_record, X(e->info_offset), X(e->header_version), e->pmu_type,
                   e->nr_cpu_blocks, e->ncpus, X(e->snapshot));
    if (e->attr) {
        ek_sbuf_printf(out, "cs_etm: event config 0x%llx:", X(e->config));
        if (e->branch_broadcast) ek_sbuf_puts(out, " branch_broadcast");
        if (e->cycacc) ek_sbuf_puts(out, " cycacc");
        if (e->contextid1) ek_sbuf_puts(out, " contextid1");
        if (e->contextid2) ek_sbuf_puts(out, " contextid2");
        if (e->timestamp) ek_sbuf_puts(out, " timestamp");
        if (e->retstack) ek_sbuf_puts(out, " retstack");
        ek_sbuf_putc(out, '\n');
    } else {
        ek_sbuf_puts(out, "cs_etm: no event with this PMU type\n");
    }
    ek_sbuf_printf(out, "cs_etm: %s decode; CoreSight timestamps %s perf time; trace IDs from %s\n",
                   e->timeless ? "timeless" : "timestamped",
                   e->all_ts_virtual ? "convert to" : "do not convert to",
                   e->have_hw_id ? (e->hw_id_minor ? "AUX_OUTPUT_HW_ID v0.1 (per sink)"
                                                   : "AUX_OUTPUT_HW_ID v0.0 (global)")
                                 : "metadata");
    for (size_t i = 0; i < e->ncpus; i++) {
        const ek_perf_etm_cpu *c = &e->cpus[i];
        ek_sbuf_printf(out, "cpu %u: %s, %u params, trace ID 0x%02x (%s", c->cpu,
                       ek_protocol_name(c->cfg.protocol), c->nparams, c->cfg.trace_id,
                       id_source_name(c->id_source));
        if (c->meta_unused_flag) ek_sbuf_puts(out, ", metadata ID flagged unused");
        if (c->have_sink) ek_sbuf_printf(out, ", sink %u", c->sink_id);
        ek_sbuf_printf(out, "), pid from %s, TS_SOURCE ", pid_source_name(c->pid_source));
        if (c->ts_source < 0)
            ek_sbuf_puts(out, "unknown");
        else
            ek_sbuf_printf(out, "%lld", (long long)c->ts_source);
        ek_sbuf_putc(out, ':');
        cpu_regs(out, c, 0);
        ek_sbuf_putc(out, '\n');
    }
}

/* ---- queues and slices -------------------------------------------------------------- */

static size_t idmap_index(const ek_perf_queues *q, const ek_perf_idmap *m)
{
    for (size_t i = 0; i < ek_perf_queues_nidmaps(q); i++)
        if (ek_perf_queues_idmap_at(q, i) == m) return i;
    return (size_t)-1;
}

static void problems_text(ek_sbuf *out, uint32_t p, int json)
{
    static const struct {
        uint32_t bit;
        const char *name;
    } names[] = {{EK_SLICE_NO_DATA, "no-data"},
                 {EK_SLICE_CLIPPED, "clipped"},
                 {EK_SLICE_NO_CPU, "no-cpu"},
                 {EK_SLICE_MIXED_FORMAT, "mixed-format"},
                 {EK_SLICE_NO_CONFIG, "no-config"}};
    int first = 1;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (p & names[i].bit) {
            if (json)
                ek_sbuf_printf(out, "%s\"%s\"", first ? "" : ",", names[i].name);
            else
                ek_sbuf_printf(out, "%s%s", first ? " PROBLEM " : ",", names[i].name);
            first = 0;
        }
}

void ek_perf_dump_queue(ek_sbuf *out, const ek_perf_file *f, const ek_perf_queues *q, size_t i,
                        ek_perf_dump_format fmt)
{
    const ek_perf_queue *qu = ek_perf_queue_at(q, i);
    (void)f;
    if (fmt == EK_PERF_DUMP_JSON) {
        if (qu->per_thread)
            ek_sbuf_printf(out, "{\"queue\":%zu,\"tid\":%u", i, qu->tid);
        else
            ek_sbuf_printf(out, "{\"queue\":%zu,\"cpu\":%d", i, qu->cpu);
        ek_sbuf_printf(out, ",\"formatted\":%s,\"slices\":[", qu->formatted ? "true" : "false");
        return;
    }
    if (qu->per_thread)
        ek_sbuf_printf(out, "queue %zu: tid %u", i, qu->tid);
    else
        ek_sbuf_printf(out, "queue %zu: cpu %d", i, qu->cpu);
    ek_sbuf_printf(out, ", %zu slice%s, %s trace", qu->nslices, qu->nslices == 1 ? "" : "s",
                   qu->formatted ? "CoreSight-formatted" : "raw");
    if (qu->etm)
        ek_sbuf_printf(out, ", %s trace ID 0x%02x", ek_protocol_name(qu->etm->cfg.protocol),
                       qu->etm->cfg.trace_id);
    ek_sbuf_putc(out, '\n');
}

void ek_perf_dump_slice(ek_sbuf *out, const ek_perf_file *f, const ek_perf_queues *q,
                        const ek_perf_slice *s, size_t nth, ek_perf_dump_format fmt)
{
    size_t nbuf;
    const ek_perf_auxtrace_rec *bufs = ek_perf_auxtrace_records(f, &nbuf);
    const ek_perf_auxtrace_rec *b = s->buffer >= 0 ? &bufs[s->buffer] : NULL;
    if (fmt == EK_PERF_DUMP_JSON) {
        ek_sbuf_printf(out,
                       "%s\n{\"aux_record\":%lld,\"aux_record_offset\":%llu,\"aux_offset\":%llu,"
                       "\"aux_size\":%llu,\"flags\":%llu,\"time\":%llu,\"cpu\":%u,\"pid\":%u,"
                       "\"tid\":%u,\"buffer\":%lld",
                       nth ? "," : "", (long long)s->aux_record, X(s->aux_record_offset),
                       X(s->aux_offset), X(s->aux_size), X(s->flags), X(s->sid.time), s->sid.cpu,
                       s->sid.pid, s->sid.tid, (long long)s->buffer);
        if (b)
            ek_sbuf_printf(out,
                           ",\"buffer_record\":%lld,\"buffer_offset\":%llu,\"buffer_pos\":%llu",
                           (long long)b->record, X(b->offset), X(s->buffer_pos));
        ek_sbuf_printf(out, ",\"data_offset\":%llu,\"data_size\":%llu,\"formatted\":%s",
                       X(s->data_offset), X(s->data_size), s->formatted ? "true" : "false");
        if (s->idmap) ek_sbuf_printf(out, ",\"idmap\":%zu", idmap_index(q, s->idmap));
        ek_sbuf_puts(out, ",\"problems\":[");
        problems_text(out, s->problems, 1);
        ek_sbuf_puts(out, "]}");
        return;
    }
    ek_sbuf_printf(out, "  slice %zu: AUX #%lld @0x%llx offset 0x%llx size 0x%llx flags 0x%llx ",
                   nth, (long long)s->aux_record, X(s->aux_record_offset), X(s->aux_offset),
                   X(s->aux_size), X(s->flags));
    aux_flag_letters(out, s->flags);
    sid_text(out, &s->sid);
    if (b) {
        ek_sbuf_printf(out, " <- AUXTRACE ");
        if (b->record >= 0) ek_sbuf_printf(out, "#%lld ", (long long)b->record);
        ek_sbuf_printf(out, "@0x%llx +0x%llx: data 0x%llx+0x%llx", X(b->offset), X(s->buffer_pos),
                       X(s->data_offset), X(s->data_size));
    } else {
        ek_sbuf_puts(out, " <- no AUXTRACE data");
    }
    if (s->idmap) {
        if (s->idmap->global)
            ek_sbuf_puts(out, " ids global");
        else
            ek_sbuf_printf(out, " ids sink %u", s->idmap->sink_id);
    }
    problems_text(out, s->problems, 0);
    ek_sbuf_putc(out, '\n');
}

void ek_perf_dump_queue_end(ek_sbuf *out, ek_perf_dump_format fmt)
{
    if (fmt == EK_PERF_DUMP_JSON) ek_sbuf_puts(out, "]}");
}

void ek_perf_dump_slice_summary(ek_sbuf *out, const ek_perf_file *f, const ek_perf_queues *q,
                                ek_perf_dump_format fmt)
{
    size_t nbuf, nuse;
    const ek_perf_auxtrace_rec *bufs = ek_perf_auxtrace_records(f, &nbuf);
    const ek_perf_buffer_use *use = ek_perf_queues_buffer_use(q, &nuse);
    int json = fmt == EK_PERF_DUMP_JSON;
    if (json) ek_sbuf_puts(out, "\"buffers\":[");
    for (size_t i = 0; i < nbuf; i++) {
        const ek_perf_auxtrace_rec *b = &bufs[i];
        if (json) {
            ek_sbuf_printf(
                out,
                "%s\n{\"record\":%lld,\"offset\":%llu,\"data_offset\":%llu,\"size\":%llu,"
                "\"present\":%llu,\"aux_offset\":%llu,\"reference\":%llu,\"idx\":%u,"
                "\"tid\":%u,\"cpu\":%d,\"from_index\":%d,\"slices\":%zu,"
                "\"covered\":%llu}",
                i ? "," : "", (long long)b->record, X(b->offset), X(b->data_offset), X(b->size),
                X(b->avail), X(b->aux_offset), X(b->reference), b->idx, b->tid, b->cpu,
                b->from_index, use[i].nslices, X(use[i].covered));
            continue;
        }
        ek_sbuf_printf(out, "buffer %zu: AUXTRACE ", i);
        if (b->record >= 0) ek_sbuf_printf(out, "#%lld ", (long long)b->record);
        ek_sbuf_printf(out,
                       "@0x%llx cpu %d tid %u idx %u offset 0x%llx size 0x%llx data "
                       "0x%llx: %zu slice%s, 0x%llx bytes covered",
                       X(b->offset), b->cpu, b->tid, b->idx, X(b->aux_offset), X(b->size),
                       X(b->data_offset), use[i].nslices, use[i].nslices == 1 ? "" : "s",
                       X(use[i].covered));
        if (b->avail < b->size) ek_sbuf_printf(out, ", only 0x%llx present", X(b->avail));
        if (b->from_index) ek_sbuf_puts(out, ", found through the index");
        if (!use[i].nslices)
            ek_sbuf_puts(out, " PROBLEM no AUX record");
        else if (use[i].covered < b->size)
            ek_sbuf_puts(out, " (partly uncovered)");
        ek_sbuf_putc(out, '\n');
    }
    size_t nmaps = ek_perf_queues_nidmaps(q);
    ek_sbuf_puts(out, json ? "],\n\"idmaps\":[" : "");
    for (size_t m = 0; m < nmaps; m++) {
        const ek_perf_idmap *map = ek_perf_queues_idmap_at(q, m);
        if (json)
            ek_sbuf_printf(out, "%s{\"global\":%s,\"sink\":%u,\"ids\":{", m ? "," : "",
                           map->global ? "true" : "false", map->sink_id);
        else if (map->global)
            ek_sbuf_printf(out, "idmap %zu (global):", m);
        else
            ek_sbuf_printf(out, "idmap %zu (sink %u):", m, map->sink_id);
        int first = 1, any = 0;
        for (int id = 0; id < 128; id++) {
            if (map->cpu[id] < 0) continue;
            any = 1;
            if (json)
                ek_sbuf_printf(out, "%s\"%d\":%d", first ? "" : ",", id, map->cpu[id]);
            else
                ek_sbuf_printf(out, " 0x%02x->cpu%d", id, map->cpu[id]);
            first = 0;
        }
        if (json)
            ek_sbuf_puts(out, "}}");
        else
            ek_sbuf_puts(out, any ? "\n" : " (empty)\n");
    }
    if (json)
        ek_sbuf_printf(out, "],\n\"aux_empty\":%zu,\"aux_no_data\":%zu", ek_perf_queues_nempty(q),
                       ek_perf_queues_nno_data(q));
    else
        ek_sbuf_printf(out, "AUX records: %zu of size 0 (nothing queued), %zu without data\n",
                       ek_perf_queues_nempty(q), ek_perf_queues_nno_data(q));
}
