/*
 * run.c - zs_run: one rank's view or every rank in the host world (run.h).
 */
#include "run.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "zoffload.h"

void zs_run_opts_init(zs_run_opts *o) {
    memset(o, 0, sizeof *o);
    o->policy = -1;
    o->order_mode = -1;
    o->cap = ZS_SIM_DEFAULT_CAP;
    o->verify_collectives = -1;
    o->stop_on_violation = 1;
    o->env.edit_mask = ~0u; /* every edit kind; no remedy; any divergence is I8 */
}

void zs_run_opts_from_settings(zs_run_opts *o, const zs_settings *st) {
    o->policy = st->policy;
    o->order_mode = st->order_mode;
    o->cap = st->cap;
    o->verify_collectives = st->verify;
    o->skip_discard_i3 = st->skip_discard_i3;
    o->one_rank = st->one_rank;
    o->env = st->world;
}

/* Per-thread memory reused across runs: the copy the env knobs edit and
 * the world result when the caller keeps none (freed at thread exit). */
typedef struct run_cache {
    zs_scenario *copy;
    zs_world_result *world;
} run_cache;

static pthread_key_t g_key;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_key_ok;

static void cache_free(void *p) {
    run_cache *c = p;
    if (!c) return;
    zs_scenario_free(c->copy);
    free(c->copy);
    free(c->world);
    free(c);
}

static void key_init(void) { g_key_ok = pthread_key_create(&g_key, cache_free) == 0; }

static run_cache *cache_get(void) {
    pthread_once(&g_once, key_init);
    if (!g_key_ok) return NULL;
    run_cache *c = pthread_getspecific(g_key);
    if (!c) {
        c = calloc(1, sizeof *c);
        if (c && pthread_setspecific(g_key, c) != 0) {
            free(c);
            c = NULL;
        }
    }
    return c;
}

static int setup_error(zs_outcome *out, const char *msg) {
    out->r.setup_error = 1;
    snprintf(out->r.setup_msg, sizeof out->r.setup_msg, "%s", msg);
    out->verdict = ZS_RUN_SETUP;
    return out->verdict;
}

/* the simulator options every engine shares */
static void sim_opts(const zs_run_opts *o, zs_sim_opts *so) {
    zs_sim_opts_init(so);
    so->policy = o->policy;
    so->order_mode = o->order_mode;
    so->max_bytes_per_param = o->cap;
    so->verify_collectives = o->verify_collectives;
    so->stop_on_violation = o->stop_on_violation;
    so->abort_on_violation = o->abort_on_violation;
    so->skip_discard_i3 = o->skip_discard_i3;
    so->trace = o->trace;
    so->events = o->events;
}

int zs_run(const zs_scenario *s, const zs_run_opts *opts, zs_outcome *out) {
    if (!s || !out) return -1;
    zs_run_opts def;
    if (!opts) {
        zs_run_opts_init(&def);
        opts = &def;
    }
    memset(out, 0, sizeof *out);
    out->divergence = -1;
    out->policy = opts->policy >= 0 ? opts->policy : s->cfg.policy;
    out->order_mode = opts->order_mode >= 0 ? opts->order_mode : s->cfg.order_mode;
    if (opts->policy < -1 || opts->policy >= ZO_GRADS_POLICY_COUNT)
        return setup_error(out, "zs_run: policy out of range");
    if (opts->order_mode != -1 && opts->order_mode != ZS_ORDER_ENGINE && opts->order_mode != ZS_ORDER_FUZZED)
        return setup_error(out, "zs_run: order_mode out of range");
    zs_sim_opts so;
    sim_opts(opts, &so);

    if (!s->cfg.all_ranks || opts->one_rank) {
        /* one rank's view: I8 cannot be checked there */
        if (opts->env.only_i8) return out->verdict = ZS_INV_NONE;
        out->ran = 1;
        so.on_choice = opts->on_choice;
        so.choice_user = opts->choice_user;
        so.allocator = opts->allocator;
        int rc = zs_sim_run(s, &so, &out->r);
        if (rc < 0) return out->verdict = ZS_RUN_SETUP;
        out->verdict = rc == 1 && out->r.violated ? out->r.v.inv : ZS_INV_NONE;
        return out->verdict;
    }

    /* every rank in the host world */
    run_cache *cache = cache_get();
    zs_world_result *wr = opts->world;
    if (!wr) {
        if (cache && !cache->world) cache->world = malloc(sizeof *cache->world);
        wr = cache ? cache->world : NULL;
    }
    if (!wr) return setup_error(out, "zs_run: out of memory");
    const zs_world_env *e = &opts->env;
    if (e->edit_mask != ~0u || e->protect_routers) {
        /* the knobs change the scenario: a copy of it */
        if (cache && !cache->copy) cache->copy = calloc(1, sizeof *cache->copy);
        if (!cache || !cache->copy || zs_scenario_copy(cache->copy, s))
            return setup_error(out, "zs_run: out of memory");
        zs_world_env_apply(e, cache->copy);
        s = cache->copy;
    }
    zs_world_opts wo;
    zs_world_opts_init(&wo);
    wo.only_i8 = e->only_i8;
    wo.skip_i8 = e->skip_i8;
    wo.blame_runtime = e->blame_runtime;
    wo.threads = e->threads;
    wo.report = opts->report;
    for (unsigned q = 0; q < ZS_MAX_WORLD; q++) wo.rank_alloc[q] = opts->rank_allocator[q];
    wo.world_alloc = opts->world_allocator;
    out->ran = 1;
    out->in_world = 1;
    int rc = zs_world_run(s, &so, &wo, wr);
    zs_world_to_sim_result(wr, &out->r);
    out->divergence = wr->divergence;
    out->verdict = rc < 0 ? ZS_RUN_SETUP : wr->violated ? wr->verdict : ZS_INV_NONE;
    return out->verdict;
}
