/*
 * sim.c - PyTorch-faithful hook-order simulator (see sim.h and
 * docs/scenario-model.md section 3, which this file implements line by
 * line).
 *
 * The autograd graph is modelled explicitly: nodes with creation sequence
 * numbers and ordered edges; a backward is PyTorch's traversal (dependencies
 * counted over the nodes reachable from the root, a node runs when all its
 * counted incoming edges delivered) with either the CPU engine's ready
 * queue (libstdc++ binary heap ordered by reentrant depth then
 * sequence_nr, emulated exactly) or a fuzzed choice among ready nodes.
 */
#include "sim.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "zoffload_backend.h"
#include "zoffload_testing.h"

/* ------------------------------------------------------------------ */
/* Graph model                                                          */
/* ------------------------------------------------------------------ */

/* N_HOOK: torch.nn.modules._functions.BackwardHookFunction, the node a full
 * backward hook puts over a module's tensor inputs (and another over its
 * outputs): an identity joining them, with no trace line of its own.
 * N_MIX: a parameter-free op of a mixed input. */
enum { N_LOSS, N_GROOT, N_LEAF, N_ACC, N_PRE, N_POST, N_OP, N_CKPT, N_MIX, N_HOOK };

#define SEQ_ACC UINT64_MAX /* AccumulateGrad's sequence_nr */

typedef struct node {
    uint8_t kind;
    uint8_t stored; /* N_OP in a non-reentrant region: its entry is in the region's storage */
    uint8_t freed;  /* N_OP in a non-reentrant region: its SavedVariables were released
                           (it ran in a backward without retain_graph): the Holder is dead */
    uint32_t module;
    uint32_t param;
    int32_t aux; /* N_OP: region or -1; N_CKPT: ckpt record */
    uint64_t seq;
    zo_grad_handle h;
    uint32_t e0, ne; /* edges[e0 .. e0+ne) */
} node;

typedef struct tensor {
    uint8_t rg;
    int32_t prod; /* producer node or -1 */
} tensor;

enum { X_NORMAL = 0, X_RECOMP = 1 };

typedef struct xctx {
    const zs_pass *p;
    int mode;
    int region;    /* non-reentrant region being recorded, -1 */
    int32_t *leaf; /* the pass's batch leaf node (shared with recomputes) */
    int any_grad;  /* some call ran with grad enabled */
    /* per call of the pass, in the same allocation as the xctx: */
    tensor (*win)[ZS_MAX_IN + ZS_MAX_KW]; /* positional (wrapped by hook D), then keyword */
    tensor (*out)[ZS_MAX_OUT];
    tensor (*raw)[ZS_MAX_OUT]; /* the body's outputs before hook C (zs_ref.raw) */
} xctx;

typedef struct region {
    xctx *x;
    unsigned ci;
    tensor in[ZS_MAX_IN];
    unsigned n_in;
    uint32_t start, end;     /* node index range of the region's forward */
    uint32_t n_stored;       /* torch 1.13: entries in the region's storage */
    uint32_t n_saved;        /* tensors the region's forward saved (its op nodes): torch 2.x's
                            len(frame.weak_holders), where the early stop happens */
    uint64_t recomputed_gid; /* torch 2.x: the backward (graph task) that last recomputed it, 0 */
    uint8_t body;            /* ZS_CALL_CKPT_BODY: the region is call ci's body, in[] its wrapped inputs */
} region;

typedef struct ckrec {
    xctx *x;
    unsigned ci;
    tensor in[ZS_MAX_IN];
    unsigned n_in;
    uint8_t body; /* as region.body */
} ckrec;

typedef struct hent {
    uint32_t depth;
    uint64_t seq;
    int32_t node;
    uint64_t push;
} hent;

typedef struct spass {
    xctx *x;
    zo_graph g;
    int num;     /* trace graph number */
    int aborted; /* forward unwound past the root call */
    int discarded;
    int freed;    /* backpropagated without retain */
    int32_t loss; /* loss node, or -1 when the loss does not require grad */
    int32_t leaf;
} spass;

#define UNW_NO (-1)
_Static_assert(ZS_DS_019 == (int)ZO_DS_0_19 && ZS_DS_019_HOOKS == (int)ZO_DS_0_19_HOOKS &&
                   ZS_DS_015 == (int)ZO_DS_0_15 && ZS_DS_PROFILES == ZO_DS_PROFILE_COUNT,
               "scenario DeepSpeed profiles are the runtime's");
#define UNW_OUT  (-2)
#define UNW_STOP (-3) /* torch 2.x: a non-reentrant recompute stopped early (_StopRecomputationError) */

typedef struct sim {
    const zs_scenario *s;
    zs_sim_opts o;
    zs_sim_result *r;
    zs_checker chk;
    zo_runtime *rt;
    zo_backend *be;
    zo_backend *rt_be; /* wrap_backend(be), or NULL */
    int policy;
    int order_mode;
    int legacy;
    int stop;
    unsigned order_pos;
    uint64_t seq;
    int graph_count;

    node *nodes;
    uint32_t n_nodes, cap_nodes;
    int32_t *edges;
    uint32_t n_edges, cap_edges;
    region *regions;
    uint32_t n_regions, cap_regions;
    ckrec *ckrecs;
    uint32_t n_ckrecs, cap_ckrecs;
    xctx **xs; /* every xctx allocated in the step (freed at step end) */
    uint32_t n_xs, cap_xs;
    hent *heap;
    uint32_t n_heap, cap_heap;
    uint64_t push_count;
    int32_t *acc;       /* [n_params] AccumulateGrad node per parameter (run-wide) */
    int cur_retain;     /* retain_graph of the running top-level backward */
    int torch_profile;  /* ZS_TORCH_* of the scenario */
    uint64_t gid;       /* graph task id of the running backward (every backward, nested
                            ones too, gets a new one, as torch._C._current_graph_task_id) */
    uint64_t n_gids;    /* graph tasks started so far */
    uint32_t stop_left; /* torch 2.x early stop: ops left to save before the recompute stops
                            (0: not in an early-stopping recompute) */

    zs_id *pset_ids; /* parameter set of module m: pset_ids[pset_off[m] .. pset_off[m+1]) */
    /* per-scenario arrays, one allocation (alloc_arrays): */
    uint32_t *pset_off; /* [n_modules + 1] */
    uint8_t *trainable; /* [n_modules] module's set has a trainable parameter */
    uint8_t *leaf_bwh;  /* [n_modules] the module has a full backward hook: DeepSpeed 0.19's
                                          ZeRO-3 optimizer registers reduce_leaf_module_grads
                                          (register_full_backward_hook) on each z3 leaf whose
                                          subtree owns a trainable parameter */
    int nomem;
    /* a full scan passed on the runtime's state as it is now: no entry
     * point has run since (hook_begin clears it), so a sweep would repeat
     * that scan's reads and find the same */
    int scanned;

    /* hook stack for opts.context (maintained always: a few stores per call) */
    const char *ctx_phase; /* "setup", "forward", "eval forward", "backward", "optimizer step", ... */
    int ctx_pass;          /* pass index in the step, -1 */
    int ctx_graph;         /* trace graph number of the running backward, -1 */
    int ctx_recompute;     /* > 0 inside a checkpoint recompute */
    const char *ctx_fmt;   /* the hook being called (hook_begin's fmt, a, b) */
    int ctx_a, ctx_b;
    const char *ctx_fixed; /* "setup", "teardown ...": a fixed text instead */
    unsigned ctx_depth;    /* active calls */
    unsigned ctx_cap;      /* frames ctx_call/ctx_mod hold (deeper ones are not recorded) */
    zs_id *ctx_call;       /* [ctx_cap] */
    zs_id *ctx_mod;        /* [ctx_cap] */
    void *arrays;          /* the one allocation behind chk_inc, acc .. ctx_mod, shadow */
    void *chk_inc;         /* the checker's incremental storage (zs_check_incremental) */
    uint8_t *shadow;       /* [n_params] the checker's ds_status copy (chk.shadow) */
    zs_id *pset_tmp;       /* [n_params] setup scratch */
    zo_param_id *pset_rt;  /* [n_params] setup scratch */
    zo_allocator al;       /* zs_sim_opts.allocator, or malloc/free (both NULL) */
} sim;

/* every allocation of the simulator, the runtime and its host backend goes
 * through zs_sim_opts.allocator (the fuzz targets' per-execution arena) */
static void *al_alloc(const zo_allocator *al, size_t n) { return al->alloc ? al->alloc(al->opaque, n) : malloc(n); }
static void al_free(const zo_allocator *al, void *p) {
    if (al->free)
        al->free(al->opaque, p);
    else
        free(p);
}
static void *s_alloc(sim *S, size_t n) { return al_alloc(&S->al, n); }
static void *s_calloc(sim *S, size_t n, size_t sz) {
    if (sz && n > SIZE_MAX / sz) return NULL;
    void *p = s_alloc(S, n * sz);
    if (p) memset(p, 0, n * sz);
    return p;
}
static void s_free(sim *S, void *p) { al_free(&S->al, p); }

static void *grow(sim *S, void *p, uint32_t *cap, uint32_t need, size_t sz) {
    if (need <= *cap) return p;
    uint32_t nc = *cap ? *cap * 2 : 64;
    while (nc < need) nc *= 2;
    void *q = s_alloc(S, (size_t)nc * sz);
    if (!q) {
        S->nomem = 1;
        return p;
    }
    if (p) memcpy(q, p, (size_t)*cap * sz);
    s_free(S, p);
    *cap = nc;
    return q;
}

/* ------------------------------------------------------------------ */
/* Output                                                               */
/* ------------------------------------------------------------------ */

/* a trace or event log is written: the trace lines' strings (counters,
 * rg lists) are built only then */
#define TRACING(S) ((S)->o.trace || (S)->o.events)

static void tr(sim *S, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void tr(sim *S, const char *fmt, ...) {
    if (!S->o.trace && !S->o.events) return;
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (S->o.trace) fprintf(S->o.trace, "%s\n", line);
    if (S->o.events) fprintf(S->o.events, "%s\n", line);
}

/* In the event log, after the runtime call of a line printed before its
 * call (ENDBWD, SWEEP): the events above belong to that line, those below
 * to the next one (tools/difftest.py reads ds_status there). */
static void ev_end(sim *S) {
    if (S->o.events) fputs("  ev - END\n", S->o.events);
}

static void torch_error(sim *S, const char *msg) {
    tr(S, "TORCHERROR %s", msg);
    S->r->torch_error = 1;
    snprintf(S->r->torch_msg, sizeof S->r->torch_msg, "%s", msg);
    S->stop = 1;
}

/* ------------------------------------------------------------------ */
/* Runtime calls                                                        */
/* ------------------------------------------------------------------ */

static const char *hook_kind(const char *fmt) {
    static const struct {
        const char *pre, *name;
    } k[] = {
        {"A ", "pre-forward"},      {"D ", "track inputs"},      {"B ", "post-forward"},
        {"C ", "track outputs"},    {"PRE ", "pre-backward"},    {"POST ", "post-backward"},
        {"PGRAD ", "param grad"},   {"FWD ", "forward begin"},   {"ENDFWD ", "forward end"},
        {"BWD ", "backward begin"}, {"ENDBWD ", "backward end"}, {"DISCARD ", "graph discard"},
        {"SWEEP", "release all"},   {"ABORT ", "forward abort"}, {"access ", "parameter access"},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        if (!strncmp(fmt, k[i].pre, strlen(k[i].pre))) return k[i].name;
    return "";
}

static size_t ctx_frame(const zs_scenario *s, char *buf, size_t n, unsigned m, unsigned call) {
    const char *name = m < s->n_modules ? s->mod[m].name : "";
    int k = name[0] ? snprintf(buf, n, "%s(m%u)#%u", name, m, call) : snprintf(buf, n, "m%u#%u", m, call);
    return k < 0 ? 0 : ((size_t)k < n ? (size_t)k : n - 1);
}

/* The hook stack as data (see sim.h): the frames the text shows - all of
 * a chain up to 8 deep, else the outermost two and the innermost five. */
static void ctx_save(const sim *S, const char *fmt, int a, int b, zs_sim_ctx *c) {
    memset(c, 0, sizeof *c);
    c->fixed = S->ctx_fixed ? S->ctx_fixed : (fmt ? NULL : "setup");
    if (c->fixed) return;
    c->fmt = fmt;
    c->a = a;
    c->b = b;
    c->step = S->chk.step;
    c->pass = S->ctx_pass;
    c->phase = S->ctx_phase;
    c->graph = S->ctx_graph;
    c->recompute = S->ctx_recompute != 0;
    unsigned d = S->ctx_depth < S->ctx_cap ? S->ctx_depth : S->ctx_cap;
    c->depth = d;
    for (unsigned i = 0, k = 0; i < d; i++, k++) {
        if (d > 8 && i == 2) i = d - 5;
        c->mod[k] = S->ctx_mod[i];
        c->call[k] = S->ctx_call[i];
    }
}

/* Formats a saved hook stack into out[0..outlen) (see sim.h). */
static void ctx_text(const zs_scenario *s, const zs_sim_ctx *c, char *out, size_t outlen) {
    char buf[1024], hook[64];
    size_t o = 0, n = sizeof buf;
    if (!outlen) return;
    if (c->fixed) {
        snprintf(out, outlen, "%s", c->fixed);
        return;
    }
#define CTX_PUT(...)                                                                                                   \
    do {                                                                                                               \
        int k_ = snprintf(buf + o, n - o, __VA_ARGS__);                                                                \
        if (k_ > 0) o += (size_t)k_ < n - o ? (size_t)k_ : n - o - 1;                                                  \
    } while (0)
    if (c->step >= 0 && c->step < (int)s->n_steps) {
        CTX_PUT("step %d (%s)", c->step, zs_step_kind_name(s->step[c->step].kind));
        if (c->pass >= 0) CTX_PUT(" pass %d", c->pass);
        CTX_PUT(" ");
    }
    CTX_PUT("%s", c->phase ? c->phase : "setup");
    if (c->graph >= 0) CTX_PUT(" g=%d", c->graph);
    if (c->recompute) CTX_PUT(" recompute");
    if (c->depth) {
        CTX_PUT(": ");
        unsigned d = c->depth, shown = d > 8 ? 7 : d;
        for (unsigned k = 0; k < shown; k++) {
            if (d > 8 && k == 2) CTX_PUT("... > ");
            o += ctx_frame(s, buf + o, n - o, c->mod[k], c->call[k]);
            if (k + 1 < shown) CTX_PUT(" > ");
        }
    }
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wformat-nonliteral"
#elif defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#endif
    snprintf(hook, sizeof hook, c->fmt, c->a, c->b);
#if defined(__clang__)
#pragma clang diagnostic pop
#elif defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
    const char *kind = hook_kind(c->fmt);
    CTX_PUT(": %s%s%s%s", hook, kind[0] ? " (" : "", kind, kind[0] ? ")" : "");
#undef CTX_PUT
    snprintf(out, outlen, "%s", buf);
}

/* Formats the hook stack into out[0..outlen) (see sim.h). */
static void ctx_format(const sim *S, const char *fmt, int a, int b, char *out, size_t outlen) {
    zs_sim_ctx c;
    ctx_save(S, fmt, a, b, &c);
    ctx_text(S->s, &c, out, outlen);
}

void zs_sim_context(const void *handle, char *buf, size_t len) {
    const sim *S = handle;
    if (!buf || !len) return;
    if (!S) {
        snprintf(buf, len, "(not running)");
        return;
    }
    ctx_format(S, S->ctx_fmt, S->ctx_a, S->ctx_b, buf, len);
}

void zs_sim_context_save(const void *handle, zs_sim_ctx *out) {
    const sim *S = handle;
    if (!out) return;
    if (!S) {
        memset(out, 0, sizeof *out);
        out->fixed = "(not running)";
        return;
    }
    ctx_save(S, S->ctx_fmt, S->ctx_a, S->ctx_b, out);
}

void zs_sim_context_format(const zs_scenario *s, const zs_sim_ctx *c, char *buf, size_t len) {
    if (!s || !c || !buf || !len) {
        if (buf && len) buf[0] = 0;
        return;
    }
    ctx_text(s, c, buf, len);
}

static void ctx_set(sim *S, const char *text) {
    S->ctx_fixed = text;
    if (S->o.context && S->o.context_len) snprintf(S->o.context, S->o.context_len, "%s", text);
}

/* Before every runtime entry point: what the simulator is doing (formatted
 * only if a violation is reported: fmt takes up to two int arguments) and
 * fresh event capture. */
static void hook_begin(sim *S, const char *fmt, int a, int b) {
    S->ctx_fmt = fmt;
    S->ctx_a = a;
    S->ctx_b = b;
    S->ctx_fixed = NULL;
    if (S->o.context && S->o.context_len) ctx_format(S, fmt, a, b, S->o.context, S->o.context_len);
    S->chk.what_fmt = fmt;
    S->chk.what_a = a;
    S->chk.what_b = b;
    S->chk.ev_have = 0;
    S->chk.ev_uninit = 0;
    S->scanned = 0;
}

/* zs_check_state after an entry point, noting a full scan that passed */
static void check_state(sim *S) {
    uint64_t sweeps = S->chk.n_sweeps;
    zs_check_state(&S->chk);
    if (S->chk.n_sweeps != sweeps && !S->chk.violated) S->scanned = 1;
}

/* zs_check_sweep, or nothing when a full scan passed on this very state
 * (its reads of the runtime would be the same, as would the checker's
 * caches it refreshes); a violation recorded since then is answered as
 * zs_check_sweep answers it.  1 if a violation is recorded. */
static int check_sweep(sim *S) {
    if (S->scanned) return S->chk.violated;
    uint64_t sweeps = S->chk.n_sweeps;
    int r = zs_check_sweep(&S->chk);
    if (S->chk.n_sweeps != sweeps && !S->chk.violated) S->scanned = 1;
    return r;
}

/* After every runtime entry point: count, progress the deferred backend,
 * report an error status, check the state. */
static void mismatch_stop(sim *S, const char *name) {
    if (!S->r->collective_mismatch) {
        S->r->collective_mismatch = 1;
        snprintf(S->r->mismatch_msg, sizeof S->r->mismatch_msg, "%s: %s", name, zo_last_error(S->rt));
        if (S->o.context || S->o.context_handle)
            ctx_format(S, S->ctx_fmt, S->ctx_a, S->ctx_b, S->r->mismatch_context, sizeof S->r->mismatch_context);
    }
    S->chk.seen_error_events = S->chk.n_error_events;
    S->stop = 1;
}

static zo_status hook_end(sim *S, zo_status st, const char *name) {
    S->r->hook_calls++;
    if (st == ZO_ERR_COLLECTIVE_MISMATCH && S->o.collective_mismatch_stops) {
        /* the world would hang here: a consequence of I8, which the world reports */
        mismatch_stop(S, name);
        return st;
    }
    if (st != ZO_OK && !S->chk.violated) {
        S->chk.seen_error_events = S->chk.n_error_events;
        zs_check_fail(&S->chk, ZS_INV_ERR, -1, -1, "%s returned %s: %s", name, zo_strerror(st), zo_last_error(S->rt));
    }
    if (S->s->cfg.deferred && S->s->cfg.progress_every && !S->o.world &&
        S->r->hook_calls % S->s->cfg.progress_every == 0)
        (void)zo_host_progress(S->be);
    check_state(S);
    if (S->chk.mismatch) mismatch_stop(S, name);
    if (S->chk.violated && S->o.stop_on_violation) S->stop = 1;
    if (S->nomem) S->stop = 1;
    return st;
}

/* Before an entry point that wipes runtime state (end of backward, graph
 * discard, release_all, forward abort): a full scan of the state the last
 * incremental check saw, and another after the call (check.h). */
static void wipe_begin(sim *S) {
    if (!S->chk.incremental) return;
    if (check_sweep(S) && S->o.stop_on_violation) S->stop = 1;
    zs_check_sweep_next(&S->chk);
}

static void counter_str(char *buf, size_t n, int valid, int64_t v) {
    if (valid)
        snprintf(buf, n, "%lld", (long long)v);
    else
        snprintf(buf, n, "?");
}

static void rg_list(char *buf, size_t n, const uint8_t *rg, unsigned k) {
    size_t o = 0;
    buf[0] = 0;
    for (unsigned i = 0; i < k && o + 3 < n; i++)
        o += (size_t)snprintf(buf + o, n - o, "%s%u", i ? "," : "", rg[i] ? 1u : 0u);
}

static void minfo(sim *S, unsigned m, zo_module_info *mi) {
    if (zo_module_get_info(S->rt, m, mi) != ZO_OK) memset(mi, 0, sizeof *mi);
}

/* before/after strings of a counter hook: legacy policies report the
 * module counter (uninitialised = "?"), per-call what the event says. */
static void counters(sim *S, int grads, const zo_module_info *before, unsigned m, char *b, char *a) {
    zo_module_info after;
    minfo(S, m, &after);
    if (S->legacy && grads) {
        counter_str(b, 24, before->grads_initialised && !S->chk.ev_uninit, before->grads_remaining);
        if (S->chk.ev_have && S->chk.ev_valid)
            counter_str(a, 24, 1, S->chk.ev_after);
        else
            counter_str(a, 24, after.grads_initialised, after.grads_remaining);
        return;
    }
    if (S->chk.ev_have && S->chk.ev_valid) {
        counter_str(b, 24, !S->chk.ev_uninit, S->chk.ev_before);
        counter_str(a, 24, 1, S->chk.ev_after);
    } else if (grads && !S->chk.ev_have) {
        counter_str(b, 24, before->grads_initialised, before->grads_remaining);
        counter_str(a, 24, after.grads_initialised, after.grads_remaining);
    } else {
        counter_str(b, 24, 0, 0);
        counter_str(a, 24, 0, 0);
    }
}

/* ------------------------------------------------------------------ */
/* Nodes                                                                */
/* ------------------------------------------------------------------ */

static int32_t new_node(sim *S, int kind, uint32_t module) {
    S->nodes = grow(S, S->nodes, &S->cap_nodes, S->n_nodes + 1, sizeof *S->nodes);
    if (S->nomem) return -1;
    node *n = &S->nodes[S->n_nodes];
    memset(n, 0, sizeof *n);
    n->kind = (uint8_t)kind;
    n->module = module;
    n->aux = -1;
    n->seq = (kind == N_ACC || kind == N_LEAF) ? SEQ_ACC : ++S->seq;
    n->e0 = S->n_edges;
    return (int32_t)S->n_nodes++;
}

/* Edges must be added right after new_node (contiguous). */
static void add_edge(sim *S, int32_t from, int32_t to) {
    if (from < 0 || to < 0) return;
    S->edges = grow(S, S->edges, &S->cap_edges, S->n_edges + 1, sizeof *S->edges);
    if (S->nomem) return;
    S->edges[S->n_edges++] = to;
    S->nodes[from].ne++;
}

/* AccumulateGrad node of parameter p (one per step; created lazily: it
 * has no creation order, sequence_nr UINT64_MAX, and no edges). */
static int32_t acc_node(sim *S, unsigned p) {
    if (S->acc[p] < 0) {
        S->acc[p] = new_node(S, N_ACC, ZO_NO_MODULE);
        if (S->acc[p] >= 0) S->nodes[S->acc[p]].param = p;
    }
    return S->acc[p];
}

static int32_t leaf_node(sim *S, int32_t *slot) {
    if (*slot < 0) *slot = new_node(S, N_LEAF, ZO_NO_MODULE);
    return *slot;
}

static xctx *new_xctx(sim *S, const zs_pass *p, int mode, int32_t *leaf) {
    /* the per-call tensors follow the struct in one allocation */
    size_t nc = p->n_calls ? p->n_calls : 1;
    xctx *x = s_calloc(S, 1, sizeof *x + nc * (sizeof *x->win + sizeof *x->out + sizeof *x->raw));
    S->xs = grow(S, S->xs, &S->cap_xs, S->n_xs + 1, sizeof *S->xs);
    if (!x || S->nomem) {
        s_free(S, x);
        S->nomem = 1;
        return NULL;
    }
    S->xs[S->n_xs++] = x;
    x->win = (void *)(x + 1);
    x->out = (void *)(x->win + nc);
    x->raw = (void *)(x->out + nc);
    x->p = p;
    x->mode = mode;
    x->region = -1;
    x->leaf = leaf;
    return x;
}

/* A reference in the scope of call `scope` (ZS_NONE: the step's code). */
static tensor resolve(sim *S, xctx *X, unsigned scope, const zs_ref *r) {
    tensor t = {0, -1};
    if (r->detach) return t;
    switch (r->kind) {
    case ZS_REF_BATCH_RG:
        t.rg = 1;
        t.prod = leaf_node(S, X->leaf);
        break;
    case ZS_REF_ARG:
        if (scope != ZS_NONE) t = X->win[scope][r->index];
        break;
    case ZS_REF_OUT:
        /* raw: the tensor the op made, cached by the module (no hook C node) */
        t = r->raw ? X->raw[r->call][r->index] : X->out[r->call][r->index];
        break;
    case ZS_REF_PARAM:
        /* a mixed input's parameter term: an edge to its AccumulateGrad */
        if (!(S->s->par[r->call].flags & ZS_PARAM_FROZEN)) {
            t.rg = 1;
            t.prod = acc_node(S, r->call);
        }
        break;
    default: break;
    }
    return t;
}

/* ------------------------------------------------------------------ */
/* Forward                                                              */
/* ------------------------------------------------------------------ */

static int run_call(sim *S, xctx *X, unsigned ci, const tensor *in, unsigned n_in, int grad);

static void module_compute(sim *S, unsigned m) {
    for (uint32_t k = S->pset_off[m]; k < S->pset_off[m + 1] && !S->stop; k++) {
        unsigned p = S->pset_ids[k];
        const void *data = NULL;
        size_t bytes = 0;
        hook_begin(S, "access m=%d p=%d", (int)(m), (int)(p));
        zo_status st = zo_param_access(S->rt, m, p, &data, &bytes);
        S->r->hook_calls++;
        if (st == ZO_ERR_COLLECTIVE_MISMATCH && S->o.collective_mismatch_stops) {
            /* an unplanned fetch at the access found the ranks diverged */
            mismatch_stop(S, "zo_param_access");
            return;
        }
        if (!S->chk.violated) {
            if (st != ZO_OK) S->chk.seen_error_events = S->chk.n_error_events;
            zs_check_access(&S->chk, m, p, st, data, bytes);
        }
        check_state(S);
        if (S->chk.violated && S->o.stop_on_violation) S->stop = 1;
    }
}

/* A reentrant checkpoint's CheckpointFunction node for call ci (body: its
 * checkpointed body, in[] the wrapped inputs; else the whole call): edges
 * to the inputs that require grad (*any set if one does) and the record its
 * backward recomputes from.  -1 if out of memory. */
static int32_t ckpt_node(sim *S, xctx *X, unsigned ci, const tensor *in, unsigned n_in, int body, int *any) {
    int32_t cn = new_node(S, N_CKPT, X->p->calls[ci].module);
    if (cn < 0) return -1;
    for (unsigned i = 0; i < n_in; i++)
        if (in[i].rg) {
            add_edge(S, cn, in[i].prod);
            *any = 1;
        }
    S->ckrecs = grow(S, S->ckrecs, &S->cap_ckrecs, S->n_ckrecs + 1, sizeof *S->ckrecs);
    if (S->nomem) return -1;
    ckrec *k = &S->ckrecs[S->n_ckrecs];
    k->x = X;
    k->ci = ci;
    k->n_in = n_in;
    k->body = (uint8_t)body;
    memcpy(k->in, in, n_in * sizeof *in);
    S->nodes[cn].aux = (int32_t)S->n_ckrecs++;
    return cn;
}

/* A full backward hook's BackwardHookFunction (N_HOOK) over the tensors
 * t[0..n) when one of them requires grad: one node joining them, which
 * then produces each of them.  -1 when out of memory. */
static int join_hook(sim *S, unsigned m, tensor *t, unsigned n) {
    int32_t bh = -1;
    for (unsigned i = 0; i < n; i++) {
        if (!t[i].rg) continue;
        if (bh < 0 && (bh = new_node(S, N_HOOK, m)) < 0) return -1;
        add_edge(S, bh, t[i].prod);
    }
    for (unsigned i = 0; bh >= 0 && i < n; i++)
        if (t[i].rg) t[i].prod = bh;
    return 0;
}

static int run_plain_body(sim *S, xctx *X, unsigned ci, const tensor *in, unsigned n_in, int grad);
static int run_body(sim *S, xctx *X, unsigned ci, int grad);
static int run_body_ckpt(sim *S, xctx *X, unsigned ci, unsigned n_in, int grad);

/* One call with its frame on the hook stack. */
static int run_plain(sim *S, xctx *X, unsigned ci, const tensor *in, unsigned n_in, int grad) {
    unsigned d = S->ctx_depth;
    if (d < S->ctx_cap) {
        S->ctx_call[d] = (zs_id)ci;
        S->ctx_mod[d] = X->p->calls[ci].module;
    }
    S->ctx_depth = d + 1;
    int r = run_plain_body(S, X, ci, in, n_in, grad);
    S->ctx_depth = d;
    return r;
}

static int run_plain_body(sim *S, xctx *X, unsigned ci, const tensor *in, unsigned n_in, int grad) {
    const zs_pass *P = X->p;
    const zs_call *c = &P->calls[ci];
    unsigned m = c->module;
    char rgs[32], b[24], a[24];
    uint8_t rg[ZS_MAX_OUT > ZS_MAX_IN ? ZS_MAX_OUT : ZS_MAX_IN];
    zo_grad_handle h[ZS_MAX_OUT > ZS_MAX_IN ? ZS_MAX_OUT : ZS_MAX_IN];
    zo_module_info mi;

    /* hook A */
    if (grad) X->any_grad = 1;
    tr(S, "A m=%u", m);
    hook_begin(S, "A m=%d", (int)(m), 0);
    hook_end(S, zo_pre_forward(S->rt, m, grad ? ZO_CALL_GRAD : 0), "zo_pre_forward");
    if (S->stop) return UNW_NO;

    /* hook D: the positional inputs; keyword inputs (after them in in[])
     * reach the body unwrapped */
    unsigned n_all = n_in;
    n_in = c->n_in < n_all ? c->n_in : n_all;
    for (unsigned i = n_in; i < n_all && i < ZS_MAX_IN + ZS_MAX_KW; i++) X->win[ci][i] = in[i];
    for (unsigned i = 0; i < n_in; i++) rg[i] = in[i].rg;
    memset(h, 0, sizeof h);
    if (TRACING(S)) minfo(S, m, &mi);
    hook_begin(S, "D m=%d", (int)(m), 0);
    zo_status st = zo_track_inputs(S->rt, m, n_in, rg, h);
    if (TRACING(S)) {
        rg_list(rgs, sizeof rgs, rg, n_in);
        counters(S, 1, &mi, m, b, a);
        tr(S, "D m=%u n=%u rg=%s c=%s->%s", m, n_in, rgs, b, a);
    }
    hook_end(S, st, "zo_track_inputs");
    if (S->stop) return UNW_NO;
    for (unsigned i = 0; i < n_in; i++) {
        tensor w = {0, -1};
        if (grad && in[i].rg) {
            int32_t nd = new_node(S, N_POST, m);
            if (nd < 0) return UNW_NO;
            S->nodes[nd].h = h[i];
            add_edge(S, nd, in[i].prod);
            w.rg = 1;
            w.prod = nd;
        }
        X->win[ci][i] = w;
    }
    /* BackwardHook.setup_input_hook over the (already wrapped) inputs */
    if (S->leaf_bwh[m] && join_hook(S, m, X->win[ci], n_in) < 0) return UNW_NO;

    /* body, inside a checkpoint of its own when ZS_CALL_CKPT_BODY */
    int r = run_body_ckpt(S, X, ci, n_in, grad);
    if (r != UNW_NO || S->stop) return r;

    /* hook B */
    tr(S, "B m=%u", m);
    hook_begin(S, "B m=%d", (int)(m), 0);
    hook_end(S, zo_post_forward(S->rt, m), "zo_post_forward");
    if (S->stop) return UNW_NO;

    /* hook C over what the body produced (X->out[ci]) */
    tensor src[ZS_MAX_OUT];
    for (unsigned j = 0; j < c->n_out; j++) {
        src[j] = X->out[ci][j];
        rg[j] = (uint8_t)(src[j].rg && !((c->out_norg >> j) & 1u));
    }
    memset(h, 0, sizeof h);
    hook_begin(S, "C m=%d", (int)(m), 0);
    st = zo_track_outputs(S->rt, m, c->n_out, rg, h);
    if (TRACING(S)) {
        rg_list(rgs, sizeof rgs, rg, c->n_out);
        counters(S, 0, &mi, m, b, a);
        tr(S, "C m=%u n=%u rg=%s r=%s->%s", m, c->n_out, rgs, b, a);
    }
    hook_end(S, st, "zo_track_outputs");
    if (S->stop) return UNW_NO;
    for (unsigned j = 0; j < c->n_out; j++) {
        tensor t = {0, -1};
        if (rg[j]) {
            int32_t nd = new_node(S, N_PRE, m);
            if (nd < 0) return UNW_NO;
            S->nodes[nd].h = h[j];
            add_edge(S, nd, src[j].prod);
            t.rg = 1;
            t.prod = nd;
        }
        X->out[ci][j] = t;
    }
    /* BackwardHook.setup_output_hook: in backward the joint node waits for
     * every output, then each output's pre-backward function runs (a
     * missing gradient arrives as None) */
    if (S->leaf_bwh[m] && join_hook(S, m, X->out[ci], c->n_out) < 0) return UNW_NO;
    return UNW_NO;
}

/* The body of call ci (child calls, raise, own op) with its wrapped inputs
 * in X->win[ci]; its outputs, before hook C, in X->out[ci].  Returns
 * UNW_NO, or how it unwound. */
static int run_body(sim *S, xctx *X, unsigned ci, int grad) {
    const zs_pass *P = X->p;
    const zs_call *c = &P->calls[ci];
    unsigned m = c->module;

    /* body: child calls (pre-order: ci's subtree ends at the first later
     * call whose parent comes before ci) */
    for (unsigned j = ci + 1; j < P->n_calls && !S->stop; j++) {
        const zs_call *ch = &P->calls[j];
        if (ch->parent == ZS_NONE || ch->parent < ci) break;
        if (ch->parent != ci) continue;
        tensor cin[ZS_MAX_IN + ZS_MAX_KW];
        for (unsigned i = 0; i < ch->n_in; i++) cin[i] = resolve(S, X, ci, &ch->in[i]);
        for (unsigned i = 0; i < ch->n_kw; i++) cin[ch->n_in + i] = resolve(S, X, ci, &ch->kw[i]);
        /* mixed inputs: the body's parameter-free op (a residual sum) over
         * the slot's tensor and its extra terms, made right before the call */
        for (unsigned k = 0; k < ch->n_mix;) {
            unsigned slot = ch->mix[k].slot, e = k;
            while (e < ch->n_mix && ch->mix[e].slot == slot) e++;
            tensor terms[1 + ZS_MAX_MIX];
            unsigned nt = 0;
            int any = cin[slot].rg;
            terms[nt++] = cin[slot];
            for (unsigned q = k; q < e; q++) {
                terms[nt] = resolve(S, X, ci, &ch->mix[q].ref);
                any |= terms[nt++].rg;
            }
            tensor t = {0, -1};
            if (grad && any) {
                int32_t nd = new_node(S, N_MIX, ZO_NO_MODULE);
                if (nd < 0) return UNW_NO;
                for (unsigned q = 0; q < nt; q++)
                    if (terms[q].rg) add_edge(S, nd, terms[q].prod);
                t.rg = 1;
                t.prod = nd;
            }
            cin[slot] = t;
            k = e;
        }
        int cgrad = grad && !(ch->flags & ZS_CALL_NO_GRAD);
        int r = run_call(S, X, j, cin, (unsigned)ch->n_in + ch->n_kw, cgrad);
        if (S->stop) return UNW_NO;
        if (r == UNW_NO || r == (int)ci) continue;
        return r; /* unwound through this call */
    }

    /* raise */
    if (c->flags & ZS_CALL_RAISE) {
        unsigned cm = c->catcher == ZS_NONE ? ZO_NO_MODULE : P->calls[c->catcher].module;
        wipe_begin(S);
        if (S->stop) return UNW_NO;
        tr(S, "ABORT catcher=%d", c->catcher == ZS_NONE ? -1 : (int)cm);
        hook_begin(S, "ABORT catcher=%d", (int)(c->catcher == ZS_NONE ? -1 : (int)cm), 0);
        hook_end(S, zo_forward_abort(S->rt, cm), "zo_forward_abort");
        return c->catcher == ZS_NONE ? UNW_OUT : (int)c->catcher;
    }

    /* own op */
    module_compute(S, m);
    if (S->stop) return UNW_NO;
    tensor used[ZS_MAX_USE];
    int any = S->trainable[m];
    for (unsigned k = 0; k < c->n_use; k++) {
        used[k] = resolve(S, X, ci, &c->use[k]);
        any |= used[k].rg;
    }
    int outrg = grad && any;
    int32_t op = -1;
    unsigned n_own = 0; /* outputs the op makes (the others alias a tensor of the scope) */
    for (unsigned j = 0; j < c->n_out; j++) n_own += !((c->out_alias >> j) & 1u);
    if (outrg && n_own > 0) {
        op = new_node(S, N_OP, m);
        if (op < 0) return UNW_NO;
        /* an op that saves nothing is no entry of a non-reentrant region */
        S->nodes[op].aux = c->op_nosave ? -1 : X->region;
        for (unsigned k = 0; k < c->n_use; k++)
            if (used[k].rg) add_edge(S, op, used[k].prod);
        for (uint32_t k = S->pset_off[m]; k < S->pset_off[m + 1]; k++) {
            unsigned p = S->pset_ids[k];
            if (S->s->par[p].flags & ZS_PARAM_FROZEN) continue;
            /* creating an AccumulateGrad node adds no edge: op's edges stay contiguous */
            int32_t an = acc_node(S, p);
            if (an < 0) return UNW_NO;
            add_edge(S, op, an);
        }
        /* torch 2.x, early stop: the op's saved tensor is packed as the
         * Function returns; the pack of the region's last saved tensor
         * raises _StopRecomputationError, which unwinds every call still
         * open in the recompute (no hook B or C) up to the unpack hook */
        if (!c->op_nosave && S->stop_left && --S->stop_left == 0) return UNW_STOP;
    }

    /* the body's outputs: the op's, or a tensor of the scope returned as is */
    for (unsigned j = 0; j < c->n_out; j++) {
        tensor t = {(uint8_t)outrg, op};
        if ((c->out_alias >> j) & 1u) {
            t = resolve(S, X, ci, &c->alias[j]);
            t.rg = (uint8_t)(grad && t.rg);
        }
        X->out[ci][j] = t;
        X->raw[ci][j] = t;
    }
    return UNW_NO;
}

/* The body of call ci between its hooks D and B: plain, or - with
 * ZS_CALL_CKPT_BODY, grad enabled, in a forward (not a recompute) - as
 * transformers' GradientCheckpointingLayer runs it:
 * checkpoint(partial(forward, self, **kw), *args, use_reentrant=...) over
 * the n_in positional inputs hook D wrapped. */
static int run_body_ckpt(sim *S, xctx *X, unsigned ci, unsigned n_in, int grad) {
    const zs_call *c = &X->p->calls[ci];
    int bk = grad && X->mode == X_NORMAL && (c->flags & ZS_CALL_CKPT_BODY) &&
             (c->flags & (ZS_CALL_CKPT_RE | ZS_CALL_CKPT_NRE));
    if (bk && (c->flags & ZS_CALL_CKPT_RE)) {
        /* CheckpointFunction.apply over the wrapped inputs: node first, the
         * body under no_grad; every output is the node's */
        int any = 0;
        int32_t cn = ckpt_node(S, X, ci, X->win[ci], n_in, 1, &any);
        if (cn < 0) return UNW_NO;
        int r = run_body(S, X, ci, 0);
        for (unsigned j = 0; j < c->n_out; j++) {
            X->out[ci][j].rg = (uint8_t)any;
            X->out[ci][j].prod = any ? cn : -1;
        }
        return r;
    }
    if (bk) {
        /* non-reentrant: the body's ops are the region's */
        S->regions = grow(S, S->regions, &S->cap_regions, S->n_regions + 1, sizeof *S->regions);
        if (S->nomem) return UNW_NO;
        region *g = &S->regions[S->n_regions];
        memset(g, 0, sizeof *g);
        g->x = X;
        g->ci = ci;
        g->n_in = n_in;
        g->body = 1;
        memcpy(g->in, X->win[ci], n_in * sizeof *g->in);
        g->start = S->n_nodes;
        X->region = (int)S->n_regions++;
        int r = run_body(S, X, ci, 1);
        region *rg = &S->regions[X->region];
        rg->end = S->n_nodes;
        for (uint32_t i = rg->start; i < rg->end; i++)
            if (S->nodes[i].kind == N_OP && S->nodes[i].aux == X->region) rg->n_saved++;
        X->region = -1;
        return r;
    }
    return run_body(S, X, ci, grad);
}

/* A checkpointed body's recompute: the body alone (no hook of the call's
 * own module), on inputs in[0..n_in), with the call's frame on the hook
 * stack. */
static int run_body_recompute(sim *S, xctx *X, unsigned ci, const tensor *in, unsigned n_in) {
    unsigned d = S->ctx_depth;
    if (d < ZS_MAX_CALLS + 1) {
        S->ctx_call[d] = (uint8_t)ci;
        S->ctx_mod[d] = X->p->calls[ci].module;
    }
    S->ctx_depth = d + 1;
    memcpy(X->win[ci], in, n_in * sizeof *in);
    int r = run_body(S, X, ci, 1);
    S->ctx_depth = d;
    return r;
}

static int run_call(sim *S, xctx *X, unsigned ci, const tensor *in, unsigned n_in, int grad) {
    const zs_call *c = &X->p->calls[ci];
    /* (a checkpointed body is run_plain_body's) */
    int ck = grad && X->mode == X_NORMAL && !(c->flags & ZS_CALL_CKPT_BODY) &&
             (c->flags & (ZS_CALL_CKPT_RE | ZS_CALL_CKPT_NRE));
    if (ck && (c->flags & ZS_CALL_CKPT_RE)) {
        /* CheckpointFunction.apply: node first, region under no_grad */
        int any = 0;
        int32_t cn = ckpt_node(S, X, ci, in, n_in, 0, &any);
        if (cn < 0) return UNW_NO;
        int r = run_plain(S, X, ci, in, n_in, 0);
        for (unsigned j = 0; j < c->n_out; j++) {
            X->out[ci][j].rg = (uint8_t)any;
            X->out[ci][j].prod = any ? cn : -1;
        }
        return r;
    }
    if (ck && (c->flags & ZS_CALL_CKPT_NRE)) {
        S->regions = grow(S, S->regions, &S->cap_regions, S->n_regions + 1, sizeof *S->regions);
        if (S->nomem) return UNW_NO;
        region *g = &S->regions[S->n_regions];
        memset(g, 0, sizeof *g);
        g->x = X;
        g->ci = ci;
        g->n_in = n_in;
        memcpy(g->in, in, n_in * sizeof *in);
        g->start = S->n_nodes;
        X->region = (int)S->n_regions++;
        int r = run_plain(S, X, ci, in, n_in, 1);
        region *rg = &S->regions[X->region];
        rg->end = S->n_nodes;
        for (uint32_t i = rg->start; i < rg->end; i++)
            if (S->nodes[i].kind == N_OP && S->nodes[i].aux == X->region) rg->n_saved++;
        X->region = -1;
        return r;
    }
    return run_plain(S, X, ci, in, n_in, grad);
}

/* ------------------------------------------------------------------ */
/* Backward                                                             */
/* ------------------------------------------------------------------ */

static int hless(const hent *a, const hent *b) /* CompareNodeTaskTime */
{
    if (a->depth != b->depth) return a->depth < b->depth;
    return a->seq < b->seq;
}

static void push_up(hent *f, uint32_t hole, uint32_t top, hent v) {
    uint32_t parent = hole ? (hole - 1) / 2 : 0;
    while (hole > top && hless(&f[parent], &v)) {
        f[hole] = f[parent];
        hole = parent;
        parent = hole ? (hole - 1) / 2 : 0;
    }
    f[hole] = v;
}

static void adjust(hent *f, uint32_t hole, uint32_t len, hent v) {
    uint32_t top = hole, second = hole;
    while (len > 0 && second < (len - 1) / 2) {
        second = 2 * (second + 1);
        if (hless(&f[second], &f[second - 1])) second--;
        f[hole] = f[second];
        hole = second;
    }
    if ((len & 1) == 0 && len >= 2 && second == (len - 2) / 2) {
        second = 2 * (second + 1);
        f[hole] = f[second - 1];
        hole = second - 1;
    }
    push_up(f, hole, top, v);
}

static int fuzz_before(const hent *a, const hent *b) {
    if (a->depth != b->depth) return a->depth > b->depth;
    if (a->seq != b->seq) return a->seq > b->seq;
    return a->push < b->push;
}

/* Engine order: the libstdc++ heap.  Fuzzed order: an array kept sorted in
 * priority order (depth, then sequence_nr, higher first; then push order),
 * so the ready nodes of the innermost traversal are a prefix. */
static void hpush(sim *S, int32_t nd, uint32_t depth) {
    S->heap = grow(S, S->heap, &S->cap_heap, S->n_heap + 1, sizeof *S->heap);
    if (S->nomem) return;
    hent e = {depth, S->nodes[nd].seq, nd, S->push_count++};
    if (S->order_mode == ZS_ORDER_ENGINE) {
        S->heap[S->n_heap++] = e;
        push_up(S->heap, S->n_heap - 1, 0, e);
        return;
    }
    uint32_t lo = 0, hi = S->n_heap; /* first position whose entry e goes before */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (fuzz_before(&S->heap[mid], &e))
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(&S->heap[lo + 1], &S->heap[lo], (S->n_heap - lo) * sizeof *S->heap);
    S->heap[lo] = e;
    S->n_heap++;
}

/* Next node to run at this depth, or -1 when this traversal is done. */
static int32_t hpop(sim *S, uint32_t depth) {
    if (S->n_heap == 0) return -1;
    if (S->order_mode == ZS_ORDER_ENGINE) {
        if (S->heap[0].depth != depth) return -1;
        int32_t nd = S->heap[0].node;
        uint32_t len = S->n_heap;
        if (len > 1) {
            hent v = S->heap[len - 1];
            S->heap[len - 1] = S->heap[0];
            adjust(S->heap, 0, len - 1, v);
        }
        S->n_heap--;
        return nd;
    }
    /* fuzzed: the ready nodes of this traversal are the sorted prefix (depth
     * is the array's first key, descending): its length by binary search */
    if (S->heap[0].depth != depth) return -1;
    uint32_t n = 1, hi = S->n_heap; /* heap[n - 1] is at depth, heap[hi] is not */
    while (n < hi) {
        uint32_t mid = n + (hi - n) / 2;
        if (S->heap[mid].depth == depth)
            n = mid + 1;
        else
            hi = mid;
    }
    if (S->o.on_choice) S->o.on_choice(S->o.choice_user, S->order_pos, n);
    unsigned byte = S->order_pos < S->s->n_order ? S->s->order[S->order_pos] : 0;
    S->order_pos++;
    uint32_t pick = byte % n;
    int32_t nd = S->heap[pick].node;
    memmove(&S->heap[pick], &S->heap[pick + 1], (S->n_heap - pick - 1) * sizeof *S->heap);
    S->n_heap--;
    return nd;
}

static void run_traversal(sim *S, int32_t root, uint32_t depth);

static void graph_begin(sim *S, unsigned flags, zo_graph *g, int *num) {
    *num = S->graph_count++;
    tr(S, "FWD g=%d", *num);
    hook_begin(S, "FWD g=%d", (int)(*num), 0);
    *g = 0;
    hook_end(S, zo_forward_begin(S->rt, flags, g), "zo_forward_begin");
}

static void graph_end(sim *S, zo_graph g, int num) {
    tr(S, "ENDFWD g=%d", num);
    hook_begin(S, "ENDFWD g=%d", (int)(num), 0);
    hook_end(S, zo_forward_end(S->rt, g), "zo_forward_end");
}

static void run_ckpt_body(sim *S, const ckrec *kp, const zs_call *c, uint32_t depth);

static void run_ckpt(sim *S, const node *cn, uint32_t depth) {
    ckrec k = S->ckrecs[cn->aux];
    const zs_call *c = &k.x->p->calls[k.ci];
    S->r->recomputes++;
    S->ctx_recompute++;
    run_ckpt_body(S, &k, c, depth);
    S->ctx_recompute--;
}

static void run_ckpt_body(sim *S, const ckrec *kp, const zs_call *c, uint32_t depth) {
    ckrec k = *kp;
    zo_graph g;
    int num;
    graph_begin(S, 0, &g, &num);
    if (S->stop) return;
    xctx *X2 = new_xctx(S, k.x->p, X_RECOMP, k.x->leaf);
    if (!X2) return;
    tensor in2[ZS_MAX_IN];
    for (unsigned i = 0; i < k.n_in; i++) {
        in2[i].rg = k.in[i].rg;
        in2[i].prod = k.in[i].rg ? new_node(S, N_LEAF, ZO_NO_MODULE) : -1; /* detached copies */
    }
    if (k.body)
        (void)run_body_recompute(S, X2, k.ci, in2, k.n_in);
    else
        (void)run_call(S, X2, k.ci, in2, k.n_in, 1);
    if (S->stop) return;
    graph_end(S, g, num);
    if (S->stop) return;
    int32_t roots[ZS_MAX_OUT];
    unsigned nr = 0;
    /* (a body's outputs have no hook C: an output without grad is left out here) */
    for (unsigned j = 0; j < c->n_out; j++)
        if (X2->out[k.ci][j].rg && !(k.body && ((c->out_norg >> j) & 1u))) roots[nr++] = X2->out[k.ci][j].prod;
    if (nr == 0) {
        torch_error(S, "none of output has requires_grad=True, this checkpoint() is not necessary");
        return;
    }
    tr(S, "BWD g=%d retain=0", num);
    hook_begin(S, "BWD g=%d", (int)(num), 0);
    hook_end(S, zo_backward_begin(S->rt, g, 0), "zo_backward_begin");
    if (S->stop) return;
    uint64_t outer_gid = S->gid;
    S->gid = ++S->n_gids;
    int32_t root = roots[0];
    if (nr > 1) {
        root = new_node(S, N_GROOT, ZO_NO_MODULE);
        if (root < 0) return;
        for (unsigned i = 0; i < nr; i++) add_edge(S, root, roots[i]);
    }
    run_traversal(S, root, depth + 1);
    S->gid = outer_gid;
    if (S->stop) return;
    wipe_begin(S);
    if (S->stop) return;
    tr(S, "ENDBWD g=%d", num);
    hook_begin(S, "ENDBWD g=%d", (int)(num), 0);
    hook_end(S, zo_backward_end(S->rt, g), "zo_backward_end");
    ev_end(S);
}

static void recompute_region(sim *S, int ri) {
    region g = S->regions[ri];
    S->r->recomputes++;
    xctx *X3 = new_xctx(S, g.x->p, X_RECOMP, g.x->leaf);
    if (!X3) return;
    S->ctx_recompute++;
    S->stop_left = S->torch_profile == ZS_TORCH_2 ? g.n_saved : 0;
    int r = g.body ? run_body_recompute(S, X3, g.ci, g.in, g.n_in) : run_call(S, X3, g.ci, g.in, g.n_in, 1);
    S->stop_left = 0;
    if (r == UNW_STOP && !S->stop) {
        /* the calls still open in the recompute never run hooks B and C:
         * they leave the runtime's forward stack as an exception caught
         * outside every module does (no trace line: nothing fires) */
        wipe_begin(S);
        if (!S->stop) {
            hook_begin(S, "recompute early stop", 0, 0);
            hook_end(S, zo_forward_abort(S->rt, ZO_NO_MODULE), "zo_forward_abort");
        }
    }
    S->ctx_recompute--;
}

static void run_node(sim *S, int32_t nd, uint32_t depth) {
    node n = S->nodes[nd];
    char b[24], a[24];
    zo_module_info mi;
    switch (n.kind) {
    case N_PRE:
        if (TRACING(S)) minfo(S, n.module, &mi);
        hook_begin(S, "PRE m=%d", (int)(n.module), 0);
        if (n.h) {
            zo_status st = zo_output_grad(S->rt, n.h);
            if (TRACING(S)) {
                counters(S, 0, &mi, n.module, b, a);
                tr(S, "PRE m=%u r=%s->%s", n.module, b, a);
            }
            hook_end(S, st, "zo_output_grad");
        } else if (TRACING(S)) {
            counter_str(b, sizeof b, S->legacy, mi.pre_backward_ref_cnt);
            tr(S, "PRE m=%u r=%s->%s", n.module, b, b);
        }
        break;
    case N_POST:
        if (TRACING(S)) minfo(S, n.module, &mi);
        hook_begin(S, "POST m=%d", (int)(n.module), 0);
        if (n.h) {
            zo_status st = zo_input_grad(S->rt, n.h);
            if (TRACING(S)) {
                counters(S, 1, &mi, n.module, b, a);
                tr(S, "POST m=%u c=%s->%s", n.module, b, a);
            }
            hook_end(S, st, "zo_input_grad");
        } else if (TRACING(S)) {
            counter_str(b, sizeof b, mi.grads_initialised, mi.grads_remaining);
            tr(S, "POST m=%u c=%s->%s", n.module, b, b);
        }
        break;
    case N_ACC:
        tr(S, "PGRAD p=%u", n.param);
        hook_begin(S, "PGRAD p=%d", (int)(n.param), 0);
        hook_end(S, zo_param_grad_ready(S->rt, n.param), "zo_param_grad_ready");
        break;
    case N_OP:
        if (n.aux >= 0 && S->torch_profile != ZS_TORCH_113) {
            /* torch 2.x _checkpoint_hook.unpack_hook: the first unpack in a
             * graph task (each backward, a retained graph's second one
             * too) recomputes the region - up to its last saved tensor
             * with early stop, all of it without - and every saved tensor
             * is unpacked once per graph task (a node runs once per
             * backward, so the "unpacked once" CheckpointError cannot
             * happen here) */
            region *g = &S->regions[n.aux];
            if (g->recomputed_gid != S->gid) {
                g->recomputed_gid = S->gid;
                recompute_region(S, n.aux);
                if (S->stop) return;
            }
        } else if (n.aux >= 0) {
            /* torch 1.13 _checkpoint_without_reentrant: storage is a
             * WeakKeyDictionary keyed by the SavedVariables' Holders.  The
             * first unpack with an empty storage recomputes the region and
             * fills an entry for every Holder still alive; entries die with
             * their Holder, i.e. when the node ran in a backward without
             * retain_graph (release_variables). */
            region *g = &S->regions[n.aux];
            if (g->n_stored == 0) {
                recompute_region(S, n.aux);
                if (S->stop) return;
                g = &S->regions[n.aux];
                for (uint32_t i = g->start; i < g->end; i++)
                    if (S->nodes[i].kind == N_OP && S->nodes[i].aux == n.aux && !S->nodes[i].freed) {
                        S->nodes[i].stored = 1;
                        g->n_stored++;
                    }
            }
            if (!S->nodes[nd].stored) {
                torch_error(S, "Attempt to retrieve a tensor saved by autograd multiple times "
                               "without checkpoint recomputation being triggered in between");
                return;
            }
        }
        module_compute(S, n.module);
        if (n.aux >= 0 && S->torch_profile == ZS_TORCH_113 && !S->cur_retain) {
            S->nodes[nd].freed = 1;
            S->nodes[nd].stored = 0;
            S->regions[n.aux].n_stored--;
        }
        break;
    case N_CKPT: run_ckpt(S, &n, depth); break;
    default: break; /* loss, GraphRoot, leaf AccumulateGrad: no hook */
    }
}

static void run_traversal(sim *S, int32_t root, uint32_t depth) {
    uint32_t nn = S->n_nodes;
    int32_t *deps = s_calloc(S, nn ? nn : 1, sizeof *deps);
    uint8_t *seen = s_calloc(S, nn ? nn : 1, 1);
    int32_t *stack = s_alloc(S, (nn ? nn : 1) * sizeof *stack);
    if (!deps || !seen || !stack) {
        S->nomem = 1;
        S->stop = 1;
        goto out;
    }
    /* compute_dependencies: one count per edge from a reachable node */
    uint32_t sp = 0;
    stack[sp++] = root;
    seen[root] = 1;
    while (sp) {
        int32_t x = stack[--sp];
        const node *n = &S->nodes[x];
        for (uint32_t e = 0; e < n->ne; e++) {
            int32_t t = S->edges[n->e0 + e];
            deps[t]++;
            if (!seen[t]) {
                seen[t] = 1;
                stack[sp++] = t;
            }
        }
    }
    hpush(S, root, depth);
    while (!S->stop) {
        int32_t x = hpop(S, depth);
        if (x < 0) break;
        run_node(S, x, depth);
        if (S->stop) break;
        const node *n = &S->nodes[x];
        for (uint32_t e = 0; e < n->ne; e++) {
            int32_t t = S->edges[n->e0 + e];
            if (t < (int32_t)nn && --deps[t] == 0) hpush(S, t, depth);
        }
    }
out:
    s_free(S, deps);
    s_free(S, seen);
    s_free(S, stack);
}

/* ------------------------------------------------------------------ */
/* Steps                                                                */
/* ------------------------------------------------------------------ */

/* I3 after `what` (a format taking the int a, formatted if reported) */
static void check_i3(sim *S, const char *what, int a) {
    S->chk.what_fmt = what;
    S->chk.what_a = a;
    S->chk.what_b = 0;
    zs_check_released(&S->chk, 0);
    if (S->chk.violated && S->o.stop_on_violation) S->stop = 1;
}

static void discard(sim *S, spass *P) {
    wipe_begin(S);
    if (S->stop) return;
    tr(S, "DISCARD g=%d", P->num);
    hook_begin(S, "DISCARD g=%d", (int)(P->num), 0);
    zo_status st = zo_graph_discard(S->rt, P->g);
    /* the runtime ends a graph in which no call had grad enabled (eval, or
     * everything under no_grad) at zo_forward_end: nothing to discard */
    if (st == ZO_ERR_BAD_HANDLE && !P->x->any_grad) {
        S->chk.seen_error_events = S->chk.n_error_events;
        st = ZO_OK;
    }
    hook_end(S, st, "zo_graph_discard");
    P->discarded = 1;
}

static void forward(sim *S, spass *P, const zs_pass *pass, int eval) {
    memset(P, 0, sizeof *P);
    P->loss = -1;
    P->leaf = -1;
    P->x = new_xctx(S, pass, X_NORMAL, &P->leaf);
    if (!P->x) return;
    S->ctx_phase = eval ? "eval forward" : "forward";
    S->ctx_pass = (int)(pass - S->s->step[S->chk.step].pass);
    S->ctx_graph = -1;
    graph_begin(S, ZO_FWD_ROOT | (eval ? ZO_FWD_EVAL : 0), &P->g, &P->num);
    if (S->stop) return;
    const zs_call *c0 = &pass->calls[0];
    tensor in[ZS_MAX_IN];
    for (unsigned i = 0; i < c0->n_in; i++) in[i] = resolve(S, P->x, ZS_NONE, &c0->in[i]);
    int grad = !eval && !(c0->flags & ZS_CALL_NO_GRAD);
    int r = run_call(S, P->x, 0, in, c0->n_in, grad);
    if (S->stop) return;
    if (r != UNW_NO) {
        P->aborted = 1;
        /* an exception caught outside every module abandons the forward:
         * like any forward it must end released (I3), checked here rather
         * than left to the optimizer step's sweep, which would hide it */
        check_i3(S, "after a forward abandoned by an exception", 0);
        return;
    }
    graph_end(S, P->g, P->num);
    if (S->stop) return;
    if (eval) {
        check_i3(S, "after eval forward", 0);
        if (S->stop) return;
        discard(S, P);
        return;
    }
    if (!P->x->any_grad) {
        /* a train pass run entirely under no_grad ends here, like an eval
         * forward (the runtime frees its graph at zo_forward_end) */
        check_i3(S, "after no-grad forward", 0);
        if (S->stop) return;
    }
    int32_t loss = -1;
    for (unsigned j = 0; j < c0->n_out; j++) {
        if (!(pass->loss_mask & (1u << j)) || !P->x->out[0][j].rg) continue;
        if (loss < 0) loss = new_node(S, N_LOSS, ZO_NO_MODULE);
        if (loss < 0) return;
        add_edge(S, loss, P->x->out[0][j].prod);
    }
    P->loss = loss;
}

static void backward(sim *S, spass *P, int retain) {
    if (S->stop || P->aborted || P->discarded || P->freed || !P->x) return;
    S->ctx_phase = "backward";
    S->ctx_pass = (int)(P->x->p - S->s->step[S->chk.step].pass);
    S->ctx_graph = P->num;
    if (P->loss < 0) {
        /* A pass in which no call had grad ended at zo_forward_end (the
         * runtime's rule); if later passes of the step were built since,
         * their state (prefetches for their own backward) is not this
         * pass's to release, so I3 is only meaningful when it was the last
         * graph built. */
        int ended_earlier = P->x && !P->x->any_grad && P->num != S->graph_count - 1;
        discard(S, P);
        if (!S->stop && !S->o.skip_discard_i3 && !ended_earlier) check_i3(S, "after DISCARD", 0);
        return;
    }
    S->r->backwards++;
    tr(S, "BWD g=%d retain=%d", P->num, retain);
    hook_begin(S, "BWD g=%d", (int)(P->num), 0);
    hook_end(S, zo_backward_begin(S->rt, P->g, retain), "zo_backward_begin");
    if (S->stop) return;
    S->n_heap = 0;
    S->cur_retain = retain;
    S->gid = ++S->n_gids;
    run_traversal(S, P->loss, 0);
    if (S->stop) return;
    wipe_begin(S);
    if (S->stop) return;
    S->chk.what_fmt = "before ENDBWD g=%d";
    S->chk.what_a = P->num;
    S->chk.what_b = 0;
    zs_check_released(&S->chk, 1);
    tr(S, "ENDBWD g=%d", P->num);
    hook_begin(S, "ENDBWD g=%d", (int)(P->num), 0);
    hook_end(S, zo_backward_end(S->rt, P->g), "zo_backward_end");
    ev_end(S);
    if (S->stop) return;
    check_i3(S, "after ENDBWD g=%d", P->num);
    if (!retain) P->freed = 1;
}

static void sweep(sim *S) {
    if (S->stop) return;
    S->ctx_phase = "optimizer step";
    S->ctx_pass = -1;
    S->ctx_graph = -1;
    wipe_begin(S);
    if (S->stop) return;
    tr(S, "SWEEP");
    hook_begin(S, "SWEEP", (int)(0), 0);
    hook_end(S, zo_release_all(S->rt), "zo_release_all");
    ev_end(S);
    if (!S->stop) check_i3(S, "after SWEEP", 0);
}

static void free_step(sim *S) {
    for (uint32_t i = 0; i < S->n_xs; i++) s_free(S, S->xs[i]);
    S->n_xs = 0;
    S->n_regions = 0;
    S->n_ckrecs = 0;
    /* nodes of finished steps are unreachable; keep the arena (seq numbers
     * keep growing, as PyTorch's do) but drop the storage */
    S->n_nodes = 0;
    S->n_edges = 0;
    for (unsigned p = 0; p < S->s->n_params; p++) S->acc[p] = -1;
}

static void run_step(sim *S, unsigned si) {
    const zs_step *st = &S->s->step[si];
    spass P[ZS_MAX_PASSES];
    memset(P, 0, sizeof P);
    S->chk.step = (int)si;
    tr(S, "STEP %u %s", si, zs_step_kind_name(st->kind));
    switch (st->kind) {
    case ZS_STEP_EVAL: forward(S, &P[0], &st->pass[0], 1); break;
    case ZS_STEP_TRAIN:
        forward(S, &P[0], &st->pass[0], 0);
        backward(S, &P[0], 0);
        sweep(S);
        break;
    case ZS_STEP_RETAIN:
        forward(S, &P[0], &st->pass[0], 0);
        backward(S, &P[0], 1);
        backward(S, &P[0], 0);
        sweep(S);
        break;
    case ZS_STEP_ACCUM:
        for (unsigned k = 0; k < st->n_passes && !S->stop; k++) {
            forward(S, &P[k], &st->pass[k], 0);
            backward(S, &P[k], 0);
        }
        sweep(S);
        break;
    case ZS_STEP_INTERLEAVE:
        for (unsigned k = 0; k < st->n_passes && !S->stop; k++) forward(S, &P[k], &st->pass[k], 0);
        for (unsigned k = 0; k < st->n_passes && !S->stop; k++) backward(S, &P[k], 0);
        sweep(S);
        break;
    default: break;
    }
    free_step(S);
}

/* ------------------------------------------------------------------ */

void zs_sim_opts_init(zs_sim_opts *o) {
    memset(o, 0, sizeof *o);
    o->policy = -1;
    o->order_mode = -1;
    o->max_bytes_per_param = ZS_SIM_DEFAULT_CAP;
    o->stop_on_violation = 1;
    o->verify_collectives = -1;
}

/* zs_module_param_set(s, m, out), with m's uses marked in mark[] (n_params
 * bytes, all 0, left so) by one pass over the uses instead of a pass for
 * each parameter */
static int module_param_set(const zs_scenario *s, unsigned m, uint8_t *mark, zs_id *out) {
    int leaf = zs_module_gathers_subtree(s, m);
    for (unsigned u = 0; u < s->n_uses; u++)
        if (s->use[u].module == m && s->use[u].param < s->n_params) mark[s->use[u].param] = 1;
    int n = 0;
    for (unsigned p = 0; p < s->n_params; p++) {
        unsigned o = s->par[p].owner;
        if (o == m || mark[p] || (leaf && zs_module_is_ancestor(s, m, o))) out[n++] = (zs_id)p;
        mark[p] = 0;
    }
    return n;
}

static int setup(sim *S) {
    const zs_scenario *s = S->s;
    zo_host_config hc = ZO_HOST_CONFIG_INIT;
    zo_host_testing ht = ZO_HOST_TESTING_INIT;
    hc.testing = &ht;
    hc.world_size = s->cfg.world_size;
    hc.rank = s->cfg.rank;
    ht.deferred = S->o.world ? 0 : s->cfg.deferred; /* world backends complete at the match */
    ht.max_bytes_per_param = S->o.max_bytes_per_param;
    hc.world = S->o.world;
    hc.allocator = S->al;
    zo_status st = zo_backend_host_create(&hc, &S->be);
    if (st) {
        zs_check_fail(&S->chk, ZS_INV_ERR, -1, -1, "zo_backend_host_create: %s", zo_strerror(st));
        return -1;
    }
    S->chk.backend = S->be;
    if (S->o.wrap_backend) {
        st = S->o.wrap_backend(S->o.wrap_user, S->be, &S->rt_be);
        if (st) {
            zs_check_fail(&S->chk, ZS_INV_ERR, -1, -1, "wrap_backend: %s", zo_strerror(st));
            return -1;
        }
    }
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.world_size = s->cfg.world_size;
    cfg.rank = s->cfg.rank;
    cfg.grads_policy = (zo_grads_policy)S->policy;
    cfg.ds_profile = (zo_ds_profile)s->cfg.ds_profile; /* ZS_DS_* = ZO_DS_* */
    cfg.param_persistence_threshold = s->cfg.param_persistence_threshold;
    cfg.model_persistence_threshold = s->cfg.model_persistence_threshold;
    cfg.prefetch_bucket_size = s->cfg.prefetch_bucket_size;
    cfg.max_live_parameters = s->cfg.max_live_parameters;
    cfg.max_reuse_distance = s->cfg.max_reuse_distance;
    cfg.backend = S->rt_be ? S->rt_be : S->be;
    cfg.allocator = S->al;
    cfg.on_event = zs_check_event;
    cfg.event_user = &S->chk;
    cfg.verify_collectives = S->o.verify_collectives >= 0 ? S->o.verify_collectives : s->cfg.verify_collectives;
    st = zo_runtime_create(&cfg, &S->rt);
    if (st) {
        zs_check_fail(&S->chk, ZS_INV_ERR, -1, -1, "zo_runtime_create: %s", zo_strerror(st));
        return -1;
    }
    S->chk.rt = S->rt;
    for (unsigned i = 0; i < s->n_modules; i++) {
        zo_module_id id;
        zo_module_id parent = s->mod[i].parent == ZS_NONE ? ZO_NO_MODULE : s->mod[i].parent;
        S->chk.what_fmt = "register module %d"; /* formatted if reported */
        S->chk.what_a = (int)i;
        unsigned mflags = ((s->mod[i].flags & ZS_MOD_Z3_LEAF) ? ZO_MODULE_Z3_LEAF : 0) |
                          ((s->mod[i].flags & ZS_MOD_GATHER_ALWAYS) ? ZO_MODULE_GATHER_ALWAYS : 0);
        st = zo_module_register(S->rt, parent, NULL, mflags, &id);
        if (st || id != i) {
            zs_check_fail(&S->chk, ZS_INV_ERR, (long)i, -1, "zo_module_register: %s (id %u)", zo_strerror(st), id);
            return -1;
        }
    }
    for (unsigned i = 0; i < s->n_params; i++) {
        zo_param_id id;
        const zs_param *p = &s->par[i];
        S->chk.what_fmt = "register param %d"; /* formatted if reported */
        S->chk.what_a = (int)i;
        st = zo_param_register(S->rt, p->owner, NULL, p->numel, p->elem_size,
                               (p->flags & ZS_PARAM_FROZEN) ? ZO_PARAM_FROZEN : 0, &id);
        if (st == ZO_ERR_NOMEM) {
            /* a resource limit, not a finding: the host backend could not
             * hold the shards (with a cap of 0 it stores every byte) */
            snprintf(S->r->setup_msg, sizeof S->r->setup_msg, "zo_param_register(param %u): %s", i,
                     zo_last_error(S->rt));
            return -1;
        }
        if (st || id != i) {
            zs_check_fail(&S->chk, ZS_INV_ERR, -1, (long)i, "zo_param_register: %s: %s", zo_strerror(st),
                          zo_last_error(S->rt));
            return -1;
        }
    }
    S->chk.shadow = S->shadow;
    S->chk.n_params = s->n_params;
    for (unsigned i = 0; i < s->n_uses; i++) {
        S->chk.what_fmt = "use %d"; /* formatted if reported */
        S->chk.what_a = (int)i;
        st = zo_module_use_param(S->rt, s->use[i].module, s->use[i].param);
        if (st) {
            zs_check_fail(&S->chk, ZS_INV_ERR, s->use[i].module, s->use[i].param, "zo_module_use_param: %s",
                          zo_strerror(st));
            return -1;
        }
    }
    /* the parameter set each module's op reads, and the runtime's view of it;
     * a module that neither gathers its subtree nor uses a parameter it does
     * not own reads its own parameters (zs_module_param_set, without its
     * scan of every parameter and use for each module) */
    zs_id *tmp = S->pset_tmp;
    uint32_t total = 0, cap = 0;
    uint32_t *own_off = s_calloc(S, (size_t)s->n_modules + 1, sizeof *own_off);
    zs_id *own_ids = s_alloc(S, (s->n_params ? s->n_params : 1) * sizeof *own_ids);
    /* USES and the flags below per module, then module_param_set's marks */
    size_t nmods = s->n_modules ? s->n_modules : 1;
    uint8_t *uses = s_calloc(S, nmods + (s->n_params ? s->n_params : 1), 1);
    if (!own_off || !own_ids || !uses) {
        s_free(S, own_off);
        s_free(S, own_ids);
        s_free(S, uses);
        S->nomem = 1;
        return -1;
    }
    for (unsigned p = 0; p < s->n_params; p++) own_off[s->par[p].owner + 1]++;
    for (unsigned m = 0; m < s->n_modules; m++) own_off[m + 1] += own_off[m];
    for (unsigned p = 0; p < s->n_params; p++) own_ids[own_off[s->par[p].owner]++] = (zs_id)p;
    for (unsigned m = s->n_modules; m > 0; m--) own_off[m] = own_off[m - 1]; /* back to starts */
    own_off[0] = 0;
    /* zs_module_in_leaf and zs_module_gathers_subtree of every module, and
     * whether it is a gather-always module or inside one's subtree (its
     * fetch set, zo_module_params, is the runtime's business there, not the
     * op's parameter set), in one pass: modules are in pre-order, a parent
     * before its children */
    enum { USES = 1, IN_LEAF = 2, UNDER_GA = 4, GA_SCOPE = 8, GATHERS = 16 };
    for (unsigned u = 0; u < s->n_uses; u++) uses[s->use[u].module] = USES;
    for (unsigned m = 0; m < s->n_modules; m++) {
        unsigned f = s->mod[m].flags, pa = s->mod[m].parent;
        if (pa < m) {
            unsigned pf = s->mod[pa].flags, pu = uses[pa];
            if ((pu & IN_LEAF) || (pf & ZS_MOD_Z3_LEAF)) uses[m] |= IN_LEAF;
            if ((pu & UNDER_GA) || (pf & ZS_MOD_GATHER_ALWAYS)) uses[m] |= UNDER_GA;
            if (pu & GA_SCOPE) uses[m] |= GA_SCOPE;
        }
        if (f & ZS_MOD_GATHER_ALWAYS) uses[m] |= GA_SCOPE;
        if ((f & ZS_MOD_Z3_LEAF) || ((f & ZS_MOD_GATHER_ALWAYS) && !(uses[m] & (IN_LEAF | UNDER_GA))))
            uses[m] |= GATHERS;
    }
    for (unsigned m = 0; m < s->n_modules; m++) {
        int n;
        if (!(uses[m] & (USES | GATHERS))) {
            n = (int)(own_off[m + 1] - own_off[m]);
            memcpy(tmp, own_ids + own_off[m], (size_t)n * sizeof *tmp);
        } else {
            n = module_param_set(s, m, uses + nmods, tmp);
        }
        S->pset_off[m] = total;
        S->pset_ids = grow(S, S->pset_ids, &cap, total + (uint32_t)n + 1, sizeof *S->pset_ids);
        if (S->nomem) break;
        memcpy(S->pset_ids + total, tmp, (size_t)n * sizeof *tmp);
        total += (uint32_t)n;
        S->pset_off[m + 1] = total;
        S->trainable[m] = 0;
        for (int k = 0; k < n; k++)
            if (!(s->par[tmp[k]].flags & ZS_PARAM_FROZEN)) S->trainable[m] = 1;
        S->leaf_bwh[m] = 0;
        if (S->legacy && s->cfg.ds_profile == ZS_DS_019 && (s->mod[m].flags & ZS_MOD_Z3_LEAF) && !(uses[m] & IN_LEAF))
            for (unsigned p = 0; p < s->n_params && !S->leaf_bwh[m]; p++) {
                if (s->par[p].flags & ZS_PARAM_FROZEN) continue;
                for (unsigned a = s->par[p].owner; a != ZS_NONE; a = a ? s->mod[a].parent : ZS_NONE)
                    if (a == m) {
                        S->leaf_bwh[m] = 1;
                        break;
                    }
            }
        if (uses[m] & (IN_LEAF | GA_SCOPE)) continue;
        zo_param_id *buf = S->pset_rt;
        size_t nr = 0;
        if (zo_module_params(S->rt, m, buf, s->n_params, &nr) == ZO_OK) {
            int same = nr == (size_t)n;
            for (size_t k = 0; same && k < nr; k++) same = buf[k] == tmp[k];
            if (!same) {
                S->chk.what_fmt = NULL;
                snprintf(S->chk.what, sizeof S->chk.what, "setup");
                zs_check_fail(&S->chk, ZS_INV_ERR, (long)m, -1,
                              "zo_module_params gives %zu parameters, the scenario model %d", nr, n);
                break;
            }
        }
    }
    s_free(S, own_off);
    s_free(S, own_ids);
    s_free(S, uses);
    if (S->nomem || S->chk.violated) return -1;
    zs_check_state(&S->chk);
    return S->chk.violated ? -1 : 0;
}

/* The per-scenario arrays of S (sized by S->s) in one allocation: 0, or -1
 * if out of memory. */
static int alloc_arrays(sim *S) {
    const zs_scenario *s = S->s;
    size_t np = s->n_params ? s->n_params : 1, nm = s->n_modules ? s->n_modules : 1;
    unsigned maxc = 1;
    for (unsigned i = 0; i < s->n_steps && i < ZS_MAX_STEPS; i++)
        for (unsigned k = 0; k < s->step[i].n_passes && k < ZS_MAX_PASSES; k++)
            if (s->step[i].pass[k].n_calls > maxc) maxc = s->step[i].pass[k].n_calls;
    size_t nctx = (size_t)maxc + 1; /* a pass's calls nest at most n_calls deep */
    /* 8-byte members first, then the 4-byte ones, then the bytes */
    size_t inc = (zs_check_incremental_size(s->n_params) + 7) / 8 * 8;
    size_t bytes = inc + np * sizeof(zo_param_id) + np * sizeof(int32_t) + np * sizeof(zs_id) +
                   (nm + 1) * sizeof(uint32_t) + 2 * nctx * sizeof(zs_id) + 2 * nm + np;
    char *a = s_alloc(S, bytes);
    if (!a) return -1;
    S->arrays = a;
    S->chk_inc = a;
    a += inc;
    S->pset_rt = (zo_param_id *)a;
    a += np * sizeof(zo_param_id);
    S->acc = (int32_t *)a;
    a += np * sizeof(int32_t);
    S->pset_tmp = (zs_id *)a;
    a += np * sizeof(zs_id);
    S->pset_off = (uint32_t *)a;
    a += (nm + 1) * sizeof(uint32_t);
    S->ctx_call = (zs_id *)a;
    a += nctx * sizeof(zs_id);
    S->ctx_mod = (zs_id *)a;
    a += nctx * sizeof(zs_id);
    S->ctx_cap = (unsigned)nctx;
    S->trainable = (uint8_t *)a;
    S->leaf_bwh = (uint8_t *)a + nm;
    S->shadow = (uint8_t *)a + 2 * nm;
    memset(S->trainable, 0, 2 * nm + np);
    return 0;
}

int zs_sim_run(const zs_scenario *s, const zs_sim_opts *opts, zs_sim_result *r) {
    zo_allocator al = {NULL, NULL, NULL};
    if (opts && opts->allocator) al = *opts->allocator;
    sim *S = al_alloc(&al, sizeof *S);
    if (S) memset(S, 0, sizeof *S);
    memset(r, 0, sizeof *r);
    if (!S) {
        r->setup_error = 1;
        snprintf(r->setup_msg, sizeof r->setup_msg, "out of memory");
        return -1;
    }
    S->s = s;
    S->al = al;
    if (opts)
        S->o = *opts;
    else
        zs_sim_opts_init(&S->o);
    S->r = r;
    S->policy = S->o.policy >= 0 ? S->o.policy : s->cfg.policy;
    S->order_mode = S->o.order_mode >= 0 ? S->o.order_mode : s->cfg.order_mode;
    S->legacy = S->policy != ZO_GRADS_PER_CALL;
    S->torch_profile = s->cfg.torch_profile;
    if (alloc_arrays(S)) {
        al_free(&al, S);
        r->setup_error = 1;
        snprintf(r->setup_msg, sizeof r->setup_msg, "out of memory");
        return -1;
    }
    for (unsigned p = 0; p < s->n_params; p++) S->acc[p] = -1;
    zs_check_init(&S->chk, s, S->policy, S->o.abort_on_violation);
    S->chk.log = S->o.events;
    S->chk.mismatch_stops = S->o.collective_mismatch_stops;
    S->chk.on_fail = S->o.on_violation;
    S->chk.fail_user = S->o.violation_user;
    S->ctx_phase = "setup";
    S->ctx_pass = -1;
    S->ctx_graph = -1;
    ctx_set(S, "setup");
    if (S->o.context_handle) *S->o.context_handle = S;

    if (setup(S) == 0) {
        zs_check_incremental(&S->chk, S->chk_inc);
        for (unsigned si = 0; si < s->n_steps && !S->stop; si++) run_step(S, si);
        /* the incremental checks leave some of the runtime's bookkeeping to
         * full scans: one more on the state the last check saw (not after
         * a collective mismatch, whose hook is left unchecked) */
        if (!S->r->collective_mismatch) check_sweep(S);
    } else {
        r->setup_error = 1;
    }
    if (S->nomem && !S->chk.violated) {
        r->setup_error = 1;
        snprintf(r->setup_msg, sizeof r->setup_msg, "simulator out of memory");
    }
    if (S->rt) zo_get_stats(S->rt, &r->stats);
    r->violated = S->chk.violated;
    r->v = S->chk.v;
    if (r->setup_error && S->chk.violated) snprintf(r->setup_msg, sizeof r->setup_msg, "%s", S->chk.v.msg);
    r->events = S->chk.n_events;
    r->i3_checks = S->chk.i3_checks;
    r->i3_hook_checks = S->chk.i3_hook_checks;
    r->i3_hook_misses = S->chk.i3_hook_misses;
    memcpy(r->i3_hook_first, S->chk.i3_hook_first, sizeof r->i3_hook_first);

    ctx_set(S, "teardown (zo_runtime_destroy)");
    zo_runtime_destroy(S->rt);
    if (S->rt_be && S->o.unwrap_backend) S->o.unwrap_backend(S->o.wrap_user, S->rt_be);
    zo_backend_destroy(S->be);
    if (S->o.context_handle) *S->o.context_handle = NULL;
    free_step(S);
    s_free(S, S->nodes);
    s_free(S, S->edges);
    s_free(S, S->regions);
    s_free(S, S->ckrecs);
    s_free(S, S->xs);
    s_free(S, S->heap);
    s_free(S, S->pset_ids);
    s_free(S, S->arrays);
    /* a setup that failed without a finding (out of memory: the
     * simulator's, or the host backend's for the shards) is no verdict */
    int ret = r->violated ? 1 : r->setup_error ? -1 : 0;
    al_free(&al, S);
    return ret;
}
