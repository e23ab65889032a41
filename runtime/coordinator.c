/*
 * coordinator.c - DeepSpeed's PartitionedParameterCoordinator in C.
 *
 * Mirrors deepspeed/runtime/zero/partitioned_param_coordinator.py:
 * trace_prologue / record_module / fetch_sub_module / release_sub_module /
 * reset_step / _invalidate_trace, the prefetch queue (__param_queue) and the
 * reuse-distance rule of __params_to_release.
 *
 * Deviations, all documented in docs/protocol.md:
 *  - the prefetch budget uses the exact live numel (DeepSpeed's
 *    __n_available_params is reset to 0 at reset_step while persistent
 *    parameters stay gathered);
 *  - reset_step() on a RECORD trace with nothing recorded stays RECORD
 *    (DeepSpeed would mark an empty trace COMPLETE and invalidate it on the
 *    first fetch);
 *  - the reuse-distance scan is answered from prefix sums and per-parameter
 *    position lists (O(log n) per parameter instead of O(trace)), with the
 *    same result as DeepSpeed's loop; the distance itself is compared
 *    through the first position at which the window reaches
 *    max_reuse_distance (lim), so a decision reads no prefix sum at the
 *    parameter's next position.
 */
#include <stdlib.h>
#include <string.h>

#include "policy.h"

/* most_recent[p] holds mr_base + the step p was last fetched for; anything
 * below mr_base is "none since reset_step", which forgets every entry by
 * raising mr_base past them instead of writing the array.  So "p's step <
 * x" (none counting as below every step) is most_recent[p] < mr_base + x,
 * and "p's step > x" is most_recent[p] > mr_base + x. */

static zo_status ds_clean_registry(zo_runtime *rt, zo_module_id m);

void zo__coord_init(zo_coord *c) {
    memset(c, 0, sizeof *c);
    c->mode = ZO_TRACE_RECORD;
}

static void clear_structures(zo_runtime *rt, zo_coord *c) {
    zo__free(rt, c->order);
    zo__free(rt, c->order_step);
    zo__free(rt, c->porder);
    zo__free(rt, c->most_recent);
    zo__free(rt, c->prefix);
    zo__free(rt, c->pos_start);
    zo__free(rt, c->pos);
    zo__free(rt, c->lim);
    c->order = NULL;
    c->order_step = NULL;
    c->porder = NULL;
    c->most_recent = NULL;
    c->prefix = NULL;
    c->pos_start = NULL;
    c->pos = NULL;
    c->lim = NULL;
    c->n_order = c->cap_order = 0;
    c->n_porder = 0;
    c->qpos = 0;
    c->n_most_recent = 0;
    c->n_pos_params = 0;
    c->pos2 = 0;
}

void zo__coord_free(zo_runtime *rt, zo_coord *c) {
    clear_structures(rt, c);
    zo__free(rt, c->rc);
    zo__free(rt, c->rc_pool);
    c->rc = NULL;
    c->rc_pool = NULL;
    c->rc_cap = c->rc_n = c->rc_pool_n = c->rc_pool_cap = 0;
}

static size_t rc_slot(const zo_coord *c, zo_module_id m, uint64_t step) {
    uint64_t h = ((uint64_t)m * 0x9E3779B97F4A7C15ull) ^ (step * 0xC2B2AE3D27D4EB4Full);
    h ^= h >> 29;
    size_t i = (size_t)h & (c->rc_cap - 1);
    while (c->rc[i].m != ZO_NO_MODULE && (c->rc[i].m != m || c->rc[i].step != step)) i = (i + 1) & (c->rc_cap - 1);
    return i;
}

/* the cached decision of (m, step), or NULL */
static const zo_relcache_ent *rc_find(const zo_coord *c, zo_module_id m, uint64_t step) {
    if (!c->rc_cap) return NULL;
    size_t i = rc_slot(c, m, step);
    return c->rc[i].m == ZO_NO_MODULE ? NULL : &c->rc[i];
}

/* stores ids[0..n) as the decision of (m, step); ZO_ERR_NOMEM leaves the
 * cache as it was (the caller then decides uncached) */
static zo_status rc_store(zo_runtime *rt, zo_coord *c, zo_module_id m, uint64_t step, const zo_param_id *ids,
                          uint32_t n) {
    if (2 * (c->rc_n + 1) > c->rc_cap) {
        size_t cap = c->rc_cap ? 2 * c->rc_cap : 64;
        zo_relcache_ent *t = zo__calloc(rt, cap, sizeof *t);
        if (!t) return ZO_ERR_NOMEM;
        for (size_t i = 0; i < cap; i++) t[i].m = ZO_NO_MODULE;
        zo_relcache_ent *old = c->rc;
        size_t old_cap = c->rc_cap;
        c->rc = t;
        c->rc_cap = cap;
        for (size_t i = 0; i < old_cap; i++)
            if (old[i].m != ZO_NO_MODULE) c->rc[rc_slot(c, old[i].m, old[i].step)] = old[i];
        zo__free(rt, old);
    }
    if (zo__reserve_sz(rt, (void **)&c->rc_pool, &c->rc_pool_cap, c->rc_pool_n + n + 1, sizeof *c->rc_pool))
        return ZO_ERR_NOMEM;
    size_t i = rc_slot(c, m, step);
    c->rc[i].m = m;
    c->rc[i].step = step;
    c->rc[i].n = n;
    c->rc[i].start = c->rc_pool_n;
    memcpy(&c->rc_pool[c->rc_pool_n], ids, n * sizeof *ids);
    c->rc_pool_n += n;
    c->rc_n++;
    return ZO_OK;
}

void zo__coord_invalidate(zo_runtime *rt, zo_coord *c, const char *why) {
    if (c->mode == ZO_TRACE_INVALID) return;
    if (c->mode == ZO_TRACE_RECORD && c->n_order == 0) return; /* nothing recorded yet */
    c->mode = ZO_TRACE_INVALID;
    clear_structures(rt, c);
    rt->st.trace_invalidations++;
    zo__emit(rt, ZO_EV_TRACE_INVALIDATED, ZO_NO_MODULE, ZO_NO_PARAM, 0, 0, 0, 0, why);
}

zo_status zo__coord_reserve_record(zo_runtime *rt, zo_coord *c) {
    if (c->mode != ZO_TRACE_RECORD) return ZO_OK;
    size_t cap = c->cap_order;
    zo_status s = zo__reserve_sz(rt, (void **)&c->order, &cap, c->n_order + 1, sizeof *c->order);
    if (s) return s;
    size_t cap2 = c->cap_order;
    s = zo__reserve_sz(rt, (void **)&c->order_step, &cap2, c->n_order + 1, sizeof *c->order_step);
    if (s) return s; /* order keeps its larger capacity; harmless */
    c->cap_order = cap < cap2 ? cap : cap2;
    return ZO_OK;
}

/* trace_prologue + record_module.  Capacity reserved beforehand.  Under
 * the DeepSpeed-shaped policies an invalidation also runs
 * _clean_inflight_param_registry (_invalidate_trace, DeepSpeed >= 0.15.3).
 * DeepSpeed invalidates before the module's own fetch; here the module's
 * own all-gather was already issued (so that a failed gather changes
 * nothing), so its parameters are left to the fetch's wait: DeepSpeed
 * releases and gathers them again, with the same end state (AVAILABLE,
 * active for m). */
ZO_HOT_INLINE void coord_prologue_record(zo_runtime *rt, zo_coord *c, zo_module_id m) {
    if (c->mode == ZO_TRACE_COMPLETE) {
        if (c->n_order <= c->step_id)
            zo__coord_invalidate(rt, c, "trace has fewer modules than this step fetched");
        else if (c->order[c->step_id] != m)
            zo__coord_invalidate(rt, c, "module differs from the recorded order");
        if (c->mode == ZO_TRACE_INVALID && ZO_IS_DS(rt)) (void)ds_clean_registry(rt, m);
    }
    if (c->mode == ZO_TRACE_RECORD && c->n_order < c->cap_order) {
        c->order[c->n_order] = m;
        c->order_step[c->n_order] = c->step_id;
        c->n_order++;
    }
}

/* __all_gather_params_: __n_available_params += the numel it gathers, and
 * the parameters enter the in-flight registry (the DeepSpeed-shaped
 * policies: per-call reads neither) */
static inline void ds_count_gather(zo_runtime *rt, const zo_param_id *ids, size_t n) {
    if (!ZO_IS_DS(rt)) return;
    for (size_t i = 0; i < n; i++)
        if (rt->pars[ids[i]].status == ZO_PARAM_NOT_AVAILABLE) {
            rt->ds_n_available += (int64_t)rt->pars[ids[i]].numel;
            zo__par_set_ds_reg(rt, ids[i], 1);
        }
}

/* _clean_inflight_param_registry: every registry entry (in flight, or
 * AVAILABLE after another entry of its coalesced gather was waited) is
 * waited and released if no module holds it, ds_persist included; m's own
 * parameters excepted (ZO_NO_MODULE: none) */
static zo_status ds_clean_registry(zo_runtime *rt, zo_module_id m) {
    zo_status first = ZO_OK;
    const zo_mod *md = m == ZO_NO_MODULE ? NULL : &rt->mods[m];
    uint32_t n = zo__live_pars_sorted(rt);
    for (uint32_t t = 0; t < n; t++) {
        zo_param_id p = rt->live_sorted[t];
        zo_par *pr = &rt->pars[p];
        if (!pr->ds_reg && pr->status != ZO_PARAM_INFLIGHT) continue;
        int own = 0;
        for (uint32_t i = 0; md && i < md->n_fetch && !own; i++) own = md->fetch[i] == p;
        if (own) continue;
        zo__par_set_ds_reg(rt, p, 0);
        zo_status s = zo__wait_param(rt, p);
        if (!s) s = zo__release_param(rt, p, ZO_REL_PERSIST);
        if (s && !first) first = s;
    }
    return first;
}

/* first position j >= s where p occurs in the module order, or SIZE_MAX */
static size_t next_pos(const zo_coord *c, zo_param_id p, size_t s) {
    if (!c->pos_start || p >= c->n_pos_params) return SIZE_MAX;
    if (c->pos2) {
        uint32_t a = c->pos[2 * (size_t)p], b = c->pos[2 * (size_t)p + 1];
        if (a != ZO_NONE32 && a >= s) return a;
        if (b != ZO_NONE32 && b >= s) return b;
        return SIZE_MAX;
    }
    uint32_t lo = c->pos_start[p], hi = c->pos_start[p + 1];
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (c->pos[mid] < s)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == c->pos_start[p + 1]) return SIZE_MAX;
    return c->pos[lo];
}

/* the first two rules of __params_to_release with a complete trace: not
 * persistent, and not popped by a prefetch for a later step */
static int may_release_now(const zo_runtime *rt, const zo_coord *c, zo_param_id p) {
    if (rt->pars[p].persistent) return 0;
    return !(p < c->n_most_recent && (uint64_t)c->most_recent[p] > (uint64_t)c->mr_base + c->step_id);
}

/* __params_to_release: 1 if p may be released when module m is released at
 * the coordinator's current step id. */
ZO_HOT_INLINE int may_release(zo_runtime *rt, zo_coord *c, zo_param_id p) {
    /* DeepSpeed honours ds_persist only in __params_to_release, i.e. with a
     * complete trace; without one release_sub_module releases every
     * parameter of the module (the DeepSpeed-shaped policies do the same;
     * per-call keeps persistent parameters gathered) */
    if (c->mode != ZO_TRACE_COMPLETE && ZO_IS_DS(rt)) return 1;
    if (rt->pars[p].persistent) return 0;
    if (c->mode != ZO_TRACE_COMPLETE) return 1;
    if (!may_release_now(rt, c, p)) return 0;
    if (rt->cfg.max_reuse_distance == 0) return 1; /* any distance traversed is >= 0 */
    uint64_t s = c->step_id;
    if (s > c->n_order) return 1;
    size_t j = next_pos(c, p, (size_t)s);
    if (j == SIZE_MAX) return 1;
    if (c->lim) return j >= c->lim[s]; /* prefix[j] - prefix[s] >= max_reuse_distance */
    uint64_t traversed = c->prefix[j] - c->prefix[s];
    return traversed >= rt->cfg.max_reuse_distance;
}

/* p in iter_params(a, recurse=True): owned in a's subtree, or one of a's
 * external parameters */
static int in_rec_params(const zo_runtime *rt, zo_module_id a, zo_param_id p) {
    for (zo_module_id x = rt->pcold[p].owner; x != ZO_NO_MODULE; x = rt->mcold[x].parent)
        if (x == a) return 1;
    const zo_mod_cold *md = &rt->mcold[a];
    for (uint32_t i = 0; i < md->n_ext; i++)
        if (md->ext[i] == p) return 1;
    return 0;
}

/* __params_to_release for a z3 leaf: DeepSpeed walks the trace window with
 * iter_params(module, recurse=z3_leaf_module(submodule_to_release)), so
 * each later module counts (and keeps) every parameter of its subtree */
static int may_release_leaf(zo_runtime *rt, zo_coord *c, zo_param_id p) {
    if (!may_release_now(rt, c, p)) return 0;
    uint64_t s = c->step_id;
    uint64_t traversed = 0;
    for (size_t j = s; j < c->n_order; j++) {
        if (traversed >= rt->cfg.max_reuse_distance) return 1;
        zo_module_id a = c->order[j];
        if (in_rec_params(rt, a, p)) return 0;
        traversed += rt->mcold[a].rec_numel;
    }
    return 1;
}

zo_status zo__coord_release(zo_runtime *rt, zo_coord *c, zo_module_id m, int discard) {
    zo_mod *md = &rt->mods[m];
    zo_status first = ZO_OK;
    if (ZO_IS_DS(rt) && c->mode == ZO_TRACE_COMPLETE) {
        /* __params_to_release(m, step_id) through its lru_cache: a
         * decision made at an earlier step with this step id (an earlier
         * trace, other prefetch state) is reused as it was */
        const zo_relcache_ent *e = rc_find(c, m, c->step_id);
        if (!e) {
            uint32_t n = 0;
            int leaf = (rt->mcold[m].flags & ZO_MODULE_Z3_LEAF) && !md->in_leaf;
            for (uint32_t i = 0; i < md->n_fetch; i++)
                if (leaf ? may_release_leaf(rt, c, md->fetch[i]) : may_release(rt, c, md->fetch[i]))
                    rt->scratch[n++] = md->fetch[i];
            if (rc_store(rt, c, m, c->step_id, rt->scratch, n) == ZO_OK) e = rc_find(c, m, c->step_id);
        }
        if (e) {
            for (uint32_t i = 0; i < md->n_fetch; i++) {
                zo_param_id p = md->fetch[i];
                if (discard) zo__act_discard(rt, p, m);
                int rel = 0;
                for (uint32_t k = 0; k < e->n && !rel; k++) rel = c->rc_pool[e->start + k] == p;
                if (rel) {
                    zo_status s = zo__release_param(rt, p, ZO_REL_PERSIST);
                    if (s && !first) first = s;
                }
            }
            return first;
        }
    }
    for (uint32_t i = 0; i < md->n_fetch; i++) {
        zo_param_id p = md->fetch[i];
        if (discard) zo__act_discard(rt, p, m);
        if (may_release(rt, c, p)) {
            zo_status s = zo__release_param(rt, p, ZO_DS_REL(rt));
            if (s && !first) first = s;
        }
    }
    return first;
}

/* With a complete trace the next fetches are known: ask for the lines
 * they will read while this hook's caller runs the module (a model larger
 * than the cache misses on each of them otherwise): the module record two
 * fetches ahead and its call-list head, the call record the next fetch's
 * hooks use (its output gradient's, in backward), and the hot records of
 * the parameter the prefetch queue pops next, the runtime's and, through
 * the backend's prefetch op, the backend's (a gather reads both; at 1e5
 * modules the backend's record was a miss on every gather, about a third
 * of the hook time). */
static inline void prefetch_ahead(zo_runtime *rt, const zo_coord *c) {
    size_t s = (size_t)c->step_id;
    if (s + 1 < c->n_order) {
        zo_module_id a = c->order[s + 1];
        ZO_PREFETCH(&rt->mods[a]);
        ZO_PREFETCH(&rt->mod_calls[a]);
    }
    if (s < c->n_order) {
        uint32_t ci = rt->mod_calls[c->order[s]];
        if (ci != ZO_NONE32) ZO_PREFETCH(&rt->calls[ci]);
    }
    if (c->qpos + 1 < c->n_porder) {
        zo_param_id q = c->porder[c->qpos + 1].p;
        ZO_PREFETCH(&rt->pars[q]);
        ZO_PREFETCH(&rt->pgathers[q]);
        if (rt->be_prefetch) rt->be_prefetch(rt->backend->ctx, q);
    }
}

/* prefetch groups up to this size find duplicates by comparing ids */
#define PF_SCAN 8u

zo_status zo__coord_fetch(zo_runtime *rt, zo_coord *c, zo_module_id m, int *activated) {
    *activated = 0;
    zo_status s = zo__rebuild(rt);
    if (s) return s;
    zo_mod *md = &rt->mods[m];
    if (md->ga_holder != ZO_NO_MODULE) {
        /* held by a gather-always ancestor (ZO_MODULE_GATHER_ALWAYS): no
         * fetch, no trace entry, no prefetch, no step; the call still counts
         * as activated (its hooks keep their counters and windows).  The
         * holder's fetch gathered these parameters; if it is not active they
         * are gathered on access. */
        *activated = 1;
        return ZO_OK;
    }
    s = zo__coord_reserve_record(rt, c);
    if (s) return zo__fail(rt, s, "cannot grow the module trace");
    s = zo__reserve_act(rt, m);
    if (s) return zo__fail(rt, s, "cannot grow ds_active_sub_modules");
    /* 1. kick off the all-gather of the immediately required parameters */
    int64_t avail_before = rt->ds_n_available;
    ds_count_gather(rt, md->fetch, md->n_fetch);
    s = zo__gather(rt, md->fetch, md->n_fetch, 0);
    if (s) {
        rt->ds_n_available = avail_before;
        return s;
    }
    coord_prologue_record(rt, c, m);
    *activated = 1;
    /* 2. wait for them and mark the module active */
    zo_status werr = ZO_OK;
    for (uint32_t i = 0; i < md->n_fetch; i++) {
        zo_param_id p = md->fetch[i];
        (void)zo__act_add(rt, p, m); /* capacity reserved */
        /* read before the flag's store (zo__par_set_ds_reg says why) */
        const int inflight = rt->pars[p].status == ZO_PARAM_INFLIGHT;
        zo__par_set_ds_reg(rt, p, 0); /* __inflight_param_registry.pop(param) (DeepSpeed 0.19.8, 0.15.4) */
        if (inflight) {
            zo_status w = zo__wait_param(rt, p);
            if (w && !werr) werr = w;
        }
    }
    if (werr) return werr;
    /* 3. prefetch per the trace */
    if (c->mode == ZO_TRACE_COMPLETE) {
        const uint32_t mrb = c->mr_base; /* a step is < mr_span: mrb + step does not wrap */
        uint32_t stamp = zo__stamp(rt);
        size_t k = 0;
        for (uint32_t i = 0; i < md->n_fetch; i++) {
            zo_param_id p = md->fetch[i];
            if ((uint64_t)c->most_recent[p] < (uint64_t)mrb + c->step_id) {
                rt->mark1[p] = stamp;
                k++;
            }
        }
        size_t nd = 0, mismatch = 0;
        while (c->qpos < c->n_porder && nd < k) {
            zo_ptrace pt = c->porder[c->qpos++];
            c->most_recent[pt.p] = mrb + pt.step;
            if (rt->mark2[pt.p] != stamp) {
                rt->mark2[pt.p] = stamp;
                nd++;
                if (rt->mark1[pt.p] != stamp) mismatch++;
            }
        }
        if (nd != k || mismatch)
            return zo__fail(rt, ZO_ERR_TRACE,
                            "tracing error at step %llu: module %u expected the next %zu parameters "
                            "in the parameter fetch queue to be its own, got %zu (%zu foreign)",
                            (unsigned long long)c->step_id, m, k, nd, mismatch);
        if (rt->cfg.prefetch_bucket_size > 0) {
            uint64_t live = rt->st.live_numel;
            if (ZO_IS_DS(rt)) {
                /* DeepSpeed's budget: max_live_parameters - __n_available_params,
                 * a count reset to 0 at reset_step while parameters stay
                 * gathered (so it can be below the live numel, even negative) */
                live = rt->ds_n_available > 0 ? (uint64_t)rt->ds_n_available : 0;
                if (rt->ds_n_available < 0 && rt->cfg.max_live_parameters != UINT64_MAX)
                    live = 0; /* budget capped by the bucket size below anyway */
            }
            uint64_t budget = rt->cfg.max_live_parameters > live ? rt->cfg.max_live_parameters - live : 0;
            if (ZO_IS_DS(rt) && rt->ds_n_available < 0) {
                uint64_t extra = 0u - (uint64_t)rt->ds_n_available; /* -n, 2^63 at INT64_MIN */
                budget = budget > UINT64_MAX - extra ? UINT64_MAX : budget + extra;
            }
            if (budget > rt->cfg.prefetch_bucket_size) budget = rt->cfg.prefetch_bucket_size;
            uint64_t numel_pf = 0;
            uint32_t n_pf = 0;
            uint32_t stamp2 = zo__stamp(rt);
            while (c->qpos < c->n_porder && numel_pf < budget) {
                zo_ptrace pt = c->porder[c->qpos++];
                if (c->most_recent[pt.p] < mrb + pt.step) c->most_recent[pt.p] = mrb + pt.step;
                /* DeepSpeed prefetches (and counts against the bucket) only
                 * parameters still NOT_AVAILABLE; gathered or in-flight ones
                 * are popped and marked as fetched for their later step, so
                 * the loop can drain the queue past them */
                if (ZO_IS_DS(rt) && rt->pars[pt.p].status != ZO_PARAM_NOT_AVAILABLE) continue;
                /* a parameter already taken: the first PF_SCAN are compared
                 * (usually one or two, no mark line read), later ones marked */
                int dup = 0;
                if (n_pf < PF_SCAN)
                    for (uint32_t t = 0; t < n_pf && !dup; t++) dup = rt->scratch[t] == pt.p;
                else
                    dup = rt->mark1[pt.p] == stamp2;
                if (!dup) {
                    rt->scratch[n_pf++] = pt.p;
                    if (n_pf == PF_SCAN)
                        for (uint32_t t = 0; t < n_pf; t++) rt->mark1[rt->scratch[t]] = stamp2;
                    else if (n_pf > PF_SCAN)
                        rt->mark1[pt.p] = stamp2;
                    numel_pf += rt->pars[pt.p].numel;
                }
            }
            if (n_pf) {
                ds_count_gather(rt, rt->scratch, n_pf);
                zo_status ps = zo__gather(rt, rt->scratch, n_pf, 1);
                /* prefetch is best effort: an allocation or backend error was
                 * reported as ZO_EV_ERROR and the parameters are fetched when
                 * needed.  A collective mismatch is not: the ranks diverged and
                 * the job cannot continue, so it is the hook's error (the
                 * module's own fetch completed and counts as this step's). */
                if (ps == ZO_ERR_COLLECTIVE_MISMATCH) {
                    c->step_id++;
                    return ps;
                }
            }
        }
    }
    c->step_id++;
    if (c->mode == ZO_TRACE_COMPLETE) prefetch_ahead(rt, c);
    return ZO_OK;
}

/* (rank, parameter) pairs, sorted by rank */
typedef struct {
    uint32_t rank;
    zo_param_id p;
} ds_key;

static int ds_key_cmp(const void *a, const void *b) {
    uint32_t x = ((const ds_key *)a)->rank, y = ((const ds_key *)b)->rank;
    return (x > y) - (x < y);
}

/* record_parameters appends a module's parameters sorted by ds_id, and
 * DeepSpeed numbers parameters in module.parameters() order at conversion:
 * modules in named_modules() order (= registration order, module ids),
 * each module's own parameters in registration order.  rank[p] is that
 * position: parameters sorted by (owner, id). */
static void ds_param_rank(const zo_runtime *rt, uint32_t *rank, uint32_t *cnt) {
    memset(cnt, 0, ((size_t)rt->n_mods + 1) * sizeof *cnt);
    for (uint32_t p = 0; p < rt->n_pars; p++) cnt[rt->pcold[p].owner + 1]++;
    for (uint32_t m = 0; m < rt->n_mods; m++) cnt[m + 1] += cnt[m];
    for (uint32_t p = 0; p < rt->n_pars; p++) rank[p] = cnt[rt->pcold[p].owner]++;
}

/* The reuse-distance window's view of module a (pos, prefix): DeepSpeed's
 * __params_to_release walks iter_params(module, recurse=False) of the later
 * modules (own and external parameters: a z3 leaf in the window counts
 * without its subtree; releasing a z3 leaf itself is may_release_leaf);
 * zoffload's own policy uses the fetch list. */
static uint32_t win_count(const zo_runtime *rt, zo_module_id m) {
    const zo_mod_cold *mc = &rt->mcold[m];
    return ZO_IS_DS(rt) ? mc->n_own + mc->n_ext : rt->mods[m].n_fetch;
}

static zo_param_id win_param(const zo_runtime *rt, zo_module_id m, uint32_t i) {
    if (!ZO_IS_DS(rt)) return rt->mods[m].fetch[i];
    const zo_mod_cold *mc = &rt->mcold[m];
    return i < mc->n_own ? mc->own[i] : mc->ext[i - mc->n_own];
}

static zo_status complete_trace(zo_runtime *rt, zo_coord *c) {
    zo_status s = zo__rebuild(rt);
    if (s) return s;
    size_t total = 0, wtotal = 0;
    for (size_t j = 0; j < c->n_order; j++) {
        total += rt->mods[c->order[j]].n_fetch;
        wtotal += win_count(rt, c->order[j]);
    }
    if (total > UINT32_MAX - 1 || wtotal > UINT32_MAX - 1 || c->n_order > INT32_MAX) return ZO_ERR_LIMIT;
    zo_ptrace *porder = zo__calloc(rt, total ? total : 1, sizeof *porder);
    uint64_t *prefix = zo__calloc(rt, c->n_order + 1, sizeof *prefix);
    uint32_t *pos_start = zo__calloc(rt, (size_t)rt->n_pars + 1, sizeof *pos_start);
    /* room for two positions per parameter (pos2, below) */
    size_t npos = wtotal > 2 * (size_t)rt->n_pars ? wtotal : 2 * (size_t)rt->n_pars;
    uint32_t *pos = zo__calloc(rt, npos ? npos : 1, sizeof *pos);
    uint32_t *most_recent = zo__calloc(rt, rt->n_pars ? rt->n_pars : 1, sizeof *most_recent);
    /* DeepSpeed's parameter trace orders each module's parameters by ds_id
     * (ds_param_rank); zoffload's own policy keeps id order */
    uint32_t max_fetch = 0;
    for (size_t j = 0; j < c->n_order; j++)
        if (rt->mods[c->order[j]].n_fetch > max_fetch) max_fetch = rt->mods[c->order[j]].n_fetch;
    uint32_t *rank = NULL, *cnt = NULL;
    ds_key *keys = NULL;
    int ds = ZO_IS_DS(rt);
    if (ds) {
        rank = zo__calloc(rt, rt->n_pars ? rt->n_pars : 1, sizeof *rank);
        cnt = zo__calloc(rt, (size_t)rt->n_mods + 1, sizeof *cnt);
        keys = zo__calloc(rt, max_fetch ? max_fetch : 1, sizeof *keys);
    }
    if (!porder || !prefix || !pos_start || !pos || !most_recent || (ds && (!rank || !cnt || !keys))) {
        zo__free(rt, rank);
        zo__free(rt, cnt);
        zo__free(rt, keys);
        zo__free(rt, porder);
        zo__free(rt, prefix);
        zo__free(rt, pos_start);
        zo__free(rt, pos);
        zo__free(rt, most_recent);
        return ZO_ERR_NOMEM;
    }
    if (ds) ds_param_rank(rt, rank, cnt);
    size_t k = 0;
    for (size_t j = 0; j < c->n_order; j++) {
        const zo_mod *md = &rt->mods[c->order[j]];
        uint64_t wn = 0;
        for (uint32_t i = 0, n = win_count(rt, c->order[j]); i < n; i++) {
            zo_param_id p = win_param(rt, c->order[j], i);
            wn += rt->pars[p].numel;
            pos_start[p + 1]++;
        }
        prefix[j + 1] = prefix[j] + wn;
        if (keys) {
            for (uint32_t i = 0; i < md->n_fetch; i++) {
                keys[i].rank = rank[md->fetch[i]];
                keys[i].p = md->fetch[i];
            }
            qsort(keys, md->n_fetch, sizeof *keys, ds_key_cmp);
        }
        for (uint32_t i = 0; i < md->n_fetch; i++) {
            zo_param_id p = keys ? keys[i].p : md->fetch[i];
            porder[k].p = p;
            porder[k].step = (uint32_t)c->order_step[j];
            k++;
        }
    }
    zo__free(rt, rank);
    zo__free(rt, cnt);
    zo__free(rt, keys);
    for (uint32_t p = 0; p < rt->n_pars; p++) pos_start[p + 1] += pos_start[p];
    /* pos_start[p + 1] is the end of p's positions: fill them backwards in
     * decreasing j (so each list ends up increasing), which leaves
     * pos_start[p + 1] at p's start; shift those down by one */
    for (size_t j = c->n_order; j-- > 0;) {
        for (uint32_t i = win_count(rt, c->order[j]); i-- > 0;)
            pos[--pos_start[win_param(rt, c->order[j], i) + 1]] = (uint32_t)j;
    }
    memmove(pos_start, pos_start + 1, (size_t)rt->n_pars * sizeof *pos_start);
    pos_start[rt->n_pars] = (uint32_t)wtotal;
    /* pos2: when no parameter occurs more than twice (a forward and a
     * backward use, the common case), p's positions move to pos[2p],
     * pos[2p + 1] (ZO_NONE32: none), so a lookup reads neither pos_start
     * nor a second line.  In place, from the last parameter down: p's
     * list starts at pos_start[p] <= 2p, after every list still to move. */
    int pos2 = 1;
    for (uint32_t p = 0; p < rt->n_pars && pos2; p++) pos2 = pos_start[p + 1] - pos_start[p] <= 2;
    if (pos2) {
        for (uint32_t p = rt->n_pars; p-- > 0;) {
            uint32_t lo = pos_start[p], n = pos_start[p + 1] - lo;
            uint32_t a = n > 0 ? pos[lo] : ZO_NONE32, b = n > 1 ? pos[lo + 1] : ZO_NONE32;
            pos[2 * (size_t)p] = a;
            pos[2 * (size_t)p + 1] = b;
        }
    }
    /* lim[s]: the first position k >= s whose window has traversed
     * max_reuse_distance from s (prefix[k] - prefix[s] >= it), n_order if
     * none.  Built for a non-zero distance and sums that did not wrap
     * (prefix nondecreasing, so comparing positions gives the
     * subtraction's answer) in place of prefix, which nothing else reads:
     * lim[s] lands on bytes of prefix[s / 2], already read for every
     * s' <= s; otherwise may_release subtracts the sums. */
    uint32_t *lim = NULL;
    uint64_t reuse = rt->cfg.max_reuse_distance;
    int mono = 1;
    for (size_t j = 0; j < c->n_order && mono; j++) mono = prefix[j + 1] >= prefix[j];
    if (reuse != 0 && mono) {
        lim = (uint32_t *)(void *)prefix;
        size_t kk = 0;
        for (size_t s = 0; s < c->n_order; s++) {
            if (kk < s) kk = s;
            uint64_t base = prefix[s];
            while (kk < c->n_order && prefix[kk] - base < reuse) kk++;
            lim[s] = (uint32_t)kk;
        }
        lim[c->n_order] = (uint32_t)c->n_order;
        prefix = NULL;
    }
    c->porder = porder;
    c->n_porder = total;
    c->prefix = prefix;
    c->pos_start = pos_start;
    c->pos = pos;
    c->pos2 = pos2;
    c->lim = lim;
    c->n_pos_params = rt->n_pars;
    c->most_recent = most_recent;
    c->n_most_recent = rt->n_pars;
    uint32_t max_step = 0;
    for (size_t t = 0; t < total; t++)
        if (porder[t].step > max_step) max_step = porder[t].step;
    c->mr_base = 1; /* the zeroed array: none */
    c->mr_span = max_step + 1;
    c->mode = ZO_TRACE_COMPLETE;
    zo__emit(rt, ZO_EV_TRACE_COMPLETE, ZO_NO_MODULE, ZO_NO_PARAM, 0, 0, (int64_t)c->n_order, 1, "trace recorded");
    return ZO_OK;
}

zo_status zo__coord_reset_step(zo_runtime *rt, zo_coord *c) {
    /* the only step that can fail (allocation) runs first, so a failed
     * reset_step has no effect */
    if (c->mode == ZO_TRACE_RECORD && c->n_order > 0) {
        zo_status s = complete_trace(rt, c);
        if (s) return zo__fail(rt, s, "cannot build the parameter trace");
    } else if (c->mode == ZO_TRACE_INVALID) {
        c->mode = ZO_TRACE_RECORD;
    }
    /* _clean_inflight_param_registry: wait every in-flight gather, release */
    zo_status first = ZO_OK;
    if (ZO_IS_DS(rt)) first = ds_clean_registry(rt, ZO_NO_MODULE);
    uint32_t n = zo__live_pars_sorted(rt);
    for (uint32_t t = 0; t < n; t++) {
        zo_param_id p = rt->live_sorted[t];
        if (rt->pars[p].status == ZO_PARAM_INFLIGHT) {
            zo_status s = zo__wait_param(rt, p);
            if (s) {
                if (!first) first = s;
                continue;
            }
            s = zo__release_param(rt, p, ZO_DS_REL(rt));
            if (s && !first) first = s;
        }
    }
    c->qpos = 0;
    if (c->n_most_recent) {
        if ((uint64_t)c->mr_base + 2 * (uint64_t)c->mr_span > UINT32_MAX) {
            memset(c->most_recent, 0, c->n_most_recent * sizeof *c->most_recent);
            c->mr_base = 1;
        } else {
            c->mr_base += c->mr_span;
        }
    }
    c->step_id = 0;
    rt->ds_n_available = 0; /* __n_available_params = 0 */
    return first;
}
