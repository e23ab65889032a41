/*
 * fuzz_api - adversarial target (libxml2 fuzz/api.c style): the input is a
 * program of arbitrary public API calls, with any handles (valid, stale,
 * made up) in any order, including invalid ones.  The runtime must return
 * errors, never crash, never leak (LeakSanitizer at every input's end),
 * and after every call:
 *   - zo_check_consistency() is ZO_OK (in-flight registry, live accounting,
 *     counters),
 *   - I6/I7 and live accounting hold (the harness checker, fuzz/check.c:
 *     every ds_status change legal and matching a shadow copy, registry ==
 *     INFLIGHT parameters, stats == sum over parameters),
 *   - I1/I2 hold under the per-call policy (the legacy policies break them
 *     by design under arbitrary orders, so they are not checked there; nor
 *     is I5, whose budget they keep as DeepSpeed does, see check.h),
 *   - a successful zo_param_access returns the original bytes (I4 content).
 *   - the error contract: a call that fails returns one of the codes its
 *     header comment documents (ZO_ERR_NOMEM also where an allocation was
 *     refused by the injection below) and leaves a message of its own in
 *     zo_last_error() - a sentinel error is provoked before every call, so
 *     a stale message from an earlier call is caught (zo_last_error(NULL)
 *     likewise for calls without a runtime),
 *   - handles: a graph or grad handle of another runtime (a second runtime
 *     runs passes of its own), or of a graph that is gone (discarded, or
 *     its backward ended without retain_graph) is never accepted,
 *   - scripted misuse inside a fresh pass (op 25): hook B of a caller while
 *     its callee's call is innermost, reset_step / forward_end /
 *     backward_begin mid-forward are ZO_ERR_PROTOCOL with the forward stack
 *     unchanged; a release_all mid-forward keeps the pass's windows, so
 *     under per-call every input gradient of that pass is accepted,
 *   - at the end of every input the runtime is unwound as a framework
 *     would (abort, end backwards, discard, optimizer step) and a normal
 *     training step on two fresh modules must succeed and release every
 *     non-persistent parameter.
 * A violation aborts (the engine records a crash).
 *
 * ZOFUZZ_POLICY=<name> pins the policy (default: byte 0 of the input picks it).
 * ZOFUZZ_TRACE=1 prints every call with its arguments and status (repro).
 *
 * Input layout: byte 0 policy, byte 1 world size, byte 2 flags (deferred,
 * thresholds, allocation-failure injection, edge config), then (with flag
 * 0x80) two bytes setting max_live_parameters, prefetch_bucket_size,
 * max_reuse_distance and the two persistence thresholds to 0, 1, 2^63 - 1
 * or UINT64_MAX each and the world size to 1..8 or ZO_MAX_WORLD_SIZE, then
 * (with flag 0x40) one byte choosing the allocation-failure schedule, then
 * one opcode byte per call followed by its arguments; missing bytes read as
 * 0.  At most 512 calls per input.
 *
 * Allocation-failure injection (flag 0x40): the runtime's replaceable
 * allocator refuses allocations at fuzz-chosen points (the k-th allocation
 * after creation, then every p-th, k and p from the schedule byte); each
 * refused call must return an error and leave the runtime consistent,
 * which the checks after every call verify, and nothing may leak.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "scenario.h"
#include "settings.h"
#include "zoffload.h"
#include "zoffload_backend.h"
#include "zoffload_testing.h"

typedef struct rd {
    const uint8_t *d;
    size_t n, pos;
} rd;

static uint8_t u8(rd *r) { return r->pos < r->n ? r->d[r->pos++] : (r->pos++, 0); }
static uint32_t u32(rd *r) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v |= (uint32_t)u8(r) << (8 * i);
    return v;
}
static uint64_t u64(rd *r) { return (uint64_t)u32(r) | ((uint64_t)u32(r) << 32); }

#define MAXH 64

static int g_trace = -1, g_policy = -2;

/* fuzz-chosen allocation failures (flag 0x40) */
typedef struct failalloc {
    int on;
    uint64_t n;    /* allocations so far */
    uint64_t next; /* index of the next refused allocation */
    uint64_t period;
    uint64_t refused;
} failalloc;

static void *fa_alloc(void *opaque, size_t bytes) {
    failalloc *fa = opaque;
    fa->n++;
    if (fa->on && fa->n == fa->next) {
        fa->next += fa->period;
        fa->refused++;
        return NULL;
    }
    return malloc(bytes);
}

static void fa_free(void *opaque, void *p) {
    (void)opaque;
    free(p);
}
#define LOG(...)                                                                                                       \
    do {                                                                                                               \
        if (g_trace) fprintf(stderr, __VA_ARGS__);                                                                     \
    } while (0)

typedef struct world {
    zo_runtime *rt;
    zo_backend *be;
    zs_checker chk;
    zs_scenario dummy;                   /* config for the checker (max_live for I5) */
    uint8_t shadow[ZS_CODEC_MAX_PARAMS]; /* the checker's ds_status copy */
    uint32_t n_mods, n_pars;
    zo_graph graphs[MAXH];
    unsigned n_graphs;
    zo_grad_handle handles[MAXH];
    zo_graph handle_graph[MAXH]; /* the graph each handle was made in */
    unsigned n_handles;
    /* graphs known to be gone: every use of them or their handles fails */
    zo_graph dead[MAXH];
    unsigned n_dead;
    zo_graph retained[MAXH]; /* backward begun with retain_graph */
    unsigned n_retained;
    int bwd_depth;      /* backwards begun and not ended */
    zo_graph bwd[1024]; /* their graphs, innermost last */
    unsigned n_bwd;
    /* a second runtime: its handles are foreign to rt */
    zo_runtime *rt2;
    zo_backend *be2;
    zo_module_id r2_root, r2_fc;
    zo_graph fgraphs[8];
    unsigned n_fgraphs;
    zo_grad_handle fhandles[16];
    unsigned n_fhandles;
    int picked_foreign, picked_dead; /* set by pick_graph / pick_handle */
} world;

static int is_dead(const world *w, zo_graph g) {
    for (unsigned i = 0; i < w->n_dead; i++)
        if (w->dead[i] == g) return 1;
    return 0;
}

static void mark_dead(world *w, zo_graph g) {
    if (!g || is_dead(w, g)) return;
    if (w->n_dead == MAXH) {
        memmove(w->dead, w->dead + 1, (MAXH - 1) * sizeof *w->dead);
        w->n_dead--;
    }
    w->dead[w->n_dead++] = g;
}

static void bwd_push(world *w, zo_graph g) {
    w->bwd_depth++;
    if (w->n_bwd < sizeof w->bwd / sizeof w->bwd[0]) w->bwd[w->n_bwd++] = g;
}

static void bwd_pop(world *w, zo_graph g) {
    w->bwd_depth--;
    for (unsigned i = w->n_bwd; i-- > 0;)
        if (w->bwd[i] == g) {
            memmove(w->bwd + i, w->bwd + i + 1, (w->n_bwd - i - 1) * sizeof *w->bwd);
            w->n_bwd--;
            return;
        }
}

static int take_retained(world *w, zo_graph g) {
    for (unsigned i = 0; i < w->n_retained; i++)
        if (w->retained[i] == g) {
            w->retained[i] = w->retained[--w->n_retained];
            return 1;
        }
    return 0;
}

static zo_module_id pick_module(world *w, rd *r) {
    uint8_t b = u8(r);
    if (b == 0xFF) return ZO_NO_MODULE;
    if (b >= 0xF0) return (zo_module_id)u32(r);     /* anything */
    return w->n_mods ? b % (w->n_mods + 1) : b % 2; /* mostly valid, sometimes one past */
}

static zo_param_id pick_param(world *w, rd *r) {
    uint8_t b = u8(r);
    if (b == 0xFF) return ZO_NO_PARAM;
    if (b >= 0xF0) return (zo_param_id)u32(r);
    return w->n_pars ? b % (w->n_pars + 1) : b % 2;
}

static zo_graph pick_graph(world *w, rd *r) {
    uint8_t b = u8(r);
    w->picked_foreign = w->picked_dead = 0;
    if (b >= 0xE0 && b < 0xF0 && w->n_fgraphs) { /* another runtime's */
        w->picked_foreign = 1;
        return w->fgraphs[b % w->n_fgraphs];
    }
    if (b >= 0xF0 || w->n_graphs == 0) return b == 0xF1 ? u64(r) : (zo_graph)(b & 3);
    zo_graph g = w->graphs[(w->n_graphs - 1 - b % w->n_graphs)];
    w->picked_dead = is_dead(w, g);
    return g;
}

static zo_grad_handle pick_handle(world *w, rd *r) {
    uint8_t b = u8(r);
    w->picked_foreign = w->picked_dead = 0;
    if (b >= 0xE0 && b < 0xF0 && w->n_fhandles) { /* another runtime's */
        w->picked_foreign = 1;
        return w->fhandles[b % w->n_fhandles];
    }
    if (b >= 0xF0 || w->n_handles == 0) return b == 0xF1 ? u64(r) : (zo_grad_handle)(b & 3);
    unsigned k = w->n_handles - 1 - b % w->n_handles;
    zo_grad_handle h = w->handles[k];
    if ((b & 0xC0) == 0x80)
        h ^= (zo_grad_handle)1 << (u8(r) % 64); /* corrupted */
    else
        w->picked_dead = is_dead(w, w->handle_graph[k]);
    return h;
}

static void keep_graph(world *w, zo_graph g) {
    if (!g) return;
    if (w->n_graphs == MAXH) {
        memmove(w->graphs, w->graphs + 1, (MAXH - 1) * sizeof *w->graphs);
        w->n_graphs--;
    }
    w->graphs[w->n_graphs++] = g;
}

/* handles made by hooks C and D; g: the graph their call belongs to when
 * known (a call pushed right after its pass began), else 0 (never judged
 * dead) */
static void keep_handles(world *w, const zo_grad_handle *h, size_t n, zo_graph g) {
    for (size_t i = 0; i < n; i++) {
        if (!h[i]) continue;
        if (w->n_handles == MAXH) {
            memmove(w->handles, w->handles + 1, (MAXH - 1) * sizeof *w->handles);
            memmove(w->handle_graph, w->handle_graph + 1, (MAXH - 1) * sizeof *w->handle_graph);
            w->n_handles--;
        }
        w->handle_graph[w->n_handles] = g;
        w->handles[w->n_handles++] = h[i];
    }
}

static const char *pick_name(rd *r) {
    static char longname[300];
    static const char *const names[] = {NULL, "", "a", "b", "layer.0", "a"};
    uint8_t b = u8(r) % 8;
    if (b < 6) return names[b];
    memset(longname, 'x', sizeof longname - 1);
    longname[(b == 6) ? 255 : 256] = 0; /* 255 accepted, 256 too long */
    return longname;
}

static failalloc FA;

/* ------------------------------------------------------------------ */
/* The error contract                                                   */
/* ------------------------------------------------------------------ */

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fuzz_api: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    abort();
}

/* the codes each entry point's header comment documents */
#define B(e) (1u << (unsigned)-(e))
#define IA   B(ZO_ERR_INVALID_ARG)
#define NM   B(ZO_ERR_NOMEM)
#define BH   B(ZO_ERR_BAD_HANDLE)
#define PR   B(ZO_ERR_PROTOCOL)
#define EX   B(ZO_ERR_EXISTS)
#define OV   B(ZO_ERR_OVERFLOW)
#define BE   B(ZO_ERR_BACKEND)
#define TR   B(ZO_ERR_TRACE)
#define NA   B(ZO_ERR_NOT_AVAILABLE)
#define LI   B(ZO_ERR_LIMIT)
#define CM   B(ZO_ERR_COLLECTIVE_MISMATCH)
enum {
    E_MREG = IA | BH | EX | LI | NM,
    E_PREG = IA | BH | EX | OV | LI | NM | BE,
    E_USE = BH | EX | NM,
    E_FBEGIN = IA | LI | NM,
    E_FEND = BH | PR,
    E_PRE = IA | BH | PR | TR | BE | NM | LI | CM,
    E_TIN = IA | BH | PR | LI | NM,
    E_POST = BH | PR | BE,
    E_TOUT = IA | BH | PR | LI,
    E_ABORT = BH | PR,
    E_BBEGIN = BH | PR,
    E_OGRAD = BH | PR | TR | BE | CM,
    E_IGRAD = BH | PR | BE,
    E_GREADY = BH | IA | PR,
    E_BEND = BH | PR | BE,
    E_DISCARD = BH | PR,
    E_ACCESS = IA | BH | NA | BE | NM | CM,
    E_RELALL = BE,
    E_RESET = IA | PR,
    E_INFO = IA | BH,
    E_MPARAMS = IA | BH | NM,
    E_STATS = IA,
};

/* A sentinel error before every checked call: the message a failing call
 * leaves must be its own. */
#define SENTINEL "987654321 is not 0"
static void arm(world *w) {
    zo_trace_info ti;
    if (zo_get_trace_info(w->rt, 987654321, &ti) != ZO_ERR_INVALID_ARG || !strstr(zo_last_error(w->rt), SENTINEL))
        die("zo_get_trace_info(eval 987654321) did not fail with its message: \"%s\"", zo_last_error(w->rt));
}

static void contract(world *w, const char *fn, zo_status st, unsigned documented, uint64_t refused_before) {
    if (st == ZO_OK) return;
    if (st > 0 || st < ZO_ERR_COLLECTIVE_MISMATCH) die("%s returned %d, not a zo_status", fn, st);
    unsigned ok = documented | (FA.refused != refused_before ? NM : 0u);
    if (!(ok & B(st)))
        die("%s returned %s, which its header comment does not list (message \"%s\")", fn, zo_strerror(st),
            zo_last_error(w->rt));
    const char *m = zo_last_error(w->rt);
    if (!m || !*m || strstr(m, SENTINEL))
        die("%s returned %s but zo_last_error() is \"%s\": not a message of this call", fn, zo_strerror(st),
            m ? m : "(null)");
}

/* st = call, with the sentinel before and the contract after */
#define CHECKED(name, documented, call)                                                                                \
    do {                                                                                                               \
        arm(w);                                                                                                        \
        uint64_t rf_ = FA.refused;                                                                                     \
        st = (call);                                                                                                   \
        contract(w, (name), st, (documented), rf_);                                                                    \
    } while (0)

/* a call given a handle or graph of another runtime, or of a graph that
 * is gone, must fail; grad is 1 for a grad handle, which under the
 * DeepSpeed-shaped policies names its module's counter and outlives its
 * graph (zoffload.h, zo_grad_handle) */
static void handle_oracle(world *w, const char *fn, zo_status st, int grad) {
    if (st == ZO_OK && w->picked_foreign) die("%s accepted a handle of another runtime", fn);
    if (st == ZO_OK && w->picked_dead && (!grad || w->chk.policy == ZO_GRADS_PER_CALL))
        die("%s accepted a handle of a graph that is gone", fn);
}

/* ------------------------------------------------------------------ */
/* A second runtime whose handles are foreign to the first              */
/* ------------------------------------------------------------------ */

static void foreign_pass(world *w, int backward) {
    static const uint8_t one[1] = {1};
    if (!w->rt2) {
        zo_config c2 = ZO_CONFIG_INIT;
        zo_param_id p;
        if (zo_runtime_create(&c2, &w->rt2) || zo_module_register(w->rt2, ZO_NO_MODULE, "m", 0, &w->r2_root) ||
            zo_module_register(w->rt2, w->r2_root, "fc", 0, &w->r2_fc) ||
            zo_param_register(w->rt2, w->r2_fc, "w", 64, 4, 0, &p))
            die("second runtime: %s", w->rt2 ? zo_last_error(w->rt2) : zo_last_error(NULL));
    }
    zo_runtime *rt = w->rt2;
    zo_graph g;
    zo_grad_handle hin[2], hout[2];
    if (zo_forward_begin(rt, ZO_FWD_ROOT, &g) || zo_pre_forward(rt, w->r2_root, ZO_CALL_GRAD) ||
        zo_track_inputs(rt, w->r2_root, 1, one, &hin[0]) || zo_pre_forward(rt, w->r2_fc, ZO_CALL_GRAD) ||
        zo_track_inputs(rt, w->r2_fc, 1, one, &hin[1]) || zo_post_forward(rt, w->r2_fc) ||
        zo_track_outputs(rt, w->r2_fc, 1, one, &hout[1]) || zo_post_forward(rt, w->r2_root) ||
        zo_track_outputs(rt, w->r2_root, 1, one, &hout[0]) || zo_forward_end(rt, g))
        die("second runtime, forward: %s", zo_last_error(rt));
    if (backward && (zo_backward_begin(rt, g, 0) || zo_output_grad(rt, hout[0]) || zo_output_grad(rt, hout[1]) ||
                     zo_input_grad(rt, hin[1]) || zo_input_grad(rt, hin[0]) || zo_backward_end(rt, g)))
        die("second runtime, backward: %s", zo_last_error(rt));
    if (!backward && zo_graph_discard(rt, g)) die("second runtime, discard: %s", zo_last_error(rt));
    if (zo_release_all(rt)) die("second runtime, release_all: %s", zo_last_error(rt));
    /* keep the newest */
    w->fgraphs[w->n_fgraphs++ % 8] = g;
    if (w->n_fgraphs > 8) w->n_fgraphs = 8;
    for (int i = 0; i < 2; i++) {
        w->fhandles[w->n_fhandles % 16] = hin[i];
        w->fhandles[(w->n_fhandles + 1) % 16] = hout[i];
        w->n_fhandles = w->n_fhandles + 2 > 16 ? 16 : w->n_fhandles + 2;
    }
}

/* ------------------------------------------------------------------ */
/* The end of every input: unwind, then a normal step must work         */
/* ------------------------------------------------------------------ */

static void final_step(world *w) {
    zo_runtime *rt = w->rt;
    FA.on = 0;
    zo_stats stt;
    /* unwound as a framework would, innermost first: the open calls of a
     * pass (an exception: zo_forward_abort(ZO_NO_MODULE) ends the pass),
     * then the backward it was nested in, and so on */
    for (int k = 0; k < 8192; k++) {
        if (w->n_bwd && zo_backward_end(rt, w->bwd[w->n_bwd - 1]) == ZO_OK) {
            bwd_pop(w, w->bwd[w->n_bwd - 1]);
            continue;
        }
        if (zo_get_stats(rt, &stt) || (stt.forward_stack_depth == 0 && !w->n_bwd)) break;
        if (zo_forward_abort(rt, ZO_NO_MODULE) != ZO_OK) break;
    }
    for (unsigned i = w->n_graphs; i-- > 0;) (void)zo_forward_end(rt, w->graphs[i]);
    for (unsigned i = w->n_graphs; i-- > 0;) (void)zo_graph_discard(rt, w->graphs[i]);
    if (zo_release_all(rt)) die("final: zo_release_all: %s", zo_last_error(rt));
    if (w->n_mods + 2 > ZS_CODEC_MAX_MODULES || w->n_pars + 2 > ZS_CODEC_MAX_PARAMS) return;
    static const uint8_t one[1] = {1};
    zo_module_id a, b;
    zo_param_id pa, pb;
    zo_graph g;
    zo_grad_handle ia, ib, oa, ob;
    const void *d;
    const char *what = "register";
    zo_status st = zo_module_register(rt, ZO_NO_MODULE, NULL, 0, &a);
    if (!st) st = zo_module_register(rt, a, NULL, 0, &b);
    if (!st) w->n_mods += 2;
    if (!st) st = zo_param_register(rt, a, NULL, 128, 4, 0, &pa);
    if (!st) st = zo_param_register(rt, b, NULL, 128, 4, 0, &pb);
    if (!st) w->n_pars += 2;
    /* the checker follows the new modules and parameters */
    w->chk.shadow = w->shadow;
    w->chk.n_params = w->n_pars < ZS_CODEC_MAX_PARAMS ? w->n_pars : ZS_CODEC_MAX_PARAMS;
    w->chk.n_modules = w->n_mods;
    if (!st) what = "forward";
    if (!st) st = zo_forward_begin(rt, ZO_FWD_ROOT, &g);
    if (!st) st = zo_pre_forward(rt, a, ZO_CALL_GRAD);
    if (!st) st = zo_track_inputs(rt, a, 1, one, &ia);
    if (!st) st = zo_pre_forward(rt, b, ZO_CALL_GRAD);
    if (!st) st = zo_track_inputs(rt, b, 1, one, &ib);
    if (!st) st = zo_param_access(rt, b, pb, &d, NULL);
    if (!st) st = zo_post_forward(rt, b);
    if (!st) st = zo_track_outputs(rt, b, 1, one, &ob);
    if (!st) st = zo_post_forward(rt, a);
    if (!st) st = zo_track_outputs(rt, a, 1, one, &oa);
    if (!st) st = zo_forward_end(rt, g);
    if (!st) what = "backward";
    if (!st) st = zo_backward_begin(rt, g, 0);
    if (!st) st = zo_output_grad(rt, oa);
    if (!st) st = zo_param_grad_ready(rt, pa);
    if (!st) st = zo_output_grad(rt, ob);
    if (!st) st = zo_param_grad_ready(rt, pb);
    if (!st) st = zo_input_grad(rt, ib);
    if (!st) st = zo_input_grad(rt, ia);
    if (!st) st = zo_backward_end(rt, g);
    if (!st) what = "optimizer step";
    if (!st) st = zo_release_all(rt);
    if (st) die("final normal step, %s: %s: %s", what, zo_strerror(st), zo_last_error(rt));
    if (zo_get_stats(rt, &stt)) die("final: zo_get_stats");
    for (zo_param_id p = 0; p < stt.n_params; p++) {
        zo_param_info pi;
        if (zo_param_get_info(rt, p, &pi)) die("final: zo_param_get_info(%u)", p);
        if (!pi.persistent && (pi.status != ZO_PARAM_NOT_AVAILABLE || pi.inflight))
            die("final: after the optimizer step non-persistent parameter %u is %s", p,
                zo_param_status_name(pi.status));
    }
    if (stt.forward_stack_depth || stt.live_numel != stt.persistent_live_numel)
        die("final: stack depth %u, live %llu, persistent live %llu", stt.forward_stack_depth,
            (unsigned long long)stt.live_numel, (unsigned long long)stt.persistent_live_numel);
}

static void check(world *w, const char *what) {
    snprintf(w->chk.what, sizeof w->chk.what, "%s", what);
    w->chk.shadow = w->shadow;
    w->chk.n_params = w->n_pars < ZS_CODEC_MAX_PARAMS ? w->n_pars : ZS_CODEC_MAX_PARAMS;
    w->chk.n_modules = w->n_mods;
    w->chk.seen_error_events = w->chk.n_error_events; /* refused calls are expected here */
    zs_check_state(&w->chk);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    rd r = {data, size, 0};
    if (g_trace < 0) {
        /* the settings table (fuzz/settings.h): ZOFUZZ_TRACE, and
         * ZOFUZZ_POLICY (unset: each input's own policy byte) */
        zs_settings st;
        zs_settings_init(&st);
        char err[300];
        if (zs_settings_from_env(&st, err, sizeof err) != 0) {
            fprintf(stderr, "fuzz_api: %s\n", err);
            exit(2);
        }
        g_trace = st.trace;
        g_policy = (st.set & (1u << ZS_SET_POLICY)) ? st.policy : -1;
    }
    static world W;
    world *w = &W;
    /* the dummy scenario's storage is kept across executions */
    zs_scenario dummy = W.dummy;
    memset(w, 0, sizeof *w);
    w->dummy = dummy;
    if (zs_scenario_init(&w->dummy)) return 0; /* out of memory: nothing to fuzz */

    uint8_t pol = u8(&r), ws = u8(&r), fl = u8(&r);
    /* flag 0x80: the config at the edges of what it may hold (below) */
    uint8_t ex = (fl & 0x80) ? u8(&r) : 0, ey = (fl & 0x80) ? u8(&r) : 0;
    zo_host_config hc = ZO_HOST_CONFIG_INIT;
    zo_host_testing ht = ZO_HOST_TESTING_INIT;
    hc.testing = &ht;
    hc.world_size = (ey & 4) ? ZO_MAX_WORLD_SIZE : 1 + ws % 8;
    ht.deferred = fl & 1;
    ht.max_bytes_per_param = 64;
    if (zo_backend_host_create(&hc, &w->be) != ZO_OK) return 0;
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.world_size = hc.world_size;
    cfg.grads_policy = (zo_grads_policy)(g_policy >= 0 ? g_policy : pol % ZO_GRADS_POLICY_COUNT);
    cfg.param_persistence_threshold = (fl & 2) ? 64 : 0;
    cfg.max_live_parameters = (fl & 4) ? 100 : 1000000000ull;
    cfg.prefetch_bucket_size = (fl & 8) ? 0 : 50;
    cfg.max_reuse_distance = (fl & 16) ? 0 : 1000000000ull;
    if (fl & 0x80) {
        /* the thresholds at 0, 1, 2^63 - 1 or UINT64_MAX, each from two
         * bits of the two bytes after the flags; bit 2 of the second gives
         * ZO_MAX_WORLD_SIZE ranks (above) */
        static const uint64_t edge[4] = {0, 1, (uint64_t)INT64_MAX, UINT64_MAX};
        cfg.max_live_parameters = edge[ex & 3];
        cfg.prefetch_bucket_size = edge[(ex >> 2) & 3];
        cfg.max_reuse_distance = edge[(ex >> 4) & 3];
        cfg.param_persistence_threshold = edge[(ex >> 6) & 3];
        cfg.model_persistence_threshold = edge[ey & 3];
    }
    cfg.backend = w->be;
    memset(&FA, 0, sizeof FA);
    if (fl & 0x40) {
        uint8_t sched = u8(&r);
        FA.next = 1 + (sched & 0x1F);           /* k: 1..32 allocations after creation */
        FA.period = 2 + ((sched >> 5) & 7) * 5; /* then every 2..37 */
    }
    cfg.allocator.alloc = fa_alloc;
    cfg.allocator.free = fa_free;
    cfg.allocator.opaque = &FA;
    cfg.on_event = zs_check_event;
    cfg.event_user = &w->chk;
    w->dummy.cfg.max_live_parameters = cfg.max_live_parameters;
    zs_check_init(&w->chk, &w->dummy, cfg.grads_policy, 1);
    w->chk.backend = w->be;
    w->chk.skip_counters = cfg.grads_policy != ZO_GRADS_PER_CALL;
    w->chk.skip_budget = cfg.grads_policy != ZO_GRADS_PER_CALL;

    /* invalid configs must be refused without side effects */
    {
        zo_config bad = cfg;
        zo_runtime *x = NULL;
        bad.size = (fl & 32) ? 3 : sizeof bad;
        bad.world_size = (fl & 32) ? 1 : 0;
        if (zo_runtime_create(&bad, &x) == ZO_OK) {
            fprintf(stderr, "fuzz_api: an invalid config was accepted\n");
            abort();
        }
    }
    LOG("policy %s, W %d, deferred %d, persist %llu (model %llu), max_live %llu, bucket %llu, reuse %llu\n",
        zo_policy_name(cfg.grads_policy), cfg.world_size, ht.deferred,
        (unsigned long long)cfg.param_persistence_threshold, (unsigned long long)cfg.model_persistence_threshold,
        (unsigned long long)cfg.max_live_parameters, (unsigned long long)cfg.prefetch_bucket_size,
        (unsigned long long)cfg.max_reuse_distance);
    if (zo_runtime_create(&cfg, &w->rt) != ZO_OK) {
        zo_backend_destroy(w->be);
        return 0;
    }
    w->chk.rt = w->rt;
    if (fl & 0x40) {
        /* count from here: creation itself is covered by the unit tests */
        FA.next += FA.n;
        FA.on = 1;
        LOG("allocation failures: allocation %llu after creation, then every %llu\n",
            (unsigned long long)(FA.next - FA.n), (unsigned long long)FA.period);
    }

    for (int step = 0; step < 512 && r.pos < r.n; step++) {
        uint8_t op = u8(&r) % 28;
        zo_status st = ZO_OK;
        char what[48];
        snprintf(what, sizeof what, "op %u", op);
        switch (op) {
        case 0: { /* module register */
            zo_module_id parent = pick_module(w, &r), id;
            const char *name = pick_name(&r);
            unsigned flags = u8(&r) % 4 == 0 ? ZO_MODULE_Z3_LEAF : (u8(&r) == 0xAB ? 0x80 : 0);
            if (w->n_mods >= ZS_CODEC_MAX_MODULES) parent = 0xFFFFFFF0u; /* keep the checker's bound */
            CHECKED("zo_module_register", E_MREG, zo_module_register(w->rt, parent, name, flags, &id));
            LOG("zo_module_register(parent %u, flags 0x%x) -> %d id %u\n", parent, flags, st, st ? 0 : id);
            if (st == ZO_OK) w->n_mods++;
            break;
        }
        case 1: { /* param register */
            zo_module_id owner = pick_module(w, &r);
            const char *name = pick_name(&r);
            uint8_t k = u8(&r);
            uint64_t numel = k < 200 ? (uint64_t)(k + 1) * (u8(&r) + 1) : k < 250 ? u32(&r) : u64(&r);
            uint32_t es = u8(&r) % 72;
            unsigned flags = u8(&r) % 3 == 0 ? ZO_PARAM_FROZEN : 0;
            zo_param_id id;
            if (w->n_pars >= ZS_CODEC_MAX_PARAMS) owner = 0xFFFFFFF0u;
            CHECKED("zo_param_register", E_PREG, zo_param_register(w->rt, owner, name, numel, es, flags, &id));
            LOG("zo_param_register(owner %u, numel %llu, elem %u, flags %u) -> %d\n", owner, (unsigned long long)numel,
                es, flags, st);
            if (st == ZO_OK) w->n_pars++;
            break;
        }
        case 2: {
            zo_module_id m = pick_module(w, &r);
            zo_param_id p = pick_param(w, &r);
            CHECKED("zo_module_use_param", E_USE, zo_module_use_param(w->rt, m, p));
            LOG("zo_module_use_param(%u, %u) -> %d\n", m, p, st);
            break;
        }
        case 3: {
            zo_graph g = 0;
            unsigned f = u8(&r) % 5;
            CHECKED("zo_forward_begin", E_FBEGIN, zo_forward_begin(w->rt, f, &g));
            LOG("zo_forward_begin(0x%x) -> %d graph %#llx\n", f, st, (unsigned long long)g);
            if (st == ZO_OK) keep_graph(w, g);
            break;
        }
        case 4: {
            zo_graph g = pick_graph(w, &r);
            CHECKED("zo_forward_end", E_FEND, zo_forward_end(w->rt, g));
            handle_oracle(w, "zo_forward_end", st, 0);
            LOG("zo_forward_end(%#llx) -> %d\n", (unsigned long long)g, st);
            break;
        }
        case 5: {
            zo_module_id m = pick_module(w, &r);
            unsigned f = u8(&r) % 3;
            CHECKED("zo_pre_forward", E_PRE, zo_pre_forward(w->rt, m, f));
            LOG("zo_pre_forward(%u, 0x%x) -> %d\n", m, f, st);
            break;
        }
        case 6:
        case 8: {
            zo_module_id m = pick_module(w, &r);
            size_t n = u8(&r) % 6;
            uint8_t rg[8];
            zo_grad_handle h[8];
            uint8_t bits = u8(&r);
            for (size_t i = 0; i < n; i++) rg[i] = (bits >> i) & 1;
            int nulls = u8(&r) == 0x5A;
            if (op == 6)
                CHECKED("zo_track_inputs", E_TIN, zo_track_inputs(w->rt, m, n, nulls ? NULL : rg, nulls ? NULL : h));
            else
                CHECKED("zo_track_outputs", E_TOUT, zo_track_outputs(w->rt, m, n, nulls ? NULL : rg, nulls ? NULL : h));
            LOG("%s(%u, n %zu, rg 0x%x%s) -> %d", op == 6 ? "zo_track_inputs" : "zo_track_outputs", m, n,
                bits & ((1u << n) - 1), nulls ? ", NULL arrays" : "", st);
            for (size_t i = 0; st == ZO_OK && !nulls && i < n; i++) LOG(" h%zu=%#llx", i, (unsigned long long)h[i]);
            LOG("\n");
            if (st == ZO_OK && !nulls) keep_handles(w, h, n, 0);
            break;
        }
        case 7: {
            zo_module_id m = pick_module(w, &r);
            CHECKED("zo_post_forward", E_POST, zo_post_forward(w->rt, m));
            LOG("zo_post_forward(%u) -> %d\n", m, st);
            break;
        }
        case 9: {
            zo_module_id m = pick_module(w, &r);
            CHECKED("zo_forward_abort", E_ABORT, zo_forward_abort(w->rt, m));
            LOG("zo_forward_abort(%u) -> %d\n", m, st);
            break;
        }
        case 10: {
            zo_graph g = pick_graph(w, &r);
            int ret = u8(&r) & 1;
            CHECKED("zo_backward_begin", E_BBEGIN, zo_backward_begin(w->rt, g, ret));
            handle_oracle(w, "zo_backward_begin", st, 0);
            if (st == ZO_OK) {
                bwd_push(w, g);
                if (ret && w->n_retained < MAXH) w->retained[w->n_retained++] = g;
            }
            LOG("zo_backward_begin(%#llx, retain %d) -> %d\n", (unsigned long long)g, ret, st);
            break;
        }
        case 11:
        case 12: {
            zo_grad_handle h = pick_handle(w, &r);
            if (op == 11)
                CHECKED("zo_output_grad", E_OGRAD, zo_output_grad(w->rt, h));
            else
                CHECKED("zo_input_grad", E_IGRAD, zo_input_grad(w->rt, h));
            handle_oracle(w, op == 11 ? "zo_output_grad" : "zo_input_grad", st, 1);
            LOG("%s(%#llx) -> %d\n", op == 11 ? "zo_output_grad" : "zo_input_grad", (unsigned long long)h, st);
            break;
        }
        case 13: {
            zo_param_id p = pick_param(w, &r);
            CHECKED("zo_param_grad_ready", E_GREADY, zo_param_grad_ready(w->rt, p));
            LOG("zo_param_grad_ready(%u) -> %d\n", p, st);
            break;
        }
        case 14:
        case 15: {
            zo_graph g = pick_graph(w, &r);
            if (op == 14)
                CHECKED("zo_backward_end", E_BEND, zo_backward_end(w->rt, g));
            else
                CHECKED("zo_graph_discard", E_DISCARD, zo_graph_discard(w->rt, g));
            handle_oracle(w, op == 14 ? "zo_backward_end" : "zo_graph_discard", st, 0);
            if (st == ZO_OK && op == 14) {
                bwd_pop(w, g);
                if (!take_retained(w, g)) mark_dead(w, g);
            }
            if (st == ZO_OK && op == 15) mark_dead(w, g);
            LOG("%s(%#llx) -> %d\n", op == 14 ? "zo_backward_end" : "zo_graph_discard", (unsigned long long)g, st);
            break;
        }
        case 16: {
            zo_module_id m = pick_module(w, &r);
            zo_param_id p = pick_param(w, &r);
            const void *d = NULL;
            size_t bytes = 0;
            int nulls = u8(&r) == 0x5A;
            CHECKED("zo_param_access", E_ACCESS, zo_param_access(w->rt, m, p, nulls ? NULL : &d, &bytes));
            LOG("zo_param_access(%u, %u%s) -> %d\n", m, p, nulls ? ", NULL" : "", st);
            if (st == ZO_OK && !nulls && p < ZS_CODEC_MAX_PARAMS) {
                snprintf(w->chk.what, sizeof w->chk.what, "access m=%u p=%u", m, p);
                zs_check_access(&w->chk, m, p, st, d, bytes);
            }
            break;
        }
        case 17:
            CHECKED("zo_release_all", E_RELALL, zo_release_all(w->rt));
            LOG("zo_release_all() -> %d\n", st);
            break;
        case 18: {
            int e = u8(&r) % 3;
            CHECKED("zo_reset_step", E_RESET, zo_reset_step(w->rt, e));
            LOG("zo_reset_step(%d) -> %d\n", e, st);
            break;
        }
        case 19: LOG("zo_host_progress() -> %d\n", zo_host_progress(w->be)); break;
        case 20: { /* introspection with any ids, NULL outs */
            zo_param_info pi;
            zo_module_info mi;
            zo_stats sts;
            zo_trace_info ti;
            zo_param_id buf[4];
            size_t n = 0;
            int nulls = u8(&r) == 0x5A;
            zo_param_id ip = pick_param(w, &r);
            zo_module_id im = pick_module(w, &r), im2 = pick_module(w, &r);
            uint8_t cap = u8(&r) % 5, ev = u8(&r) % 3;
            CHECKED("zo_param_get_info", E_INFO, zo_param_get_info(w->rt, ip, nulls ? NULL : &pi));
            CHECKED("zo_module_get_info", E_INFO, zo_module_get_info(w->rt, im, nulls ? NULL : &mi));
            CHECKED("zo_module_params", E_MPARAMS,
                    zo_module_params(w->rt, im2, nulls ? NULL : buf, cap, nulls ? NULL : &n));
            CHECKED("zo_get_stats", E_STATS, zo_get_stats(w->rt, nulls ? NULL : &sts));
            CHECKED("zo_get_trace_info", E_STATS, zo_get_trace_info(w->rt, ev, nulls ? NULL : &ti));
            st = ZO_OK;
            (void)zo_param_is_active_for(w->rt, pick_param(w, &r), pick_module(w, &r));
            (void)zo_last_error(w->rt);
            break;
        }
        case 21: { /* static helpers with any values */
            int v = (int)(int8_t)u8(&r);
            (void)zo_strerror(v);
            (void)zo_policy_name((zo_grads_policy)v);
            (void)zo_event_kind_name((zo_event_kind)v);
            (void)zo_param_status_name((zo_param_status)v);
            (void)zo_transition_legal((zo_param_status)(v & 3), (zo_param_status)((v >> 2) & 3));
            zo_grads_policy gp;
            static const char *const pn[] = {"per-call", "lazy-init", "bogus", NULL};
            (void)zo_policy_from_name(pn[u8(&r) % 4], &gp);
            break;
        }
        case 22: { /* NULL runtime everywhere: refused, each with its own message */
            static const char *const fn[3] = {"zo_pre_forward", "zo_release_all", "zo_check_consistency"};
            for (int k = 0; k < 3; k++) {
                zo_config bad = ZO_CONFIG_INIT;
                zo_runtime *x = NULL;
                bad.version = 987654321; /* the thread's sentinel message */
                if (zo_runtime_create(&bad, &x) != ZO_ERR_VERSION || !strstr(zo_last_error(NULL), "version 987654321"))
                    die("zo_runtime_create(version 987654321) did not fail with its message");
                zo_status e = k == 0   ? zo_pre_forward(NULL, 0, 0)
                              : k == 1 ? zo_release_all(NULL)
                                       : zo_check_consistency(NULL);
                if (e != ZO_ERR_INVALID_ARG) die("%s(NULL) returned %s", fn[k], zo_strerror(e));
                if (!strstr(zo_last_error(NULL), fn[k]) || !strstr(zo_last_error(NULL), "rt is NULL"))
                    die("%s(NULL): zo_last_error(NULL) is \"%s\"", fn[k], zo_last_error(NULL));
            }
            break;
        }
        case 24: { /* a pass of the second runtime: its handles are foreign here */
            int bwd = u8(&r) & 1;
            foreign_pass(w, bwd);
            LOG("second runtime: a pass%s (%u foreign graphs, %u handles)\n", bwd ? " and its backward" : "",
                w->n_fgraphs, w->n_fhandles);
            break;
        }
        case 25: { /* misuse inside a fresh pass: root m1 calls m2 */
            zo_module_id m1 = pick_module(w, &r), m2 = pick_module(w, &r);
            uint8_t v = u8(&r) % 5;
            static const uint8_t one[1] = {1};
            zo_stats s0;
            int clean = zo_get_stats(w->rt, &s0) == ZO_OK && s0.forward_stack_depth == 0 && w->bwd_depth == 0;
            zo_graph g = 0;
            zo_grad_handle in1 = 0, in2 = 0, out1 = 0, out2 = 0;
            LOG("misuse %u on modules %u -> %u%s\n", v, m1, m2, clean ? "" : " (not from a clean state)");
            CHECKED("zo_forward_begin", E_FBEGIN, zo_forward_begin(w->rt, ZO_FWD_ROOT, &g));
            if (st) break;
            keep_graph(w, g);
            CHECKED("zo_pre_forward", E_PRE, zo_pre_forward(w->rt, m1, ZO_CALL_GRAD));
            if (!st) CHECKED("zo_track_inputs", E_TIN, zo_track_inputs(w->rt, m1, 1, one, &in1));
            if (!st) CHECKED("zo_pre_forward", E_PRE, zo_pre_forward(w->rt, m2, ZO_CALL_GRAD));
            if (!st) CHECKED("zo_track_inputs", E_TIN, zo_track_inputs(w->rt, m2, 1, one, &in2));
            if (st) {
                LOG("  set-up failed (%d): unwound\n", st);
                CHECKED("zo_forward_abort", E_ABORT, zo_forward_abort(w->rt, ZO_NO_MODULE));
                break;
            }
            keep_handles(w, &in1, 1, g);
            keep_handles(w, &in2, 1, g);
            zo_stats s1;
            zo_trace_info t1, t2;
            if (zo_get_stats(w->rt, &s1) || zo_get_trace_info(w->rt, 0, &t1)) die("introspection failed");
            zo_status want = ZO_ERR_PROTOCOL;
            const char *fn = "";
            switch (v) {
            case 0: /* hook B of the caller while the callee's call is innermost */
                fn = "zo_post_forward(caller)";
                if (m1 == m2) want = ZO_OK; /* reuse: the innermost call is m1's own */
                CHECKED("zo_post_forward", E_POST, zo_post_forward(w->rt, m1));
                break;
            case 1:
                fn = "zo_reset_step mid-forward";
                CHECKED("zo_reset_step", E_RESET, zo_reset_step(w->rt, 0));
                break;
            case 2:
                fn = "zo_forward_end with calls open";
                CHECKED("zo_forward_end", E_FEND, zo_forward_end(w->rt, g));
                break;
            case 3:
                fn = "zo_backward_begin of a pass being built";
                CHECKED("zo_backward_begin", E_BBEGIN, zo_backward_begin(w->rt, g, 0));
                break;
            default:
                fn = "zo_release_all mid-forward";
                want = ZO_OK;
                CHECKED("zo_release_all", E_RELALL, zo_release_all(w->rt));
                break;
            }
            LOG("  %s -> %d\n", fn, st);
            if (st != want && FA.refused == 0)
                die("%s returned %s, expected %s", fn, zo_strerror(st), zo_strerror(want));
            if (want == ZO_ERR_PROTOCOL && st == want) {
                zo_stats s2;
                if (zo_get_stats(w->rt, &s2) || zo_get_trace_info(w->rt, 0, &t2)) die("introspection failed");
                if (s2.forward_stack_depth != s1.forward_stack_depth || s2.gathers != s1.gathers ||
                    s2.releases != s1.releases || t2.step_id != t1.step_id || t2.mode != t1.mode)
                    die("%s was refused but changed the state (depth %u -> %u, releases %llu -> %llu)", fn,
                        s1.forward_stack_depth, s2.forward_stack_depth, (unsigned long long)s1.releases,
                        (unsigned long long)s2.releases);
            }
            if (v != 4 || st != ZO_OK) {
                /* unwind: the exception leaves every module; the pass is discarded */
                CHECKED("zo_forward_abort", E_ABORT, zo_forward_abort(w->rt, ZO_NO_MODULE));
                if (st) die("unwinding after %s: zo_forward_abort(ZO_NO_MODULE): %s", fn, zo_last_error(w->rt));
                if (w->chk.policy == ZO_GRADS_PER_CALL && w->bwd_depth == 0) mark_dead(w, g);
                break;
            }
            /* after a mid-forward release_all the pass goes on, and its
             * backward gets every input gradient (the windows stay open) */
            int strict = clean && w->chk.policy == ZO_GRADS_PER_CALL && FA.refused == 0;
            const char *stage = "forward";
            char why[512] = "";
            CHECKED("zo_post_forward", E_POST, zo_post_forward(w->rt, m2));
            if (!st) CHECKED("zo_track_outputs", E_TOUT, zo_track_outputs(w->rt, m2, 1, one, &out2));
            if (!st) CHECKED("zo_post_forward", E_POST, zo_post_forward(w->rt, m1));
            if (!st) CHECKED("zo_track_outputs", E_TOUT, zo_track_outputs(w->rt, m1, 1, one, &out1));
            if (!st) CHECKED("zo_forward_end", E_FEND, zo_forward_end(w->rt, g));
            if (!st) {
                keep_handles(w, &out1, 1, g);
                keep_handles(w, &out2, 1, g);
                stage = "backward";
                CHECKED("zo_backward_begin", E_BBEGIN, zo_backward_begin(w->rt, g, 0));
            }
            if (!st) {
                bwd_push(w, g);
                CHECKED("zo_output_grad", E_OGRAD, zo_output_grad(w->rt, out1));
                if (!st) CHECKED("zo_output_grad", E_OGRAD, zo_output_grad(w->rt, out2));
                if (!st) stage = "input gradients (windows of a pass released mid-forward)";
                if (!st) CHECKED("zo_input_grad", E_IGRAD, zo_input_grad(w->rt, in2));
                if (!st) CHECKED("zo_input_grad", E_IGRAD, zo_input_grad(w->rt, in1));
                if (!st) stage = "backward end";
                zo_status first = st; /* the backward ends in any case */
                if (st) snprintf(why, sizeof why, "%s", zo_last_error(w->rt));
                CHECKED("zo_backward_end", E_BEND, zo_backward_end(w->rt, g));
                if (!st) {
                    bwd_pop(w, g);
                    mark_dead(w, g);
                }
                if (first) st = first;
            }
            LOG("  the pass after release_all: %s -> %d\n", stage, st);
            if (st && !why[0]) snprintf(why, sizeof why, "%s", zo_last_error(w->rt));
            if (strict && st && FA.refused == 0) die("after a mid-forward release_all, %s failed: %s", stage, why);
            break;
        }
        case 26: { /* cycle call slots: short passes without grad reuse them */
            zo_module_id m = pick_module(w, &r);
            unsigned k = 1 + u8(&r) % 16;
            LOG("%u short no-grad passes on module %u\n", k, m);
            for (unsigned i = 0; i < k; i++) {
                zo_graph g = 0;
                CHECKED("zo_forward_begin", E_FBEGIN, zo_forward_begin(w->rt, 0, &g));
                if (st) break;
                CHECKED("zo_pre_forward", E_PRE, zo_pre_forward(w->rt, m, 0));
                if (!st) CHECKED("zo_post_forward", E_POST, zo_post_forward(w->rt, m));
                if (st) {
                    CHECKED("zo_forward_abort", E_ABORT, zo_forward_abort(w->rt, ZO_NO_MODULE));
                    break;
                }
                CHECKED("zo_forward_end", E_FEND, zo_forward_end(w->rt, g));
                if (st) break;
                /* a pass with no grad-enabled call ends here: g is gone */
                if (w->chk.policy == ZO_GRADS_PER_CALL) mark_dead(w, g);
                keep_graph(w, g);
            }
            break;
        }
        case 27: { /* the same input gradient twice in a row */
            zo_grad_handle h = pick_handle(w, &r);
            CHECKED("zo_input_grad", E_IGRAD, zo_input_grad(w->rt, h));
            handle_oracle(w, "zo_input_grad", st, 1);
            zo_status first = st;
            if (!first) CHECKED("zo_input_grad", E_IGRAD, zo_input_grad(w->rt, h));
            LOG("zo_input_grad(%#llx) twice -> %d, %d\n", (unsigned long long)h, first, first ? first : st);
            if (!first && !st && w->chk.policy == ZO_GRADS_PER_CALL)
                die("zo_input_grad accepted the same handle twice in a row");
            break;
        }
        default: /* a burst of valid-looking hook calls on one module */
        {
            zo_module_id m = pick_module(w, &r);
            zo_graph g = 0;
            LOG("burst on module %u:\n", m);
            uint8_t rg[2] = {1, 1};
            zo_grad_handle h[2];
            CHECKED("zo_forward_begin", E_FBEGIN, zo_forward_begin(w->rt, ZO_FWD_ROOT, &g));
            LOG("  zo_forward_begin(ROOT) -> %d graph %#llx\n", st, (unsigned long long)g);
            if (st == ZO_OK) keep_graph(w, g);
            CHECKED("zo_pre_forward", E_PRE, zo_pre_forward(w->rt, m, ZO_CALL_GRAD));
            LOG("  zo_pre_forward(%u, GRAD) -> %d\n", m, st);
            if (st == ZO_OK) {
                CHECKED("zo_track_inputs", E_TIN, zo_track_inputs(w->rt, m, 2, rg, h));
                LOG("  zo_track_inputs(%u, rg 1,1) -> %d\n", m, st);
                if (st == ZO_OK) keep_handles(w, h, 2, g);
            }
            CHECKED("zo_post_forward", E_POST, zo_post_forward(w->rt, m));
            LOG("  zo_post_forward(%u) -> %d\n", m, st);
            if (st == ZO_OK) {
                CHECKED("zo_track_outputs", E_TOUT, zo_track_outputs(w->rt, m, 2, rg, h));
                LOG("  zo_track_outputs(%u, rg 1,1) -> %d\n", m, st);
                if (st == ZO_OK) keep_handles(w, h, 2, g);
            }
            CHECKED("zo_forward_end", E_FEND, zo_forward_end(w->rt, g));
            LOG("  zo_forward_end(%#llx) -> %d\n", (unsigned long long)g, st);
            break;
        }
        }
        (void)st; /* errors are fine; the state after them is what is checked */
        check(w, what);
    }
    final_step(w); /* the state is consistent: a normal step works */
    if (w->rt2 && zo_runtime_destroy(w->rt2) != ZO_OK) die("second runtime: zo_runtime_destroy failed");
    FA.on = 0; /* destroy must succeed and free everything */
    zo_status ds = zo_runtime_destroy(w->rt);
    zo_backend_destroy(w->be);
    if (ds != ZO_OK) {
        fprintf(stderr, "fuzz_api: zo_runtime_destroy returned %s\n", zo_strerror(ds));
        abort();
    }
    return 0;
}
