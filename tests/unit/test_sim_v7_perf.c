/* perf.data recordings with CS_ETMV3 metadata decode: `etmkit gen --scenario armv7-ptm` and
 * `armv7-etm3` are run through the public API (ek_sim_run) into a temporary folder, and the
 * recording is read with the modules alone, below the session (which drives PTM and ETMv3
 * through the decode tree: tests/scripts/script_v7_gen.sh): the perf
 * reader's cs_etm block for the queue's trace ID (protocol from ETMIDR, registers from the
 * metadata), the MMAP2 of the traced program resolved in symfs, the AUX slice de-formatted, its
 * trace ID's bytes through src/ptm or src/etm3. Every branch and IRQ of truth.branches.tsv must
 * come back, in order, taken or not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/etm3.h"
#include "etmkit/etmkit.h"
#include "etmkit/frame.h"
#include "etmkit/image.h"
#include "etmkit/isa.h"
#include "etmkit/perf.h"
#include "etmkit/ptm.h"
#include "etmkit/sim.h"
#include "testutil.h"

typedef struct truth_br {
    uint32_t from, to;
    int taken, irq;
} truth_br;

static size_t read_truth(const char *dir, truth_br **out)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/truth.branches.tsv", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = 0, cap = 0;
    truth_br *v = NULL;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') continue;
        unsigned long long t;
        int cpu, pid, tid, el, taken;
        unsigned from, to;
        char kind[16];
        assert_int_equal(sscanf(line, "%llu %d %d %d %d %x %x %15s %d", &t, &cpu, &pid, &tid, &el,
                                &from, &to, kind, &taken),
                         9);
        if (n == cap) {
            cap = cap ? cap * 2 : 65536;
            v = realloc(v, cap * sizeof *v);
            assert_non_null(v);
        }
        v[n].from = from;
        v[n].to = to;
        v[n].taken = taken;
        v[n].irq = !strcmp(kind, "irq");
        n++;
    }
    fclose(f);
    *out = v;
    return n;
}

typedef struct dec {
    int ptm;
    ek_ptm_config pcfg;
    ek_ptm_parser pp;
    ek_ptm_decoder *pd;
    ek_etm3_config ecfg;
    ek_etm3_parser ep;
    ek_etm3_decoder *ed;
    const truth_br *tr;
    size_t ntr, next;
    size_t ranges, excs;
} dec;

static void on_elems(dec *d, const ek_elem *e, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (e[i].type == EK_ELEM_EXCEPTION) {
            assert_true(d->next < d->ntr);
            const truth_br *t = &d->tr[d->next++];
            assert_true(t->irq);
            assert_int_equal(e[i].u.exception_number, 14);
            if (d->ptm) assert_int_equal(e[i].en_addr, t->from);
            d->excs++;
            continue;
        }
        if (e[i].type != EK_ELEM_INSTR_RANGE) continue;
        d->ranges++;
        if (e[i].last_i_type != EK_ITYPE_BR && e[i].last_i_type != EK_ITYPE_BR_INDIRECT) continue;
        assert_true(d->next < d->ntr);
        const truth_br *t = &d->tr[d->next++];
        const uint64_t last = e[i].en_addr - e[i].last_i_size;
        if (t->irq || last != t->from)
            fail_msg("branch %zu: decoded %#llx, ran %#x%s", d->next - 1, (unsigned long long)last,
                     t->from, t->irq ? " (irq)" : "");
        assert_int_equal((e[i].flags & EK_ELEMF_LAST_EXEC) != 0, t->taken);
    }
}

static void feed(dec *d, const uint8_t *p, size_t n, uint64_t idx)
{
    size_t ne;
    if (d->ptm) {
        const ek_ptm_packet *k;
        ek_ptm_feed(&d->pp, p, n, idx);
        while (ek_ptm_next(&d->pp, &k) > 0) {
            assert_true(k->type != EK_PTM_BAD_SEQUENCE && k->type != EK_PTM_RESERVED);
            ek_ptm_decode(d->pd, k);
            const ek_elem *e = ek_ptm_decoder_elems(d->pd, &ne);
            on_elems(d, e, ne);
            ek_ptm_decoder_clear(d->pd);
        }
    } else {
        const ek_etm3_packet *k;
        ek_etm3_feed(&d->ep, p, n, idx);
        while (ek_etm3_next(&d->ep, &k) > 0) {
            assert_true(k->type != EK_ETM3_BAD_SEQUENCE && k->type != EK_ETM3_RESERVED);
            assert_int_equal(ek_etm3_decode(d->ed, k), 0);
            const ek_elem *e = ek_etm3_decoder_elems(d->ed, &ne);
            on_elems(d, e, ne);
            ek_etm3_decoder_clear(d->ed);
        }
    }
}

static void run_scenario(const char *name, int ptm)
{
    char *dir = tu_tmpdir();
    ek_sim_opts o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.scenario = name;
    o.seed = 3;
    o.outdir = dir;
    ek_sim_result res;
    assert_int_equal(ek_sim_run(&o, &res), 0);
    assert_true(res.trace_bytes >= 64 << 10);
    truth_br *tr = NULL;
    const size_t ntr = read_truth(dir, &tr);
    assert_true(ntr > 10000);

    char path[4096];
    snprintf(path, sizeof path, "%s/perf.data", dir);
    ek_perf_file *f = NULL;
    assert_int_equal(ek_perf_open(path, NULL, &f), 0);
    const ek_perf_cs_etm *cs = ek_perf_cs_etm_get(f);
    assert_true(cs->present);
    assert_int_equal(cs->ncpus, 1);
    const ek_perf_etm_cpu *cpu = &cs->cpus[0];
    assert_true(cpu->magic == EK_CS_ETM_MAGIC_ETMV3);
    assert_int_equal(cpu->cfg.protocol, ptm ? EK_PROTO_PTM : EK_PROTO_ETMV3);

    /* the program's code: the MMAP2's file in symfs */
    ek_image *img = NULL;
    assert_int_equal(ek_image_new(NULL, &img), 0);
    ek_perf_iter *it = NULL;
    assert_int_equal(ek_perf_iter_new(f, 0, NULL, &it), 0);
    ek_perf_record rec;
    int maps = 0;
    while (ek_perf_iter_next(it, &rec) == 0) {
        if (rec.type != 10) continue; /* MMAP2 */
        char file[4096];
        snprintf(file, sizeof file, "%s/symfs%s", dir, rec.u.mmap.filename);
        assert_int_equal(ek_image_add_file(img, file, rec.u.mmap.pgoff, rec.u.mmap.len,
                                           rec.u.mmap.addr, EK_MS_ANY),
                         0);
        maps++;
    }
    ek_perf_iter_free(it);
    assert_int_equal(maps, 1);

    dec d;
    memset(&d, 0, sizeof d);
    d.ptm = ptm;
    d.tr = tr;
    d.ntr = ntr;
    const ek_flow_mem mem = ek_flow_mem_image(img);
    if (ptm) {
        assert_int_equal(ek_ptm_config_from_source(&d.pcfg, &cpu->cfg), 0);
        ek_ptm_parser_init(&d.pp, &d.pcfg);
        assert_int_equal(ek_ptm_decoder_new(&d.pcfg, &mem, &d.pd), 0);
    } else {
        assert_int_equal(ek_etm3_config_from_source(&d.ecfg, &cpu->cfg), 0);
        ek_etm3_parser_init(&d.ep, &d.ecfg);
        assert_int_equal(ek_etm3_decoder_new(&d.ecfg, &mem, &d.ed), 0);
    }

    ek_perf_queues *q = NULL;
    assert_int_equal(ek_perf_queues_new(f, NULL, &q), 0);
    size_t ns;
    const ek_perf_slice *sl = ek_perf_queues_slices(q, &ns);
    assert_int_equal(ns, 1);
    assert_true(sl[0].formatted);
    size_t len;
    const uint8_t *data = ek_perf_slice_data(f, &sl[0], &len);
    assert_non_null(data);
    ek_deformatter df;
    ek_dfmt_init(&df, EK_DFMT_MEM_ALIGN);
    ek_dfmt_feed(&df, data, len, 0);
    ek_dfmt_item di;
    size_t bytes = 0;
    while (ek_dfmt_next(&df, &di) > 0) {
        if (di.kind != EK_DFMT_DATA || di.id == 0) continue;
        assert_int_equal(di.id, cpu->meta_trace_id);
        assert_int_equal(sl[0].idmap->cpu[di.id], 0);
        feed(&d, di.data, di.len, di.index);
        bytes += di.len;
    }
    assert_int_equal(bytes, res.trace_bytes);
    if (ptm) {
        ek_ptm_eot(&d.pp);
        feed(&d, NULL, 0, len);
    } else {
        ek_etm3_eot(&d.ep);
        feed(&d, NULL, 0, len);
        ek_etm3_decode_eot(d.ed); /* releases the range held back for a cancelling exception */
        size_t ne;
        const ek_elem *e = ek_etm3_decoder_elems(d.ed, &ne);
        on_elems(&d, e, ne);
    }
    /* every branch and exception that ran */
    assert_int_equal(d.next, ntr);
    assert_true(d.excs > 100);

    ek_ptm_decoder_free(d.pd);
    ek_etm3_decoder_free(d.ed);
    ek_perf_queues_free(q);
    ek_image_free(img);
    ek_perf_free(f);
    free(tr);
    tu_rmtree(dir);
    free(dir);
}

static void test_gen_armv7_ptm_perf(void **state)
{
    (void)state;
    run_scenario("armv7-ptm", 1);
}

static void test_gen_armv7_etm3_perf(void **state)
{
    (void)state;
    run_scenario("armv7-etm3", 0);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gen_armv7_ptm_perf),
        cmocka_unit_test(test_gen_armv7_etm3_perf),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
