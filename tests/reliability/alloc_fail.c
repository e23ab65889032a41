/*
 * alloc_fail.c - allocation-failure injection over MODEL scenarios.
 *
 * For every scenario file given (corpus/models/<name>.scn by default) and every
 * k = 1, 2, ... N (N = the allocations a healthy run makes), the scenario
 * runs through the real simulator (fuzz/sim.c, every invariant checked by
 * fuzz/check.c) while the k-th allocation of the runtime and of its host
 * backend fails.  Every runtime entry point the simulator calls is wrapped
 * at link time (-Wl,--wrap=zo_..., see CMakeLists.txt), so for the one call
 * during which the allocation was refused the test checks, exactly as the
 * API documents (zoffload.h: "every error ... leaves the runtime consistent
 * (the call had no effect ...)"):
 *
 *   - the call returns ZO_ERR_NOMEM with a non-empty zo_last_error(), or
 *     ZO_OK if the runtime absorbed the failure (a best-effort prefetch,
 *     reported as ZO_EV_ERROR);
 *   - zo_check_consistency() holds right after it;
 *   - it had no effect: stats, every parameter's and module's info and both
 *     coordinators' trace info equal a snapshot taken just before the call;
 *   - the same call, retried with the allocator healthy again, succeeds;
 * then the simulator goes on with the retried call's result, so every
 * invariant (I1-I7) of the rest of the run is checked as usual and the
 * verdict must equal the healthy run's (per-call: "ok"); finally the
 * runtime and backend are destroyed and the counting allocator must hold
 * no block (LeakSanitizer checks the rest at exit).  zo_runtime_create and
 * zo_backend_host_create failures must return ZO_ERR_NOMEM and leak nothing.
 *
 * A second, hand-written public-API scenario (names, explicit reset_step)
 * reaches the allocation sites the simulator never does (it registers
 * unnamed modules and parameters).
 *
 * Allocation sites: every call of an allocation primitive (zo__alloc,
 * zo__calloc, zo__strdup, zo__reserve and its out-of-line zo__reserve_grow,
 * zo__reserve_sz, h_alloc, h_alloc_raw, map_reserve, and hostmap.c's
 * zo__host_alloc / zo__map_reserve) in runtime/<file>.c (not
 * backend_nccl<...>.c; of the policies policy_deepspeed.c) and the inline
 * helpers of runtime/policy.h, outside the
 * primitives' own bodies, found by scanning the sources.  Under ASan the
 * refused allocation's call stack is symbolised (__sanitizer_symbolize_pc)
 * and attributed to its site; the test prints "allocation sites covered:
 * X/Y" and fails (with --require-all-sites) if a site was never failed.
 *
 * Usage: alloc_fail [--require-all-sites] [--policy P] [--max-k N] [FILE.scn ...]
 * Exit: 0 all good, 1 a mishandled failure (or a site not covered), 2 usage.
 */
#define _GNU_SOURCE
#include <execinfo.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scn.h"
#include "sim.h"
#include "zoffload.h"
#include "zoffload_backend.h"
#include "zoffload_testing.h"

#ifndef ZO_SOURCE_DIR
#define ZO_SOURCE_DIR "."
#endif

/* ASan's symboliser (absent without a sanitizer runtime: weak) */
extern void __sanitizer_symbolize_pc(void *pc, const char *fmt, char *out_buf, size_t out_buf_size)
    __attribute__((weak));

/* ------------------------------------------------------------------ */
/* Allocation sites                                                    */
/* ------------------------------------------------------------------ */

#define MAX_SITES 256
typedef struct site {
    char file[64]; /* runtime/x.c */
    int line;
    char text[96];
    uint64_t failed; /* injected failures attributed to it */
} site;
static site g_sites[MAX_SITES];
static int g_nsites;

/* Sites that no call sequence can fail, with the reason (matched by the
 * enclosing function, so the list survives line moves).  Reported as
 * "unreachable", not counted as covered, and not required. */
static const struct {
    const char *function;
    const char *why;
} UNREACHABLE[] = {
    {"zo__act_add", "its only caller (coordinator.c fetch) reserves the capacity first with zo__reserve_act, "
                    "so the growth branch never runs"},
    {"param_reserve", "the host backend's sparse map takes parameter ids at or above 2n + 1024 (n: parameters "
                      "added); the runtime's ids are dense (0..n-1), so only a direct zo_backend_param_add "
                      "caller reaches it"},
};

static const char *unreachable_why(const char *text) {
    for (size_t i = 0; i < sizeof UNREACHABLE / sizeof UNREACHABLE[0]; i++) {
        size_t n = strlen(UNREACHABLE[i].function);
        if (strncmp(text, UNREACHABLE[i].function, n) == 0 && text[n] == ':') return UNREACHABLE[i].why;
    }
    return NULL;
}
static uint64_t g_unattributed;

static const char *const HELPERS[] = {"zo__alloc",      "zo__calloc",       "zo__strdup",     "zo__reserve",
                                      "zo__reserve_sz", "zo__reserve_grow", "h_alloc",        "h_alloc_raw",
                                      "map_reserve",    "zo__host_alloc",   "zo__map_reserve"};
#define N_HELPERS (sizeof HELPERS / sizeof HELPERS[0])

static int is_helper(const char *fn) {
    for (size_t i = 0; i < N_HELPERS; i++)
        if (strcmp(fn, HELPERS[i]) == 0) return 1;
    return 0;
}

static int is_ident(int ch) {
    return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
}

/* 1 if line calls helper name(...) (whole identifier followed by '(') */
static int calls(const char *line, const char *name) {
    size_t n = strlen(name);
    for (const char *p = strstr(line, name); p; p = strstr(p + 1, name)) {
        if (p > line && is_ident((unsigned char)p[-1])) continue;
        const char *q = p + n;
        while (*q == ' ') q++;
        if (*q == '(') return 1;
    }
    return 0;
}

static void scan_sites(void) {
    static const char *const files[] = {"runtime/runtime.c",         "runtime/coordinator.c", "runtime/util.c",
                                        "runtime/backend_host.c",    "runtime/host_world.c",  "runtime/host_cache.c",
                                        "runtime/host_faults.c",     "runtime/hostmap.c",     "runtime/policy.h",
                                        "runtime/policy_deepspeed.c"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", ZO_SOURCE_DIR, files[f]);
        FILE *fp = fopen(path, "r");
        if (!fp) {
            fprintf(stderr, "alloc_fail: cannot read %s\n", path);
            exit(2);
        }
        char line[1024], fn[128] = "";
        int ln = 0, in_comment = 0;
        while (fgets(line, sizeof line, fp)) {
            ln++;
            const char *t = line;
            while (*t == ' ' || *t == '\t') t++;
            if (in_comment) {
                if (strstr(t, "*/")) in_comment = 0;
                continue;
            }
            if (t[0] == '/' && t[1] == '*') {
                if (!strstr(t + 2, "*/")) in_comment = 1;
                continue;
            }
            if ((t[0] == '*') || (t[0] == '/' && t[1] == '/')) continue;
            /* a function definition starts at column 0: remember its name */
            if (is_ident((unsigned char)line[0]) && strchr(line, '(')) {
                size_t len = strlen(line);
                while (len && (line[len - 1] == '\n' || line[len - 1] == ' ')) len--;
                if (len && line[len - 1] == ';') continue; /* a prototype */
                const char *par = strchr(line, '(');
                const char *e = par;
                while (e > line && e[-1] == ' ') e--;
                const char *b = e;
                while (b > line && is_ident((unsigned char)b[-1])) b--;
                snprintf(fn, sizeof fn, "%.*s", (int)(e - b), b);
                continue; /* the definition line itself is not a call */
            }
            if (is_helper(fn)) continue; /* inside a primitive */
            for (size_t h = 0; h < N_HELPERS; h++)
                if (calls(line, HELPERS[h])) {
                    if (g_nsites < MAX_SITES) {
                        site *s = &g_sites[g_nsites++];
                        snprintf(s->file, sizeof s->file, "%s", files[f]);
                        s->line = ln;
                        size_t l = strlen(t);
                        while (l && (t[l - 1] == '\n' || t[l - 1] == ' ')) l--;
                        snprintf(s->text, sizeof s->text, "%s: %.*s", fn, (int)l, t);
                    }
                    break;
                }
        }
        fclose(fp);
    }
}

/* Attributes the current call stack (inside the allocator) to a site. */
static void attribute_site(void) {
    if (!__sanitizer_symbolize_pc) return;
    void *pcs[24];
    int n = backtrace(pcs, 24);
    for (int i = 1; i < n; i++) {
        char buf[4096];
        memset(buf, 0, sizeof buf);
        __sanitizer_symbolize_pc(pcs[i], "%f\t%s\t%l", buf, sizeof buf);
        /* inlined frames, innermost first, separated by NULs */
        for (const char *fr = buf; *fr && fr < buf + sizeof buf; fr += strlen(fr) + 1) {
            char fname[256], file[1024];
            int line = 0;
            if (sscanf(fr, "%255[^\t]\t%1023[^\t]\t%d", fname, file, &line) != 3) continue;
            const char *rt = strstr(file, "runtime/");
            if (!rt || strstr(rt, "backend_nccl")) continue;
            if (is_helper(fname)) continue;
            for (int s = 0; s < g_nsites; s++)
                if (g_sites[s].line == line && strcmp(g_sites[s].file, rt) == 0) {
                    g_sites[s].failed++;
                    return;
                }
            g_unattributed++;
            fprintf(stderr, "alloc_fail: refused allocation at %s:%d (%s) is not a scanned site\n", rt, line, fname);
            return;
        }
    }
    g_unattributed++;
}

/* ------------------------------------------------------------------ */
/* The failing, counting allocator                                     */
/* ------------------------------------------------------------------ */

typedef struct fa {
    uint64_t n;       /* allocations so far */
    uint64_t fail_at; /* 1-based; 0: never */
    uint64_t failed;  /* allocations refused */
    int64_t live;
} fa;
static fa A;

static void *fa_alloc(void *opaque, size_t bytes) {
    (void)opaque;
    A.n++;
    if (A.fail_at && A.n == A.fail_at) {
        A.failed++;
        attribute_site();
        return NULL;
    }
    void *p = malloc(bytes);
    if (p) A.live++;
    return p;
}

static void fa_free(void *opaque, void *p) {
    (void)opaque;
    if (p) {
        A.live--;
        free(p);
    }
}

static zo_allocator fa_allocator(void) {
    zo_allocator a = {fa_alloc, fa_free, NULL};
    return a;
}

/* ------------------------------------------------------------------ */
/* Per-run bookkeeping                                                 */
/* ------------------------------------------------------------------ */

typedef struct run_state {
    const char *scenario;
    uint64_t k;
    int recording;         /* healthy run: record allocations per call */
    uint64_t *call_allocs; /* healthy run: allocations made by call i */
    size_t n_calls, cap_calls;
    size_t call_idx;           /* calls so far in this run */
    uint64_t call_base_failed; /* A.failed at the start of the current call */
    zo_event_fn sim_fn;        /* the simulator's event callback */
    void *sim_user;
    int surfaced, absorbed, filtered_events;
    int problems;
    char problem[640];
} run_state;
static run_state R;

static void problem(const char *fmt, ...) {
    R.problems++;
    if (R.problems > 1) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(R.problem, sizeof R.problem, fmt, ap);
    va_end(ap);
}

/* Event filter between the runtime and the simulator's checker: the
 * ZO_EV_ERROR the runtime reports for the injected failure itself is the
 * expected report, not a finding. */
static void filter_event(void *user, const zo_event *ev) {
    (void)user;
    if (ev->kind == ZO_EV_ERROR && ev->status == ZO_ERR_NOMEM && A.failed > R.call_base_failed) {
        R.filtered_events++;
        return;
    }
    if (R.sim_fn) R.sim_fn(R.sim_user, ev);
}

/* ------------------------------------------------------------------ */
/* Observable state snapshot ("the call had no effect")                */
/* ------------------------------------------------------------------ */

typedef struct snap {
    int taken;
    zo_stats st;
    zo_trace_info tr[2];
    zo_param_info *pi;
    zo_module_info *mi;
    uint32_t np, nm;
} snap;

static void snap_take(zo_runtime *rt, snap *s) {
    memset(s, 0, sizeof *s);
    if (!rt) return;
    s->taken = 1;
    zo_get_stats(rt, &s->st);
    zo_get_trace_info(rt, 0, &s->tr[0]);
    zo_get_trace_info(rt, 1, &s->tr[1]);
    s->np = s->st.n_params;
    s->nm = s->st.n_modules;
    s->pi = calloc(s->np ? s->np : 1, sizeof *s->pi);
    s->mi = calloc(s->nm ? s->nm : 1, sizeof *s->mi);
    for (uint32_t i = 0; i < s->np; i++) zo_param_get_info(rt, i, &s->pi[i]);
    for (uint32_t i = 0; i < s->nm; i++) zo_module_get_info(rt, i, &s->mi[i]);
}

static void snap_free(snap *s) {
    free(s->pi);
    free(s->mi);
    memset(s, 0, sizeof *s);
}

/* NULL if equal, else a description of the first difference */
static const char *snap_diff(zo_runtime *rt, const snap *a, char *buf, size_t len) {
    snap b;
    snap_take(rt, &b);
    const char *res = NULL;
    if (a->np != b.np || a->nm != b.nm) {
        snprintf(buf, len, "modules/params %u/%u -> %u/%u", a->nm, a->np, b.nm, b.np);
        res = buf;
    } else if (memcmp(&a->st, &b.st, sizeof a->st) != 0) {
#define SF(f)                                                                                                          \
    { #f, offsetof(zo_stats, f) }
        static const struct {
            const char *name;
            size_t off;
        } f64[] = {SF(gathers),
                   SF(prefetches),
                   SF(releases),
                   SF(bytes_gathered),
                   SF(live_numel),
                   SF(peak_live_numel),
                   SF(persistent_live_numel),
                   SF(inflight_params),
                   SF(blocking_waits),
                   SF(unplanned_fetches),
                   SF(leftovers),
                   SF(uninit_counter_events),
                   SF(trace_invalidations),
                   SF(steps),
                   SF(open_windows)};
#undef SF
        size_t o = 0;
        o += (size_t)snprintf(buf, len, "zo_get_stats changed:");
        for (size_t i = 0; i < sizeof f64 / sizeof f64[0] && o < len; i++) {
            uint64_t x, y;
            memcpy(&x, (const char *)&a->st + f64[i].off, sizeof x);
            memcpy(&y, (const char *)&b.st + f64[i].off, sizeof y);
            if (x != y)
                o += (size_t)snprintf(buf + o, len - o, " %s %llu->%llu", f64[i].name, (unsigned long long)x,
                                      (unsigned long long)y);
        }
        if (o < len && a->st.forward_stack_depth != b.st.forward_stack_depth)
            snprintf(buf + o, len - o, " forward_stack_depth %u->%u", a->st.forward_stack_depth,
                     b.st.forward_stack_depth);
        res = buf;
    } else if (memcmp(a->tr, b.tr, sizeof a->tr) != 0) {
        int e = memcmp(&a->tr[0], &b.tr[0], sizeof a->tr[0]) != 0 ? 0 : 1;
        snprintf(buf, len,
                 "trace info (%s) changed: mode %d->%d, step_id %llu->%llu, modules %llu->%llu, "
                 "params %llu->%llu, queue %llu->%llu",
                 e ? "eval" : "train", a->tr[e].mode, b.tr[e].mode, (unsigned long long)a->tr[e].step_id,
                 (unsigned long long)b.tr[e].step_id, (unsigned long long)a->tr[e].n_modules,
                 (unsigned long long)b.tr[e].n_modules, (unsigned long long)a->tr[e].n_params,
                 (unsigned long long)b.tr[e].n_params, (unsigned long long)a->tr[e].queue_len,
                 (unsigned long long)b.tr[e].queue_len);
        res = buf;
    } else {
        for (uint32_t i = 0; i < a->np && !res; i++)
            if (memcmp(&a->pi[i], &b.pi[i], sizeof a->pi[i]) != 0) {
                snprintf(buf, len, "param %u info changed (status %s->%s, n_active %u->%u, gathers %llu->%llu)", i,
                         zo_param_status_name(a->pi[i].status), zo_param_status_name(b.pi[i].status), a->pi[i].n_active,
                         b.pi[i].n_active, (unsigned long long)a->pi[i].gathers, (unsigned long long)b.pi[i].gathers);
                res = buf;
            }
        for (uint32_t i = 0; i < a->nm && !res; i++)
            if (memcmp(&a->mi[i], &b.mi[i], sizeof a->mi[i]) != 0) {
                snprintf(buf, len,
                         "module %u info changed (grads_remaining %lld->%lld, open_windows %u->%u, "
                         "open_calls %u->%u)",
                         i, (long long)a->mi[i].grads_remaining, (long long)b.mi[i].grads_remaining,
                         a->mi[i].open_windows, b.mi[i].open_windows, a->mi[i].open_calls, b.mi[i].open_calls);
                res = buf;
            }
    }
    snap_free(&b);
    return res;
}

/* ------------------------------------------------------------------ */
/* Wrapped entry points                                                */
/* ------------------------------------------------------------------ */

typedef struct guard {
    uint64_t n_before; /* allocations before the call */
    snap sn;
} guard;

static void guard_begin(zo_runtime *rt, guard *g) {
    memset(g, 0, sizeof *g);
    g->n_before = A.n;
    R.call_base_failed = A.failed;
    if (R.recording) return;
    /* snapshot only the call that will make the k-th allocation (the
     * healthy run told how many each call makes); unknown: snapshot */
    int will_fail = 1;
    if (R.call_idx < R.n_calls) will_fail = A.fail_at > A.n && A.fail_at <= A.n + R.call_allocs[R.call_idx];
    if (A.fail_at && A.failed == 0 && will_fail) snap_take(rt, &g->sn);
}

/* Returns 1 if the call must be retried (an injected failure surfaced). */
static int guard_end(zo_runtime *rt, const char *name, zo_status s, guard *g) {
    if (R.recording) {
        if (R.n_calls == R.cap_calls) {
            R.cap_calls = R.cap_calls ? 2 * R.cap_calls : 256;
            R.call_allocs = realloc(R.call_allocs, R.cap_calls * sizeof *R.call_allocs);
            if (!R.call_allocs) abort();
        }
        R.call_allocs[R.n_calls++] = A.n - g->n_before;
    }
    R.call_idx++;
    int retry = 0;
    if (A.failed > R.call_base_failed) {
        if (s == ZO_OK) {
            R.absorbed++;
            if (rt && zo_check_consistency(rt) != ZO_OK)
                problem("%s absorbed the failure but is inconsistent: %s", name, zo_last_error(rt));
        } else {
            R.surfaced++;
            char buf[400];
            const char *d;
            if (s != ZO_ERR_NOMEM)
                problem("%s returned %s (expected ZO_ERR_NOMEM); last_error \"%s\"", name, zo_strerror(s),
                        rt ? zo_last_error(rt) : "");
            else if (rt && zo_last_error(rt)[0] == '\0')
                problem("%s returned ZO_ERR_NOMEM with an empty zo_last_error()", name);
            else if (rt && zo_check_consistency(rt) != ZO_OK)
                problem("%s: inconsistent after ZO_ERR_NOMEM: %s", name, zo_last_error(rt));
            else if (rt && g->sn.taken && (d = snap_diff(rt, &g->sn, buf, sizeof buf)) != NULL)
                problem("%s: ZO_ERR_NOMEM but the call had an effect: %s", name, d);
            retry = 1;
        }
    }
    snap_free(&g->sn);
    return retry;
}

#define GUARDED(rt, name, call)                                                                                        \
    do {                                                                                                               \
        guard g_;                                                                                                      \
        guard_begin((rt), &g_);                                                                                        \
        zo_status s_ = (call);                                                                                         \
        if (guard_end((rt), (name), s_, &g_)) {                                                                        \
            s_ = (call);                                                                                               \
            if (s_ != ZO_OK)                                                                                           \
                problem("%s: retried after ZO_ERR_NOMEM it returned %s (\"%s\")", (name), zo_strerror(s_),             \
                        zo_last_error(rt));                                                                            \
        }                                                                                                              \
        return s_;                                                                                                     \
    } while (0)

zo_status __real_zo_runtime_create(const zo_config *cfg, zo_runtime **out);
zo_status __wrap_zo_runtime_create(const zo_config *cfg, zo_runtime **out) {
    zo_config c = *cfg;
    c.allocator = fa_allocator();
    R.sim_fn = cfg->on_event;
    R.sim_user = cfg->event_user;
    c.on_event = filter_event;
    c.event_user = NULL;
    guard g;
    guard_begin(NULL, &g);
    int64_t live0 = A.live;
    zo_status s = __real_zo_runtime_create(&c, out);
    if (guard_end(NULL, "zo_runtime_create", s, &g)) {
        if (*out != NULL) problem("zo_runtime_create failed but set *out");
        if (A.live != live0)
            problem("zo_runtime_create: ZO_ERR_NOMEM leaked %lld block(s)", (long long)(A.live - live0));
        s = __real_zo_runtime_create(&c, out);
    }
    return s;
}

zo_status __real_zo_backend_host_create(const zo_host_config *cfg, zo_backend **out);
zo_status __wrap_zo_backend_host_create(const zo_host_config *cfg, zo_backend **out) {
    zo_host_config c = *cfg;
    c.allocator = fa_allocator();
    guard g;
    guard_begin(NULL, &g);
    int64_t live0 = A.live;
    zo_status s = __real_zo_backend_host_create(&c, out);
    if (guard_end(NULL, "zo_backend_host_create", s, &g)) {
        if (A.live != live0)
            problem("zo_backend_host_create: ZO_ERR_NOMEM leaked %lld block(s)", (long long)(A.live - live0));
        s = __real_zo_backend_host_create(&c, out);
    }
    return s;
}

zo_status __real_zo_host_world_create(int world_size, const zo_allocator *allocator, zo_host_world **out);
zo_status __wrap_zo_host_world_create(int world_size, const zo_allocator *allocator, zo_host_world **out) {
    (void)allocator;
    zo_allocator a = fa_allocator();
    guard g;
    guard_begin(NULL, &g);
    int64_t live0 = A.live;
    zo_status s = __real_zo_host_world_create(world_size, &a, out);
    if (guard_end(NULL, "zo_host_world_create", s, &g)) {
        if (*out != NULL) problem("zo_host_world_create failed but set *out");
        if (A.live != live0)
            problem("zo_host_world_create: ZO_ERR_NOMEM leaked %lld block(s)", (long long)(A.live - live0));
        s = __real_zo_host_world_create(world_size, &a, out);
    }
    return s;
}

#define W0(fn, name)                                                                                                   \
    zo_status __real_##fn(zo_runtime *rt);                                                                             \
    zo_status __wrap_##fn(zo_runtime *rt) { GUARDED(rt, name, __real_##fn(rt)); }

zo_status __real_zo_module_register(zo_runtime *, zo_module_id, const char *, unsigned, zo_module_id *);
zo_status __wrap_zo_module_register(zo_runtime *rt, zo_module_id parent, const char *name, unsigned flags,
                                    zo_module_id *out) {
    GUARDED(rt, "zo_module_register", __real_zo_module_register(rt, parent, name, flags, out));
}
zo_status __real_zo_param_register(zo_runtime *, zo_module_id, const char *, uint64_t, uint32_t, unsigned,
                                   zo_param_id *);
zo_status __wrap_zo_param_register(zo_runtime *rt, zo_module_id owner, const char *name, uint64_t numel, uint32_t es,
                                   unsigned flags, zo_param_id *out) {
    GUARDED(rt, "zo_param_register", __real_zo_param_register(rt, owner, name, numel, es, flags, out));
}
zo_status __real_zo_module_use_param(zo_runtime *, zo_module_id, zo_param_id);
zo_status __wrap_zo_module_use_param(zo_runtime *rt, zo_module_id m, zo_param_id p) {
    GUARDED(rt, "zo_module_use_param", __real_zo_module_use_param(rt, m, p));
}
zo_status __real_zo_forward_begin(zo_runtime *, unsigned, zo_graph *);
zo_status __wrap_zo_forward_begin(zo_runtime *rt, unsigned flags, zo_graph *g) {
    GUARDED(rt, "zo_forward_begin", __real_zo_forward_begin(rt, flags, g));
}
zo_status __real_zo_forward_end(zo_runtime *, zo_graph);
zo_status __wrap_zo_forward_end(zo_runtime *rt, zo_graph g) {
    GUARDED(rt, "zo_forward_end", __real_zo_forward_end(rt, g));
}
zo_status __real_zo_pre_forward(zo_runtime *, zo_module_id, unsigned);
zo_status __wrap_zo_pre_forward(zo_runtime *rt, zo_module_id m, unsigned f) {
    GUARDED(rt, "zo_pre_forward", __real_zo_pre_forward(rt, m, f));
}
zo_status __real_zo_track_inputs(zo_runtime *, zo_module_id, size_t, const uint8_t *, zo_grad_handle *);
zo_status __wrap_zo_track_inputs(zo_runtime *rt, zo_module_id m, size_t n, const uint8_t *rg, zo_grad_handle *h) {
    GUARDED(rt, "zo_track_inputs", __real_zo_track_inputs(rt, m, n, rg, h));
}
zo_status __real_zo_post_forward(zo_runtime *, zo_module_id);
zo_status __wrap_zo_post_forward(zo_runtime *rt, zo_module_id m) {
    GUARDED(rt, "zo_post_forward", __real_zo_post_forward(rt, m));
}
zo_status __real_zo_track_outputs(zo_runtime *, zo_module_id, size_t, const uint8_t *, zo_grad_handle *);
zo_status __wrap_zo_track_outputs(zo_runtime *rt, zo_module_id m, size_t n, const uint8_t *rg, zo_grad_handle *h) {
    GUARDED(rt, "zo_track_outputs", __real_zo_track_outputs(rt, m, n, rg, h));
}
zo_status __real_zo_forward_abort(zo_runtime *, zo_module_id);
zo_status __wrap_zo_forward_abort(zo_runtime *rt, zo_module_id m) {
    GUARDED(rt, "zo_forward_abort", __real_zo_forward_abort(rt, m));
}
zo_status __real_zo_backward_begin(zo_runtime *, zo_graph, int);
zo_status __wrap_zo_backward_begin(zo_runtime *rt, zo_graph g, int retain) {
    GUARDED(rt, "zo_backward_begin", __real_zo_backward_begin(rt, g, retain));
}
zo_status __real_zo_output_grad(zo_runtime *, zo_grad_handle);
zo_status __wrap_zo_output_grad(zo_runtime *rt, zo_grad_handle h) {
    GUARDED(rt, "zo_output_grad", __real_zo_output_grad(rt, h));
}
zo_status __real_zo_input_grad(zo_runtime *, zo_grad_handle);
zo_status __wrap_zo_input_grad(zo_runtime *rt, zo_grad_handle h) {
    GUARDED(rt, "zo_input_grad", __real_zo_input_grad(rt, h));
}
zo_status __real_zo_param_grad_ready(zo_runtime *, zo_param_id);
zo_status __wrap_zo_param_grad_ready(zo_runtime *rt, zo_param_id p) {
    GUARDED(rt, "zo_param_grad_ready", __real_zo_param_grad_ready(rt, p));
}
zo_status __real_zo_backward_end(zo_runtime *, zo_graph);
zo_status __wrap_zo_backward_end(zo_runtime *rt, zo_graph g) {
    GUARDED(rt, "zo_backward_end", __real_zo_backward_end(rt, g));
}
zo_status __real_zo_graph_discard(zo_runtime *, zo_graph);
zo_status __wrap_zo_graph_discard(zo_runtime *rt, zo_graph g) {
    GUARDED(rt, "zo_graph_discard", __real_zo_graph_discard(rt, g));
}
zo_status __real_zo_param_access(zo_runtime *, zo_module_id, zo_param_id, const void **, size_t *);
zo_status __wrap_zo_param_access(zo_runtime *rt, zo_module_id m, zo_param_id p, const void **d, size_t *b) {
    GUARDED(rt, "zo_param_access", __real_zo_param_access(rt, m, p, d, b));
}
W0(zo_release_all, "zo_release_all")
zo_status __real_zo_reset_step(zo_runtime *, int);
zo_status __wrap_zo_reset_step(zo_runtime *rt, int eval) {
    GUARDED(rt, "zo_reset_step", __real_zo_reset_step(rt, eval));
}

/* ------------------------------------------------------------------ */
/* Driver                                                              */
/* ------------------------------------------------------------------ */

static void run_reset(void) {
    uint64_t *keep = R.call_allocs;
    size_t n = R.n_calls, cap = R.cap_calls;
    const char *name = R.scenario;
    memset(&R, 0, sizeof R);
    R.call_allocs = keep;
    R.n_calls = n;
    R.cap_calls = cap;
    R.scenario = name;
}

typedef struct totals {
    uint64_t runs, allocations, surfaced, absorbed, mishandled;
} totals;

/* One scenario under one policy: healthy run, then every k. */
static int run_scenario(const char *path, const zs_scenario *s, int policy, uint64_t max_k, totals *T) {
    static zs_sim_result r;
    zs_sim_opts o;
    zs_sim_opts_init(&o);
    o.policy = policy;

    /* healthy run: the reference verdict and allocations per call */
    free(R.call_allocs);
    memset(&R, 0, sizeof R);
    R.scenario = path;
    R.recording = 1;
    memset(&A, 0, sizeof A);
    int v0 = zs_sim_run(s, &o, &r);
    int inv0 = v0 > 0 ? r.v.inv : 0;
    char ref[400] = "ok";
    if (v0 > 0) zs_violation_format(&r.v, ref, sizeof ref);
    uint64_t n_alloc = A.n;
    if (A.live != 0) {
        printf("FAIL %s [%s]: healthy run leaked %lld block(s)\n", path, zo_policy_name(policy), (long long)A.live);
        return 1;
    }
    R.recording = 0;
    int bad = 0;
    uint64_t kmax = max_k && max_k < n_alloc ? max_k : n_alloc;
    uint64_t surf = 0, abs_ = 0;
    for (uint64_t k = 1; k <= kmax; k++) {
        run_reset();
        R.k = k;
        memset(&A, 0, sizeof A);
        A.fail_at = k;
        int v = zs_sim_run(s, &o, &r);
        char got[400] = "ok";
        if (v > 0) zs_violation_format(&r.v, got, sizeof got);
        if (A.failed != 1)
            problem("the %llu-th allocation never happened (nondeterministic run: %llu allocations)",
                    (unsigned long long)k, (unsigned long long)A.n);
        else if (v != v0 || (v > 0 && r.v.inv != inv0))
            problem("verdict \"%s\" differs from the healthy run's \"%s\"", got, ref);
        if (A.live != 0)
            problem("%lld block(s) still allocated after zo_runtime_destroy + zo_backend_destroy", (long long)A.live);
        surf += R.surfaced;
        abs_ += R.absorbed;
        if (R.problems) {
            if (bad < 5)
                printf("FAIL %s [%s] k=%llu/%llu: %s\n", path, zo_policy_name(policy), (unsigned long long)k,
                       (unsigned long long)n_alloc, R.problem);
            bad++;
        }
    }
    printf("%-48s %-16s allocations %6llu  failed-k %6llu  surfaced %6llu  absorbed %5llu  mishandled %d  (%s)\n", path,
           zo_policy_name(policy), (unsigned long long)n_alloc, (unsigned long long)kmax, (unsigned long long)surf,
           (unsigned long long)abs_, bad, v0 > 0 ? "healthy run: violation" : "healthy run: ok");
    fflush(stdout);
    T->runs += kmax;
    T->allocations += n_alloc;
    T->surfaced += surf;
    T->absorbed += abs_;
    T->mishandled += (uint64_t)bad;
    return bad != 0;
}

/* ------------------------------------------------------------------ */
/* Public-API scenario: named registration, explicit reset_step, nested */
/* forward, eval forward, abort, retained graph, discard                */
/* ------------------------------------------------------------------ */

#define API(call)                                                                                                      \
    do {                                                                                                               \
        zo_status s_ = (call);                                                                                         \
        if (s_ != ZO_OK) {                                                                                             \
            problem("api scenario line %d: %s returned %s (\"%s\")", __LINE__, #call, zo_strerror(s_),                 \
                    zo_last_error(rt));                                                                                \
            goto out;                                                                                                  \
        }                                                                                                              \
    } while (0)

/* The many-rank allocation sites: a host world (one rank, so one thread
 * completes every collective) and a runtime with verify_collectives (its
 * fingerprint receive buffer, the exchange before every all-gather and at
 * the optimizer step). */
static void api_world_scenario(zo_grads_policy pol) {
    zo_host_world *w = NULL;
    zo_backend *be = NULL;
    zo_runtime *rt = NULL;
    if (zo_host_world_create(1, NULL, &w) != ZO_OK) {
        problem("zo_host_world_create failed");
        return;
    }
    zo_host_config hc = ZO_HOST_CONFIG_INIT;
    hc.world = w;
    if (zo_backend_host_create(&hc, &be) != ZO_OK) {
        problem("zo_backend_host_create (world) failed");
        zo_host_world_destroy(w);
        return;
    }
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.grads_policy = pol;
    cfg.param_persistence_threshold = 0;
    cfg.backend = be;
    cfg.verify_collectives = 1;
    if (zo_runtime_create(&cfg, &rt) != ZO_OK) {
        problem("zo_runtime_create (verify_collectives) failed");
        zo_backend_destroy(be);
        zo_host_world_destroy(w);
        return;
    }
    zo_module_id r, a, moe, e0, e1;
    zo_param_id pa, pg, p0, p1;
    API(zo_module_register(rt, ZO_NO_MODULE, "model", 0, &r));
    API(zo_module_register(rt, r, "attn", 0, &a));
    API(zo_module_register(rt, r, "moe", ZO_MODULE_GATHER_ALWAYS, &moe));
    API(zo_module_register(rt, moe, "e0", 0, &e0));
    API(zo_module_register(rt, moe, "e1", 0, &e1));
    API(zo_param_register(rt, a, "weight", 300, 4, 0, &pa));
    API(zo_param_register(rt, moe, "gate", 64, 4, 0, &pg));
    API(zo_param_register(rt, e0, "w", 100, 4, 0, &p0));
    API(zo_param_register(rt, e1, "w", 100, 4, 0, &p1));
    for (int step = 0; step < 2; step++) {
        zo_graph g;
        uint8_t one[1] = {1};
        zo_grad_handle ri[1], ro[1], ai[1], ao[1], mi[1], mo[1], xi[1], xo[1];
        const void *d;
        zo_module_id ex = step ? e1 : e0;
        zo_param_id px = step ? p1 : p0;
        API(zo_forward_begin(rt, ZO_FWD_ROOT, &g));
        API(zo_pre_forward(rt, r, ZO_CALL_GRAD));
        API(zo_track_inputs(rt, r, 1, one, ri));
        API(zo_pre_forward(rt, a, ZO_CALL_GRAD));
        API(zo_track_inputs(rt, a, 1, one, ai));
        API(zo_param_access(rt, a, pa, &d, NULL));
        API(zo_post_forward(rt, a));
        API(zo_track_outputs(rt, a, 1, one, ao));
        API(zo_pre_forward(rt, moe, ZO_CALL_GRAD));
        API(zo_track_inputs(rt, moe, 1, one, mi));
        API(zo_pre_forward(rt, ex, ZO_CALL_GRAD));
        API(zo_track_inputs(rt, ex, 1, one, xi));
        API(zo_param_access(rt, ex, px, &d, NULL));
        API(zo_post_forward(rt, ex));
        API(zo_track_outputs(rt, ex, 1, one, xo));
        API(zo_post_forward(rt, moe));
        API(zo_track_outputs(rt, moe, 1, one, mo));
        API(zo_post_forward(rt, r));
        API(zo_track_outputs(rt, r, 1, one, ro));
        API(zo_forward_end(rt, g));
        API(zo_backward_begin(rt, g, 0));
        API(zo_output_grad(rt, ro[0]));
        API(zo_output_grad(rt, mo[0]));
        API(zo_output_grad(rt, xo[0]));
        API(zo_param_access(rt, ex, px, &d, NULL));
        API(zo_input_grad(rt, xi[0]));
        API(zo_input_grad(rt, mi[0]));
        API(zo_output_grad(rt, ao[0]));
        API(zo_param_access(rt, a, pa, &d, NULL));
        API(zo_input_grad(rt, ai[0]));
        API(zo_input_grad(rt, ri[0]));
        API(zo_backward_end(rt, g));
        API(zo_release_all(rt));
    }
    API(zo_check_consistency(rt));
out:
    zo_runtime_destroy(rt);
    zo_backend_destroy(be);
    if (zo_host_world_destroy(w) != ZO_OK) problem("zo_host_world_destroy failed");
}

static void api_scenario(zo_grads_policy pol) {
    zo_host_config hc = ZO_HOST_CONFIG_INIT;
    zo_host_testing ht = ZO_HOST_TESTING_INIT;
    hc.testing = &ht;
    hc.world_size = 2;
    hc.rank = 1;
    ht.deferred = 1;
    zo_backend *be = NULL;
    zo_runtime *rt = NULL;
    if (zo_backend_host_create(&hc, &be) != ZO_OK) {
        problem("zo_backend_host_create failed");
        return;
    }
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.world_size = 2;
    cfg.rank = 1;
    cfg.grads_policy = pol;
    cfg.param_persistence_threshold = 20;
    cfg.prefetch_bucket_size = 500;
    cfg.backend = be;
    if (zo_runtime_create(&cfg, &rt) != ZO_OK) {
        problem("zo_runtime_create failed");
        zo_backend_destroy(be);
        return;
    }
    zo_module_id r, a, b, leaf, lc;
    zo_param_id pa, pb, pl, pc, pt;
    API(zo_module_register(rt, ZO_NO_MODULE, "model", 0, &r));
    API(zo_module_register(rt, r, "encoder", 0, &a));
    API(zo_module_register(rt, r, "decoder", 0, &b));
    API(zo_module_register(rt, r, "experts", ZO_MODULE_Z3_LEAF, &leaf));
    API(zo_module_register(rt, leaf, "expert0", 0, &lc));
    API(zo_param_register(rt, a, "weight", 300, 4, 0, &pa));
    API(zo_param_register(rt, b, "weight", 200, 2, 0, &pb));
    API(zo_param_register(rt, leaf, "gate", 64, 4, 0, &pl));
    API(zo_param_register(rt, lc, "w1", 100, 4, 0, &pc));
    API(zo_param_register(rt, r, "bias", 8, 4, ZO_PARAM_FROZEN, &pt));
    API(zo_module_use_param(rt, b, pa)); /* tied */
    for (int step = 0; step < 2; step++) {
        zo_graph g, g2;
        uint8_t one[2] = {1, 1};
        zo_grad_handle ri[1], ro[1], ai[2], ao[1], bi[1], bo[1], li[1], lo[1];
        const void *d;
        API(zo_reset_step(rt, 0));
        API(zo_forward_begin(rt, ZO_FWD_ROOT, &g));
        API(zo_pre_forward(rt, r, ZO_CALL_GRAD));
        API(zo_track_inputs(rt, r, 1, one, ri));
        API(zo_pre_forward(rt, a, ZO_CALL_GRAD));
        API(zo_track_inputs(rt, a, 2, one, ai));
        API(zo_param_access(rt, a, pa, &d, NULL));
        API(zo_post_forward(rt, a));
        API(zo_track_outputs(rt, a, 1, one, ao));
        API(zo_pre_forward(rt, leaf, ZO_CALL_GRAD));
        API(zo_track_inputs(rt, leaf, 1, one, li));
        API(zo_param_access(rt, leaf, pc, &d, NULL));
        API(zo_post_forward(rt, leaf));
        API(zo_track_outputs(rt, leaf, 1, one, lo));
        API(zo_pre_forward(rt, b, ZO_CALL_GRAD));
        API(zo_track_inputs(rt, b, 1, one, bi));
        API(zo_post_forward(rt, b));
        API(zo_track_outputs(rt, b, 1, one, bo));
        API(zo_post_forward(rt, r));
        API(zo_track_outputs(rt, r, 1, one, ro));
        API(zo_forward_end(rt, g));
        API(zo_backward_begin(rt, g, 1)); /* retain_graph */
        API(zo_output_grad(rt, ro[0]));
        API(zo_output_grad(rt, bo[0]));
        API(zo_input_grad(rt, bi[0]));
        API(zo_output_grad(rt, lo[0]));
        API(zo_input_grad(rt, li[0]));
        API(zo_output_grad(rt, ao[0]));
        API(zo_param_access(rt, a, pa, &d, NULL));
        API(zo_input_grad(rt, ai[0]));
        API(zo_input_grad(rt, ai[1]));
        API(zo_param_grad_ready(rt, pa));
        API(zo_input_grad(rt, ri[0]));
        API(zo_backward_end(rt, g));
        /* a second forward pass whose graph is discarded */
        API(zo_forward_begin(rt, ZO_FWD_ROOT, &g2));
        API(zo_pre_forward(rt, a, ZO_CALL_GRAD));
        API(zo_track_inputs(rt, a, 1, one, ai));
        API(zo_post_forward(rt, a));
        API(zo_track_outputs(rt, a, 1, one, ao));
        API(zo_forward_end(rt, g2));
        API(zo_graph_discard(rt, g2));
        API(zo_graph_discard(rt, g));
        API(zo_release_all(rt));
        /* eval forward, aborted inside b */
        API(zo_forward_begin(rt, ZO_FWD_ROOT | ZO_FWD_EVAL, &g));
        API(zo_pre_forward(rt, r, 0));
        API(zo_track_inputs(rt, r, 0, NULL, NULL));
        API(zo_pre_forward(rt, b, 0));
        API(zo_track_inputs(rt, b, 0, NULL, NULL));
        API(zo_forward_abort(rt, ZO_NO_MODULE));
        API(zo_release_all(rt));
        API(zo_reset_step(rt, 1));
    }
    {
        /* nine graphs backpropagated one inside the other (a backward
         * started from a backward hook): the context stack grows inside
         * zo_backward_begin */
        zo_graph gs[9];
        uint8_t one[1] = {1};
        zo_grad_handle hi[1], ho[1];
        for (int i = 0; i < 9; i++) {
            API(zo_forward_begin(rt, ZO_FWD_ROOT, &gs[i]));
            API(zo_pre_forward(rt, a, ZO_CALL_GRAD));
            API(zo_track_inputs(rt, a, 1, one, hi));
            API(zo_post_forward(rt, a));
            API(zo_track_outputs(rt, a, 1, one, ho));
            API(zo_forward_end(rt, gs[i]));
        }
        for (int i = 0; i < 9; i++) API(zo_backward_begin(rt, gs[i], 0));
        for (int i = 8; i >= 0; i--) API(zo_backward_end(rt, gs[i]));
        API(zo_release_all(rt));
    }
    API(zo_check_consistency(rt));
out:
    zo_runtime_destroy(rt);
    zo_backend_destroy(be);
    api_world_scenario(pol);
}

static int run_api(zo_grads_policy pol, totals *T) {
    free(R.call_allocs);
    memset(&R, 0, sizeof R);
    R.scenario = "api";
    R.recording = 1;
    memset(&A, 0, sizeof A);
    api_scenario(pol);
    uint64_t n_alloc = A.n;
    int bad = 0;
    if (R.problems) {
        printf("FAIL api [%s] healthy run: %s\n", zo_policy_name(pol), R.problem);
        return 1;
    }
    R.recording = 0;
    uint64_t surf = 0, abs_ = 0;
    for (uint64_t k = 1; k <= n_alloc; k++) {
        run_reset();
        memset(&A, 0, sizeof A);
        A.fail_at = k;
        api_scenario(pol);
        if (A.live != 0) problem("%lld block(s) still allocated after destroy", (long long)A.live);
        surf += R.surfaced;
        abs_ += R.absorbed;
        if (R.problems) {
            if (bad < 5)
                printf("FAIL api [%s] k=%llu/%llu: %s\n", zo_policy_name(pol), (unsigned long long)k,
                       (unsigned long long)n_alloc, R.problem);
            bad++;
        }
    }
    printf("%-48s %-16s allocations %6llu  failed-k %6llu  surfaced %6llu  absorbed %5llu  mishandled %d\n",
           "(public API scenario)", zo_policy_name(pol), (unsigned long long)n_alloc, (unsigned long long)n_alloc,
           (unsigned long long)surf, (unsigned long long)abs_, bad);
    T->runs += n_alloc;
    T->allocations += n_alloc;
    T->surfaced += surf;
    T->absorbed += abs_;
    T->mishandled += (uint64_t)bad;
    return bad != 0;
}

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
    }
    fclose(f);
    *len = n;
    return buf;
}

int main(int argc, char **argv) {
    int require_all = 0, policy = ZO_GRADS_PER_CALL;
    uint64_t max_k = 0;
    const char *files[256];
    int nfiles = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--require-all-sites") == 0)
            require_all = 1;
        else if (strcmp(argv[i], "--policy") == 0 && i + 1 < argc) {
            zo_grads_policy p;
            if (zo_policy_from_name(argv[++i], &p) != ZO_OK) {
                fprintf(stderr, "alloc_fail: unknown policy %s\n", argv[i]);
                return 2;
            }
            policy = (int)p;
        } else if (strcmp(argv[i], "--max-k") == 0 && i + 1 < argc)
            max_k = strtoull(argv[++i], NULL, 10);
        else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: alloc_fail [--require-all-sites] [--policy P] [--max-k N] [FILE.scn ...]\n");
            return 2;
        } else if (nfiles < 256)
            files[nfiles++] = argv[i];
    }
    static char defaults[16][512];
    if (nfiles == 0) {
        static const char *const models[] = {"albert",           "bert", "gpt2", "llama_ckpt", "lora", "mixtral_moe",
                                             "mixtral_moe_leaf", "t5"};
        for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
            snprintf(defaults[i], sizeof defaults[i], "%s/corpus/models/%s.scn", ZO_SOURCE_DIR, models[i]);
            files[nfiles++] = defaults[i];
        }
    }
    scan_sites();
    totals T;
    memset(&T, 0, sizeof T);
    int fail = 0;
    for (int i = 0; i < nfiles; i++) {
        size_t len = 0;
        char *text = slurp(files[i], &len);
        if (!text) {
            fprintf(stderr, "alloc_fail: cannot read %s\n", files[i]);
            return 2;
        }
        static zs_scenario s;
        zs_scn_error err;
        if (zs_scn_parse(text, len, &s, NULL, &err) != 0) {
            fprintf(stderr, "%s:%d:%d: %s\n", files[i], err.line, err.col, err.msg);
            free(text);
            return 2;
        }
        free(text);
        const char *shown = strstr(files[i], "corpus/");
        fail |= run_scenario(shown ? shown : files[i], &s, policy, max_k, &T);
    }
    if (defaults[0][0]) {
        /* the DeepSpeed-shaped policies' own bookkeeping (DeepSpeed 0.19
         * profile): reached only under them */
        static char path[512];
        snprintf(path, sizeof path, "%s/tests/reliability/ds-profile.scn", ZO_SOURCE_DIR);
        size_t len = 0;
        char *text = slurp(path, &len);
        static zs_scenario s;
        zs_scn_error err;
        if (!text || zs_scn_parse(text, len, &s, NULL, &err) != 0) {
            fprintf(stderr, "alloc_fail: cannot read or parse %s\n", path);
            free(text);
            return 2;
        }
        free(text);
        fail |= run_scenario("tests/reliability/ds-profile.scn", &s, ZO_GRADS_RESET_ON_FORWARD, max_k, &T);
    }
    fail |= run_api((zo_grads_policy)policy, &T);

    printf("total: %llu runs with one refused allocation, %llu surfaced as ZO_ERR_NOMEM (checked: no effect, "
           "consistent, retry succeeds), %llu absorbed, %llu mishandled\n",
           (unsigned long long)T.runs, (unsigned long long)T.surfaced, (unsigned long long)T.absorbed,
           (unsigned long long)T.mishandled);
    if (__sanitizer_symbolize_pc) {
        int covered = 0, unreachable = 0;
        for (int i = 0; i < g_nsites; i++) {
            covered += g_sites[i].failed > 0;
            unreachable += g_sites[i].failed == 0 && unreachable_why(g_sites[i].text) != NULL;
        }
        printf("allocation sites covered: %d/%d (runtime/*.c without backend_nccl*.c; %d documented unreachable; "
               "%llu refusals unattributed)\n",
               covered, g_nsites, unreachable, (unsigned long long)g_unattributed);
        for (int i = 0; i < g_nsites; i++) {
            const char *why = g_sites[i].failed ? NULL : unreachable_why(g_sites[i].text);
            printf("  %-11s %s:%d  %s  (%llu)\n",
                   g_sites[i].failed ? "failed"
                   : why             ? "unreachable"
                                     : "NEVER",
                   g_sites[i].file, g_sites[i].line, g_sites[i].text, (unsigned long long)g_sites[i].failed);
            if (why) printf("              why: %s\n", why);
        }
        if (require_all && covered + unreachable != g_nsites) {
            printf("FAIL: %d allocation site(s) never failed\n", g_nsites - covered - unreachable);
            fail = 1;
        }
    } else {
        printf("allocation sites: %d scanned; per-site accounting needs a sanitizer build (ASan symboliser)\n",
               g_nsites);
    }
    free(R.call_allocs);
    return fail ? 1 : 0;
}
