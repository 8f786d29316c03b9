/* Internals of the decode tree shared by its files. */
#ifndef ETMKIT_DECODE_INT_H
#define ETMKIT_DECODE_INT_H

#include "core/vec.h"
#include "etmkit/decode.h"

#define NIDS         128
#define DSTREAM_DATA 504 /* DSTREAM: data bytes per record ... */
#define DSTREAM_FOOT 8   /* ... followed by a footer */

typedef struct dcd {
    ek_decode *t;
    uint8_t id;
    uint8_t active; /* had data since the last reset or barrier */
    uint8_t stale;  /* perf model: reset at its next data */
    int src;
    ek_protocol protocol;
    const ek_decode_proto *ops;
    void *parser;
    void *flow;
    const void *pcfg;
    ek_diag fdiag; /* the flow decoder's sink (tree_flow_diag) */
    int pump_ok;   /* the protocol's pump may run this decoder */
    uint8_t watch; /* every packet to the hook */
    ek_decode_pump pump;
    ek_decode_source_stats st;
} dcd;

typedef struct src_ent {
    ek_source_config cfg;
    const char *name;
    void *user;
    const ek_decode_proto *ops;
} src_ent;

/* An item copied out of a flow step (EK_DECODE_DIAG_ITEMS). */
typedef struct side_ent {
    uint8_t kind;   /* EK_DI_ELEMS or EK_DI_DIAG */
    uint8_t hooked; /* ELEMS: given to the elements hook */
    dcd *d;
    size_t first, count; /* ELEMS: side_elems[first .. first + count) */
    ek_diag_event ev;    /* DIAG (its msg is owned) */
} side_ent;

enum { OP_NONE = 0, OP_FLUSH, OP_END, OP_RESET_ITEMS };

struct ek_decode {
    ek_decode_config c;
    uint32_t hook_flags; /* c.hook_flags, or every flag */
    EK_VEC(src_ent) srcs;
    int16_t bind[NIDS];
    int raw_id; /* raw input goes to this trace ID's decoder (-1: nobody) */
    dcd *ids[NIDS];
    uint8_t refused[NIDS]; /* data came, no decoder could be made: never again */
    unsigned frame_flags;
    ek_deformatter dfmt;
    const char *file;
    ek_decode_stats st;

    /* the input block and the piece of it being worked on */
    const uint8_t *in;
    size_t in_len, in_pos;
    uint64_t in_idx;
    int in_done;
    const uint8_t *piece;
    size_t piece_len;
    uint64_t piece_idx;
    int piece_open; /* the piece was handed to the deformatter / parser */
    int footer_due; /* DSTREAM: the footer follows the piece */
    uint8_t footer[DSTREAM_FOOT];

    /* work in progress */
    dcd *cur;              /* its parser was fed: packets may follow */
    dcd *view_pending;     /* a flow step's elements follow the side queue */
    const ek_elem *pend_e; /* (those elements) */
    size_t pend_n;
    ek_dfmt_item fitem; /* the deformatter item handed out */
    int held;           /* fitem is ID data shown before it is routed */
    EK_VEC(side_ent) side;
    size_t side_pos;
    EK_VEC(ek_elem) side_elems;
    ek_diag_event diag_out; /* the DIAG item handed out */
    int op, op_id, op_stage, op_then_stale;
    /* EK_DECODE_COMPAT_OCSD: the data path stopped (STOP_DUE: the STOP item is still to come,
     * after the stopping step's items; STOP_DONE: nothing more) */
    int stopped;
    uint64_t stop_index;
    dcd *stop_d;
    ek_diag_event stop_ev; /* the last error a flow decoder logged (its msg owned) ... */
    uint64_t logged_seq;   /* ... and how many were logged */
    int stop_has_ev;       /* the stopping step logged stop_ev */
};

enum { STOP_NONE = 0, STOP_DUE, STOP_DONE };

/* The protocols built in (protocols.c lists them). */
extern const ek_decode_proto ek_decode_proto_etm4;
extern const ek_decode_proto ek_decode_proto_ptm;
extern const ek_decode_proto ek_decode_proto_etm3;
extern const ek_decode_proto ek_decode_proto_stm;
extern const ek_decode_proto ek_decode_proto_itm;

/* The counters a protocol's flow step keeps (ek_flow_stats): a step's packet and elements. */
static inline void decode_count_step(ek_flow_stats *st, const ek_elem *e, size_t n)
{
    st->packets++;
    for (size_t i = 0; i < n; i++) {
        if (e[i].type < EK_ELEM_NTYPES) st->elems[e[i].type]++;
        if (e[i].type == EK_ELEM_INSTR_RANGE || e[i].type == EK_ELEM_I_RANGE_NOPATH)
            st->instructions += e[i].num_instr;
    }
}

/* Add a source, binding its trace ID when `bind` and the ID is free (tree.c). */
int decode_add_source(ek_decode *t, const ek_source_config *cfg, const char *name, void *user,
                      int bind);
/* The operations for protocol p: the configured ones first, then the built-in ones. */
const ek_decode_proto *decode_find_proto(const ek_decode *t, ek_protocol p);
/* Make trace ID id's decoder now (if it can have one). 0 or EK_ERR_NOMEM. */
int decode_make(ek_decode *t, unsigned id);

#endif
