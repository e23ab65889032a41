/*
 * internal.h - private data structures of libzoffload.  Not installed.
 *
 * Naming follows DeepSpeed: ds_status, ds_active_sub_modules,
 * ds_grads_remaining, applied_pre_backward_ref_cnt, __submodule_order,
 * __param_order, __param_queue, __most_recent_step_id_param_fetched_for.
 */
#ifndef ZO_INTERNAL_H
#define ZO_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "zoffload.h"
#include "zoffload_backend.h"

#define ZO_NONE32          UINT32_MAX
#define ZO_MAX_MODULES     (1u << 20)
#define ZO_MAX_PARAMS      (1u << 20)
#define ZO_MAX_CALLS       (1u << 20)
#define ZO_MAX_SLOTS       (1u << 20)
#define ZO_MAX_NAME        255
/* elements of all parameters of a runtime together (zo_runtime.total_numel) */
#define ZO_MAX_TOTAL_NUMEL ((uint64_t)INT64_MAX)

/* a small helper of a per-fetch path, inlined even where the compiler
 * would rather call it */
#if defined(__GNUC__)
#define ZO_HOT_INLINE static inline __attribute__((always_inline))
#else
#define ZO_HOT_INLINE static inline
#endif

/* collective fingerprint (zo_config.verify_collectives), util.c */
#define ZO_FP_BYTES   64
#define ZO_FP_MAX_IDS 7
enum { ZO_FP_KIND_GATHER = 1, ZO_FP_KIND_STEP = 2 };
typedef struct zo_fp_acc {
    uint64_t hash;        /* over (param id, numel, elem_size) in issue order */
    uint64_t total_numel; /* elements */
    uint32_t n;           /* parameters */
    zo_param_id ids[ZO_FP_MAX_IDS];
} zo_fp_acc;

/* grad handle kinds (layout: runtime.c, mk_handle) */
enum { ZO_H_LEGACY_IN = 1, ZO_H_LEGACY_OUT = 2, ZO_H_CALL_IN = 3, ZO_H_CALL_OUT = 4 };

/* A module is three records indexed by its id: zo_mod, what the hooks of
 * every policy touch (one 64-byte line: rt->mods is line-aligned),
 * zo_mod_cold, what registration, rebuild and introspection use, and
 * zo_mod_ds, the DeepSpeed-shaped policies' counters. */
typedef struct zo_mod {
    /* derived (rebuilt when rt->dirty): what fetch_sub_module gathers */
    zo_param_id *fetch; /* sorted unique */
    uint32_t n_fetch;
    uint32_t n_trainable;
    uint32_t spare;          /* (free: keeps the record one line) */
    uint32_t last_ended;     /* call record awaiting hook C */
    uint16_t last_ended_gen; /* its generation (call generations are <= ZO_H_GEN_MASK) */
    uint8_t in_leaf;         /* some strict ancestor is a z3 leaf */
    uint8_t ga;              /* effective ZO_MODULE_GATHER_ALWAYS: flag set, not in a leaf, not held */
    /* per-call bookkeeping */
    uint32_t activations; /* calls holding the module active */
    uint32_t open_calls;  /* calls on the forward stack */
    uint32_t open_windows;
    int64_t window_sum;     /* sum of open window counts */
    uint64_t ready_epoch;   /* backward epoch of ready_count */
    uint32_t ready_count;   /* trainable params whose grad is ready */
    zo_module_id ga_holder; /* the gather-always ancestor holding its parameters, or ZO_NO_MODULE */
} zo_mod;
_Static_assert(sizeof(zo_mod) == 64, "the hot module record is one cache line");

typedef struct zo_mod_cold {
    zo_module_id parent;
    unsigned flags;
    char *name;
    zo_param_id *own; /* parameters(recurse=False) */
    uint32_t n_own, cap_own;
    zo_param_id *ext; /* tied / external uses */
    uint32_t n_ext, cap_ext;
    uint64_t fetch_numel;
    uint64_t rec_numel; /* numel of iter_params(m, recurse=True): the parameters owned in its
                                 subtree plus its own external ones (DeepSpeed's reuse window when a
                                 z3 leaf is released) */
} zo_mod_cold;

typedef struct zo_mod_ds {
    int64_t grads;      /* ds_grads_remaining */
    int64_t refcnt;     /* applied_pre_backward_ref_cnt */
    uint8_t grads_init; /* hasattr(module, "ds_grads_remaining") */
    uint8_t ref_init;
    uint8_t in_bwd;                  /* in __active_backward_submodules (DeepSpeed 0.19) */
    zo_module_id bwd_prev, bwd_next; /* its neighbours in that order (while in_bwd) */
    zo_param_id *recomp;             /* ds_recompute_parameters (ZO_DS_0_19*) */
    uint32_t n_recomp, cap_recomp;
} zo_mod_ds;

/* A parameter is a record and two counters indexed by its id: zo_par,
 * what a fetch, a release, an access and a wait touch (32 bytes, two to a
 * line: rt->pars is line-aligned), the low 32 bits of its gather count and
 * its grad-ready epoch (4 and 8 bytes, in id order: a gather writes one, a
 * grad-ready the other), and zo_par_cold, the rest.  A gather reads only
 * zo_par (the partition size is numel / W rounded up, zo__part_numel). */
typedef struct zo_par {
    void *full;
    uint64_t numel;
    /* ds_active_sub_modules: act0, then act[0 .. n_act-2] of the cold record */
    uint32_t n_act;
    zo_module_id act0;
    uint32_t work;       /* slot in rt->works, or ZO_NONE32 */
    unsigned status : 2; /* zo_param_status */
    unsigned persistent : 1, trainable : 1;
    unsigned ds_reg : 1;    /* in DeepSpeed's __inflight_param_registry (the DeepSpeed-shaped
                                 policies): from the coordinator's all-gather until a fetch of one
                                 of its modules pops it, even after a wait of another parameter of
                                 the same coalesced gather made it AVAILABLE */
    unsigned esz_m1 : 6;    /* element size in bytes - 1 (elem_size is 1..64) */
    unsigned live_pos : 21; /* 1 + its index in rt->live_pars, 0: not in it */
} zo_par;
_Static_assert(sizeof(zo_par) == 32, "the hot parameter record is half a cache line");
_Static_assert((1u << 21) > ZO_MAX_PARAMS, "live_pos holds every parameter index");


typedef struct zo_par_cold {
    uint64_t part_numel;
    uint32_t elem_size;
    zo_module_id owner;
    char *name;
    zo_module_id *act; /* ds_active_sub_modules after act0 */
    uint32_t cap_act;
    uint32_t gathers_hi; /* the gather count's high 32 bits (rt->pgathers: the low ones) */
} zo_par_cold;

/* elements of p's shard: numel / W rounded up (zo_par_cold.part_numel) */
static inline uint64_t zo__part_numel(uint64_t numel, uint64_t world) { return numel / world + (numel % world != 0); }

#define ZO_WORK_INLINE 2
typedef struct zo_work_rec {
    zo_work *work;
    zo_param_id *params; /* kept when the slot is retired (cap_params); a work of up to
                            ZO_WORK_INLINE parameters lists them in inl instead (zo__work_params) */
    uint32_t n_params;   /* 0: the slot is free (a work lists at least one parameter) */
    uint32_t cap_params;
    zo_param_id inl[ZO_WORK_INLINE];
} zo_work_rec;
_Static_assert(sizeof(zo_work_rec) == 32, "two registry slots to a line");

/* the parameters of a registry slot's work */
static inline const zo_param_id *zo__work_params(const zo_work_rec *wr) {
    return wr->n_params <= ZO_WORK_INLINE ? wr->inl : wr->params;
}

/* one line (rt->calls is 64-byte aligned) */
#define ZO_IN_STATE_INLINE 8
typedef struct zo_call_rec {
    uint32_t gen;
    zo_module_id m;
    uint32_t graph;       /* graph slot */
    int32_t window_count; /* inputs still to come (at most n_tracked < 2^20) */
    uint32_t n_tracked;   /* inputs counted by the window */
    uint32_t n_in;        /* inputs with a state (0: no window was ever opened) */
    uint32_t n_out;
    uint32_t mod_next, mod_prev;
    uint32_t ggen;     /* its graph slot's generation when it was made (zo__call_live) */
    uint32_t held_pos; /* 1 + its index in rt->held_calls, 0: not in it */
    uint8_t in_use;
    uint8_t on_stack; /* between hook A and hook B */
    uint8_t d_done, c_done, ended;
    uint8_t recompute; /* made while a backward was running */
    uint8_t grad;      /* grad enabled at the call */
    uint8_t fwd_active, bwd_active, hold;
    uint8_t has_window, window_open;
    /* per input: 0 untracked, 1 armed, 2 used (zo__in_state): in the
     * record up to ZO_IN_STATE_INLINE inputs, allocated beyond */
    union {
        uint8_t *heap;
        uint8_t inl[ZO_IN_STATE_INLINE];
    } in_st;
} zo_call_rec;
_Static_assert(sizeof(zo_call_rec) == 64, "a call record is one cache line");

static inline uint8_t *zo__in_state(zo_call_rec *c) {
    return c->n_in <= ZO_IN_STATE_INLINE ? c->in_st.inl : c->in_st.heap;
}
/* frees an allocated input state (n_in is still its size) */
void zo__in_state_free(zo_runtime *rt, zo_call_rec *c);

/* a call of a graph, as its graph lists it: the record and its module,
 * with ZO_GC_SOLE when the module had no other live call when this one
 * was made (so while the call is still its module's list head, it is the
 * only one on the list: newer calls are linked before it) */
typedef struct zo_graph_call {
    uint32_t idx;
    uint32_t m_sole; /* module id | ZO_GC_SOLE */
} zo_graph_call;
#define ZO_GC_SOLE   0x80000000u
#define ZO_GC_MOD(e) ((zo_module_id)((e).m_sole & ~ZO_GC_SOLE))

typedef struct zo_graph_rec {
    uint32_t gen;
    uint8_t in_use;
    uint8_t building; /* forward pass open */
    uint8_t running;  /* backward running */
    uint8_t retain;
    uint8_t any_grad; /* some call had grad enabled */
    uint8_t eval, root;
    uint32_t free_next; /* the free list of graph slots */
    uint32_t seq;       /* creation order */
    uint32_t n_held;    /* its calls on rt->held_calls (zo__call_held_sync) */
    /* its live calls in creation order (calls[n_calls - 1] the newest),
     * with their modules, so that freeing the graph need not read a
     * record that has nothing left to do (free_graph); the array stays
     * with the slot when the slot is freed */
    zo_graph_call *calls;
    uint32_t n_calls, cap_calls;
} zo_graph_rec;

enum { ZO_CTX_FWD = 1, ZO_CTX_BWD = 2 };
typedef struct zo_ctx {
    uint8_t type;
    uint32_t graph; /* slot */
    uint64_t epoch; /* BWD: backward epoch */
} zo_ctx;

typedef struct zo_ptrace {
    zo_param_id p;
    uint32_t step; /* step_id_last_used_at (a trace holds at most INT32_MAX steps) */
} zo_ptrace;

/* PartitionedParameterCoordinator */
typedef struct zo_coord {
    zo_trace_mode mode;
    zo_module_id *order; /* __submodule_order */
    uint64_t *order_step;
    size_t n_order, cap_order;
    zo_ptrace *porder; /* __param_order */
    size_t n_porder;
    size_t qpos;           /* __param_queue = porder[qpos..] */
    uint32_t *most_recent; /* __most_recent_step_id_param_fetched_for: mr_base + a step of the
                              trace, anything below mr_base: none since reset_step */
    size_t n_most_recent;
    uint32_t mr_base, mr_span; /* reset_step advances mr_base by mr_span (a step is < mr_span) */
    uint64_t step_id;          /* __step_id */
    /* reuse distance acceleration, valid when COMPLETE */
    uint64_t *prefix;    /* prefix[k]: numel of order[0..k-1] (NULL once lim holds it) */
    uint32_t *pos_start; /* CSR: positions of each param in order */
    uint32_t *pos;       /* pos2: p's (at most two) positions at pos[2p], pos[2p + 1] */
    int pos2;
    uint32_t *lim; /* lim[s]: first position k >= s with prefix[k] - prefix[s] >=
                      max_reuse_distance, n_order if none, in prefix's block (NULL: compare the sums) */
    size_t n_pos_params;
    /* DeepSpeed's functools.lru_cache on __params_to_release (the
     * DeepSpeed-shaped policies): (module, step id) -> the parameters it
     * decided to release, kept for the coordinator's lifetime (never
     * invalidated, not even with the trace) */
    struct zo_relcache_ent *rc;
    size_t rc_cap, rc_n; /* open addressing, rc_cap a power of two */
    zo_param_id *rc_pool;
    size_t rc_pool_n, rc_pool_cap;
} zo_coord;

typedef struct zo_relcache_ent {
    uint64_t step;
    zo_module_id m; /* ZO_NO_MODULE: empty slot */
    uint32_t n;
    size_t start; /* in rc_pool */
} zo_relcache_ent;

typedef struct zo_name_slot {
    uint32_t id1;  /* module id + 1, 0: empty */
    uint32_t hash; /* mod_name_hash(parent, name) */
} zo_name_slot;

typedef struct zo_policy zo_policy; /* policy.h */

struct zo_runtime {
    zo_config cfg;
    const zo_policy *pol; /* cfg.grads_policy's hooks (policy.h) */
    zo_allocator al;
    zo_backend *backend;
    int own_backend;
    char err[512];
    uint8_t tag; /* handle tag, 1..63: every handle it issues carries it */

    zo_mod *mods; /* line-aligned inside mods_raw */
    zo_mod_cold *mcold;
    zo_mod_ds *mds; /* only under the DeepSpeed-shaped policies (NULL under per-call) */
    /* the head of each module's intrusive list of live call records
     * (through zo_call_rec.mod_next/mod_prev), or ZO_NONE32: apart from
     * zo_mod, so that freeing a graph's calls, which unlinks each from its
     * module's list, reads 4 bytes per module instead of its record (and,
     * for a call that is its module's only one, not the call record
     * either: free_graph) */
    uint32_t *mod_calls;
    void *mods_raw;
    uint32_t n_mods, cap_mods, cap_mcold, cap_mds, cap_mod_calls;
    /* named modules by (parent, name): open addressing, linear probing,
     * cap a power of two or 0, load at most 1/2 (the duplicate-name check
     * of zo_module_register).  A slot keeps the key's hash next to the
     * module, so growing the table and probing past other names read only
     * the table (not the module records and name strings). */
    struct zo_name_slot *mod_names; /* line-aligned inside mod_names_raw */
    void *mod_names_raw;
    uint32_t cap_mod_names, n_mod_names;
    zo_par *pars;       /* line-aligned inside pars_raw */
    zo_par_cold *pcold; /* line-aligned inside pcold_raw */
    uint32_t *pgathers; /* all-gathers issued, low 32 bits (zo_par_cold.gathers_hi) */
    uint64_t *pready;   /* backward epoch its grad became ready */
    void *pars_raw, *pcold_raw;
    uint32_t n_pars, cap_pars, cap_pcold, cap_pgathers, cap_pready;
    uint64_t persistent_total;
    /* elements of all registered parameters, at most ZO_MAX_TOTAL_NUMEL
     * (zo_param_register), so that no sum of numels the runtime keeps
     * overflows: live and persistent live numel, a module's fetch numel,
     * and DeepSpeed's __n_available_params above zero (at most the live
     * numel; below zero it drifts, zo__ds_avail_sub) */
    uint64_t total_numel;
    int dirty; /* fetch lists need rebuilding */
    /* derived at zo__rebuild: every module's fetch list, in module order
     * (zo_mod.fetch points into it), and every parameter's users, in
     * parameter order: p's are users_all[users_start[p] .. users_start[p + 1]) */
    zo_param_id *fetch_all;
    zo_module_id *users_all;
    uint32_t *users_start; /* n_pars + 1 entries */
    zo_param_id *pers_ids; /* the persistent parameters in id order (valid while !dirty) */
    uint32_t n_pers_ids;
    /* the parameters the per-step sweeps (zo_release_all, reset_step, the
     * end-of-pass sweep, _clean_inflight_param_registry) have to look at:
     * gathered or in flight, active for some module, or in DeepSpeed's
     * in-flight registry (zo__par_live_move keeps it); unordered, so a
     * sweep walks a copy sorted by id (zo__live_pars_sorted), the order a
     * walk over every parameter had.  Capacity n_pars, reserved at
     * registration: adding never allocates. */
    uint32_t *live_pars, *live_sorted;
    uint32_t n_live_pars, cap_live_pars, cap_live_sorted;

    uint32_t *fstack; /* open call records, innermost last */
    uint32_t n_fstack, cap_fstack;

    zo_call_rec *calls; /* line-aligned inside calls_raw */
    void *calls_raw;
    uint32_t n_calls, cap_calls;
    /* free call records, a stack (the top reused first); a record that
     * free_graph freed without reading it is still marked in_use
     * (zo__call_live says it is not live) and is finished when it is
     * taken again (alloc_call): its generation is raised then */
    uint32_t *free_calls;
    uint32_t n_free_calls, cap_free_calls;
    uint32_t live_calls;
    /* call records holding their module for backward (bwd_active or hold
     * set: zo__call_held_sync keeps it), unordered, and a buffer of
     * cap_calls entries for a sorted copy (the order of a walk over every
     * record); both grown with calls */
    uint32_t *held_calls, *calls_tmp;
    uint32_t n_held_calls, cap_held_calls, cap_calls_tmp;

    zo_graph_rec *graphs;
    uint32_t n_graphs, cap_graphs;
    uint32_t graphs_free; /* free list through free_next */
    uint32_t graph_seq;

    zo_ctx *ctx;
    uint32_t n_ctx, cap_ctx;
    uint32_t n_bwd_ctx;              /* entries of ctx of type ZO_CTX_BWD */
    uint64_t bwd_epoch;              /* outermost backward counter */
    zo_module_id bwd_head, bwd_tail; /* its oldest and newest module (while n_bwd_mods > 0) */
    uint32_t n_bwd_mods;             /* modules in it */
    uint64_t ds_step_grads;          /* gradients ready since the last zo_release_all (ZO_DS_0_19) */
    int64_t ds_n_available;          /* DeepSpeed's __n_available_params (the DeepSpeed-shaped policies'
                                 prefetch budget, kept only under them): += numel gathered by the
                                 coordinator, -= numel released (zo__ds_avail_sub), 0 at reset_step */

    zo_gather_item *gitems; /* zo__gather's items for the backend */
    uint32_t cap_gitems;
    zo_work_rec *works;
    uint32_t n_works, cap_works;
    uint32_t *works_free; /* stack of free slots in works, O(1) reuse */
    uint32_t n_works_free, cap_works_free;

    zo_coord coord[2]; /* [0] train, [1] eval */

    zo_stats st;
    uint64_t ev_seq;
    uint64_t max_numel; /* largest parameter */

    /* verify_collectives: the fingerprint exchanged before each collective */
    uint64_t coll_seq; /* fingerprinted collectives so far (exchanges attempted) */
    uint8_t fp_send[ZO_FP_BYTES];
    uint8_t *fp_recv; /* W * ZO_FP_BYTES, allocated at create when verifying */

    zo_param_id *scratch;    /* temp id buffer, n_pars entries after rebuild */
    uint32_t *mark1, *mark2; /* per-param stamps (set membership): p is in set k when
                                markk[p] == the stamp taken for it (zo__stamp) */
    uint32_t cap_marks;
    uint32_t stamp;
    /* backend->ops->prefetch of a version 3 vtable, else NULL */
    void (*be_prefetch)(void *ctx, zo_param_id param);
};

/* util.c */
void *zo__alloc(zo_runtime *rt, size_t bytes);
void *zo__calloc(zo_runtime *rt, size_t n, size_t size);
void zo__free(zo_runtime *rt, void *p);
/* grows *arr (elements of esz bytes, capacity *cap) to hold `need`; ZO_OK/NOMEM */
zo_status zo__reserve_grow(zo_runtime *rt, void **arr, uint32_t *cap, uint32_t need, size_t esz);
static inline zo_status zo__reserve(zo_runtime *rt, void **arr, uint32_t *cap, uint32_t need, size_t esz) {
    if (need <= *cap) return ZO_OK; /* the common case, checked where it is called */
    return zo__reserve_grow(rt, arr, cap, need, esz);
}
zo_status zo__reserve_sz(zo_runtime *rt, void **arr, size_t *cap, size_t need, size_t esz);
/* zo__reserve for an array kept 64-byte aligned: *arr points into the
 * allocation *raw (what zo__free takes) */
zo_status zo__reserve_aligned(zo_runtime *rt, void **arr, void **raw, uint32_t *cap, uint32_t need, size_t esz);
zo_status zo__fail(zo_runtime *rt, zo_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* errors without a runtime (creation, NULL rt): the thread-local message
 * zo_last_error(NULL) returns; returns st */
zo_status zo__fail_tls(zo_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
const char *zo__tls_error(void);
/* errors of const introspection functions: the message only (no
 * ZO_EV_ERROR event, as zo_check_consistency); returns st */
zo_status zo__fail_const(const zo_runtime *rt, zo_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* an event of kind k with sequence number seq at the current step about
 * module m and parameter p, every other field zero */
static inline void zo__event_head(const zo_runtime *rt, zo_event *ev, uint64_t seq, zo_event_kind k, zo_module_id m,
                                  zo_param_id p) {
    memset(ev, 0, sizeof *ev);
    ev->kind = k;
    ev->seq = seq;
    ev->step = rt->st.steps;
    ev->module = m;
    ev->param = p;
}
/* delivers an event to cfg.on_event (set) with sequence number seq */
void zo__emit_to(zo_runtime *rt, uint64_t seq, zo_event_kind k, zo_module_id m, zo_param_id p, zo_graph g,
                 int64_t before, int64_t after, int valid, const char *detail);
/* every event takes a sequence number, delivered or not; without a sink
 * that is all it costs (its arguments are not even computed) */
#define zo__emit(rt, k, m, p, g, before, after, valid, detail)                                                         \
    do {                                                                                                               \
        zo_runtime *zo__ert = (rt);                                                                                    \
        uint64_t zo__eseq = zo__ert->ev_seq++;                                                                         \
        if (zo__ert->cfg.on_event) zo__emit_to(zo__ert, zo__eseq, k, m, p, g, before, after, valid, detail);           \
    } while (0)
char *zo__strdup(zo_runtime *rt, const char *s);

void zo__fp_init(zo_fp_acc *a);
void zo__fp_add(zo_fp_acc *a, zo_param_id p, uint64_t numel, uint32_t elem_size);
void zo__fp_encode(const zo_fp_acc *a, uint64_t seq, unsigned kind, uint8_t out[ZO_FP_BYTES]);
/* "all-gather of 2 params [3, 4] (3072 elements)" or, when the peer's
 * sequence number differs from ref_seq, prefixed by "collective N: ";
 * an undecodable fingerprint is described as such.  Returns buf. */
char *zo__fp_describe(const uint8_t fp[ZO_FP_BYTES], uint64_t ref_seq, char *buf, size_t len);
/* sequence number of an encoded fingerprint (0 when undecodable) */
uint64_t zo__fp_seq(const uint8_t fp[ZO_FP_BYTES]);
uint64_t zo__fp_hash(const uint8_t fp[ZO_FP_BYTES]);
int zo__fp_valid(const uint8_t fp[ZO_FP_BYTES]);

/* runtime.c, used by coordinator.c */
zo_status zo__rebuild_lists(zo_runtime *rt);
/* the fetch lists, rebuilt when a registration made them stale */
static inline zo_status zo__rebuild(zo_runtime *rt) { return rt->dirty ? zo__rebuild_lists(rt) : ZO_OK; }
zo_status zo__gather(zo_runtime *rt, const zo_param_id *ids, size_t n, int prefetch);
zo_status zo__wait_param(zo_runtime *rt, zo_param_id p);
/* force: ZO_REL_PERSIST also releases a persistent parameter (DeepSpeed's
 * partition() of a ds_persist one: the DeepSpeed-shaped policies) */
#define ZO_REL_PERSIST 2
zo_status zo__release_param(zo_runtime *rt, zo_param_id p, int force);
/* ZO_IS_DS and the DeepSpeed profile tests: policy.h */
/* rt->live_pars sorted by id, into rt->live_sorted; returns the count.
 * The copy stays valid while the caller only waits and releases. */
uint32_t zo__live_pars_sort(zo_runtime *rt);
static inline uint32_t zo__live_pars_sorted(zo_runtime *rt) { return rt->n_live_pars ? zo__live_pars_sort(rt) : 0; }
/* sorts ids[0..n) in place (qsort; small n by insertion) */
void zo__sort_ids(uint32_t *ids, uint32_t n);

/* coordinator.c */
void zo__coord_init(zo_coord *c);
void zo__coord_free(zo_runtime *rt, zo_coord *c);
void zo__coord_invalidate(zo_runtime *rt, zo_coord *c, const char *why);
zo_status zo__coord_reserve_record(zo_runtime *rt, zo_coord *c);
zo_status zo__coord_fetch(zo_runtime *rt, zo_coord *c, zo_module_id m, int *activated);
zo_status zo__coord_release(zo_runtime *rt, zo_coord *c, zo_module_id m, int discard);
zo_status zo__coord_reset_step(zo_runtime *rt, zo_coord *c);

/* a hint to load the line holding addr into the cache (no effect on
 * behaviour; none without GCC/clang builtins) */
#if defined(__GNUC__)
#define ZO_PREFETCH(addr) __builtin_prefetch(addr)
#else
#define ZO_PREFETCH(addr) ((void)(addr))
#endif

/* a fresh stamp for rt->mark1/mark2; when the counter wraps, every mark
 * is cleared first, so no old mark equals a new stamp */
static inline uint32_t zo__stamp(zo_runtime *rt) {
    if (rt->stamp == UINT32_MAX) {
        if (rt->cap_marks) {
            memset(rt->mark1, 0, (size_t)rt->cap_marks * sizeof *rt->mark1);
            memset(rt->mark2, 0, (size_t)rt->cap_marks * sizeof *rt->mark2);
        }
        rt->stamp = 0;
    }
    return ++rt->stamp;
}

/* The one table of legal ds_status transitions (zo_transition_legal), bit
 * 4 * from + to: NOT_AVAILABLE -> INFLIGHT, INFLIGHT -> NOT_AVAILABLE (the
 * all-gather failed, shards intact), INFLIGHT -> AVAILABLE, AVAILABLE ->
 * NOT_AVAILABLE. */
#define ZO__LEGAL_TRANSITIONS                                                                                          \
    ((1u << (4 * ZO_PARAM_NOT_AVAILABLE + ZO_PARAM_INFLIGHT)) |                                                        \
     (1u << (4 * ZO_PARAM_INFLIGHT + ZO_PARAM_NOT_AVAILABLE)) | (1u << (4 * ZO_PARAM_INFLIGHT + ZO_PARAM_AVAILABLE)) | \
     (1u << (4 * ZO_PARAM_AVAILABLE + ZO_PARAM_NOT_AVAILABLE)))
static inline int zo__transition_legal(zo_param_status from, zo_param_status to) {
    /* 3 is no status: its bits are clear */
    if ((unsigned)from > 3u || (unsigned)to > 3u) return 0;
    return (ZO__LEGAL_TRANSITIONS >> (4u * (unsigned)from + (unsigned)to)) & 1u;
}

/* The one rule of rt->live_pars: a parameter is listed while it is not
 * NOT_AVAILABLE, active for a module, or in the in-flight registry. */
static inline int zo__par_live(zo_param_status status, uint32_t n_act, unsigned ds_reg) {
    return status != ZO_PARAM_NOT_AVAILABLE || n_act != 0 || ds_reg;
}

/* p enters or leaves rt->live_pars as live says; pos is p's live_pos as
 * read by the caller (see zo__par_set_ds_reg for why it is not read here) */
static inline void zo__par_live_move(zo_runtime *rt, zo_param_id p, int live, uint32_t pos) {
    if (live == (pos != 0)) return;
    zo_par *pr = &rt->pars[p];
    if (live) {
        rt->live_pars[rt->n_live_pars++] = p; /* capacity reserved at registration */
        pr->live_pos = rt->n_live_pars;
    } else {
        uint32_t last = rt->live_pars[--rt->n_live_pars];
        if (last != p) {
            rt->live_pars[pos - 1] = last;
            rt->pars[last].live_pos = pos;
        }
        pr->live_pos = 0;
    }
}

/* p enters or leaves rt->live_pars after its status or active set changed */
static inline void zo__par_live_sync(zo_runtime *rt, zo_param_id p) {
    const zo_par *pr = &rt->pars[p];
    zo__par_live_move(rt, p, zo__par_live(pr->status, pr->n_act, pr->ds_reg), pr->live_pos);
}

/* Sets p's registry flag (DeepSpeed's __inflight_param_registry: 1 when
 * its all-gather is issued, 0 when it is popped) and keeps rt->live_pars in
 * step.  The flag is a one-byte store into the word that also holds the
 * status and live_pos; a wider load of that word right after it cannot be
 * forwarded from the store and waits for every older store to reach the
 * cache (after a gather: its whole copy, 4% of a 64 KiB fetch under perf).
 * So everything the live list needs is read before the store. */
static inline void zo__par_set_ds_reg(zo_runtime *rt, zo_param_id p, unsigned v) {
    zo_par *pr = &rt->pars[p];
    const int live = zo__par_live(pr->status, pr->n_act, v);
    const uint32_t pos = pr->live_pos;
    pr->ds_reg = v ? 1u : 0u;
    zo__par_live_move(rt, p, live, pos);
}

/* __n_available_params -= numel, as __release_param does.  DeepSpeed
 * (partitioned_param_coordinator.py of 0.19.8 and 0.15.4) adds in
 * __all_gather_params and subtracts in every __release_param, so a parameter
 * gathered elsewhere (zo_param_access inside a forward) and released takes
 * the count down with nothing to match it, step after step until
 * reset_step; in a Python integer that has no floor.  Here the count stops
 * at INT64_MIN.  That changes no decision: every parameter's numel and
 * their sum are at most INT64_MAX (ZO_MAX_TOTAL_NUMEL), so from 2^63 below
 * zero on, the prefetch budget (zo__coord_fetch) exceeds all the numel the
 * queue could hold either way, until reset_step sets the count to 0. */
static inline void zo__ds_avail_sub(zo_runtime *rt, uint64_t numel) {
    const int64_t n = (int64_t)numel; /* <= ZO_MAX_TOTAL_NUMEL */
    rt->ds_n_available = rt->ds_n_available < INT64_MIN + n ? INT64_MIN : rt->ds_n_available - n;
}

/* ds_active_sub_modules is one list: act0, then the cold record's act[0 ..
 * n_act-2] (most parameters are active for one module at a time, and that
 * one needs no other line).  m in p's list: */
static inline int zo__act_has(const zo_runtime *rt, zo_param_id p, zo_module_id m) {
    const zo_par *pr = &rt->pars[p];
    if (pr->n_act == 0) return 0;
    if (pr->act0 == m) return 1;
    const zo_module_id *a = rt->pcold[p].act;
    for (uint32_t i = 0; i + 1 < pr->n_act; i++)
        if (a[i] == m) return 1;
    return 0;
}

/* adds m to p's list (capacity reserved by zo__reserve_act first, so it
 * never allocates and never fails halfway) */
ZO_HOT_INLINE zo_status zo__act_add(zo_runtime *rt, zo_param_id p, zo_module_id m) {
    zo_par *pr = &rt->pars[p];
    if (zo__act_has(rt, p, m)) return ZO_OK;
    /* capacity is reserved by the caller (zo__reserve_act) before anything
     * changes, so adding never allocates and never fails halfway */
    if (pr->n_act == 0) {
        pr->act0 = m;
    } else {
        zo_par_cold *pc = &rt->pcold[p];
        if (pr->n_act - 1 >= pc->cap_act) return ZO_ERR_STATE;
        pc->act[pr->n_act - 1] = m;
    }
    pr->n_act++;
    zo__par_live_sync(rt, p);
    return ZO_OK;
}

/* removes m from p's list (no-op when absent) */
ZO_HOT_INLINE void zo__act_discard(zo_runtime *rt, zo_param_id p, zo_module_id m) {
    zo_par *pr = &rt->pars[p];
    if (pr->n_act == 0) return;
    /* the last member takes the place of the one leaving */
    if (pr->act0 == m) {
        if (pr->n_act > 1) pr->act0 = rt->pcold[p].act[pr->n_act - 2];
    } else {
        zo_module_id *a = rt->pcold[p].act;
        uint32_t i = 0;
        while (i + 1 < pr->n_act && a[i] != m) i++;
        if (i + 1 == pr->n_act) return;
        a[i] = a[pr->n_act - 2];
    }
    pr->n_act--;
    zo__par_live_sync(rt, p);
}

#endif
