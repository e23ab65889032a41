/*
 * check.c - invariant checker (see check.h and docs/fuzzing.md).
 */
#include "check.h"
#include "zoffload_testing.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define ZS__INV_NAME(name, value, text) [value] = text,
static const char *const inv_names[ZS_INV_COUNT] = {ZS_INV_MAP(ZS__INV_NAME)};
#undef ZS__INV_NAME

const char *zs_inv_name(int inv) { return (inv >= 0 && inv < ZS_INV_COUNT) ? inv_names[inv] : "?"; }

void zs_check_init(zs_checker *c, const zs_scenario *s, int policy, int abort_on_violation) {
    memset(c, 0, sizeof *c);
    c->s = s;
    c->policy = policy;
    c->abort_on_violation = abort_on_violation;
    c->step = -1;
    c->n_modules = s->n_modules;
    snprintf(c->what, sizeof c->what, "setup");
}

void zs_violation_format(const zs_violation *v, char *buf, size_t len) {
    char mod[24], par[24];
    if (v->module >= 0)
        snprintf(mod, sizeof mod, "%ld", v->module);
    else
        snprintf(mod, sizeof mod, "-");
    if (v->param >= 0)
        snprintf(par, sizeof par, "%ld", v->param);
    else
        snprintf(par, sizeof par, "-");
    snprintf(buf, len, "invariant %s violated: step %d, event %llu, at %s, module %s, param %s, policy %s: %s",
             zs_inv_name(v->inv), v->step, (unsigned long long)v->event, v->what, mod, par,
             zs_policy_name((unsigned)v->policy) ? zs_policy_name((unsigned)v->policy) : "?", v->msg);
}

/* c->what as text: the lazily kept action (what_fmt) formatted now */
static void what_now(zs_checker *c) {
    if (c->what_fmt) {
        snprintf(c->what, sizeof c->what, c->what_fmt, c->what_a, c->what_b);
        c->what_fmt = NULL;
    }
}

void zs_check_fail(zs_checker *c, int inv, long module, long param, const char *fmt, ...) {
    if (c->violated) return;
    c->violated = 1;
    what_now(c);
    zs_violation *v = &c->v;
    v->inv = inv;
    v->step = c->step;
    v->event = c->n_events;
    v->module = module;
    v->param = param;
    v->policy = c->policy;
    snprintf(v->what, sizeof v->what, "%s", c->what);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->msg, sizeof v->msg, fmt, ap);
    va_end(ap);
    if (c->on_fail) c->on_fail(c->fail_user);
    if (c->abort_on_violation) {
        char line[512];
        zs_violation_format(v, line, sizeof line);
        fprintf(stderr, "zofuzz: %s\n", line);
        fflush(stderr);
        abort();
    }
}

static void log_event(zs_checker *c, const zo_event *ev) {
    FILE *f = c->log;
    fprintf(f, "  ev %llu %s", (unsigned long long)ev->seq, zo_event_kind_name(ev->kind));
    if (ev->module != ZO_NO_MODULE) fprintf(f, " m=%u", ev->module);
    if (ev->param != ZO_NO_PARAM) fprintf(f, " p=%u", ev->param);
    if (ev->kind == ZO_EV_PARAM_STATE)
        fprintf(f, " %s->%s", zo_param_status_name(ev->from), zo_param_status_name(ev->to));
    else if (ev->counter_valid)
        fprintf(f, " %lld->%lld", (long long)ev->counter_before, (long long)ev->counter_after);
    if (ev->status) fprintf(f, " status=%s", zo_strerror(ev->status));
    if (ev->detail) fprintf(f, " (%s)", ev->detail);
    fputc('\n', f);
}

/* incremental checking: the shadow totals of parameter p in state st */
static void inc_account(zs_checker *c, unsigned p, unsigned st, int add) {
    if (st == ZO_PARAM_NOT_AVAILABLE) return;
    uint64_t n = c->inc_numel[p], pn = c->inc_pers[p] ? n : 0, f = st == ZO_PARAM_INFLIGHT;
    if (add) {
        c->sh_live += n;
        c->sh_plive += pn;
        c->sh_inflight += f;
    } else { /* modulo 2^64, undone by the matching add */
        c->sh_live -= n;
        c->sh_plive -= pn;
        c->sh_inflight -= f;
    }
}

static void inc_event(zs_checker *c, const zo_event *ev) {
    switch (ev->kind) {
    case ZO_EV_BACKWARD_END:
    case ZO_EV_RELEASE_ALL:
    case ZO_EV_RESET_STEP:
    case ZO_EV_FORWARD_ABORT:
        /* entry points that sweep the runtime's state: a full scan after them */
        c->need_sweep = 1;
        break;
    default: break;
    }
    unsigned p = ev->param;
    if (ev->param == ZO_NO_PARAM || p >= c->n_params) return;
    if (c->inc_mark[p] != c->inc_epoch) {
        c->inc_mark[p] = c->inc_epoch;
        c->inc_list[c->n_inc++] = p;
    }
    if (ev->kind == ZO_EV_PARAM_STATE) {
        inc_account(c, p, c->shadow[p], 0);
        inc_account(c, p, (unsigned)ev->to, 1);
    }
}

void zs_check_event(void *user, const zo_event *ev) {
    zs_checker *c = user;
    c->n_events++;
    if (c->log) log_event(c, ev);
    if (c->incremental) inc_event(c, ev);
    switch (ev->kind) {
    case ZO_EV_PARAM_STATE:
    case ZO_EV_GATHER:
    case ZO_EV_PREFETCH:
    case ZO_EV_WAIT:
    case ZO_EV_RELEASE:
    case ZO_EV_UNPLANNED_FETCH:
    case ZO_EV_WINDOW_OPEN:
    case ZO_EV_WINDOW_CLOSE:
    case ZO_EV_LEFTOVER:
    case ZO_EV_RELEASE_ALL:
    case ZO_EV_ERROR: c->state_dirty = 1; break;
    default: break;
    }
    switch (ev->kind) {
    case ZO_EV_TRACK_INPUTS:
    case ZO_EV_INPUT_GRAD:
    case ZO_EV_TRACK_OUTPUTS:
    case ZO_EV_OUTPUT_GRAD:
        c->ev_have = 1;
        c->ev_before = ev->counter_before;
        c->ev_after = ev->counter_after;
        c->ev_valid = ev->counter_valid;
        if ((ev->kind == ZO_EV_TRACK_INPUTS || ev->kind == ZO_EV_INPUT_GRAD) && ev->counter_valid &&
            ev->counter_after < 0 && !c->skip_counters)
            zs_check_fail(c, ZS_INV_I1, (long)ev->module, -1, "ds_grads_remaining went %lld -> %lld",
                          (long long)ev->counter_before, (long long)ev->counter_after);
        break;
    case ZO_EV_WINDOW_OPEN:
    case ZO_EV_WINDOW_CLOSE:
        if (ev->counter_valid && ev->counter_after < 0 && !c->skip_counters)
            zs_check_fail(c, ZS_INV_I1, (long)ev->module, -1, "window count %lld", (long long)ev->counter_after);
        break;
    case ZO_EV_COUNTER_UNINIT:
        c->ev_uninit = 1;
        if (!c->skip_counters)
            zs_check_fail(c, ZS_INV_I2, (long)ev->module, -1, "counter used before initialisation: %s",
                          ev->detail ? ev->detail : "");
        break;
    case ZO_EV_PARAM_STATE: {
        unsigned p = ev->param;
        if (p >= c->n_params) {
            zs_check_fail(c, ZS_INV_I7, -1, (long)p, "state change of unknown parameter");
            break;
        }
        if (!zo_transition_legal(ev->from, ev->to))
            zs_check_fail(c, ZS_INV_I7, -1, (long)p, "illegal ds_status transition %s -> %s",
                          zo_param_status_name(ev->from), zo_param_status_name(ev->to));
        else if (c->shadow[p] != (uint8_t)ev->from)
            zs_check_fail(c, ZS_INV_I7, -1, (long)p, "transition %s -> %s but the parameter was %s",
                          zo_param_status_name(ev->from), zo_param_status_name(ev->to),
                          zo_param_status_name((zo_param_status)c->shadow[p]));
        c->shadow[p] = (uint8_t)ev->to;
        break;
    }
    case ZO_EV_PREFETCH: {
        if (!c->rt || ev->param >= c->n_params || c->skip_budget) break;
        zo_stats st;
        zo_param_info pi;
        if (zo_get_stats(c->rt, &st) || zo_param_get_info(c->rt, ev->param, &pi)) break;
        uint64_t max_live = c->s->cfg.max_live_parameters;
        uint64_t bound = max_live + pi.numel;
        if (bound < max_live) bound = UINT64_MAX; /* saturate */
        if (st.live_numel > bound)
            zs_check_fail(c, ZS_INV_I5, -1, (long)ev->param,
                          "prefetch issued with live numel %llu > max_live_parameters %llu + "
                          "its numel %llu",
                          (unsigned long long)st.live_numel, (unsigned long long)max_live,
                          (unsigned long long)pi.numel);
        break;
    }
    case ZO_EV_ERROR:
        c->n_error_events++;
        c->ev_error = ev->status;
        break;
    default: break;
    }
}

static int full_scan(zs_checker *c);
static int inc_check(zs_checker *c);

int zs_check_state(zs_checker *c) {
    if (c->violated) return 1;
    zo_runtime *rt = c->rt;
    if (!rt) return 0;
    if (c->n_error_events > c->seen_error_events) {
        c->seen_error_events = c->n_error_events;
        if (c->mismatch_stops && c->ev_error == ZO_ERR_COLLECTIVE_MISMATCH) {
            c->mismatch = 1; /* a consequence of I8: the world reports it */
            return 0;
        }
        zs_check_fail(c, ZS_INV_ERR, -1, -1, "runtime reported an error event: %s (%s)", zo_strerror(c->ev_error),
                      zo_last_error(rt));
        return 1;
    }
    if (c->incremental) return inc_check(c);
    if (!c->state_dirty && ++c->clean_actions % 16 != 0) return 0;
    c->state_dirty = 0;
    return full_scan(c);
}

/* zo_check_consistency, then every parameter against the shadow copy and
 * the totals (refreshing the incremental caches on the way) */
static int full_scan(zs_checker *c) {
    zo_runtime *rt = c->rt;
    c->n_sweeps++;
    if (zo_check_consistency(rt) != ZO_OK) {
        const char *m = zo_last_error(rt);
        /* the consistency check covers I6 (registry), I1 (window counts),
         * I2 (legacy counters read while uninitialised) and accounting */
        int inv = ZS_INV_I6;
        if (strstr(m, "negative"))
            inv = ZS_INV_I1;
        else if (strstr(m, "initiali"))
            inv = ZS_INV_I2;
        zs_check_fail(c, inv, -1, -1, "zo_check_consistency: %s", m);
        return 1;
    }
    zo_stats st;
    if (zo_get_stats(rt, &st) == ZO_OK) {
        uint64_t inflight = 0, live = 0, plive = 0;
        for (unsigned p = 0; p < c->n_params; p++) {
            zo_param_info pi;
            if (zo_param_get_info(rt, p, &pi) != ZO_OK) continue;
            if ((uint8_t)pi.status != c->shadow[p]) {
                zs_check_fail(c, ZS_INV_I7, -1, (long)p, "ds_status %s but the PARAM_STATE events say %s",
                              zo_param_status_name(pi.status), zo_param_status_name((zo_param_status)c->shadow[p]));
                return 1;
            }
            if ((pi.status == ZO_PARAM_INFLIGHT) != (pi.inflight != 0)) {
                zs_check_fail(c, ZS_INV_I6, -1, (long)p, "ds_status %s but in-flight registry membership %d",
                              zo_param_status_name(pi.status), pi.inflight);
                return 1;
            }
            inflight += pi.inflight != 0;
            if (pi.status != ZO_PARAM_NOT_AVAILABLE) {
                live += pi.numel;
                if (pi.persistent) plive += pi.numel;
            }
            if (c->incremental) {
                c->inc_numel[p] = pi.numel;
                c->inc_pers[p] = pi.persistent;
            }
        }
        if (inflight != st.inflight_params) {
            zs_check_fail(c, ZS_INV_I6, -1, -1, "in-flight registry has %llu entries, %llu INFLIGHT",
                          (unsigned long long)st.inflight_params, (unsigned long long)inflight);
            return 1;
        }
        if (live != st.live_numel || plive != st.persistent_live_numel) {
            zs_check_fail(c, ZS_INV_I6, -1, -1,
                          "live accounting: stats say %llu (persistent %llu), parameters %llu (%llu)",
                          (unsigned long long)st.live_numel, (unsigned long long)st.persistent_live_numel,
                          (unsigned long long)live, (unsigned long long)plive);
            return 1;
        }
    }
    /* I1 on the module counters is checked from the counter events
     * (every change of ds_grads_remaining and of a window count is one),
     * and zo_check_consistency covers negative window counts: no module
     * scan needed here. */
    if (c->incremental && !c->violated) {
        /* every parameter agrees with the shadow copy: its totals are the
         * runtime's (a parameter get_info refused counts as released) */
        c->sh_live = c->sh_plive = c->sh_inflight = 0;
        for (unsigned p = 0; p < c->n_params; p++) inc_account(c, p, c->shadow[p], 1);
        c->need_sweep = 0;
        c->since_sweep = 0;
        c->n_inc = 0;
        if (++c->inc_epoch == 0) { /* wrapped: no stale stamp may match */
            memset(c->inc_mark, 0, c->n_params * sizeof *c->inc_mark);
            c->inc_epoch = 1;
        }
    }
    return c->violated;
}

/* The incremental check after one action (see check.h): the parameters its
 * events named and the totals; anything amiss is reported by a full scan,
 * which finds it (or an earlier one in its order) with the full scan's
 * message. */
static int inc_check(zs_checker *c) {
    zo_runtime *rt = c->rt;
    c->last_fmt = c->what_fmt;
    c->last_a = c->what_a;
    c->last_b = c->what_b;
    c->last_step = c->step;
    if (c->need_sweep || ++c->since_sweep >= c->sweep_every) {
        c->state_dirty = 0;
        return full_scan(c);
    }
    /* (the totals below are compared after every action, events or not:
     * O(1), and a state change without its event shows there) */
    c->state_dirty = 0;
    int bad = 0;
    for (uint32_t i = 0; i < c->n_inc && !bad; i++) {
        unsigned p = c->inc_list[i];
        zo_param_info pi;
        if (zo_param_get_info(rt, p, &pi) != ZO_OK) continue;
        bad = (uint8_t)pi.status != c->shadow[p] || (pi.status == ZO_PARAM_INFLIGHT) != (pi.inflight != 0);
    }
    c->n_inc = 0;
    if (++c->inc_epoch == 0) {
        memset(c->inc_mark, 0, c->n_params * sizeof *c->inc_mark);
        c->inc_epoch = 1;
    }
    zo_stats st;
    if (!bad && zo_get_stats(rt, &st) == ZO_OK)
        bad = st.live_numel != c->sh_live || st.persistent_live_numel != c->sh_plive ||
              st.inflight_params != c->sh_inflight;
    /* a mismatch of the totals alone may be a persistence the runtime
     * decided after the last full scan (zo_param_register defers it to
     * the first hook under the DeepSpeed-shaped policies): the full scan
     * refreshes the caches and reports only what is really wrong */
    return bad ? full_scan(c) : 0;
}

size_t zs_check_incremental_size(uint32_t n_params) {
    size_t n = n_params ? n_params : 1;
    return n * (sizeof(uint64_t) + 2 * sizeof(uint32_t) + 2 + ZS_CHECK_EXPECT);
}

void zs_check_incremental(zs_checker *c, void *storage) {
    size_t n = c->n_params ? c->n_params : 1;
    char *a = storage;
    c->inc_numel = (uint64_t *)(void *)a;
    a += n * sizeof(uint64_t);
    c->inc_list = (uint32_t *)(void *)a;
    a += n * sizeof(uint32_t);
    c->inc_mark = (uint32_t *)(void *)a;
    a += n * sizeof(uint32_t);
    c->inc_pers = (uint8_t *)a;
    a += n;
    c->expect_ok = (uint8_t *)a;
    a += n;
    c->expect = (uint8_t *)a;
    memset(c->inc_numel, 0, n * sizeof(uint64_t));
    memset(c->inc_mark, 0, n * sizeof(uint32_t));
    memset(c->inc_pers, 0, n);
    memset(c->expect_ok, 0, n);
    c->n_inc = 0;
    c->inc_epoch = 1;
    c->sh_live = c->sh_plive = c->sh_inflight = 0;
    /* a full scan costs about one runtime record per module and parameter:
     * one every (modules + parameters) calls keeps it O(1) per call */
    uint64_t every = (uint64_t)c->n_params + c->n_modules;
    c->sweep_every = every < 64 ? 64 : every;
    c->need_sweep = 1; /* the first call: nothing is cached yet */
    c->last_fmt = c->what_fmt;
    c->last_a = c->what_a;
    c->last_b = c->what_b;
    c->last_step = c->step;
    c->incremental = 1;
}

int zs_check_sweep(zs_checker *c) {
    if (c->violated) return 1;
    if (!c->rt) return 0;
    const char *fmt = c->what_fmt;
    int a = c->what_a, b = c->what_b, step = c->step;
    if (c->incremental) {
        if (c->last_fmt) {
            c->what_fmt = c->last_fmt;
            c->what_a = c->last_a;
            c->what_b = c->last_b;
        }
        c->step = c->last_step;
    }
    int r = full_scan(c);
    if (!r) {
        c->what_fmt = fmt;
        c->what_a = a;
        c->what_b = b;
        c->step = step;
    }
    return r;
}

int zs_check_released(zs_checker *c, int as_stat) {
    zo_runtime *rt = c->rt;
    char why[160] = "";
    long bad = -1;
    zo_stats st;
    if (zo_get_stats(rt, &st) != ZO_OK) return 0;
    for (unsigned p = 0; p < c->n_params && !why[0]; p++) {
        zo_param_info pi;
        if (zo_param_get_info(rt, p, &pi) != ZO_OK) continue;
        if (pi.inflight) {
            snprintf(why, sizeof why, "parameter %u still in flight", p);
            bad = p;
        } else if (!pi.persistent && pi.status != ZO_PARAM_NOT_AVAILABLE) {
            snprintf(why, sizeof why, "non-persistent parameter %u still %s (%u active modules)", p,
                     zo_param_status_name(pi.status), pi.n_active);
            bad = p;
        }
    }
    if (!why[0] && st.inflight_params)
        snprintf(why, sizeof why, "%llu gathers in flight", (unsigned long long)st.inflight_params);
    if (!why[0] && st.live_numel != st.persistent_live_numel)
        snprintf(why, sizeof why, "live numel %llu != persistent live numel %llu", (unsigned long long)st.live_numel,
                 (unsigned long long)st.persistent_live_numel);
    if (as_stat) {
        c->i3_hook_checks++;
        if (why[0]) {
            if (!c->i3_hook_misses) {
                what_now(c);
                snprintf(c->i3_hook_first, sizeof c->i3_hook_first, "step %d %s: %s", c->step, c->what, why);
            }
            c->i3_hook_misses++;
        }
        return why[0] != 0;
    }
    c->i3_checks++;
    if (why[0]) {
        zs_check_fail(c, ZS_INV_I3, -1, bad, "not released: %s", why);
        return 1;
    }
    return 0;
}

/* The first ZS_CHECK_EXPECT bytes of the original tensor of each parameter
 * id below EXPECT_CACHED, as far as made (expect_cache_n): they depend on
 * the id alone (zo_host_param_byte), so they are made once per thread
 * rather than once per run.  Larger ids use the run's storage. */
#define EXPECT_CACHED 256u
static _Thread_local uint8_t expect_cache[EXPECT_CACHED][ZS_CHECK_EXPECT];
static _Thread_local uint8_t expect_cache_n[EXPECT_CACHED];

int zs_check_access(zs_checker *c, unsigned m, unsigned p, zo_status st, const void *data, size_t bytes) {
    if (st != ZO_OK) {
        zs_check_fail(c, st == ZO_ERR_NOT_AVAILABLE ? ZS_INV_I4 : ZS_INV_ERR, (long)m, (long)p,
                      "zo_param_access: %s (%s)", zo_strerror(st), zo_last_error(c->rt));
        return 1;
    }
    zo_param_info pi;
    if (zo_param_get_info(c->rt, p, &pi) != ZO_OK) return 0;
    if (pi.status != ZO_PARAM_AVAILABLE) {
        zs_check_fail(c, ZS_INV_I4, (long)m, (long)p, "parameter %s after a successful access",
                      zo_param_status_name(pi.status));
        return 1;
    }
    uint64_t full = pi.numel * pi.elem_size;
    if (!data || bytes != full) {
        zs_check_fail(c, ZS_INV_I4, (long)m, (long)p, "access gave %zu bytes at %p, expected %llu", bytes, data,
                      (unsigned long long)full);
        return 1;
    }
    uint64_t phys = c->backend ? zo_host_physical_bytes(c->backend, full) : full;
    const uint8_t *d = data;
    uint64_t i = 0;
    if (c->expect && p < c->n_params) {
        /* up to the first ZS_CHECK_EXPECT bytes of the original tensor, each
         * made once per parameter and run, or per thread for the ids
         * expect_cache holds (the physical cap is 64 by default) */
        uint8_t *e = p < EXPECT_CACHED ? expect_cache[p] : c->expect + (size_t)p * ZS_CHECK_EXPECT;
        uint8_t *made = p < EXPECT_CACHED ? &expect_cache_n[p] : &c->expect_ok[p];
        unsigned n = phys < ZS_CHECK_EXPECT ? (unsigned)phys : ZS_CHECK_EXPECT;
        for (unsigned k = *made; k < n; k++) e[k] = zo_host_param_byte(p, k);
        if (n > *made) *made = (uint8_t)n;
        if (memcmp(d, e, n) == 0) i = n; /* else the loop below finds the byte */
    }
    for (; i < phys; i++)
        if (d[i] != zo_host_param_byte(p, i)) {
            zs_check_fail(c, ZS_INV_I4, (long)m, (long)p,
                          "gathered byte %llu is 0x%02x, the original tensor has 0x%02x", (unsigned long long)i, d[i],
                          zo_host_param_byte(p, i));
            return 1;
        }
    return 0;
}
