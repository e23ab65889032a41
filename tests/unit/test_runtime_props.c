/*
 * test_runtime_props.c - deterministic randomized property test of the
 * runtime over PyTorch-realistic hook sequences (not a fuzzer: fixed
 * seeds, a few hundred steps, runs in the unit-test budget).
 *
 * Each seed builds a random module tree (params of random numel, some
 * frozen, some tied, sometimes a z3 leaf), a random coordinator config
 * (world size, prefetch bucket, reuse distance, max live, persistence) and
 * runs training steps: a forward in which modules call their children
 * (some twice, some under no_grad), then the backward in autograd engine
 * order (reverse creation order; a call whose output does not reach the
 * loss fires none of its nodes), then optionally the optimizer step
 * (zo_release_all).  Some steps are eval forwards, some graphs are
 * discarded.
 *
 * Checked after every entry point: ZO_OK and zo_check_consistency().
 * Every parameter access returns the original tensor.  Per-call also:
 * no counter ever negative, never an uninitialised counter, and after
 * each backward_end / eval forward every non-persistent parameter is
 * released (invariant 3).  Every policy: zo_release_all releases
 * everything, no illegal ds_status transition, no ZO_EV_ERROR.
 */
#include "hookdrv.h"

static hd_events g_ev;
static zo_stats g_sum;
static uint64_t g_events, g_calls, g_aborts, g_skipped, g_retained;

typedef struct rng {
    uint64_t s;
} rng;
static uint32_t rnd(rng *r) {
    r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(r->s >> 33);
}
static int chance(rng *r, int percent) { return (int)(rnd(r) % 100) < percent; }

#define MAXM     12
#define MAXCALLS 256

typedef struct model {
    int n;
    zo_module_id id[MAXM];
    int parent[MAXM];
    int leaf[MAXM], in_leaf[MAXM];
    int nchild[MAXM];
    int child[MAXM][MAXM];
    int has_trainable[MAXM];
} model;

/* one module call of the current forward */
typedef struct callrec {
    int mod;
    int parent_call;  /* index, -1 for the root call */
    int grad;         /* grad enabled at the call */
    int reaches_loss; /* its output is used (and it is reachable) */
    size_t n_in;
    uint8_t in_rg[2];
    zo_grad_handle in[2];
    zo_grad_handle out;
    int out_rg;
    int aborted;  /* unwound by an exception: hooks B and C never ran */
    int win;      /* per-call reference model: this call's open window count */
    int win_init; /* inputs counted when the window opened (re-armed value) */
} callrec;

typedef struct node {
    int call;
    int is_out; /* 1: output node (pre-backward), 0: input i */
    int input;
} node;

typedef struct world {
    rng r;
    zo_runtime *rt;
    zo_grads_policy pol;
    model md;
    callrec calls[MAXCALLS];
    int ncalls;
    node nodes[MAXCALLS * 3];
    int nnodes;
    uint64_t max_live, max_fetch;
    uint64_t peak_seen;
    int eval;
    int aborting; /* call index of the catcher while unwinding, else -1 */
    /* legacy reference model: DeepSpeed's module attributes */
    int64_t ref_grads[MAXM]; /* ds_grads_remaining */
    int64_t ref_cnt[MAXM];   /* applied_pre_backward_ref_cnt */
    uint64_t aborts, skipped_out, retained;
} world;

#define CHECK(w, call)                                                                                                 \
    do {                                                                                                               \
        HD_OK((w)->rt, call);                                                                                          \
        HD_CONSISTENT((w)->rt);                                                                                        \
        zo_stats st_ = HD_STATS((w)->rt);                                                                              \
        if (st_.live_numel > (w)->peak_seen) (w)->peak_seen = st_.live_numel;                                          \
    } while (0)

/* per-call: module m's open windows and their summed counts equal the
 * reference model's (one window per call with grad and >= 1 input
 * requiring grad, closed at 0, by abort, end of backward, discard) */
static void check_windows(world *w, int mod, const char *after) {
    if (w->pol != ZO_GRADS_PER_CALL) return;
    int64_t sum = 0;
    uint32_t open = 0;
    for (int i = 0; i < w->ncalls; i++) {
        if (w->calls[i].mod == mod && w->calls[i].win > 0) {
            sum += w->calls[i].win;
            open++;
        }
    }
    zo_module_info mi = HD_MINFO(w->rt, w->md.id[mod]);
    if (mi.grads_remaining != sum || mi.open_windows != open) {
        print_error("per-call, module %d after %s: %u windows summing %lld (model %u, %lld)\n", mod, after,
                    mi.open_windows, (long long)mi.grads_remaining, open, (long long)sum);
        fail();
    }
}

static void close_all_windows(world *w) {
    for (int i = 0; i < w->ncalls; i++) w->calls[i].win = 0;
    for (int m = 0; m < w->md.n; m++) check_windows(w, m, "closing every window");
}

/* legacy: the runtime's counters equal the reference model's */
static void check_legacy_counters(world *w, int mod, const char *after) {
    if (w->pol == ZO_GRADS_PER_CALL) return;
    zo_module_info mi = HD_MINFO(w->rt, w->md.id[mod]);
    if (mi.grads_remaining != w->ref_grads[mod] || mi.pre_backward_ref_cnt != w->ref_cnt[mod]) {
        print_error("policy %s, module %d after %s: ds_grads_remaining %lld (model %lld), "
                    "applied_pre_backward_ref_cnt %lld (model %lld)\n",
                    zo_policy_name(w->pol), mod, after, (long long)mi.grads_remaining, (long long)w->ref_grads[mod],
                    (long long)mi.pre_backward_ref_cnt, (long long)w->ref_cnt[mod]);
        fail();
    }
}

static void access_all(world *w, int mod) {
    zo_param_id buf[16];
    size_t n = 0;
    HD_OK(w->rt, zo_module_params(w->rt, w->md.id[mod], buf, 16, &n));
    for (size_t i = 0; i < n && i < 16; i++) HD_ACCESS(w->rt, w->md.id[mod], buf[i]);
    HD_CONSISTENT(w->rt);
}

/* m(x): hooks A, D, children, B, C.  Returns the call index. */
static int do_call(world *w, int mod, int parent_call, int grad, int in_rg, int depth) {
    if (w->ncalls >= MAXCALLS) return -1;
    int ci = w->ncalls++;
    callrec *c = &w->calls[ci];
    memset(c, 0, sizeof(*c));
    c->mod = mod;
    c->parent_call = parent_call;
    c->grad = grad;
    c->n_in = 1 + (rnd(&w->r) % 2);
    c->in_rg[0] = (uint8_t)in_rg;
    c->in_rg[1] = (uint8_t)(c->n_in > 1 ? chance(&w->r, 50) : 0);
    zo_module_id m = w->md.id[mod];
    CHECK(w, zo_pre_forward(w->rt, m, grad ? ZO_CALL_GRAD : 0));
    CHECK(w, zo_track_inputs(w->rt, m, c->n_in, c->in_rg, c->in));
    if (w->pol == ZO_GRADS_RESET_ON_FORWARD) w->ref_grads[mod] = 0; /* module.ds_grads_remaining = 0 */
    w->ref_grads[mod] += c->in_rg[0] + (c->n_in > 1 ? c->in_rg[1] : 0);
    check_legacy_counters(w, mod, "hook D");
    if (grad) c->win = c->win_init = c->in_rg[0] + (c->n_in > 1 ? c->in_rg[1] : 0);
    check_windows(w, mod, "hook D");
    for (size_t i = 0; i < c->n_in; i++) {
        node *nd = &w->nodes[w->nnodes++];
        nd->call = ci;
        nd->is_out = 0;
        nd->input = (int)i;
    }
    access_all(w, mod);
    /* an exception raised in this call, caught by an ancestor call */
    if (parent_call >= 0 && chance(&w->r, 3)) {
        int depth_up = (int)(rnd(&w->r) % 3), catcher = parent_call;
        while (depth_up-- > 0 && w->calls[catcher].parent_call >= 0) catcher = w->calls[catcher].parent_call;
        CHECK(w, zo_forward_abort(w->rt, w->md.id[w->calls[catcher].mod]));
        w->aborts++;
        c->aborted = 1;
        /* the unwound calls (this one up to, excluding, the catcher) lose
         * their windows */
        for (int u = ci; u != catcher && u >= 0; u = w->calls[u].parent_call)
            w->calls[u].win = w->calls[u].win_init = 0;
        for (int mm = 0; mm < w->md.n; mm++) check_windows(w, mm, "forward abort");
        w->aborting = catcher;
        return ci;
    }
    int any_rg = c->in_rg[0] || c->in_rg[1];
    int child_rg = any_rg;
    if (!w->md.leaf[mod] && depth < 4) {
        for (int k = 0; k < w->md.nchild[mod]; k++) {
            int ch = w->md.child[mod][k];
            int times = chance(&w->r, 80) ? 1 : (chance(&w->r, 50) ? 2 : 0);
            for (int t = 0; t < times; t++) {
                int g = grad && !chance(&w->r, 10); /* torch.no_grad() block */
                int cc = do_call(w, ch, ci, g, child_rg, depth + 1);
                if (w->aborting >= 0) {
                    if (w->aborting != ci) { /* unwinding past this call */
                        w->calls[ci].aborted = 1;
                        return ci;
                    }
                    w->aborting = -1; /* caught here: this call continues */
                    continue;
                }
                if (cc >= 0 && w->calls[cc].out_rg) child_rg = 1;
                if (cc >= 0) any_rg |= w->calls[cc].out_rg && chance(&w->r, 85);
            }
        }
    }
    c = &w->calls[ci];
    c->out_rg = grad && (any_rg || w->md.has_trainable[mod]);
    uint8_t org = (uint8_t)c->out_rg;
    CHECK(w, zo_post_forward(w->rt, m));
    CHECK(w, zo_track_outputs(w->rt, m, 1, &org, &c->out));
    w->ref_cnt[mod] += 1; /* every output, even one not requiring grad */
    check_legacy_counters(w, mod, "hook C");
    node *nd = &w->nodes[w->nnodes++];
    nd->call = ci;
    nd->is_out = 1;
    nd->input = 0;
    return ci;
}

static void check_released(world *w, const char *when) {
    zo_stats st = HD_STATS(w->rt);
    for (zo_param_id p = 0; p < st.n_params; p++) {
        zo_param_info pi = HD_PINFO(w->rt, p);
        if (!pi.persistent && pi.status != ZO_PARAM_NOT_AVAILABLE) {
            print_error("policy %s, %s: param %u is %s\n", zo_policy_name(w->pol), when, (unsigned)p,
                        hd_status_name(pi.status));
            fail();
        }
    }
    HD_EQ(st.live_numel, st.persistent_live_numel);
    HD_EQ(st.inflight_params, 0);
}

static void train_step(world *w, int discard) {
    w->ncalls = 0;
    w->nnodes = 0;
    w->aborting = -1;
    zo_graph g = 0;
    CHECK(w, zo_forward_begin(w->rt, ZO_FWD_ROOT, &g));
    int root = do_call(w, 0, -1, 1, chance(&w->r, 70), 0);
    (void)root;
    g_calls += (uint64_t)w->ncalls;
    CHECK(w, zo_forward_end(w->rt, g));
    if (discard) {
        CHECK(w, zo_graph_discard(w->rt, g));
        close_all_windows(w);
        return;
    }
    /* which calls' gradients reach the loss */
    for (int i = 0; i < w->ncalls; i++) {
        callrec *c = &w->calls[i];
        int parent_ok = c->parent_call < 0 ? 1 : w->calls[c->parent_call].reaches_loss;
        int used = c->parent_call < 0 ? 1 : chance(&w->r, 85);
        c->reaches_loss = !c->aborted && parent_ok && used && c->grad && c->out_rg;
    }
    /* retain_graph=True: the same graph backpropagated twice */
    int passes = chance(&w->r, 12) ? 2 : 1;
    for (int pass = 0; pass < passes; pass++) {
        int retain = pass + 1 < passes;
        CHECK(w, zo_backward_begin(w->rt, g, retain));
        for (int k = w->nnodes - 1; k >= 0; k--) {
            node *nd = &w->nodes[k];
            callrec *c = &w->calls[nd->call];
            if (!c->reaches_loss) continue;
            if (nd->is_out) {
                if (c->out == 0) continue;
                /* per-call: sometimes the loss reaches the module's inside
                 * through a cached intermediate, bypassing its pre-backward
                 * node: the computation then reads params not gathered for it */
                if (w->pol == ZO_GRADS_PER_CALL && chance(&w->r, 5)) {
                    w->skipped_out++;
                    access_all(w, c->mod);
                    continue;
                }
                CHECK(w, zo_output_grad(w->rt, c->out));
                if (w->ref_cnt[c->mod] > 0) w->ref_cnt[c->mod] -= 1;
                check_legacy_counters(w, c->mod, "pre-backward");
                if (w->pol == ZO_GRADS_PER_CALL) access_all(w, c->mod); /* the module's backward computation */
            } else {
                if (!c->in_rg[nd->input] || c->in[nd->input] == 0) continue;
                CHECK(w, zo_input_grad(w->rt, c->in[nd->input]));
                w->ref_grads[c->mod] -= 1;
                check_legacy_counters(w, c->mod, "post-backward");
                if (c->win > 0) c->win -= 1;
                check_windows(w, c->mod, "post-backward");
            }
        }
        /* post-accumulate-grad hooks of the trainable params that got a
         * gradient (used by a call whose output reached the loss) */
        uint8_t seen[256];
        memset(seen, 0, sizeof(seen));
        for (int i = 0; i < w->ncalls; i++) {
            if (!w->calls[i].reaches_loss) continue;
            zo_param_id buf[32];
            size_t n = 0;
            HD_OK(w->rt, zo_module_params(w->rt, w->md.id[w->calls[i].mod], buf, 32, &n));
            for (size_t j = 0; j < n && j < 32; j++) {
                if (buf[j] >= 256 || seen[buf[j]] || !HD_PINFO(w->rt, buf[j]).trainable) continue;
                seen[buf[j]] = 1;
                if (chance(&w->r, 70)) CHECK(w, zo_param_grad_ready(w->rt, buf[j]));
            }
        }
        CHECK(w, zo_backward_end(w->rt, g));
        if (retain) {
            /* per-call: the graph's windows are re-armed for the next backward */
            for (int i = 0; i < w->ncalls; i++) w->calls[i].win = w->calls[i].win_init;
            for (int m = 0; m < w->md.n; m++) check_windows(w, m, "a retained backward_end");
            w->retained++;
        } else {
            close_all_windows(w);
        }
        if (w->pol == ZO_GRADS_PER_CALL) {
            check_released(w, "after backward_end");
            if (!retain) HD_EQ(HD_STATS(w->rt).open_windows, 0);
        }
    } /* passes */
}

static void eval_step(world *w) {
    w->ncalls = 0;
    w->nnodes = 0;
    w->aborting = -1;
    zo_graph g = 0;
    CHECK(w, zo_forward_begin(w->rt, ZO_FWD_ROOT | ZO_FWD_EVAL, &g));
    do_call(w, 0, -1, 0, 0, 0);
    CHECK(w, zo_forward_end(w->rt, g));
    /* legacy: a complete trace may keep params for a reuse that a
     * different call pattern never makes (DeepSpeed behaviour) */
    if (w->pol == ZO_GRADS_PER_CALL) check_released(w, "after an eval forward");
}

static void build_model(world *w) {
    model *md = &w->md;
    memset(md, 0, sizeof(*md));
    md->n = 3 + (int)(rnd(&w->r) % (MAXM - 3));
    uint64_t max_fetch = 0;
    for (int i = 0; i < md->n; i++) {
        int parent = i == 0 ? -1 : (int)(rnd(&w->r) % (unsigned)i);
        md->parent[i] = parent;
        unsigned flags = (i > 0 && chance(&w->r, 15)) ? ZO_MODULE_Z3_LEAF : 0;
        md->leaf[i] = flags != 0;
        md->in_leaf[i] = parent >= 0 && (md->leaf[parent] || md->in_leaf[parent]);
        char name[8];
        snprintf(name, sizeof(name), "m%d", i);
        md->id[i] = hd_module_(w->rt, parent < 0 ? ZO_NO_MODULE : md->id[parent], name, flags, __FILE__, __LINE__);
        if (parent >= 0 && !md->in_leaf[i]) md->child[parent][md->nchild[parent]++] = i;
    }
    zo_param_id np = 0;
    for (int i = 0; i < md->n; i++) {
        int k = (int)(rnd(&w->r) % 3);
        for (int j = 0; j < k; j++) {
            char name[8];
            snprintf(name, sizeof(name), "p%d", j);
            uint64_t numel = 1 + rnd(&w->r) % 3000;
            unsigned fl = chance(&w->r, 15) ? ZO_PARAM_FROZEN : 0;
            uint32_t es = 1u << (rnd(&w->r) % 4);
            hd_param_(w->rt, md->id[i], name, numel, es, fl, __FILE__, __LINE__);
            np++;
            if (!fl) {
                for (int a = i; a >= 0; a = md->parent[a]) {
                    md->has_trainable[a] = 1; /* approximate: subtree trainable */
                    if (!md->in_leaf[a]) break;
                }
            }
            if (numel > max_fetch) max_fetch = numel;
        }
    }
    /* tied / external params */
    if (np > 0) {
        for (int t = 0; t < 2; t++) {
            int i = (int)(rnd(&w->r) % (unsigned)md->n);
            zo_param_id p = rnd(&w->r) % np;
            if (md->in_leaf[i]) continue;
            zo_status s = zo_module_use_param(w->rt, md->id[i], p);
            assert_true(s == ZO_OK || s == ZO_ERR_EXISTS);
        }
    }
    /* a module's fetch is its whole param list: bound by the sum */
    uint64_t sum = 0;
    for (zo_param_id p = 0; p < np; p++) sum += HD_PINFO(w->rt, p).numel;
    w->max_fetch = sum; /* conservative */
    (void)max_fetch;
}

static void run_seed(zo_grads_policy pol, uint64_t seed, int steps) {
    world *w = calloc(1, sizeof(world));
    assert_non_null(w);
    w->r.s = seed * 0x9E3779B97F4A7C15ull + 1;
    w->pol = pol;
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.grads_policy = pol;
    cfg.world_size = 1 + (int)(rnd(&w->r) % 8);
    cfg.rank = (int)(rnd(&w->r) % (unsigned)cfg.world_size);
    static const uint64_t buckets[] = {0, 1000, 3000, 50000000ull};
    static const uint64_t reuse[] = {0, 500, 1000000000ull};
    static const uint64_t live[] = {2000, 10000, 1000000000ull};
    static const uint64_t persist[] = {0, 100, 1000};
    cfg.prefetch_bucket_size = buckets[rnd(&w->r) % 4];
    cfg.max_reuse_distance = reuse[rnd(&w->r) % 3];
    cfg.max_live_parameters = live[rnd(&w->r) % 3];
    cfg.param_persistence_threshold = persist[rnd(&w->r) % 3];
    w->max_live = cfg.max_live_parameters;
    zo_backend *be = NULL;
    if (chance(&w->r, 50)) {
        zo_host_config hc = ZO_HOST_CONFIG_INIT;
        zo_host_testing ht = ZO_HOST_TESTING_INIT;
        hc.testing = &ht;
        hc.world_size = cfg.world_size;
        hc.rank = cfg.rank;
        ht.deferred = 1;
        HD_OK(NULL, zo_backend_host_create(&hc, &be));
        cfg.backend = be;
    }
    w->rt = HD_CREATE(cfg, &g_ev);
    build_model(w);
    size_t mark = g_ev.n; /* use_param may have reported ZO_ERR_EXISTS */
    for (int s = 0; s < steps; s++) {
        int kind = (int)(rnd(&w->r) % 10);
        if (kind == 0)
            eval_step(w);
        else
            train_step(w, kind == 1);
        if (chance(&w->r, 60)) {
            CHECK(w, zo_release_all(w->rt));
            check_released(w, "after release_all");
        }
        if (be && chance(&w->r, 30)) assert_true(zo_host_progress(be) >= 0);
    }
    CHECK(w, zo_release_all(w->rt));
    check_released(w, "at the end");
    if (pol == ZO_GRADS_PER_CALL) {
        if (g_ev.min_counter < 0) {
            print_error("seed %llu: per-call counter went to %lld\n", (unsigned long long)seed,
                        (long long)g_ev.min_counter);
            fail();
        }
        HD_EQ(HD_STATS(w->rt).uninit_counter_events, 0);
    }
    HD_EQ(g_ev.illegal_transitions, 0);
    HD_EQ(g_ev.seq_errors, 0);
    HD_EQ(hd_ev_count_from(&g_ev, mark, ZO_EV_ERROR, HD_ANY, HD_ANY), 0);
    zo_stats st = HD_STATS(w->rt);
    g_sum.gathers += st.gathers;
    g_sum.prefetches += st.prefetches;
    g_sum.unplanned_fetches += st.unplanned_fetches;
    g_sum.leftovers += st.leftovers;
    g_sum.trace_invalidations += st.trace_invalidations;
    g_sum.blocking_waits += st.blocking_waits;
    g_events += g_ev.total;
    g_aborts += w->aborts;
    g_skipped += w->skipped_out;
    g_retained += w->retained;
    HD_OK(w->rt, zo_runtime_destroy(w->rt));
    zo_backend_destroy(be);
    free(w);
}

static void print_summary(const char *what) {
    print_message("%s: %llu module calls, %llu events, %llu gathers (%llu prefetched, %llu "
                  "blocking waits), %llu unplanned fetches, %llu leftovers, %llu trace "
                  "invalidations, %llu forward aborts, %llu bypassed pre-backward nodes, %llu "
                  "retained backwards\n",
                  what, (unsigned long long)g_calls, (unsigned long long)g_events, (unsigned long long)g_sum.gathers,
                  (unsigned long long)g_sum.prefetches, (unsigned long long)g_sum.blocking_waits,
                  (unsigned long long)g_sum.unplanned_fetches, (unsigned long long)g_sum.leftovers,
                  (unsigned long long)g_sum.trace_invalidations, (unsigned long long)g_aborts,
                  (unsigned long long)g_skipped, (unsigned long long)g_retained);
    memset(&g_sum, 0, sizeof(g_sum));
    g_events = g_calls = g_aborts = g_skipped = g_retained = 0;
}

static void test_random_per_call(void **state) {
    (void)state;
    for (uint64_t seed = 1; seed <= 100; seed++) run_seed(ZO_GRADS_PER_CALL, seed, 30);
    print_summary("per-call");
}

static void test_random_legacy(void **state) {
    (void)state;
    for (uint64_t seed = 1; seed <= 30; seed++) {
        run_seed(ZO_GRADS_RESET_ON_FORWARD, seed, 20);
        run_seed(ZO_GRADS_LAZY_INIT, seed, 20);
        run_seed(ZO_GRADS_INIT_AT_REGISTER, seed, 20);
    }
    print_summary("legacy");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_per_call),
        cmocka_unit_test(test_random_legacy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
