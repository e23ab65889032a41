/*
 * backend_fault.c - host backend fault injection (zo_host_set_fault) under
 * a training scenario (reliability).
 *
 * For every fault kind - an all-gather that fails (FAIL at GATHER), a wait
 * or query that fails transiently (FAIL at WAIT), a slow all-gather (DELAY
 * at GATHER), a slow wait (DELAY at WAIT), a collective that fails
 * (FAIL_WORK at GATHER / WAIT) - and for every point `at` reached by the
 * scenario (1 .. the operations a healthy run makes at that point), a
 * 3-step training scenario (tied parameter, persistent parameter, prefetch,
 * unplanned access in backward) runs on an immediate and on a deferred
 * host backend.  Checked:
 *
 *   - DELAY: nothing fails, every access returns the right bytes.
 *   - FAIL / FAIL_WORK: the failing entry point returns ZO_ERR_BACKEND with
 *     a message and a ZO_EV_ERROR event, zo_check_consistency() holds; the
 *     framework's recovery (zo_forward_abort(ZO_NO_MODULE) if a forward is
 *     open, then zo_release_all(), as after a Python exception) succeeds
 *     and leaves every non-persistent parameter NOT_AVAILABLE, nothing in
 *     flight; the next training step runs clean and every parameter access
 *     returns the parameter's true bytes (zo_host_param_byte).
 *   - always: every rank's shard of every parameter still holds its
 *     original content (the shard data is never lost), the runtime and
 *     backend free every block (counting allocator; LSan at exit).
 *
 * Exit 0 if all good, 1 otherwise (each problem printed).
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_host_internal.h"
#include "zoffload.h"
#include "zoffload_backend.h"
#include "zoffload_testing.h"

typedef struct counting {
    int64_t live;
} counting;
static void *c_alloc(void *o, size_t n) {
    void *p = malloc(n);
    if (p) ((counting *)o)->live++;
    return p;
}
static void c_free(void *o, void *p) {
    if (p) {
        ((counting *)o)->live--;
        free(p);
    }
}

typedef struct world {
    zo_backend *be;
    zo_runtime *rt;
    counting al;
    uint64_t errors_seen; /* ZO_EV_ERROR events */
    char problem[512];
    int bad;
} world;

static void on_event(void *user, const zo_event *ev) {
    world *w = user;
    if (ev->kind == ZO_EV_ERROR) w->errors_seen++;
}

static void problem(world *w, const char *fmt, ...) {
    if (w->bad++) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->problem, sizeof w->problem, fmt, ap);
    va_end(ap);
}

#define N_PARAMS 4

static int world_open(world *w, zo_grads_policy pol, int deferred) {
    memset(w, 0, sizeof *w);
    zo_host_config hc = ZO_HOST_CONFIG_INIT;
    zo_host_testing ht = ZO_HOST_TESTING_INIT;
    hc.testing = &ht;
    hc.world_size = 3;
    hc.rank = 1;
    ht.deferred = deferred;
    ht.max_bytes_per_param = 256;
    hc.allocator.alloc = c_alloc;
    hc.allocator.free = c_free;
    hc.allocator.opaque = &w->al;
    if (zo_backend_host_create(&hc, &w->be) != ZO_OK) return -1;
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.grads_policy = pol;
    cfg.world_size = 3;
    cfg.rank = 1;
    cfg.param_persistence_threshold = 10;
    cfg.prefetch_bucket_size = 2000;
    cfg.backend = w->be;
    cfg.allocator = hc.allocator;
    cfg.on_event = on_event;
    cfg.event_user = w;
    if (zo_runtime_create(&cfg, &w->rt) != ZO_OK) return -1;
    zo_module_id r, a, b;
    zo_param_id p;
    if (zo_module_register(w->rt, ZO_NO_MODULE, "model", 0, &r) || zo_module_register(w->rt, r, "a", 0, &a) ||
        zo_module_register(w->rt, r, "b", 0, &b) || zo_param_register(w->rt, r, "w", 33, 4, 0, &p) ||
        zo_param_register(w->rt, a, "w", 1000, 2, 0, &p) || zo_param_register(w->rt, a, "bias", 5, 4, 0, &p) ||
        zo_param_register(w->rt, b, "w", 777, 4, 0, &p) || zo_module_use_param(w->rt, b, 1))
        return -1;
    return 0;
}

/* the bytes of an access equal the parameter's true content */
static void check_content(world *w, zo_param_id p, const void *data, size_t bytes) {
    uint64_t phys = zo_host_physical_bytes(w->be, bytes);
    const uint8_t *d = data;
    for (uint64_t i = 0; i < phys; i++)
        if (d[i] != zo_host_param_byte(p, i)) {
            problem(w, "param %u: byte %llu of an access is 0x%02x, expected 0x%02x (wrong or missing data)", p,
                    (unsigned long long)i, d[i], zo_host_param_byte(p, i));
            return;
        }
}

/* every rank's stored shard still holds the original bytes */
static void check_shards(world *w) {
    for (zo_param_id p = 0; p < N_PARAMS; p++) {
        zo_param_info pi;
        if (zo_param_get_info(w->rt, p, &pi) != ZO_OK) continue;
        uint64_t shard_bytes = pi.partition_numel * pi.elem_size;
        for (int r = 0; r < 3; r++) {
            const uint8_t *d;
            uint64_t n;
            if (zo_host_shard(w->be, p, r, &d, &n) != ZO_OK) {
                problem(w, "param %u rank %d: shard missing", p, r);
                return;
            }
            for (uint64_t i = 0; i < n; i++) {
                uint64_t g = (uint64_t)r * shard_bytes + i;
                uint8_t want = g < pi.numel * pi.elem_size ? zo_host_param_byte(p, g) : 0;
                if (d[i] != want) {
                    problem(w, "param %u rank %d: shard byte %llu changed (shard data lost)", p, r,
                            (unsigned long long)i);
                    return;
                }
            }
        }
    }
}

/* One training step.  Returns ZO_OK, or the first error (the step stops
 * there, as a Python exception would stop it). */
#define S(call)                                                                                                        \
    do {                                                                                                               \
        uint64_t e0_ = w->errors_seen;                                                                                 \
        zo_status s_ = (call);                                                                                         \
        if (s_ != ZO_OK) {                                                                                             \
            if (zo_last_error(w->rt)[0] == '\0')                                                                       \
                problem(w, "%s: %s with an empty zo_last_error()", #call, zo_strerror(s_));                            \
            if (w->errors_seen == e0_) problem(w, "%s: %s without a ZO_EV_ERROR event", #call, zo_strerror(s_));       \
            if (zo_check_consistency(w->rt) != ZO_OK)                                                                  \
                problem(w, "%s: inconsistent after %s: %s", #call, zo_strerror(s_), zo_last_error(w->rt));             \
            *where = #call;                                                                                            \
            return s_;                                                                                                 \
        }                                                                                                              \
    } while (0)
#define ACCESS(m, p)                                                                                                   \
    do {                                                                                                               \
        const void *d_;                                                                                                \
        size_t b_;                                                                                                     \
        S(zo_param_access(w->rt, (m), (p), &d_, &b_));                                                                 \
        check_content(w, (p), d_, b_);                                                                                 \
    } while (0)

static zo_status step(world *w, const char **where) {
    const zo_module_id r = 0, a = 1, b = 2;
    zo_graph g;
    uint8_t one[1] = {1};
    zo_grad_handle r_in, r_out, a_in, a_out, b_in, b_out, a2_in, a2_out;
    S(zo_forward_begin(w->rt, ZO_FWD_ROOT, &g));
    S(zo_pre_forward(w->rt, r, ZO_CALL_GRAD));
    S(zo_track_inputs(w->rt, r, 1, one, &r_in));
    ACCESS(r, 0);
    S(zo_pre_forward(w->rt, a, ZO_CALL_GRAD));
    S(zo_track_inputs(w->rt, a, 1, one, &a_in));
    ACCESS(a, 1);
    ACCESS(a, 2);
    S(zo_post_forward(w->rt, a));
    S(zo_track_outputs(w->rt, a, 1, one, &a_out));
    S(zo_pre_forward(w->rt, b, ZO_CALL_GRAD));
    S(zo_track_inputs(w->rt, b, 1, one, &b_in));
    ACCESS(b, 1);
    ACCESS(b, 3);
    S(zo_post_forward(w->rt, b));
    S(zo_track_outputs(w->rt, b, 1, one, &b_out));
    S(zo_pre_forward(w->rt, a, ZO_CALL_GRAD));
    S(zo_track_inputs(w->rt, a, 1, one, &a2_in));
    ACCESS(a, 1);
    S(zo_post_forward(w->rt, a));
    S(zo_track_outputs(w->rt, a, 1, one, &a2_out));
    S(zo_post_forward(w->rt, r));
    S(zo_track_outputs(w->rt, r, 1, one, &r_out));
    S(zo_forward_end(w->rt, g));
    S(zo_backward_begin(w->rt, g, 0));
    S(zo_output_grad(w->rt, r_out));
    S(zo_output_grad(w->rt, a2_out));
    ACCESS(a, 1);
    S(zo_input_grad(w->rt, a2_in));
    S(zo_output_grad(w->rt, b_out));
    ACCESS(b, 3);
    S(zo_input_grad(w->rt, b_in));
    S(zo_output_grad(w->rt, a_out));
    ACCESS(a, 2);
    S(zo_input_grad(w->rt, a_in));
    S(zo_input_grad(w->rt, r_in));
    S(zo_backward_end(w->rt, g));
    S(zo_release_all(w->rt));
    return ZO_OK;
}

/* everything released, nothing in flight */
static void check_released(world *w, const char *when) {
    zo_stats st;
    zo_get_stats(w->rt, &st);
    if (st.forward_stack_depth != 0) problem(w, "%s: forward stack depth %u", when, st.forward_stack_depth);
    for (zo_param_id p = 0; p < st.n_params; p++) {
        zo_param_info pi;
        zo_param_get_info(w->rt, p, &pi);
        if (!pi.persistent && pi.status != ZO_PARAM_NOT_AVAILABLE)
            problem(w, "%s: param %u still %s", when, p, zo_param_status_name(pi.status));
    }
    if (st.inflight_params != 0 || st.live_numel != st.persistent_live_numel)
        problem(w, "%s: %llu in flight, live %llu (persistent %llu)", when, (unsigned long long)st.inflight_params,
                (unsigned long long)st.live_numel, (unsigned long long)st.persistent_live_numel);
}

typedef struct kind {
    const char *name;
    zo_host_fault_point point;
    zo_host_fault_action action;
} kind;

static const kind KINDS[] = {
    {"gather fails", ZO_HOST_FAULT_GATHER, ZO_HOST_FAULT_FAIL},
    {"wait fails (transient)", ZO_HOST_FAULT_WAIT, ZO_HOST_FAULT_FAIL},
    {"gather delayed", ZO_HOST_FAULT_GATHER, ZO_HOST_FAULT_DELAY},
    {"wait delayed", ZO_HOST_FAULT_WAIT, ZO_HOST_FAULT_DELAY},
    {"collective fails (at gather)", ZO_HOST_FAULT_GATHER, ZO_HOST_FAULT_FAIL_WORK},
    {"collective fails (at wait)", ZO_HOST_FAULT_WAIT, ZO_HOST_FAULT_FAIL_WORK},
};

static int run_kind(const kind *kd, zo_grads_policy pol, int deferred) {
    /* healthy run: operations at the point */
    world w;
    const char *where = "";
    if (world_open(&w, pol, deferred) != 0) {
        printf("FAIL setup\n");
        return 1;
    }
    zo_host_fault none = {kd->point, ZO_HOST_FAULT_NONE, 0, 0, 0, 0};
    zo_host_set_fault(w.be, &none);
    for (int i = 0; i < 3; i++)
        if (step(&w, &where) != ZO_OK) problem(&w, "healthy run failed at %s", where);
    uint64_t n_ops = zo_host_fault_ops(w.be, kd->point);
    int healthy_bad = w.bad;
    if (w.bad) printf("FAIL %s: healthy run: %s\n", kd->name, w.problem);
    zo_runtime_destroy(w.rt);
    zo_backend_destroy(w.be);
    if (healthy_bad) return 1;

    int bad = 0;
    uint64_t surfaced = 0, absorbed = 0;
    for (uint64_t at = 1; at <= n_ops; at++) {
        if (world_open(&w, pol, deferred) != 0) {
            printf("FAIL setup\n");
            return 1;
        }
        zo_host_fault f = {kd->point, kd->action, at, 1, ZO_ERR_BACKEND, 50};
        zo_host_set_fault(w.be, &f);
        zo_status s = ZO_OK;
        for (int i = 0; i < 3 && s == ZO_OK; i++) s = step(&w, &where);
        if (s != ZO_OK) {
            surfaced++;
            if (kd->action == ZO_HOST_FAULT_DELAY)
                problem(&w, "a delay made %s fail with %s", where, zo_strerror(s));
            else if (s != ZO_ERR_BACKEND)
                problem(&w, "%s returned %s, expected ZO_ERR_BACKEND", where, zo_strerror(s));
            /* the exception unwinds: abort the open forward, then sweep */
            zo_stats st;
            zo_get_stats(w.rt, &st);
            zo_status rs = ZO_OK;
            if (st.forward_stack_depth > 0 && (rs = zo_forward_abort(w.rt, ZO_NO_MODULE)) != ZO_OK)
                problem(&w, "after %s failed: zo_forward_abort(ZO_NO_MODULE) = %s (%s)", where, zo_strerror(rs),
                        zo_last_error(w.rt));
            if ((rs = zo_release_all(w.rt)) != ZO_OK)
                problem(&w, "after %s failed: zo_release_all = %s (%s): the parameter is not recoverable", where,
                        zo_strerror(rs), zo_last_error(w.rt));
            if (zo_check_consistency(w.rt) != ZO_OK)
                problem(&w, "after recovery: inconsistent: %s", zo_last_error(w.rt));
            check_released(&w, "after recovery");
            /* the next step runs clean with the right data */
            if (!w.bad && (rs = step(&w, &where)) != ZO_OK)
                problem(&w, "the step after recovery failed at %s: %s", where, zo_strerror(rs));
        } else if (zo_host_fault_fired(w.be)) {
            absorbed++;
            if (kd->action != ZO_HOST_FAULT_DELAY && kd->action != ZO_HOST_FAULT_FAIL_WORK && w.errors_seen == 0)
                problem(&w, "injected failure vanished: no error returned and no ZO_EV_ERROR");
        }
        check_shards(&w);
        if (zo_runtime_destroy(w.rt) != ZO_OK) problem(&w, "zo_runtime_destroy failed");
        zo_backend_destroy(w.be);
        if (w.al.live != 0) problem(&w, "%lld block(s) leaked", (long long)w.al.live);
        if (w.bad) {
            if (bad < 3)
                printf("FAIL %s [%s%s] at=%llu/%llu: %s\n", kd->name, zo_policy_name(pol), deferred ? ", deferred" : "",
                       (unsigned long long)at, (unsigned long long)n_ops, w.problem);
            bad++;
        }
    }
    printf("%-30s %-18s %-9s points %3llu  surfaced %3llu  absorbed %3llu  mishandled %d\n", kd->name,
           zo_policy_name(pol), deferred ? "deferred" : "immediate", (unsigned long long)n_ops,
           (unsigned long long)surfaced, (unsigned long long)absorbed, bad);
    return bad != 0;
}

int main(int argc, char **argv) {
    /* default: the faults a runtime must survive today (transient failures,
     * delays); --collective-failures: a collective that itself fails
     * (FAIL_WORK) - an open finding until zo__wait_param recovers from a
     * failed work (see docs/ci-fuzzing.md) */
    int collective = argc > 1 && strcmp(argv[1], "--collective-failures") == 0;
    if (argc > 1 && !collective) {
        fprintf(stderr, "usage: reliability_backend_fault [--collective-failures]\n");
        return 2;
    }
    int fail = 0;
    /* the hook itself: bad arguments are refused */
    zo_host_fault badf = {(zo_host_fault_point)7, ZO_HOST_FAULT_FAIL, 1, 1, 0, 0};
    if (zo_host_set_fault(NULL, NULL) != ZO_ERR_INVALID_ARG) {
        printf("FAIL zo_host_set_fault(NULL) accepted\n");
        fail = 1;
    }
    zo_backend *be;
    zo_host_config hc = ZO_HOST_CONFIG_INIT;
    if (zo_backend_host_create(&hc, &be) == ZO_OK) {
        if (zo_host_set_fault(be, &badf) != ZO_ERR_INVALID_ARG) {
            printf("FAIL zo_host_set_fault accepted point 7\n");
            fail = 1;
        }
        zo_backend_destroy(be);
    }
    static const zo_grads_policy pols[] = {ZO_GRADS_PER_CALL, ZO_GRADS_RESET_ON_FORWARD};
    for (size_t k = 0; k < sizeof KINDS / sizeof KINDS[0]; k++)
        if ((KINDS[k].action == ZO_HOST_FAULT_FAIL_WORK) == collective)
            for (size_t p = 0; p < 2; p++)
                for (int d = 0; d < 2; d++) fail |= run_kind(&KINDS[k], pols[p], d);
    printf("%s\n", fail ? "backend_fault: FAILED" : "backend_fault: all faults handled");
    return fail;
}
