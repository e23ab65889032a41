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
 *     by design under arbitrary orders, so they are not checked there),
 *   - a successful zo_param_access returns the original bytes (I4 content).
 * A violation aborts (the engine records a crash).
 *
 * ZOFUZZ_POLICY=<name> pins the policy (default: byte 0 of the input picks it).
 * ZOFUZZ_TRACE=1 prints every call with its arguments and status (repro).
 *
 * Input layout: byte 0 policy, byte 1 world size, byte 2 flags (deferred,
 * thresholds, allocation-failure injection), then (with flag 0x40) one byte
 * choosing the allocation-failure schedule, then one opcode byte per call
 * followed by its arguments; missing bytes read as 0.  At most 512 calls
 * per input.
 *
 * Allocation-failure injection (flag 0x40): the runtime's replaceable
 * allocator refuses allocations at fuzz-chosen points (the k-th allocation
 * after creation, then every p-th, k and p from the schedule byte); each
 * refused call must return an error and leave the runtime consistent,
 * which the checks after every call verify, and nothing may leak.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "scenario.h"
#include "zoffload.h"
#include "zoffload_backend.h"

typedef struct rd {
    const uint8_t *d;
    size_t n, pos;
} rd;

static uint8_t u8(rd *r)
{
    return r->pos < r->n ? r->d[r->pos++] : (r->pos++, 0);
}
static uint32_t u32(rd *r)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v |= (uint32_t)u8(r) << (8 * i);
    return v;
}
static uint64_t u64(rd *r)
{
    return (uint64_t)u32(r) | ((uint64_t)u32(r) << 32);
}

#define MAXH 64

static int g_trace = -1, g_policy = -2;

/* fuzz-chosen allocation failures (flag 0x40) */
typedef struct failalloc {
    int on;
    uint64_t n;      /* allocations so far */
    uint64_t next;   /* index of the next refused allocation */
    uint64_t period;
    uint64_t refused;
} failalloc;

static void *fa_alloc(void *opaque, size_t bytes)
{
    failalloc *fa = opaque;
    fa->n++;
    if (fa->on && fa->n == fa->next) {
        fa->next += fa->period;
        fa->refused++;
        return NULL;
    }
    return malloc(bytes);
}

static void fa_free(void *opaque, void *p)
{
    (void)opaque;
    free(p);
}
#define LOG(...)                                                                                   \
    do {                                                                                           \
        if (g_trace) fprintf(stderr, __VA_ARGS__);                                                 \
    } while (0)

typedef struct world {
    zo_runtime *rt;
    zo_backend *be;
    zs_checker chk;
    zs_scenario dummy;   /* config for the checker (max_live for I5) */
    uint32_t n_mods, n_pars;
    zo_graph graphs[MAXH];
    unsigned n_graphs;
    zo_grad_handle handles[MAXH];
    unsigned n_handles;
} world;

static zo_module_id pick_module(world *w, rd *r)
{
    uint8_t b = u8(r);
    if (b == 0xFF) return ZO_NO_MODULE;
    if (b >= 0xF0) return (zo_module_id)u32(r); /* anything */
    return w->n_mods ? b % (w->n_mods + 1) : b % 2; /* mostly valid, sometimes one past */
}

static zo_param_id pick_param(world *w, rd *r)
{
    uint8_t b = u8(r);
    if (b == 0xFF) return ZO_NO_PARAM;
    if (b >= 0xF0) return (zo_param_id)u32(r);
    return w->n_pars ? b % (w->n_pars + 1) : b % 2;
}

static zo_graph pick_graph(world *w, rd *r)
{
    uint8_t b = u8(r);
    if (b >= 0xF0 || w->n_graphs == 0) return b == 0xF1 ? u64(r) : (zo_graph)(b & 3);
    return w->graphs[(w->n_graphs - 1 - b % w->n_graphs)];
}

static zo_grad_handle pick_handle(world *w, rd *r)
{
    uint8_t b = u8(r);
    if (b >= 0xF0 || w->n_handles == 0) return b == 0xF1 ? u64(r) : (zo_grad_handle)(b & 3);
    zo_grad_handle h = w->handles[w->n_handles - 1 - b % w->n_handles];
    if ((b & 0xC0) == 0x80) h ^= (zo_grad_handle)1 << (u8(r) % 64); /* corrupted */
    return h;
}

static void keep_graph(world *w, zo_graph g)
{
    if (!g) return;
    if (w->n_graphs == MAXH) {
        memmove(w->graphs, w->graphs + 1, (MAXH - 1) * sizeof *w->graphs);
        w->n_graphs--;
    }
    w->graphs[w->n_graphs++] = g;
}

static void keep_handles(world *w, const zo_grad_handle *h, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!h[i]) continue;
        if (w->n_handles == MAXH) {
            memmove(w->handles, w->handles + 1, (MAXH - 1) * sizeof *w->handles);
            w->n_handles--;
        }
        w->handles[w->n_handles++] = h[i];
    }
}

static const char *pick_name(rd *r)
{
    static char longname[300];
    static const char *const names[] = {NULL, "", "a", "b", "layer.0", "a"};
    uint8_t b = u8(r) % 8;
    if (b < 6) return names[b];
    memset(longname, 'x', sizeof longname - 1);
    longname[(b == 6) ? 255 : 256] = 0; /* 255 accepted, 256 too long */
    return longname;
}

static void check(world *w, const char *what)
{
    snprintf(w->chk.what, sizeof w->chk.what, "%s", what);
    w->chk.n_params = w->n_pars < ZS_MAX_PARAMS ? w->n_pars : ZS_MAX_PARAMS;
    w->chk.n_modules = w->n_mods;
    w->chk.seen_error_events = w->chk.n_error_events; /* refused calls are expected here */
    zs_check_state(&w->chk);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rd r = {data, size, 0};
    if (g_trace < 0) {
        const char *t = getenv("ZOFUZZ_TRACE");
        g_trace = t && *t && strcmp(t, "0");
        const char *p = getenv("ZOFUZZ_POLICY");
        g_policy = (p && *p) ? zs_policy_from_name(p) : -1;
        if (p && *p && g_policy < 0) {
            fprintf(stderr, "fuzz_api: unknown ZOFUZZ_POLICY '%s'\n", p);
            exit(2);
        }
    }
    static world W;
    world *w = &W;
    memset(w, 0, sizeof *w);
    zs_scenario_init(&w->dummy);

    uint8_t pol = u8(&r), ws = u8(&r), fl = u8(&r);
    zo_host_config hc = ZO_HOST_CONFIG_INIT;
    hc.world_size = 1 + ws % 8;
    hc.deferred = fl & 1;
    hc.max_bytes_per_param = 64;
    if (zo_backend_host_create(&hc, &w->be) != ZO_OK) return 0;
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.world_size = hc.world_size;
    cfg.grads_policy = (zo_grads_policy)(g_policy >= 0 ? g_policy : pol % 4);
    cfg.param_persistence_threshold = (fl & 2) ? 64 : 0;
    cfg.max_live_parameters = (fl & 4) ? 100 : 1000000000ull;
    cfg.prefetch_bucket_size = (fl & 8) ? 0 : 50;
    cfg.max_reuse_distance = (fl & 16) ? 0 : 1000000000ull;
    cfg.backend = w->be;
    static failalloc FA;
    memset(&FA, 0, sizeof FA);
    if (fl & 0x40) {
        uint8_t sched = u8(&r);
        FA.next = 1 + (sched & 0x1F);         /* k: 1..32 allocations after creation */
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
    LOG("policy %s, W %d, deferred %d, persist %llu, max_live %llu, bucket %llu, reuse %llu\n",
        zo_policy_name(cfg.grads_policy), cfg.world_size, hc.deferred,
        (unsigned long long)cfg.param_persistence_threshold,
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
        uint8_t op = u8(&r) % 24;
        zo_status st = ZO_OK;
        char what[48];
        snprintf(what, sizeof what, "op %u", op);
        switch (op) {
        case 0: { /* module register */
            zo_module_id parent = pick_module(w, &r), id;
            const char *name = pick_name(&r);
            unsigned flags = u8(&r) % 4 == 0 ? ZO_MODULE_Z3_LEAF : (u8(&r) == 0xAB ? 0x80 : 0);
            if (w->n_mods >= ZS_MAX_MODULES) parent = 0xFFFFFFF0u; /* keep the checker's bound */
            st = zo_module_register(w->rt, parent, name, flags, &id);
            LOG("zo_module_register(parent %u, flags 0x%x) -> %d id %u\n", parent, flags, st,
                st ? 0 : id);
            if (st == ZO_OK) w->n_mods++;
            break;
        }
        case 1: { /* param register */
            zo_module_id owner = pick_module(w, &r);
            const char *name = pick_name(&r);
            uint8_t k = u8(&r);
            uint64_t numel = k < 200 ? (uint64_t)(k + 1) * (u8(&r) + 1)
                             : k < 250 ? u32(&r)
                                       : u64(&r);
            uint32_t es = u8(&r) % 72;
            unsigned flags = u8(&r) % 3 == 0 ? ZO_PARAM_FROZEN : 0;
            zo_param_id id;
            if (w->n_pars >= ZS_MAX_PARAMS) owner = 0xFFFFFFF0u;
            st = zo_param_register(w->rt, owner, name, numel, es, flags, &id);
            LOG("zo_param_register(owner %u, numel %llu, elem %u, flags %u) -> %d\n", owner,
                (unsigned long long)numel, es, flags, st);
            if (st == ZO_OK) w->n_pars++;
            break;
        }
        case 2: {
            zo_module_id m = pick_module(w, &r);
            zo_param_id p = pick_param(w, &r);
            st = zo_module_use_param(w->rt, m, p);
            LOG("zo_module_use_param(%u, %u) -> %d\n", m, p, st);
            break;
        }
        case 3: {
            zo_graph g = 0;
            unsigned f = u8(&r) % 5;
            st = zo_forward_begin(w->rt, f, &g);
            LOG("zo_forward_begin(0x%x) -> %d graph %#llx\n", f, st, (unsigned long long)g);
            if (st == ZO_OK) keep_graph(w, g);
            break;
        }
        case 4: {
            zo_graph g = pick_graph(w, &r);
            st = zo_forward_end(w->rt, g);
            LOG("zo_forward_end(%#llx) -> %d\n", (unsigned long long)g, st);
            break;
        }
        case 5: {
            zo_module_id m = pick_module(w, &r);
            unsigned f = u8(&r) % 3;
            st = zo_pre_forward(w->rt, m, f);
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
                st = zo_track_inputs(w->rt, m, n, nulls ? NULL : rg, nulls ? NULL : h);
            else
                st = zo_track_outputs(w->rt, m, n, nulls ? NULL : rg, nulls ? NULL : h);
            LOG("%s(%u, n %zu, rg 0x%x%s) -> %d", op == 6 ? "zo_track_inputs" : "zo_track_outputs",
                m, n, bits & ((1u << n) - 1), nulls ? ", NULL arrays" : "", st);
            for (size_t i = 0; st == ZO_OK && !nulls && i < n; i++)
                LOG(" h%zu=%#llx", i, (unsigned long long)h[i]);
            LOG("\n");
            if (st == ZO_OK && !nulls) keep_handles(w, h, n);
            break;
        }
        case 7: {
            zo_module_id m = pick_module(w, &r);
            st = zo_post_forward(w->rt, m);
            LOG("zo_post_forward(%u) -> %d\n", m, st);
            break;
        }
        case 9: {
            zo_module_id m = pick_module(w, &r);
            st = zo_forward_abort(w->rt, m);
            LOG("zo_forward_abort(%u) -> %d\n", m, st);
            break;
        }
        case 10: {
            zo_graph g = pick_graph(w, &r);
            int ret = u8(&r) & 1;
            st = zo_backward_begin(w->rt, g, ret);
            LOG("zo_backward_begin(%#llx, retain %d) -> %d\n", (unsigned long long)g, ret, st);
            break;
        }
        case 11:
        case 12: {
            zo_grad_handle h = pick_handle(w, &r);
            st = op == 11 ? zo_output_grad(w->rt, h) : zo_input_grad(w->rt, h);
            LOG("%s(%#llx) -> %d\n", op == 11 ? "zo_output_grad" : "zo_input_grad",
                (unsigned long long)h, st);
            break;
        }
        case 13: {
            zo_param_id p = pick_param(w, &r);
            st = zo_param_grad_ready(w->rt, p);
            LOG("zo_param_grad_ready(%u) -> %d\n", p, st);
            break;
        }
        case 14:
        case 15: {
            zo_graph g = pick_graph(w, &r);
            st = op == 14 ? zo_backward_end(w->rt, g) : zo_graph_discard(w->rt, g);
            LOG("%s(%#llx) -> %d\n", op == 14 ? "zo_backward_end" : "zo_graph_discard",
                (unsigned long long)g, st);
            break;
        }
        case 16: {
            zo_module_id m = pick_module(w, &r);
            zo_param_id p = pick_param(w, &r);
            const void *d = NULL;
            size_t bytes = 0;
            int nulls = u8(&r) == 0x5A;
            st = zo_param_access(w->rt, m, p, nulls ? NULL : &d, &bytes);
            LOG("zo_param_access(%u, %u%s) -> %d\n", m, p, nulls ? ", NULL" : "", st);
            if (st == ZO_OK && !nulls && p < ZS_MAX_PARAMS) {
                snprintf(w->chk.what, sizeof w->chk.what, "access m=%u p=%u", m, p);
                zs_check_access(&w->chk, m, p, st, d, bytes);
            }
            break;
        }
        case 17:
            st = zo_release_all(w->rt);
            LOG("zo_release_all() -> %d\n", st);
            break;
        case 18: {
            int e = u8(&r) % 3;
            st = zo_reset_step(w->rt, e);
            LOG("zo_reset_step(%d) -> %d\n", e, st);
            break;
        }
        case 19:
            LOG("zo_host_progress() -> %d\n", zo_host_progress(w->be));
            break;
        case 20: { /* introspection with any ids, NULL outs */
            zo_param_info pi;
            zo_module_info mi;
            zo_stats sts;
            zo_trace_info ti;
            zo_param_id buf[4];
            size_t n = 0;
            int nulls = u8(&r) == 0x5A;
            (void)zo_param_get_info(w->rt, pick_param(w, &r), nulls ? NULL : &pi);
            (void)zo_module_get_info(w->rt, pick_module(w, &r), nulls ? NULL : &mi);
            (void)zo_module_params(w->rt, pick_module(w, &r), nulls ? NULL : buf, u8(&r) % 5,
                                   nulls ? NULL : &n);
            (void)zo_get_stats(w->rt, nulls ? NULL : &sts);
            (void)zo_get_trace_info(w->rt, u8(&r) % 3, nulls ? NULL : &ti);
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
        case 22: /* NULL runtime everywhere: must be refused */
            if (zo_pre_forward(NULL, 0, 0) == ZO_OK || zo_release_all(NULL) == ZO_OK ||
                zo_check_consistency(NULL) == ZO_OK) {
                fprintf(stderr, "fuzz_api: a NULL runtime was accepted\n");
                abort();
            }
            break;
        default: /* a burst of valid-looking hook calls on one module */
        {
            zo_module_id m = pick_module(w, &r);
            zo_graph g = 0;
            LOG("burst on module %u:\n", m);
            uint8_t rg[2] = {1, 1};
            zo_grad_handle h[2];
            st = zo_forward_begin(w->rt, ZO_FWD_ROOT, &g);
            LOG("  zo_forward_begin(ROOT) -> %d graph %#llx\n", st, (unsigned long long)g);
            if (st == ZO_OK) keep_graph(w, g);
            st = zo_pre_forward(w->rt, m, ZO_CALL_GRAD);
            LOG("  zo_pre_forward(%u, GRAD) -> %d\n", m, st);
            if (st == ZO_OK) {
                st = zo_track_inputs(w->rt, m, 2, rg, h);
                LOG("  zo_track_inputs(%u, rg 1,1) -> %d\n", m, st);
                if (st == ZO_OK) keep_handles(w, h, 2);
            }
            st = zo_post_forward(w->rt, m);
            LOG("  zo_post_forward(%u) -> %d\n", m, st);
            if (st == ZO_OK) {
                st = zo_track_outputs(w->rt, m, 2, rg, h);
                LOG("  zo_track_outputs(%u, rg 1,1) -> %d\n", m, st);
                if (st == ZO_OK) keep_handles(w, h, 2);
            }
            st = zo_forward_end(w->rt, g);
            LOG("  zo_forward_end(%#llx) -> %d\n", (unsigned long long)g, st);
            break;
        }
        }
        (void)st; /* errors are fine; the state after them is what is checked */
        check(w, what);
    }
    FA.on = 0; /* destroy must succeed and free everything */
    zo_status ds = zo_runtime_destroy(w->rt);
    zo_backend_destroy(w->be);
    if (ds != ZO_OK) {
        fprintf(stderr, "fuzz_api: zo_runtime_destroy returned %s\n", zo_strerror(ds));
        abort();
    }
    return 0;
}
