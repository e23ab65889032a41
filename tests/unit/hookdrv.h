/*
 * hookdrv.h - test-only helpers that drive libzoffload's hooks the way
 * PyTorch fires DeepSpeed's stage-3 hooks, so that each unit test reads
 * like the model it drives.
 *
 * Header-only (static inline functions plus thin macros that pass the
 * caller's __FILE__/__LINE__ so a failure points at the test, not here).
 * Include after <cmocka.h>.
 *
 * One module call m(x) in PyTorch order:
 *   hd_call c;
 *   HD_ENTER(rt, &c, m, ZO_CALL_GRAD, "1");   hook A (pre-forward) + hook D (inputs)
 *     ... children ...
 *   HD_EXIT(rt, &c, "1");                     hook B (post-forward) + hook C (outputs)
 * The requires_grad flags of inputs/outputs are strings of '0'/'1', one
 * character per tensor ("" = no tensors).  c.in[i] / c.out[i] receive the
 * grad handles the framework would attach to the input's
 * PostBackwardFunctionModule / output's PreBackwardFunctionForModule node.
 *
 * Backward, in autograd engine order (the caller lists it):
 *   HD_OUT_GRAD(rt, c.out[0]);   PreBackwardFunctionForModule.backward
 *   HD_IN_GRAD(rt, c.in[0]);     PostBackwardFunctionModule.backward
 *
 * hd_events records every zo_event (copy, detail dropped) for later
 * queries, tracks the smallest counter value seen and checks every
 * ds_status change against zo_transition_legal().
 */
#ifndef ZO_TESTS_HOOKDRV_H
#define ZO_TESTS_HOOKDRV_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "zoffload.h"
#include "zoffload_backend.h"
#include "zoffload_testing.h"

/* ------------------------------------------------------------------ */
/* Status assertions with readable messages                            */
/* ------------------------------------------------------------------ */

static inline void hd_expect_status_(zo_runtime *rt, zo_status got, zo_status want, const char *expr, const char *file,
                                     int line) {
    if (got != want) {
        print_error("%s:%d: %s\n    returned %d (%s), expected %d (%s); last_error: \"%s\"\n", file, line, expr, got,
                    zo_strerror(got), want, zo_strerror(want), rt ? zo_last_error(rt) : "");
        _fail(file, line);
    }
}

/** call must return ZO_OK. */
#define HD_OK(rt, call) hd_expect_status_((rt), (call), ZO_OK, #call, __FILE__, __LINE__)

/** call must fail with code; then zo_last_error() is non-empty and the
 *  runtime passes zo_check_consistency(). */
static inline void hd_expect_err_(zo_runtime *rt, zo_status got, zo_status want, const char *expr, const char *file,
                                  int line) {
    hd_expect_status_(rt, got, want, expr, file, line);
    if (rt) {
        const char *msg = zo_last_error(rt);
        if (msg == NULL || msg[0] == '\0') {
            print_error("%s:%d: %s failed with %s but zo_last_error() is empty\n", file, line, expr, zo_strerror(got));
            _fail(file, line);
        }
        zo_status c = zo_check_consistency(rt);
        if (c != ZO_OK) {
            print_error("%s:%d: after %s: zo_check_consistency() = %s: %s\n", file, line, expr, zo_strerror(c),
                        zo_last_error(rt));
            _fail(file, line);
        }
    }
}
#define HD_ERR(rt, call, code) hd_expect_err_((rt), (call), (code), #call, __FILE__, __LINE__)

/** zo_check_consistency(rt) == ZO_OK */
#define HD_CONSISTENT(rt)                                                                                              \
    do {                                                                                                               \
        zo_status hd_c_ = zo_check_consistency(rt);                                                                    \
        if (hd_c_ != ZO_OK) {                                                                                          \
            print_error("%s:%d: zo_check_consistency: %s: %s\n", __FILE__, __LINE__, zo_strerror(hd_c_),               \
                        zo_last_error(rt));                                                                            \
            _fail(__FILE__, __LINE__);                                                                                 \
        }                                                                                                              \
    } while (0)

/** Signed integer equality with both values printed in decimal. */
static inline void hd_eq_i64_(int64_t got, int64_t want, const char *expr, const char *file, int line) {
    if (got != want) {
        print_error("%s:%d: %s == %lld, expected %lld\n", file, line, expr, (long long)got, (long long)want);
        _fail(file, line);
    }
}
#define HD_EQ(got, want) hd_eq_i64_((int64_t)(got), (int64_t)(want), #got, __FILE__, __LINE__)

static inline const char *hd_status_name(zo_param_status s) {
    const char *n = zo_param_status_name(s);
    return n ? n : "?";
}

/* ------------------------------------------------------------------ */
/* Event recorder                                                      */
/* ------------------------------------------------------------------ */

#define HD_MAX_EVENTS 16384
#define HD_ANY        0xFFFFFFFEu /* wildcard for module / param in queries */

typedef struct hd_events {
    zo_event ev[HD_MAX_EVENTS];
    size_t n;       /* stored events */
    uint64_t total; /* all events seen (may exceed n) */
    uint64_t per_kind[ZO_EV_KIND_COUNT];
    int64_t min_counter;          /* smallest counter_before/after of any event with counter_valid */
    uint64_t illegal_transitions; /* ZO_EV_PARAM_STATE events with an illegal from->to */
    uint64_t seq_errors;          /* events whose seq is not the previous + 1 */
    int have_seq;
    uint64_t last_seq;
} hd_events;

static inline void hd_events_reset(hd_events *e) {
    memset(e, 0, sizeof(*e));
    e->min_counter = INT64_MAX;
}

static inline void hd_on_event(void *user, const zo_event *ev) {
    hd_events *e = (hd_events *)user;
    if (e == NULL || ev == NULL) return;
    if (e->have_seq && ev->seq != e->last_seq + 1) e->seq_errors++;
    e->have_seq = 1;
    e->last_seq = ev->seq;
    e->total++;
    if ((unsigned)ev->kind < ZO_EV_KIND_COUNT) e->per_kind[ev->kind]++;
    if (ev->counter_valid) {
        if (ev->counter_before < e->min_counter) e->min_counter = ev->counter_before;
        if (ev->counter_after < e->min_counter) e->min_counter = ev->counter_after;
    }
    if (ev->kind == ZO_EV_PARAM_STATE && !zo_transition_legal(ev->from, ev->to)) e->illegal_transitions++;
    if (e->n < HD_MAX_EVENTS) {
        e->ev[e->n] = *ev;
        e->ev[e->n].detail = NULL; /* valid only during the callback */
        e->n++;
    }
}

static inline int hd_match_(const zo_event *ev, zo_event_kind k, uint32_t m, uint32_t p) {
    return ev->kind == k && (m == HD_ANY || ev->module == m) && (p == HD_ANY || ev->param == p);
}

/** Number of recorded events of kind k (module m, param p; HD_ANY = any)
 *  with index >= from. */
static inline size_t hd_ev_count_from(const hd_events *e, size_t from, zo_event_kind k, uint32_t m, uint32_t p) {
    size_t c = 0;
    for (size_t i = from; i < e->n; i++)
        if (hd_match_(&e->ev[i], k, m, p)) c++;
    return c;
}
static inline size_t hd_ev_count(const hd_events *e, zo_event_kind k, uint32_t m, uint32_t p) {
    return hd_ev_count_from(e, 0, k, m, p);
}

/** Last recorded event of kind k for module m / param p, or NULL. */
static inline const zo_event *hd_ev_last(const hd_events *e, zo_event_kind k, uint32_t m, uint32_t p) {
    for (size_t i = e->n; i > 0; i--)
        if (hd_match_(&e->ev[i - 1], k, m, p)) return &e->ev[i - 1];
    return NULL;
}

/** Index of the first event of kind k (m, p) at or after `from`, or (size_t)-1. */
static inline size_t hd_ev_find(const hd_events *e, size_t from, zo_event_kind k, uint32_t m, uint32_t p) {
    for (size_t i = from; i < e->n; i++)
        if (hd_match_(&e->ev[i], k, m, p)) return i;
    return (size_t)-1;
}

/** Smallest counter_after of events of kind k for module m since index from
 *  (INT64_MAX if none had a valid counter). */
static inline int64_t hd_ev_min_counter_from(const hd_events *e, size_t from, uint32_t m) {
    int64_t mn = INT64_MAX;
    for (size_t i = from; i < e->n; i++) {
        const zo_event *ev = &e->ev[i];
        if (!ev->counter_valid || (m != HD_ANY && ev->module != m)) continue;
        if (ev->counter_before < mn) mn = ev->counter_before;
        if (ev->counter_after < mn) mn = ev->counter_after;
    }
    return mn;
}

/* ------------------------------------------------------------------ */
/* Runtime set-up                                                      */
/* ------------------------------------------------------------------ */

/** Config for policy tests: nothing persistent, no prefetch, no reuse
 *  keeping, so every release decision is the hook's own; the DeepSpeed-
 *  shaped policies run DeepSpeed 0.19's hooks alone (ZO_DS_0_19_HOOKS: no
 *  end-of-backward release by the ZeRO-3 optimizer, which
 *  test_ds_profiles.c covers). */
static inline zo_config hd_policy_config(zo_grads_policy p) {
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.grads_policy = p;
    cfg.ds_profile = ZO_DS_0_19_HOOKS;
    cfg.param_persistence_threshold = 0;
    cfg.prefetch_bucket_size = 0;
    cfg.max_reuse_distance = 0;
    return cfg;
}

static inline zo_runtime *hd_create_(zo_config cfg, hd_events *ev, const char *file, int line) {
    zo_runtime *rt = NULL;
    if (ev) {
        hd_events_reset(ev);
        cfg.on_event = hd_on_event;
        cfg.event_user = ev;
    }
    hd_expect_status_(NULL, zo_runtime_create(&cfg, &rt), ZO_OK, "zo_runtime_create", file, line);
    if (rt == NULL) _fail(file, line);
    return rt;
}
/** Creates a runtime from cfg, recording events into ev (may be NULL). */
#define HD_CREATE(cfg, ev) hd_create_((cfg), (ev), __FILE__, __LINE__)

static inline zo_module_id hd_module_(zo_runtime *rt, zo_module_id parent, const char *name, unsigned flags,
                                      const char *file, int line) {
    zo_module_id m = ZO_NO_MODULE;
    hd_expect_status_(rt, zo_module_register(rt, parent, name, flags, &m), ZO_OK, "zo_module_register", file, line);
    return m;
}
#define HD_MODULE(rt, parent, name)      hd_module_((rt), (parent), (name), 0u, __FILE__, __LINE__)
#define HD_LEAF_MODULE(rt, parent, name) hd_module_((rt), (parent), (name), ZO_MODULE_Z3_LEAF, __FILE__, __LINE__)

static inline zo_param_id hd_param_(zo_runtime *rt, zo_module_id owner, const char *name, uint64_t numel,
                                    uint32_t elem_size, unsigned flags, const char *file, int line) {
    zo_param_id p = ZO_NO_PARAM;
    hd_expect_status_(rt, zo_param_register(rt, owner, name, numel, elem_size, flags, &p), ZO_OK, "zo_param_register",
                      file, line);
    return p;
}
/** Trainable fp32 parameter. */
#define HD_PARAM(rt, owner, name, numel) hd_param_((rt), (owner), (name), (numel), 4u, 0u, __FILE__, __LINE__)
#define HD_FROZEN_PARAM(rt, owner, name, numel)                                                                        \
    hd_param_((rt), (owner), (name), (numel), 4u, ZO_PARAM_FROZEN, __FILE__, __LINE__)

/* ------------------------------------------------------------------ */
/* Introspection shorthands                                            */
/* ------------------------------------------------------------------ */

static inline zo_param_info hd_pinfo_(const zo_runtime *rt, zo_param_id p, const char *file, int line) {
    zo_param_info pi;
    memset(&pi, 0, sizeof(pi));
    hd_expect_status_(NULL, zo_param_get_info(rt, p, &pi), ZO_OK, "zo_param_get_info", file, line);
    return pi;
}
#define HD_PINFO(rt, p) hd_pinfo_((rt), (p), __FILE__, __LINE__)

static inline zo_module_info hd_minfo_(const zo_runtime *rt, zo_module_id m, const char *file, int line) {
    zo_module_info mi;
    memset(&mi, 0, sizeof(mi));
    hd_expect_status_(NULL, zo_module_get_info(rt, m, &mi), ZO_OK, "zo_module_get_info", file, line);
    return mi;
}
#define HD_MINFO(rt, m) hd_minfo_((rt), (m), __FILE__, __LINE__)

static inline zo_stats hd_stats_(const zo_runtime *rt, const char *file, int line) {
    zo_stats st;
    memset(&st, 0, sizeof(st));
    hd_expect_status_(NULL, zo_get_stats(rt, &st), ZO_OK, "zo_get_stats", file, line);
    return st;
}
#define HD_STATS(rt) hd_stats_((rt), __FILE__, __LINE__)

static inline zo_trace_info hd_trace_(const zo_runtime *rt, int eval, const char *file, int line) {
    zo_trace_info ti;
    memset(&ti, 0, sizeof(ti));
    hd_expect_status_(NULL, zo_get_trace_info(rt, eval, &ti), ZO_OK, "zo_get_trace_info", file, line);
    return ti;
}
#define HD_TRACE(rt)      hd_trace_((rt), 0, __FILE__, __LINE__)
#define HD_TRACE_EVAL(rt) hd_trace_((rt), 1, __FILE__, __LINE__)

static inline void hd_expect_pstatus_(const zo_runtime *rt, zo_param_id p, zo_param_status want, const char *expr,
                                      const char *file, int line) {
    zo_param_info pi = hd_pinfo_(rt, p, file, line);
    if (pi.status != want) {
        print_error("%s:%d: param %s (id %u) is %s, expected %s\n", file, line, expr, (unsigned)p,
                    hd_status_name(pi.status), hd_status_name(want));
        _fail(file, line);
    }
}
/** ds_status of p must be want (ZO_PARAM_...). */
#define HD_PSTATUS(rt, p, want) hd_expect_pstatus_((rt), (p), (want), #p, __FILE__, __LINE__)
#define HD_AVAILABLE(rt, p)     HD_PSTATUS(rt, p, ZO_PARAM_AVAILABLE)
#define HD_RELEASED(rt, p)      HD_PSTATUS(rt, p, ZO_PARAM_NOT_AVAILABLE)

/** Invariant 3: every non-persistent parameter NOT_AVAILABLE, nothing in
 *  flight, gathered numel == persistent numel, and the runtime consistent. */
static inline void hd_expect_all_released_(zo_runtime *rt, const char *file, int line) {
    zo_stats st = hd_stats_(rt, file, line);
    for (zo_param_id p = 0; p < st.n_params; p++) {
        zo_param_info pi = hd_pinfo_(rt, p, file, line);
        if (!pi.persistent && pi.status != ZO_PARAM_NOT_AVAILABLE) {
            print_error("%s:%d: non-persistent param %u is %s, expected NOT_AVAILABLE\n", file, line, (unsigned)p,
                        hd_status_name(pi.status));
            _fail(file, line);
        }
        if (pi.inflight) {
            print_error("%s:%d: param %u still in the in-flight registry\n", file, line, (unsigned)p);
            _fail(file, line);
        }
    }
    if (st.inflight_params != 0 || st.live_numel != st.persistent_live_numel) {
        print_error("%s:%d: inflight_params=%llu live_numel=%llu persistent_live_numel=%llu\n", file, line,
                    (unsigned long long)st.inflight_params, (unsigned long long)st.live_numel,
                    (unsigned long long)st.persistent_live_numel);
        _fail(file, line);
    }
    zo_status c = zo_check_consistency(rt);
    if (c != ZO_OK) {
        print_error("%s:%d: zo_check_consistency: %s\n", file, line, zo_last_error(rt));
        _fail(file, line);
    }
}
#define HD_ALL_RELEASED(rt) hd_expect_all_released_((rt), __FILE__, __LINE__)

/** zo_param_access must succeed and return p's original full contents. */
static inline void hd_access_check_(zo_runtime *rt, zo_module_id m, zo_param_id p, const char *file, int line) {
    const void *data = NULL;
    size_t bytes = 0;
    hd_expect_status_(rt, zo_param_access(rt, m, p, &data, &bytes), ZO_OK, "zo_param_access", file, line);
    zo_param_info pi = hd_pinfo_(rt, p, file, line);
    if (data == NULL || bytes != pi.numel * pi.elem_size) {
        print_error("%s:%d: zo_param_access(p=%u): data=%p bytes=%zu, expected %llu bytes\n", file, line, (unsigned)p,
                    data, bytes, (unsigned long long)(pi.numel * pi.elem_size));
        _fail(file, line);
    }
    if (pi.status != ZO_PARAM_AVAILABLE) {
        print_error("%s:%d: after zo_param_access p=%u is %s\n", file, line, (unsigned)p, hd_status_name(pi.status));
        _fail(file, line);
    }
    const uint8_t *b = (const uint8_t *)data;
    for (size_t i = 0; i < bytes; i++) {
        if (b[i] != zo_host_param_byte(p, i)) {
            print_error("%s:%d: param %u byte %zu = %u, expected %u\n", file, line, (unsigned)p, i, b[i],
                        zo_host_param_byte(p, i));
            _fail(file, line);
        }
    }
}
#define HD_ACCESS(rt, m, p) hd_access_check_((rt), (m), (p), __FILE__, __LINE__)

/* ------------------------------------------------------------------ */
/* Forward: module calls in PyTorch hook order                         */
/* ------------------------------------------------------------------ */

#define HD_MAX_TENSORS 8

/** One module call m(x): its input and output grad handles. */
typedef struct hd_call {
    zo_module_id m;
    size_t n_in, n_out;
    zo_grad_handle in[HD_MAX_TENSORS];
    zo_grad_handle out[HD_MAX_TENSORS];
} hd_call;

static inline size_t hd_flags_(const char *rg, uint8_t *out) {
    size_t n = rg ? strlen(rg) : 0;
    if (n > HD_MAX_TENSORS) n = HD_MAX_TENSORS;
    for (size_t i = 0; i < n; i++) out[i] = rg[i] == '1' ? 1 : 0;
    return n;
}

/** Hook A then hook D: zo_pre_forward(m, call_flags), zo_track_inputs(m, inputs). */
static inline void hd_enter_(zo_runtime *rt, hd_call *c, zo_module_id m, unsigned call_flags, const char *inputs_rg,
                             const char *file, int line) {
    uint8_t rg[HD_MAX_TENSORS];
    memset(c, 0, sizeof(*c));
    c->m = m;
    c->n_in = hd_flags_(inputs_rg, rg);
    hd_expect_status_(rt, zo_pre_forward(rt, m, call_flags), ZO_OK, "zo_pre_forward (hook A)", file, line);
    hd_expect_status_(rt, zo_track_inputs(rt, m, c->n_in, rg, c->in), ZO_OK, "zo_track_inputs (hook D)", file, line);
}
#define HD_ENTER(rt, c, m, call_flags, inputs_rg)                                                                      \
    hd_enter_((rt), (c), (m), (call_flags), (inputs_rg), __FILE__, __LINE__)

/** Hook B then hook C: zo_post_forward(m), zo_track_outputs(m, outputs). */
static inline void hd_exit_(zo_runtime *rt, hd_call *c, const char *outputs_rg, const char *file, int line) {
    uint8_t rg[HD_MAX_TENSORS];
    c->n_out = hd_flags_(outputs_rg, rg);
    hd_expect_status_(rt, zo_post_forward(rt, c->m), ZO_OK, "zo_post_forward (hook B)", file, line);
    hd_expect_status_(rt, zo_track_outputs(rt, c->m, c->n_out, rg, c->out), ZO_OK, "zo_track_outputs (hook C)", file,
                      line);
}
#define HD_EXIT(rt, c, outputs_rg) hd_exit_((rt), (c), (outputs_rg), __FILE__, __LINE__)

/** A call with no children: HD_ENTER + HD_EXIT. */
#define HD_CALL(rt, c, m, call_flags, inputs_rg, outputs_rg)                                                           \
    do {                                                                                                               \
        HD_ENTER(rt, c, m, call_flags, inputs_rg);                                                                     \
        HD_EXIT(rt, c, outputs_rg);                                                                                    \
    } while (0)

static inline zo_graph hd_fwd_begin_(zo_runtime *rt, unsigned flags, const char *file, int line) {
    zo_graph g = 0;
    hd_expect_status_(rt, zo_forward_begin(rt, flags, &g), ZO_OK, "zo_forward_begin", file, line);
    if (g == 0) {
        print_error("%s:%d: zo_forward_begin returned graph 0\n", file, line);
        _fail(file, line);
    }
    return g;
}
/** Root training forward (reset_step first). */
#define HD_FWD_BEGIN(rt)              hd_fwd_begin_((rt), ZO_FWD_ROOT, __FILE__, __LINE__)
#define HD_FWD_BEGIN_FLAGS(rt, flags) hd_fwd_begin_((rt), (flags), __FILE__, __LINE__)
#define HD_FWD_END(rt, g)             HD_OK(rt, zo_forward_end((rt), (g)))

/* ------------------------------------------------------------------ */
/* Backward                                                            */
/* ------------------------------------------------------------------ */

#define HD_BWD_BEGIN(rt, g)        HD_OK(rt, zo_backward_begin((rt), (g), 0))
#define HD_BWD_BEGIN_RETAIN(rt, g) HD_OK(rt, zo_backward_begin((rt), (g), 1))
#define HD_BWD_END(rt, g)          HD_OK(rt, zo_backward_end((rt), (g)))
/** PreBackwardFunctionForModule.backward of an output handle. */
#define HD_OUT_GRAD(rt, h)         HD_OK(rt, zo_output_grad((rt), (h)))
/** PostBackwardFunctionModule.backward of an input handle. */
#define HD_IN_GRAD(rt, h)          HD_OK(rt, zo_input_grad((rt), (h)))
#define HD_GRAD_READY(rt, p)       HD_OK(rt, zo_param_grad_ready((rt), (p)))
#define HD_RELEASE_ALL(rt)         HD_OK(rt, zo_release_all(rt))

/* ------------------------------------------------------------------ */
/* Counting / failing allocator                                        */
/* ------------------------------------------------------------------ */

/** Allocator that counts live blocks and fails the fail_at-th allocation
 *  (1-based; 0 = never fail).  Blocks carry a header so leaks are seen
 *  even without LeakSanitizer. */
typedef struct hd_alloc {
    uint64_t calls;     /* allocations attempted */
    uint64_t fail_at;   /* 0: never */
    uint64_t failed;    /* allocations refused */
    int64_t live;       /* blocks outstanding */
    uint64_t max_bytes; /* refuse single allocations above this (0: none) */
} hd_alloc;

typedef union hd_alloc_hdr {
    size_t bytes;
    max_align_t align;
} hd_alloc_hdr;

static inline void *hd_alloc_fn(void *opaque, size_t bytes) {
    hd_alloc *a = (hd_alloc *)opaque;
    a->calls++;
    if ((a->fail_at != 0 && a->calls == a->fail_at) || (a->max_bytes && bytes > a->max_bytes) ||
        bytes > SIZE_MAX - sizeof(hd_alloc_hdr)) {
        a->failed++;
        return NULL;
    }
    hd_alloc_hdr *h = (hd_alloc_hdr *)malloc(sizeof(hd_alloc_hdr) + bytes);
    if (h == NULL) {
        a->failed++;
        return NULL;
    }
    h->bytes = bytes;
    a->live++;
    return h + 1;
}

static inline void hd_free_fn(void *opaque, void *ptr) {
    hd_alloc *a = (hd_alloc *)opaque;
    if (ptr == NULL) return;
    a->live--;
    free((hd_alloc_hdr *)ptr - 1);
}

static inline zo_allocator hd_allocator(hd_alloc *a) {
    zo_allocator al;
    al.alloc = hd_alloc_fn;
    al.free = hd_free_fn;
    al.opaque = a;
    return al;
}

#endif /* ZO_TESTS_HOOKDRV_H */
