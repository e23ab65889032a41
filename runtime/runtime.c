/*
 * runtime.c - registration, parameter state machine and the hook protocol
 * of libzoffload (DeepSpeed stage-3 parameter_offload.py in C).
 *
 * See docs/protocol.md for the states, transitions and counter policies.
 */
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>

#include "policy.h"

/* ------------------------------------------------------------------ */
/* handles                                                              */
/* ------------------------------------------------------------------ */


/* graph slot of a live graph handle of this runtime, or ZO_NONE32 */
static uint32_t graph_slot(const zo_runtime *rt, zo_graph g) {
    if ((g >> 58) != rt->tag || ((g >> 52) & 0x3Fu) != 0) return ZO_NONE32;
    uint64_t s = g & 0xFFFFFu;
    if (s >= rt->n_graphs) return ZO_NONE32;
    uint32_t slot = (uint32_t)s;
    if (!rt->graphs[slot].in_use || rt->graphs[slot].gen != (uint32_t)((g >> 20) & 0xFFFFFFFFu)) return ZO_NONE32;
    return slot;
}

/* the counter policies, by zo_grads_policy (policy.h) */
#define ZO__POLICY_AT(name, value, text) [value] = &zo__policy_##name,
static const zo_policy *const k_policies[ZO_GRADS_POLICY_COUNT] = {ZO_GRADS_POLICY_MAP(ZO__POLICY_AT)};
#undef ZO__POLICY_AT

/* the handle tag of the next runtime: 1..63 in turn, process-wide */
static uint8_t next_tag(void) {
    static _Atomic unsigned counter;
    return (uint8_t)(atomic_fetch_add(&counter, 1u) % 63u + 1u);
}

/* ------------------------------------------------------------------ */
/* lifetime                                                             */
/* ------------------------------------------------------------------ */

const char *zo_last_error(const zo_runtime *rt) {
    if (!rt) return zo__tls_error();
    return rt->err;
}

zo_status zo_runtime_create(const zo_config *cfg, zo_runtime **out) {
    if (!cfg || !out) return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_runtime_create: %s is NULL", cfg ? "out" : "cfg");
    *out = NULL;
    /* version 1 structs (no verify_collectives) and version 2 structs (no
     * ds_profile) are still accepted; the missing fields get their defaults
     * (0: verify_collectives off, ZO_DS_0_19) */
    zo_config c2;
    size_t old_size = cfg->version == 1u ? ZO_CONFIG_V1_SIZE : cfg->version == 2u ? ZO_CONFIG_V2_SIZE : 0;
    if (old_size && cfg->size == old_size) {
        memset(&c2, 0, sizeof c2);
        memcpy(&c2, cfg, old_size);
        c2.size = sizeof c2;
        c2.version = ZO_CONFIG_VERSION;
        c2.ds_profile = ZO_DS_0_19;
        cfg = &c2;
    } else if (cfg->size != sizeof(zo_config) || cfg->version != ZO_CONFIG_VERSION) {
        return zo__fail_tls(ZO_ERR_VERSION,
                            "zo_runtime_create: config size %zu version %u not understood (this library: size %zu "
                            "version %u; start from ZO_CONFIG_INIT)",
                            cfg->size, cfg->version, sizeof(zo_config), ZO_CONFIG_VERSION);
    }
    if (cfg->verify_collectives != 0 && cfg->verify_collectives != 1)
        return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_runtime_create: verify_collectives %d is not 0 or 1",
                            cfg->verify_collectives);
    if (cfg->world_size < 1 || cfg->world_size > ZO_MAX_WORLD_SIZE)
        return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_runtime_create: world_size %d not in 1..%d", cfg->world_size,
                            ZO_MAX_WORLD_SIZE);
    if (cfg->rank < 0 || cfg->rank >= cfg->world_size)
        return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_runtime_create: rank %d not in 0..%d (world_size %d)", cfg->rank,
                            cfg->world_size - 1, cfg->world_size);
    if ((unsigned)cfg->grads_policy >= ZO_GRADS_POLICY_COUNT)
        return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_runtime_create: unknown grads_policy %d", (int)cfg->grads_policy);
    if ((cfg->allocator.alloc == NULL) != (cfg->allocator.free == NULL))
        return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_runtime_create: allocator has only one of alloc/free");
    if ((unsigned)cfg->ds_profile >= ZO_DS_PROFILE_COUNT)
        return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_runtime_create: ds_profile %d is not a zo_ds_profile (0..%d)",
                            (int)cfg->ds_profile, ZO_DS_PROFILE_COUNT - 1);
    if (cfg->backend) {
        const zo_backend *b = cfg->backend;
        if (!b->ops || b->ops->version < 1u || b->ops->version > ZO_BACKEND_OPS_VERSION || !b->ops->param_add ||
            !b->ops->full_alloc || !b->ops->full_free || !b->ops->all_gather_start || !b->ops->wait || !b->ops->query ||
            !b->ops->work_free || !b->ops->world_size || !b->ops->rank)
            return zo__fail_tls(ZO_ERR_INVALID_ARG,
                                "zo_runtime_create: backend ops missing or of unknown version (need version 1..%u "
                                "with every mandatory op)",
                                (unsigned)ZO_BACKEND_OPS_VERSION);
        if (b->ops->world_size(b->ctx) != cfg->world_size || b->ops->rank(b->ctx) != cfg->rank)
            return zo__fail_tls(ZO_ERR_BACKEND,
                                "zo_runtime_create: backend is rank %d of world size %d, config says rank %d of %d",
                                b->ops->rank(b->ctx), b->ops->world_size(b->ctx), cfg->rank, cfg->world_size);
        /* verify_collectives needs the version 2 exchange op */
        if (cfg->verify_collectives && (b->ops->version < 2u || !b->ops->exchange))
            return zo__fail_tls(ZO_ERR_UNSUPPORTED,
                                "zo_runtime_create: verify_collectives needs a backend with the exchange op");
    }
    zo_runtime tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.al = cfg->allocator;
    zo_runtime *rt = zo__calloc(&tmp, 1, sizeof *rt);
    if (!rt) return zo__fail_tls(ZO_ERR_NOMEM, "zo_runtime_create: the runtime struct");
    rt->cfg = *cfg;
    rt->pol = k_policies[cfg->grads_policy];
    rt->al = cfg->allocator;
    rt->graphs_free = ZO_NONE32;
    rt->tag = next_tag();
    zo__coord_init(&rt->coord[0]);
    zo__coord_init(&rt->coord[1]);
    if (cfg->backend) {
        rt->backend = cfg->backend;
    } else {
        zo_host_config hc = ZO_HOST_CONFIG_INIT;
        hc.world_size = cfg->world_size;
        hc.rank = cfg->rank;
        hc.allocator = cfg->allocator;
        zo_status s = zo_backend_host_create(&hc, &rt->backend);
        if (s) {
            zo__free(rt, rt);
            char why[400];
            snprintf(why, sizeof why, "%s", zo__tls_error());
            return zo__fail_tls(s, "zo_runtime_create: host backend: %s", why);
        }
        rt->own_backend = 1;
        if (cfg->verify_collectives && (rt->backend->ops->version < 2u || !rt->backend->ops->exchange)) {
            zo_backend_destroy(rt->backend);
            zo__free(rt, rt);
            return zo__fail_tls(ZO_ERR_UNSUPPORTED,
                                "zo_runtime_create: verify_collectives needs a backend with the exchange op");
        }
    }
    /* the backend's prefetch hint (a version 3 op), looked up once */
    if (rt->backend->ops->version >= 3u) rt->be_prefetch = rt->backend->ops->prefetch;
    if (cfg->verify_collectives) {
        /* the one receive buffer of every fingerprint exchange: nothing is
         * allocated per collective */
        rt->fp_recv = zo__calloc(rt, (size_t)cfg->world_size, ZO_FP_BYTES);
        if (!rt->fp_recv) {
            if (rt->own_backend) zo_backend_destroy(rt->backend);
            zo__free(rt, rt);
            return zo__fail_tls(ZO_ERR_NOMEM, "zo_runtime_create: fingerprint buffer");
        }
    }
    *out = rt;
    return ZO_OK;
}

void zo__in_state_free(zo_runtime *rt, zo_call_rec *c) {
    if (c->n_in > ZO_IN_STATE_INLINE) zo__free(rt, c->in_st.heap);
}

static void free_call_storage(zo_runtime *rt) {
    /* (a record free_graph freed without reading it still has its input
     * state: n_in is kept until the record is taken again) */
    for (uint32_t i = 0; i < rt->n_calls; i++) zo__in_state_free(rt, &rt->calls[i]);
    zo__free(rt, rt->calls_raw);
    zo__free(rt, rt->free_calls);
    for (uint32_t g = 0; g < rt->n_graphs; g++) zo__free(rt, rt->graphs[g].calls);
}

zo_status zo_runtime_destroy(zo_runtime *rt) {
    if (!rt) return ZO_OK;
    for (uint32_t w = 0; w < rt->n_works; w++) {
        if (!rt->works[w].n_params) continue;
        (void)zo_backend_wait(rt->backend, rt->works[w].work);
        zo_backend_work_free(rt->backend, rt->works[w].work);
    }
    for (uint32_t w = 0; w < rt->cap_works; w++) zo__free(rt, rt->works[w].params); /* zeroed past use */
    zo__free(rt, rt->gitems);
    zo__free(rt, rt->works);
    zo__free(rt, rt->works_free);
    for (uint32_t p = 0; p < rt->n_pars; p++) {
        zo_par *pr = &rt->pars[p];
        zo_backend_full_free(rt->backend, p, pr->full);
        zo_backend_param_remove(rt->backend, p);
        zo__free(rt, rt->pcold[p].act);
        zo__free(rt, rt->pcold[p].name);
    }
    zo__free(rt, rt->pars_raw);
    zo__free(rt, rt->pcold_raw);
    zo__free(rt, rt->pgathers);
    zo__free(rt, rt->pready);
    zo__free(rt, rt->live_pars);
    zo__free(rt, rt->live_sorted);
    for (uint32_t m = 0; m < rt->n_mods; m++) {
        zo__free(rt, rt->mcold[m].own);
        zo__free(rt, rt->mcold[m].ext);
        if (rt->mds) zo__free(rt, rt->mds[m].recomp);
        zo__free(rt, rt->mcold[m].name);
    }
    zo__free(rt, rt->mods_raw);
    zo__free(rt, rt->fetch_all);
    zo__free(rt, rt->users_all);
    zo__free(rt, rt->users_start);
    zo__free(rt, rt->mcold);
    zo__free(rt, rt->mds);
    zo__free(rt, rt->mod_calls);
    zo__free(rt, rt->mod_names_raw);
    zo__free(rt, rt->fstack);
    free_call_storage(rt);
    zo__free(rt, rt->held_calls);
    zo__free(rt, rt->calls_tmp);
    zo__free(rt, rt->graphs);
    zo__free(rt, rt->ctx);
    zo__coord_free(rt, &rt->coord[0]);
    zo__coord_free(rt, &rt->coord[1]);
    zo__free(rt, rt->scratch);
    zo__free(rt, rt->mark1);
    zo__free(rt, rt->mark2);
    zo__free(rt, rt->pers_ids);
    zo__free(rt, rt->fp_recv);
    if (rt->own_backend) zo_backend_destroy(rt->backend);
    zo__free(rt, rt);
    return ZO_OK;
}

/* ------------------------------------------------------------------ */
/* registration                                                         */
/* ------------------------------------------------------------------ */

static void invalidate_traces(zo_runtime *rt) {
    zo__coord_invalidate(rt, &rt->coord[0], "module or parameter registered after tracing");
    zo__coord_invalidate(rt, &rt->coord[1], "module or parameter registered after tracing");
}

static int name_ok(const char *name) { return !name || strlen(name) <= ZO_MAX_NAME; }

/* FNV-1a step over the four bytes of v, low byte first */
static uint64_t fnv1a_u32(uint64_t h, uint32_t v) {
    for (int k = 0; k < 4; k++) {
        h ^= (v >> (8 * k)) & 0xFFu;
        h *= 1099511628211ull;
    }
    return h;
}

/* The name table's hash of (parent, name).  FNV-1a over the parent id and
 * the name, except for a name that ends in a decimal number N without a
 * leading zero ("layer17", and the children of nn.ModuleList and
 * nn.Sequential, named "0", "1", ... by torch 2.15.0 and 1.13): FNV-1a
 * over the parent, the stem before N and N / 8, with N % 8 as the low
 * three bits.  Children numbered in order then fill the eight slots of one
 * block (64 bytes) before the next block, so registering a million of them
 * touches a new line of the table once in eight names instead of at every
 * name; blocks fall at random places as any hash does.  Two names with the
 * same hash are told apart by the full comparison in mod_name_find, so
 * this only decides placement. */
static uint32_t mod_name_hash(zo_module_id parent, const char *name) {
    uint64_t h = fnv1a_u32(1469598103934665603ull, parent);
    size_t len = strlen(name), d = len;
    while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9') d--;
    /* at most 9 digits (fits 32 bits), no leading zero unless "0" itself */
    int numbered = d < len && len - d <= 9 && (name[d] != '0' || len - d == 1);
    size_t stem = numbered ? d : len;
    for (size_t q = 0; q < stem; q++) {
        h ^= (unsigned char)name[q];
        h *= 1099511628211ull;
    }
    if (!numbered) return (uint32_t)(h ^ (h >> 32));
    uint32_t n = 0;
    for (size_t q = d; q < len; q++) n = n * 10u + (uint32_t)(name[q] - '0');
    h ^= 0x100u; /* not a byte: the stem ends here */
    h *= 1099511628211ull;
    h = fnv1a_u32(h, n >> 3); /* the block */
    return (((uint32_t)(h ^ (h >> 32))) & ~7u) | (n & 7u);
}

/* the module named name under parent, or ZO_NO_MODULE (O(1) expected);
 * h is mod_name_hash(parent, name) */
static zo_module_id mod_name_find(const zo_runtime *rt, zo_module_id parent, const char *name, uint32_t h) {
    if (!rt->cap_mod_names) return ZO_NO_MODULE;
    uint32_t mask = rt->cap_mod_names - 1;
    for (uint32_t i = h & mask;; i = (i + 1) & mask) {
        const zo_name_slot *sl = &rt->mod_names[i];
        if (!sl->id1) return ZO_NO_MODULE;
        if (sl->hash != h) continue;
        const zo_mod_cold *md = &rt->mcold[sl->id1 - 1];
        if (md->parent == parent && strcmp(md->name, name) == 0) return sl->id1 - 1;
    }
}

static void mod_name_put(zo_runtime *rt, uint32_t id1, uint32_t h) {
    uint32_t mask = rt->cap_mod_names - 1;
    uint32_t i = h & mask;
    while (rt->mod_names[i].id1) i = (i + 1) & mask;
    rt->mod_names[i].id1 = id1;
    rt->mod_names[i].hash = h;
    rt->n_mod_names++;
}

/* room for one more named module (load <= 1/2); ZO_OK or ZO_ERR_NOMEM with
 * the table unchanged */
static zo_status mod_name_reserve(zo_runtime *rt) {
    if ((uint64_t)(rt->n_mod_names + 1) * 2 <= rt->cap_mod_names) return ZO_OK;
    uint32_t cap = rt->cap_mod_names ? rt->cap_mod_names * 2 : 64;
    /* line-aligned, so that a block of eight slots (mod_name_hash) is one line */
    void *raw = zo__calloc(rt, (size_t)cap * sizeof(zo_name_slot) + 63, 1);
    if (!raw) return ZO_ERR_NOMEM;
    zo_name_slot *old = rt->mod_names;
    void *old_raw = rt->mod_names_raw;
    uint32_t old_cap = rt->cap_mod_names;
    rt->mod_names_raw = raw;
    rt->mod_names = (zo_name_slot *)(((uintptr_t)raw + 63) & ~(uintptr_t)63);
    rt->cap_mod_names = cap;
    rt->n_mod_names = 0;
    for (uint32_t i = 0; i < old_cap; i++)
        if (old[i].id1) mod_name_put(rt, old[i].id1, old[i].hash);
    zo__free(rt, old_raw);
    return ZO_OK;
}

zo_status zo_module_register(zo_runtime *rt, zo_module_id parent, const char *name, unsigned flags, zo_module_id *out) {
    if (!rt) return zo__fail_tls(ZO_ERR_INVALID_ARG, "%s: rt is NULL", __func__);
    if (!out) return zo__fail(rt, ZO_ERR_INVALID_ARG, "zo_module_register: out is NULL");
    if (flags & ~(ZO_MODULE_Z3_LEAF | ZO_MODULE_GATHER_ALWAYS))
        return zo__fail(rt, ZO_ERR_INVALID_ARG, "zo_module_register: unknown flags 0x%x", flags);
    if ((flags & ZO_MODULE_Z3_LEAF) && (flags & ZO_MODULE_GATHER_ALWAYS))
        return zo__fail(rt, ZO_ERR_INVALID_ARG,
                        "zo_module_register: ZO_MODULE_GATHER_ALWAYS and ZO_MODULE_Z3_LEAF on the same module");
    if (!name_ok(name)) return zo__fail(rt, ZO_ERR_INVALID_ARG, "zo_module_register: name longer than 255");
    if (parent != ZO_NO_MODULE && parent >= rt->n_mods)
        return zo__fail(rt, ZO_ERR_BAD_HANDLE, "zo_module_register: unknown parent module %u", parent);
    if (rt->n_mods >= ZO_MAX_MODULES) return zo__fail(rt, ZO_ERR_LIMIT, "too many modules");
    uint32_t nh = name && name[0] ? mod_name_hash(parent, name) : 0;
    if (name && name[0] && mod_name_find(rt, parent, name, nh) != ZO_NO_MODULE)
        return zo__fail(rt, ZO_ERR_EXISTS, "module '%s' already registered under parent %d", name,
                        parent == ZO_NO_MODULE ? -1 : (int)parent);
    if (zo__reserve_aligned(rt, (void **)&rt->mods, &rt->mods_raw, &rt->cap_mods, rt->n_mods + 1, sizeof *rt->mods) ||
        zo__reserve(rt, (void **)&rt->mcold, &rt->cap_mcold, rt->n_mods + 1, sizeof *rt->mcold) ||
        (ZO_IS_DS(rt) && zo__reserve(rt, (void **)&rt->mds, &rt->cap_mds, rt->n_mods + 1, sizeof *rt->mds)) ||
        zo__reserve(rt, (void **)&rt->mod_calls, &rt->cap_mod_calls, rt->n_mods + 1, sizeof *rt->mod_calls) ||
        (name && name[0] && mod_name_reserve(rt)))
        return zo__fail(rt, ZO_ERR_NOMEM, "zo_module_register");
    char *nm = NULL;
    if (name && name[0]) {
        nm = zo__strdup(rt, name);
        if (!nm) return zo__fail(rt, ZO_ERR_NOMEM, "zo_module_register: name");
    }
    zo_module_id id = rt->n_mods;
    zo_mod *md = &rt->mods[id];
    zo_mod_cold *mc = &rt->mcold[id];
    memset(md, 0, sizeof *md);
    memset(mc, 0, sizeof *mc);
    if (ZO_IS_DS(rt)) memset(&rt->mds[id], 0, sizeof rt->mds[id]);
    mc->parent = parent;
    mc->flags = flags;
    mc->name = nm;
    rt->mod_calls[id] = ZO_NONE32;
    md->last_ended = ZO_NONE32;
    md->ga_holder = ZO_NO_MODULE;
    if (parent != ZO_NO_MODULE) {
        const zo_mod *pm = &rt->mods[parent];
        md->in_leaf = pm->in_leaf || (rt->mcold[parent].flags & ZO_MODULE_Z3_LEAF);
        /* the outermost effective gather-always ancestor holds the subtree */
        md->ga_holder = pm->ga_holder != ZO_NO_MODULE ? pm->ga_holder : (pm->ga ? parent : ZO_NO_MODULE);
    }
    /* inside a z3 leaf or below another gather-always module: no effect */
    md->ga = (flags & ZO_MODULE_GATHER_ALWAYS) && !md->in_leaf && md->ga_holder == ZO_NO_MODULE;
    if (rt->pol->counter_at_register) { /* a DeepSpeed-shaped policy */
        rt->mds[id].grads = 0;
        rt->mds[id].grads_init = 1;
    }
    rt->n_mods++;
    if (nm) mod_name_put(rt, id + 1, nh);
    rt->st.n_modules = rt->n_mods;
    rt->dirty = 1;
    invalidate_traces(rt);
    *out = id;
    return ZO_OK;
}

zo_status zo_param_register(zo_runtime *rt, zo_module_id owner, const char *name, uint64_t numel, uint32_t elem_size,
                            unsigned flags, zo_param_id *out) {
    if (!rt) return zo__fail_tls(ZO_ERR_INVALID_ARG, "%s: rt is NULL", __func__);
    if (!out) return zo__fail(rt, ZO_ERR_INVALID_ARG, "zo_param_register: out is NULL");
    if (numel == 0) return zo__fail(rt, ZO_ERR_INVALID_ARG, "zo_param_register: numel is 0");
    if (elem_size == 0 || elem_size > 64)
        return zo__fail(rt, ZO_ERR_INVALID_ARG, "zo_param_register: elem_size %u not in 1..64", elem_size);
    if (flags & ~ZO_PARAM_FROZEN)
        return zo__fail(rt, ZO_ERR_INVALID_ARG, "zo_param_register: unknown flags 0x%x", flags);
    if (!name_ok(name)) return zo__fail(rt, ZO_ERR_INVALID_ARG, "zo_param_register: name longer than 255");
    if (owner >= rt->n_mods) return zo__fail(rt, ZO_ERR_BAD_HANDLE, "zo_param_register: unknown owner %u", owner);
    uint64_t W = (uint64_t)rt->cfg.world_size;
    uint64_t part = numel / W + (numel % W != 0);
    /* full buffer: W * part elements of elem_size bytes must fit size_t */
    if (part > SIZE_MAX / W || part * W > SIZE_MAX / elem_size)
        return zo__fail(rt, ZO_ERR_OVERFLOW, "zo_param_register: %llu elements of %u bytes overflow",
                        (unsigned long long)numel, elem_size);
    if (rt->n_pars >= ZO_MAX_PARAMS) return zo__fail(rt, ZO_ERR_LIMIT, "too many parameters");
    if (numel > ZO_MAX_TOTAL_NUMEL - rt->total_numel)
        return zo__fail(rt, ZO_ERR_OVERFLOW,
                        "zo_param_register: %llu more elements would take the model over 2^63 - 1 elements "
                        "(%llu registered)",
                        (unsigned long long)numel, (unsigned long long)rt->total_numel);
    zo_mod_cold *om = &rt->mcold[owner];
    if (name && name[0]) {
        for (uint32_t i = 0; i < om->n_own; i++) {
            const char *n2 = rt->pcold[om->own[i]].name;
            if (n2 && strcmp(n2, name) == 0)
                return zo__fail(rt, ZO_ERR_EXISTS, "parameter '%s' already registered in module %u", name, owner);
        }
    }
    if (zo__reserve_aligned(rt, (void **)&rt->pars, &rt->pars_raw, &rt->cap_pars, rt->n_pars + 1, sizeof *rt->pars) ||
        zo__reserve_aligned(rt, (void **)&rt->pcold, &rt->pcold_raw, &rt->cap_pcold, rt->n_pars + 1,
                            sizeof *rt->pcold) ||
        zo__reserve(rt, (void **)&rt->pgathers, &rt->cap_pgathers, rt->n_pars + 1, sizeof *rt->pgathers) ||
        zo__reserve(rt, (void **)&rt->pready, &rt->cap_pready, rt->n_pars + 1, sizeof *rt->pready) ||
        zo__reserve(rt, (void **)&rt->live_pars, &rt->cap_live_pars, rt->n_pars + 1, sizeof *rt->live_pars) ||
        zo__reserve(rt, (void **)&rt->live_sorted, &rt->cap_live_sorted, rt->n_pars + 1, sizeof *rt->live_sorted) ||
        zo__reserve(rt, (void **)&om->own, &om->cap_own, om->n_own + 1, sizeof *om->own))
        return zo__fail(rt, ZO_ERR_NOMEM, "zo_param_register");
    char *nm = NULL;
    if (name && name[0]) {
        nm = zo__strdup(rt, name);
        if (!nm) return zo__fail(rt, ZO_ERR_NOMEM, "zo_param_register: name");
    }
    zo_param_id id = rt->n_pars;
    zo_status s = zo_backend_param_add(rt->backend, id, numel, elem_size, part);
    if (s) {
        zo__free(rt, nm);
        const char *be = zo_backend_last_error(rt->backend);
        return zo__fail(rt, s == ZO_ERR_NOMEM ? ZO_ERR_NOMEM : ZO_ERR_BACKEND, "backend param_add: %s",
                        be ? be : zo_strerror(s));
    }
    zo_par *pr = &rt->pars[id];
    zo_par_cold *pc = &rt->pcold[id];
    memset(pr, 0, sizeof *pr);
    memset(pc, 0, sizeof *pc);
    rt->pgathers[id] = 0;
    rt->pready[id] = 0;
    pr->numel = numel;
    pr->esz_m1 = elem_size - 1;
    pc->part_numel = part;
    pc->elem_size = elem_size;
    pc->owner = owner;
    pr->trainable = !(flags & ZO_PARAM_FROZEN);
    pc->name = nm;
    pr->status = ZO_PARAM_NOT_AVAILABLE;
    pr->work = ZO_NONE32;
    /* DeepSpeedZeRoOffload.mark_persistent_parameters, in registration order */
    if (!(numel > rt->cfg.model_persistence_threshold ||
          rt->persistent_total > rt->cfg.model_persistence_threshold - numel)) {
        if (numel <= rt->cfg.param_persistence_threshold) {
            pr->persistent = 1;
            rt->persistent_total += numel;
        }
    }
    om->own[om->n_own++] = id;
    rt->n_pars++;
    rt->total_numel += numel;
    rt->st.n_params = rt->n_pars;
    if (numel > rt->max_numel) rt->max_numel = numel;
    rt->dirty = 1;
    invalidate_traces(rt);
    *out = id;
    return ZO_OK;
}

zo_status zo_module_use_param(zo_runtime *rt, zo_module_id m, zo_param_id p) {
    if (!rt) return zo__fail_tls(ZO_ERR_INVALID_ARG, "%s: rt is NULL", __func__);
    if (m >= rt->n_mods) return zo__fail(rt, ZO_ERR_BAD_HANDLE, "zo_module_use_param: unknown module %u", m);
    if (p >= rt->n_pars) return zo__fail(rt, ZO_ERR_BAD_HANDLE, "zo_module_use_param: unknown parameter %u", p);
    zo_mod_cold *md = &rt->mcold[m];
    if (rt->pcold[p].owner == m) return zo__fail(rt, ZO_ERR_EXISTS, "module %u owns parameter %u", m, p);
    for (uint32_t i = 0; i < md->n_ext; i++)
        if (md->ext[i] == p) return zo__fail(rt, ZO_ERR_EXISTS, "module %u already uses parameter %u", m, p);
    if (zo__reserve(rt, (void **)&md->ext, &md->cap_ext, md->n_ext + 1, sizeof *md->ext))
        return zo__fail(rt, ZO_ERR_NOMEM, "zo_module_use_param");
    md->ext[md->n_ext++] = p;
    rt->dirty = 1;
    invalidate_traces(rt);
    return ZO_OK;
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* a module whose fetch gathers its whole subtree: a z3 leaf (that is not
 * itself held by a gather-always ancestor) or an effective gather-always */
static int fetches_subtree(const zo_runtime *rt, zo_module_id m) {
    const zo_mod *md = &rt->mods[m];
    if (md->ga_holder != ZO_NO_MODULE) return 0;
    return md->ga || (rt->mcold[m].flags & ZO_MODULE_Z3_LEAF);
}

/* Rebuild the derived fetch lists, sorted unique, users, and the scratch
 * arrays.  All or nothing.  A module's list: its own and external
 * parameters, plus every parameter owned in its subtree if it is a z3 leaf
 * or gather-always; a gather-always module also takes the external
 * parameters of every module it holds, and those modules' lists are empty
 * (they never fetch: the holder does, for them). */
/* DeepSpeedZeRoOffload.mark_persistent_parameters iterates
 * module.named_parameters(): modules in pre-order (named_modules), each
 * module's own parameters in registration order; a parameter whose numel
 * would take the persistent total over model_persistence_threshold is
 * skipped.  The DeepSpeed-shaped policies take that order (per-call
 * decides in registration order, at zo_param_register). */
static void ds_mark_persistent(zo_runtime *rt, uint32_t *stack) {
    uint64_t total = 0;
    uint32_t sp = 0;
    for (uint32_t m = rt->n_mods; m-- > 0;)
        if (rt->mcold[m].parent == ZO_NO_MODULE) stack[sp++] = m;
    while (sp) {
        zo_module_id m = stack[--sp];
        const zo_mod_cold *md = &rt->mcold[m];
        for (uint32_t i = 0; i < md->n_own; i++) {
            zo_par *pr = &rt->pars[md->own[i]];
            int pers = 0;
            if (!(pr->numel > rt->cfg.model_persistence_threshold ||
                  total > rt->cfg.model_persistence_threshold - pr->numel) &&
                pr->numel <= rt->cfg.param_persistence_threshold) {
                pers = 1;
                total += pr->numel;
            }
            if (pers != pr->persistent && pr->status != ZO_PARAM_NOT_AVAILABLE) {
                if (pers)
                    rt->st.persistent_live_numel += pr->numel;
                else
                    rt->st.persistent_live_numel -= pr->numel;
            }
            pr->persistent = (uint8_t)pers;
        }
        /* children in registration order: push in reverse */
        for (uint32_t c = rt->n_mods; c-- > 0;)
            if (rt->mcold[c].parent == m) stack[sp++] = c;
    }
    rt->persistent_total = total;
}

zo_status zo__rebuild_lists(zo_runtime *rt) {
    uint32_t nm = rt->n_mods, np = rt->n_pars;
    uint32_t *cnt = zo__calloc(rt, nm ? nm : 1, sizeof *cnt);
    uint32_t *ucnt = zo__calloc(rt, np ? np : 1, sizeof *ucnt);
    zo_param_id **lists = zo__calloc(rt, nm ? nm : 1, sizeof *lists);
    zo_param_id *fetch_all = NULL;
    zo_module_id *users_all = NULL;
    zo_param_id *scratch = zo__calloc(rt, np ? np : 1, sizeof *scratch);
    uint32_t *m1 = zo__calloc(rt, np ? np : 1, sizeof *m1);
    uint32_t *m2 = zo__calloc(rt, np ? np : 1, sizeof *m2);
    zo_param_id *pers = zo__calloc(rt, np ? np : 1, sizeof *pers);
    uint32_t *ustart = zo__calloc(rt, (size_t)np + 1, sizeof *ustart);
    int ok = cnt && ucnt && lists && scratch && m1 && m2 && pers && ustart;
    /* upper bounds: own + ext + (leaf, gather-always) params owned below
     * + (gather-always) external uses of the modules it holds.  A module
     * held by a gather-always ancestor fetches nothing itself. */
    if (ok) {
        for (uint32_t m = 0; m < nm; m++) {
            const zo_mod_cold *mc = &rt->mcold[m];
            zo_module_id h = rt->mods[m].ga_holder;
            if (h != ZO_NO_MODULE)
                cnt[h] += mc->n_own + mc->n_ext; /* own ones counted once more below: a bound */
            else
                cnt[m] += mc->n_own + mc->n_ext;
        }
        for (uint32_t p = 0; p < np; p++) {
            zo_module_id a = rt->mcold[rt->pcold[p].owner].parent;
            while (a != ZO_NO_MODULE) {
                if (fetches_subtree(rt, a)) cnt[a]++;
                a = rt->mcold[a].parent;
            }
        }
        for (uint32_t m = 0; m < nm && ok; m++) {
            lists[m] = zo__alloc(rt, (cnt[m] ? cnt[m] : 1) * sizeof(zo_param_id));
            if (!lists[m]) ok = 0;
            cnt[m] = 0;
        }
    }
    if (ok) {
        for (uint32_t m = 0; m < nm; m++) {
            const zo_mod_cold *md = &rt->mcold[m];
            zo_module_id h = rt->mods[m].ga_holder;
            zo_module_id t = h != ZO_NO_MODULE ? h : m;
            for (uint32_t i = 0; i < md->n_own; i++) lists[t][cnt[t]++] = md->own[i];
            for (uint32_t i = 0; i < md->n_ext; i++) lists[t][cnt[t]++] = md->ext[i];
        }
        for (uint32_t p = 0; p < np; p++) {
            zo_module_id a = rt->mcold[rt->pcold[p].owner].parent;
            while (a != ZO_NO_MODULE) {
                if (fetches_subtree(rt, a)) lists[a][cnt[a]++] = p;
                a = rt->mcold[a].parent;
            }
        }
        for (uint32_t m = 0; m < nm; m++) {
            qsort(lists[m], cnt[m], sizeof(zo_param_id), cmp_u32);
            uint32_t k = 0;
            for (uint32_t i = 0; i < cnt[m]; i++)
                if (k == 0 || lists[m][k - 1] != lists[m][i]) lists[m][k++] = lists[m][i];
            cnt[m] = k;
            for (uint32_t i = 0; i < k; i++) ucnt[lists[m][i]]++;
        }
        /* every module's list in one array, in module order, and every
         * parameter's users in another: a walk over modules in id order
         * (a forward, a backward) reads them sequentially */
        uint64_t total = 0;
        for (uint32_t m = 0; m < nm; m++) total += cnt[m];
        if (total > SIZE_MAX / sizeof(zo_param_id) - 1) ok = 0;
        if (ok) fetch_all = zo__alloc(rt, ((size_t)total + 1) * sizeof(zo_param_id));
        if (ok) users_all = zo__alloc(rt, ((size_t)total + 1) * sizeof(zo_module_id));
        if (!fetch_all || !users_all) ok = 0;
    }
    if (!ok) {
        if (lists)
            for (uint32_t m = 0; m < nm; m++) zo__free(rt, lists[m]);
        zo__free(rt, cnt);
        zo__free(rt, ucnt);
        zo__free(rt, lists);
        zo__free(rt, fetch_all);
        zo__free(rt, users_all);
        zo__free(rt, scratch);
        zo__free(rt, m1);
        zo__free(rt, m2);
        zo__free(rt, pers);
        zo__free(rt, ustart);
        return zo__fail(rt, ZO_ERR_NOMEM, "cannot build parameter fetch lists");
    }
    /* users: ucnt[p] becomes p's offset in users_all, then its end */
    {
        size_t off = 0;
        for (uint32_t p = 0; p < np; p++) {
            uint32_t k = ucnt[p];
            ucnt[p] = (uint32_t)off;
            ustart[p] = (uint32_t)off;
            off += k;
        }
        ustart[np] = (uint32_t)off;
    }
    for (uint32_t m = 0; m < nm; m++)
        for (uint32_t i = 0; i < cnt[m]; i++) {
            zo_param_id p = lists[m][i];
            users_all[ucnt[p]++] = m;
        }
    size_t foff = 0;
    for (uint32_t m = 0; m < nm; m++) {
        zo_mod *md = &rt->mods[m];
        md->fetch = fetch_all + foff;
        memcpy(md->fetch, lists[m], cnt[m] * sizeof *md->fetch);
        foff += cnt[m];
        zo__free(rt, lists[m]);
        lists[m] = NULL;
        md->n_fetch = cnt[m];
        md->n_trainable = 0;
        rt->mcold[m].fetch_numel = 0;
        for (uint32_t i = 0; i < cnt[m]; i++) {
            rt->mcold[m].fetch_numel += rt->pars[md->fetch[i]].numel;
            md->n_trainable += rt->pars[md->fetch[i]].trainable;
        }
    }
    /* rec_numel: own numel summed up the tree (a parent is registered
     * before its children), then each module's external ones */
    for (uint32_t m = 0; m < nm; m++) {
        zo_mod_cold *md = &rt->mcold[m];
        md->rec_numel = 0;
        for (uint32_t i = 0; i < md->n_own; i++) md->rec_numel += rt->pars[md->own[i]].numel;
    }
    for (uint32_t m = nm; m-- > 1;)
        if (rt->mcold[m].parent != ZO_NO_MODULE) rt->mcold[rt->mcold[m].parent].rec_numel += rt->mcold[m].rec_numel;
    for (uint32_t m = 0; m < nm; m++) {
        zo_mod_cold *md = &rt->mcold[m];
        for (uint32_t i = 0; i < md->n_ext; i++) md->rec_numel += rt->pars[md->ext[i]].numel;
    }
    zo__free(rt, rt->fetch_all);
    zo__free(rt, rt->users_all);
    rt->fetch_all = fetch_all;
    rt->users_all = users_all;
    zo__free(rt, rt->users_start);
    rt->users_start = ustart;
    if (ZO_IS_DS(rt)) ds_mark_persistent(rt, cnt); /* cnt: nm entries, free now */
    rt->n_pers_ids = 0;
    for (uint32_t p = 0; p < np; p++)
        if (rt->pars[p].persistent) pers[rt->n_pers_ids++] = p;
    zo__free(rt, rt->pers_ids);
    rt->pers_ids = pers;
    zo__free(rt, rt->scratch);
    zo__free(rt, rt->mark1);
    zo__free(rt, rt->mark2);
    rt->scratch = scratch;
    rt->mark1 = m1;
    rt->mark2 = m2;
    rt->cap_marks = np;
    zo__free(rt, cnt);
    zo__free(rt, ucnt);
    zo__free(rt, lists);
    rt->dirty = 0;
    return ZO_OK;
}

/* ------------------------------------------------------------------ */
/* parameter state machine                                              */
/* ------------------------------------------------------------------ */

void zo__sort_ids(uint32_t *ids, uint32_t n) {
    if (n > 32) {
        qsort(ids, n, sizeof *ids, cmp_u32);
        return;
    }
    for (uint32_t i = 1; i < n; i++) {
        uint32_t v = ids[i], j = i;
        for (; j > 0 && ids[j - 1] > v; j--) ids[j] = ids[j - 1];
        ids[j] = v;
    }
}

uint32_t zo__live_pars_sort(zo_runtime *rt) {
    uint32_t n = rt->n_live_pars;
    memcpy(rt->live_sorted, rt->live_pars, n * sizeof *rt->live_sorted);
    zo__sort_ids(rt->live_sorted, n);
    return n;
}

/* the ZO_EV_PARAM_STATE event of a status change (a sink is set) */
#if defined(__GNUC__)
__attribute__((noinline, cold))
#endif
static void
emit_state(zo_runtime *rt, uint64_t seq, zo_param_id p, zo_param_status from, zo_param_status to) {
    zo_event ev;
    zo__event_head(rt, &ev, seq, ZO_EV_PARAM_STATE, ZO_NO_MODULE, p);
    ev.from = from;
    ev.to = to;
    ev.detail = zo_param_status_name(to);
    rt->cfg.on_event(rt->cfg.event_user, &ev);
}

#if defined(__GNUC__)
__attribute__((noinline, cold))
#endif
static zo_status
illegal_status(zo_runtime *rt, zo_param_id p, zo_param_status from, zo_param_status to) {
    return zo__fail(rt, ZO_ERR_STATE, "illegal ds_status transition %s -> %s for parameter %u",
                    zo_param_status_name(from), zo_param_status_name(to), p);
}

ZO_HOT_INLINE zo_status set_status(zo_runtime *rt, zo_param_id p, zo_param_status to) {
    zo_par *pr = &rt->pars[p];
    zo_param_status from = pr->status;
    if (!zo__transition_legal(from, to)) return illegal_status(rt, p, from, to);
    pr->status = to;
    zo__par_live_sync(rt, p);
    uint64_t seq = rt->ev_seq++;
    if (rt->cfg.on_event) emit_state(rt, seq, p, from, to);
    return ZO_OK;
}

static const char *backend_msg(zo_runtime *rt, zo_status s) {
    const char *m = zo_backend_last_error(rt->backend);
    return m && m[0] ? m : zo_strerror(s);
}

/* verify_collectives: exchanges rt->fp_send (this rank's fingerprint of
 * the collective about to be issued, `what`) with every rank and compares.
 * ZO_OK when every rank sent the same bytes.  Otherwise
 * ZO_ERR_COLLECTIVE_MISMATCH naming rank 0 and the first rank that differs
 * from it (the same text on every rank), ZO_ERR_COLLECTIVE_MISMATCH from the
 * backend (a host world that would hang), or ZO_ERR_BACKEND / ZO_ERR_NOMEM
 * when the exchange itself failed.  Allocates nothing. */
static zo_status fp_exchange(zo_runtime *rt, const char *what, int prefetch) {
    uint64_t seq = rt->coll_seq++;
    int W = rt->cfg.world_size;
    const uint8_t *recv = rt->fp_recv;
    zo_status s = zo_backend_exchange(rt->backend, rt->fp_send, ZO_FP_BYTES, rt->fp_recv);
    if (s == ZO_ERR_COLLECTIVE_MISMATCH)
        return zo__fail(rt, s, "collective %llu: fingerprint exchange before %s: %s", (unsigned long long)seq, what,
                        backend_msg(rt, s));
    if (s)
        return zo__fail(rt, s == ZO_ERR_NOMEM ? ZO_ERR_NOMEM : ZO_ERR_BACKEND,
                        "collective %llu: fingerprint exchange before %s: %s", (unsigned long long)seq, what,
                        backend_msg(rt, s));
    if (memcmp(recv + (size_t)rt->cfg.rank * ZO_FP_BYTES, rt->fp_send, ZO_FP_BYTES) != 0)
        return zo__fail(rt, ZO_ERR_BACKEND,
                        "collective %llu: the fingerprint exchange did not return this rank's own message at "
                        "offset rank * %d",
                        (unsigned long long)seq, ZO_FP_BYTES);
    int other = -1;
    for (int r = 1; r < W && other < 0; r++)
        if (memcmp(recv + (size_t)r * ZO_FP_BYTES, recv, ZO_FP_BYTES) != 0) other = r;
    if (other < 0) return ZO_OK;
    const uint8_t *a = recv, *b = recv + (size_t)other * ZO_FP_BYTES;
    uint64_t ref = zo__fp_valid(a) ? zo__fp_seq(a) : seq;
    char da[200], db[200];
    zo__fp_describe(a, ref, da, sizeof da);
    zo__fp_describe(b, ref, db, sizeof db);
    /* the same text on every rank, plus where this rank noticed it when
     * that is a prefetch (another rank may have been fetching) */
    const char *here = prefetch ? " (this rank: before a prefetch)" : "";
    if (strcmp(da, db) == 0) /* same visible fields: ids past the first few, numels or element sizes */
        return zo__fail(rt, ZO_ERR_COLLECTIVE_MISMATCH,
                        "collective %llu: rank 0 %s vs rank %d %s (parameter hash %016llx vs %016llx)%s",
                        (unsigned long long)ref, da, other, db, (unsigned long long)zo__fp_hash(a),
                        (unsigned long long)zo__fp_hash(b), here);
    return zo__fail(rt, ZO_ERR_COLLECTIVE_MISMATCH, "collective %llu: rank 0 %s vs rank %d %s%s",
                    (unsigned long long)ref, da, other, db, here);
}

/* verify_collectives at the optimizer step: every trainable parameter, in
 * id order (the gradient collectives DeepSpeed's step runs). */
static zo_status fp_verify_step(zo_runtime *rt) {
    zo_fp_acc a;
    zo__fp_init(&a);
    for (uint32_t p = 0; p < rt->n_pars; p++)
        if (rt->pars[p].trainable) zo__fp_add(&a, p, rt->pars[p].numel, rt->pcold[p].elem_size);
    zo__fp_encode(&a, rt->coll_seq, ZO_FP_KIND_STEP, rt->fp_send);
    return fp_exchange(rt, "the optimizer step", 0);
}

/* __all_gather_params: one coalesced all-gather of the NOT_AVAILABLE ones
 * among ids.  On error nothing changed. */
zo_status zo__gather(zo_runtime *rt, const zo_param_id *ids, size_t n, int prefetch) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (rt->pars[ids[i]].status == ZO_PARAM_NOT_AVAILABLE) k++;
    if (k == 0) return ZO_OK;
    uint32_t wslot;
    if (rt->n_works_free > 0) {
        wslot = rt->works_free[rt->n_works_free - 1]; /* popped once the gather is issued */
    } else {
        /* room for the new slot, and for it on the free stack later, so
         * that returning a slot never allocates */
        if (zo__reserve(rt, (void **)&rt->works, &rt->cap_works, rt->n_works + 1, sizeof *rt->works) ||
            zo__reserve(rt, (void **)&rt->works_free, &rt->cap_works_free, rt->n_works + 1, sizeof *rt->works_free))
            return zo__fail(rt, ZO_ERR_NOMEM, "cannot grow the in-flight registry");
        wslot = rt->n_works;
    }
    /* the items handed to the backend (which copies them) and the work's
     * parameter list: buffers kept by the runtime and by the registry slot,
     * grown when a larger group comes, so a gather allocates nothing */
    zo_work_rec *wr = &rt->works[wslot];
    if (k > UINT32_MAX || zo__reserve(rt, (void **)&rt->gitems, &rt->cap_gitems, (uint32_t)k, sizeof *rt->gitems) ||
        (k > ZO_WORK_INLINE && zo__reserve(rt, (void **)&wr->params, &wr->cap_params, (uint32_t)k, sizeof *wr->params)))
        return zo__fail(rt, ZO_ERR_NOMEM, "all-gather of %zu parameters", k);
    zo_gather_item *items = rt->gitems;
    /* one or two parameters (the usual prefetch) are listed in the slot
     * itself: the wait then reads no other line */
    zo_param_id *plist = k <= ZO_WORK_INLINE ? wr->inl : wr->params;
    size_t j = 0;
    zo_status s = ZO_OK;
    for (size_t i = 0; i < n && j < k; i++) {
        zo_param_id p = ids[i];
        zo_par *pr = &rt->pars[p];
        if (pr->status != ZO_PARAM_NOT_AVAILABLE) continue;
        int dup = 0;
        for (size_t t = 0; t < j; t++)
            if (plist[t] == p) dup = 1;
        if (dup) continue;
        uint64_t part = zo__part_numel(pr->numel, (uint64_t)rt->cfg.world_size);
        uint32_t esz = pr->esz_m1 + 1u;
        size_t bytes = (size_t)(part * (uint64_t)rt->cfg.world_size) * esz;
        void *buf = NULL;
        s = zo_backend_full_alloc(rt->backend, p, bytes, &buf);
        if (s) break;
        items[j] =
            (zo_gather_item){.param = p, .full = buf, .numel = pr->numel, .partition_numel = part, .elem_size = esz};
        plist[j] = p;
        j++;
    }
    zo_work *work = NULL;
    zo_status vs = ZO_OK;
    if (!s && rt->cfg.verify_collectives) {
        /* after every local step that can fail, right before the collective:
         * the fingerprint of exactly the group all_gather_start receives */
        zo_fp_acc a;
        zo__fp_init(&a);
        for (size_t t = 0; t < j; t++) zo__fp_add(&a, items[t].param, items[t].numel, items[t].elem_size);
        zo__fp_encode(&a, rt->coll_seq, ZO_FP_KIND_GATHER, rt->fp_send);
        vs = fp_exchange(rt, prefetch ? "a prefetch all-gather" : "an all-gather", prefetch);
    }
    if (!s && !vs) s = zo_backend_all_gather_start(rt->backend, items, j, &work);
    if (s || vs) {
        for (size_t t = 0; t < j; t++) zo_backend_full_free(rt->backend, items[t].param, items[t].full);
        if (vs) return vs; /* nothing issued; the message names both sides */
        /* NOMEM and a collective mismatch (the host world's matcher) keep their
         * code; everything else the backend says is ZO_ERR_BACKEND */
        zo_status r = (s == ZO_ERR_NOMEM || s == ZO_ERR_COLLECTIVE_MISMATCH) ? s : ZO_ERR_BACKEND;
        return zo__fail(rt, r, "%s of %zu parameters: %s", prefetch ? "prefetch" : "all-gather", k, backend_msg(rt, s));
    }
    if (j <= ZO_WORK_INLINE && plist != wr->inl) /* duplicates can leave a few of k */
        memcpy(wr->inl, plist, j * sizeof *plist);
    wr->work = work;
    wr->n_params = (uint32_t)j;
    if (wslot == rt->n_works)
        rt->n_works++;
    else
        rt->n_works_free--;
    for (size_t t = 0; t < j; t++) {
        zo_param_id p = items[t].param;
        zo_par *pr = &rt->pars[p];
        pr->full = items[t].full;
        pr->work = wslot;
        if (++rt->pgathers[p] == 0) rt->pcold[p].gathers_hi++;
        (void)set_status(rt, p, ZO_PARAM_INFLIGHT);
        rt->st.gathers++;
        if (prefetch) rt->st.prefetches++;
        rt->st.bytes_gathered += (uint64_t)pr->numel * items[t].elem_size;
        rt->st.live_numel += pr->numel;
        rt->st.inflight_params++;
        if (pr->persistent) rt->st.persistent_live_numel += pr->numel;
        if (rt->st.live_numel > rt->st.peak_live_numel) rt->st.peak_live_numel = rt->st.live_numel;
        zo__emit(rt, prefetch ? ZO_EV_PREFETCH : ZO_EV_GATHER, ZO_NO_MODULE, p, 0, 0, 0, 0, NULL);
    }
    return ZO_OK;
}

/* frees a finished (or failed) work and returns its registry slot (which
 * keeps its parameter list buffer for the next gather) */
static void work_retire(zo_runtime *rt, zo_work_rec *wr) {
    zo_backend_work_free(rt->backend, wr->work);
    wr->work = NULL;
    wr->n_params = 0;
    rt->works_free[rt->n_works_free++] = (uint32_t)(wr - rt->works); /* capacity reserved at growth */
}

/* wait for the in-flight gather holding p: every parameter of that work
 * becomes AVAILABLE and leaves the registry. */
zo_status zo__wait_param(zo_runtime *rt, zo_param_id p) {
    zo_par *pr = &rt->pars[p];
    if (pr->status != ZO_PARAM_INFLIGHT || pr->work == ZO_NONE32) return ZO_OK;
    zo_work_rec *wr = &rt->works[pr->work];
    const zo_param_id *plist = zo__work_params(wr);
    int done = 0;
    zo_status s = zo_backend_query(rt->backend, wr->work, &done);
    if (!s && !done) {
        rt->st.blocking_waits++;
        s = zo_backend_wait(rt->backend, wr->work);
    }
    zo__emit(rt, ZO_EV_WAIT, ZO_NO_MODULE, p, 0, 0, 0, 0, done ? "complete" : "blocking");
    if (s) {
        /* The collective failed (e.g. an asynchronous NCCL error): its
         * parameters go back to NOT_AVAILABLE, their full buffers freed; the
         * shards are intact, so the next fetch gathers them again. */
        zo_status r = zo__fail(rt, (s == ZO_ERR_NOMEM || s == ZO_ERR_COLLECTIVE_MISMATCH) ? s : ZO_ERR_BACKEND,
                               "wait for parameter %u: %s", p, backend_msg(rt, s));
        for (uint32_t i = 0; i < wr->n_params; i++) {
            zo_param_id q = plist[i];
            zo_par *qr = &rt->pars[q];
            qr->work = ZO_NONE32;
            rt->st.inflight_params--;
            zo_backend_full_free(rt->backend, q, qr->full);
            qr->full = NULL;
            rt->st.live_numel -= qr->numel;
            if (qr->persistent) rt->st.persistent_live_numel -= qr->numel;
            (void)set_status(rt, q, ZO_PARAM_NOT_AVAILABLE);
        }
        work_retire(rt, wr);
        return r;
    }
    for (uint32_t i = 0; i < wr->n_params; i++) {
        zo_param_id q = plist[i];
        rt->pars[q].work = ZO_NONE32;
        rt->st.inflight_params--;
        (void)set_status(rt, q, ZO_PARAM_AVAILABLE);
    }
    work_retire(rt, wr);
    return ZO_OK;
}

/* __release_param: partition() when AVAILABLE and no active submodule.
 * Persistent parameters only with ZO_REL_PERSIST (DeepSpeed's release points
 * under the DeepSpeed-shaped policies); never under per-call. */
zo_status zo__release_param(zo_runtime *rt, zo_param_id p, int force) {
    zo_par *pr = &rt->pars[p];
    if (pr->status != ZO_PARAM_AVAILABLE || pr->n_act != 0) return ZO_OK;
    if (pr->persistent && !(force & ZO_REL_PERSIST)) return ZO_OK;
    zo_status s = set_status(rt, p, ZO_PARAM_NOT_AVAILABLE);
    if (s) return s;
    zo_backend_full_free(rt->backend, p, pr->full);
    pr->full = NULL;
    rt->st.live_numel -= pr->numel;
    if (pr->persistent) rt->st.persistent_live_numel -= pr->numel;
    if (ZO_IS_DS(rt)) zo__ds_avail_sub(rt, pr->numel);
    rt->st.releases++;
    zo__emit(rt, ZO_EV_RELEASE, ZO_NO_MODULE, p, 0, 0, 0, 0, NULL);
    return ZO_OK;
}

/* ------------------------------------------------------------------ */
/* calls, graphs, contexts                                              */
/* ------------------------------------------------------------------ */


/* the last step of freeing a call record: its input state freed, the
 * record cleared and its generation raised, so that no stale handle names
 * the next call made in it; returns 0 when its generations are used up
 * (retired: never taken again).  free_call ends with it; a record
 * free_graph freed without reading it gets it when alloc_call takes it. */
static int finish_free_call(zo_runtime *rt, zo_call_rec *c) {
    zo__in_state_free(rt, c);
    uint32_t gen = c->gen;
    memset(c, 0, sizeof *c);
    if (gen >= ZO_H_GEN_MASK) {
        c->gen = ZO_H_GEN_MASK;
        c->mod_next = ZO_NONE32;
        return 0;
    }
    c->gen = gen + 1;
    return 1;
}

static zo_status alloc_call(zo_runtime *rt, uint32_t *out) {
    while (rt->n_free_calls > 0) {
        uint32_t idx = rt->free_calls[--rt->n_free_calls];
        if (rt->n_free_calls > 0) ZO_PREFETCH(&rt->calls[rt->free_calls[rt->n_free_calls - 1]]); /* the next call's */
        zo_call_rec *c = &rt->calls[idx];
        if (c->in_use && !finish_free_call(rt, c)) continue;
        *out = idx;
        return ZO_OK;
    }
    if (rt->n_calls >= ZO_MAX_CALLS) return ZO_ERR_LIMIT;
    if (zo__reserve_aligned(rt, (void **)&rt->calls, &rt->calls_raw, &rt->cap_calls, rt->n_calls + 1,
                            sizeof *rt->calls) ||
        zo__reserve(rt, (void **)&rt->held_calls, &rt->cap_held_calls, rt->n_calls + 1, sizeof *rt->held_calls) ||
        zo__reserve(rt, (void **)&rt->calls_tmp, &rt->cap_calls_tmp, rt->n_calls + 1, sizeof *rt->calls_tmp) ||
        zo__reserve(rt, (void **)&rt->free_calls, &rt->cap_free_calls, rt->n_calls + 1, sizeof *rt->free_calls))
        return ZO_ERR_NOMEM;
    *out = rt->n_calls++;
    rt->calls[*out].gen = 0;
    return ZO_OK;
}

/* unlinks and frees a call record (not on the stack); per-call holds are
 * dropped and the module released if it becomes inactive. */
static zo_status free_call(zo_runtime *rt, uint32_t idx) {
    zo_call_rec *c = &rt->calls[idx];
    zo_status s = ZO_OK;
    zo_mod *md = &rt->mods[c->m];
    zo__window_close(rt, c);
    int rel = 0;
    rel |= zo__act_clear(rt, c, &c->fwd_active);
    rel |= zo__act_clear(rt, c, &c->bwd_active);
    rel |= zo__act_clear(rt, c, &c->hold);
    if (rel) s = zo__release_module(rt, c->m, &rt->coord[0]);
    if (c->mod_prev != ZO_NONE32)
        rt->calls[c->mod_prev].mod_next = c->mod_next;
    else
        rt->mod_calls[c->m] = c->mod_next;
    if (c->mod_next != ZO_NONE32) rt->calls[c->mod_next].mod_prev = c->mod_prev;
    /* only a call that ended without hook C can be its module's last_ended
     * (hook C and zo_forward_abort set c_done), so the others need not
     * read the module record */
    if (c->ended && !c->c_done && md->last_ended == idx) md->last_ended = ZO_NONE32;
    rt->live_calls--;
    if (finish_free_call(rt, c)) rt->free_calls[rt->n_free_calls++] = idx;
    return s;
}

static zo_status alloc_graph(zo_runtime *rt, uint32_t *out) {
    if (rt->graphs_free != ZO_NONE32) {
        *out = rt->graphs_free;
        rt->graphs_free = rt->graphs[*out].free_next;
        return ZO_OK;
    }
    if (rt->n_graphs >= ZO_MAX_SLOTS) return ZO_ERR_LIMIT;
    if (zo__reserve(rt, (void **)&rt->graphs, &rt->cap_graphs, rt->n_graphs + 1, sizeof *rt->graphs))
        return ZO_ERR_NOMEM;
    *out = rt->n_graphs++;
    memset(&rt->graphs[*out], 0, sizeof rt->graphs[*out]);
    rt->graphs[*out].gen = 1;
    return ZO_OK;
}

/* whether some call of graph gslot may have more to do when it is freed
 * than leave its module's list: a window open (the count is the
 * runtime's) or an activation.  bwd_active and hold put a call on the held
 * list, which the graph counts; fwd_active is set only on the forward
 * stack, and no call of a graph being freed is on it (every caller of
 * free_graph has ended or unwound the graph's open calls first:
 * zo_check_consistency checks that the stack holds live calls only). */
static int graph_calls_busy(const zo_runtime *rt, uint32_t gslot) {
    return rt->st.open_windows != 0 || rt->graphs[gslot].n_held != 0;
}

/* frees a graph and its call records, newest first; per-call windows
 * still open are reported as leftovers when `leftover` is set.  A call
 * with nothing left to do that is its module's only live call is freed
 * without reading its record (a training step's common case: at 1e5
 * modules the record has long left the cache by the end of backward); it
 * stays marked in_use, zo__call_live tells it from a live one (its graph
 * slot's generation moved on) and alloc_call finishes it. */
static zo_status free_graph(zo_runtime *rt, uint32_t gslot, int leftover) {
    zo_graph_rec *g = &rt->graphs[gslot];
    zo_graph gh = zo__mk_graph(rt, gslot);
    zo_status first = ZO_OK;
    int busy = graph_calls_busy(rt, gslot);
    for (uint32_t k = g->n_calls; k-- > 0;) {
        uint32_t idx = g->calls[k].idx;
        uint32_t ms = g->calls[k].m_sole;
        if (!busy && (ms & ZO_GC_SOLE) && rt->mod_calls[ms & ~ZO_GC_SOLE] == idx) {
            rt->mod_calls[ms & ~ZO_GC_SOLE] = ZO_NONE32;
            rt->free_calls[rt->n_free_calls++] = idx;
            rt->live_calls--;
            continue;
        }
        zo_call_rec *c = &rt->calls[idx];
        if (leftover && c->window_open) {
            rt->st.leftovers++;
            zo__emit(rt, ZO_EV_LEFTOVER, c->m, ZO_NO_PARAM, gh, c->window_count, 0, 1,
                     "window closed without its input gradients");
        }
        zo_status s = free_call(rt, idx);
        if (s && !first) first = s;
    }
    uint32_t gen = g->gen;
    zo_graph_call *calls = g->calls;
    uint32_t cap = g->cap_calls;
    memset(g, 0, sizeof *g);
    g->calls = calls;
    g->cap_calls = cap;
    if (gen == ZO_G_GEN_MAX) { /* retired, as call slots are */
        g->gen = gen;
        g->free_next = ZO_NONE32;
        return first;
    }
    g->gen = gen + 1;
    g->free_next = rt->graphs_free;
    rt->graphs_free = gslot;
    return first;
}

/* innermost open call of m on the forward stack; returns stack index or -1 */
static int64_t find_open(const zo_runtime *rt, zo_module_id m) {
    for (uint32_t i = rt->n_fstack; i-- > 0;)
        if (rt->calls[rt->fstack[i]].m == m) return i;
    return -1;
}

static zo_status check_module(zo_runtime *rt, zo_module_id m, const char *fn) {
    if (m >= rt->n_mods) return zo__fail(rt, ZO_ERR_BAD_HANDLE, "%s: unknown module %u", fn, m);
    return ZO_OK;
}

/* ------------------------------------------------------------------ */
/* forward                                                              */
/* ------------------------------------------------------------------ */

zo_status zo_forward_begin(zo_runtime *rt, unsigned flags, zo_graph *out_graph) {
    if (!rt) return zo__fail_tls(ZO_ERR_INVALID_ARG, "%s: rt is NULL", __func__);
    if (!out_graph) return zo__fail(rt, ZO_ERR_INVALID_ARG, "zo_forward_begin: out_graph is NULL");
    if (flags & ~(ZO_FWD_ROOT | ZO_FWD_EVAL))
        return zo__fail(rt, ZO_ERR_INVALID_ARG, "zo_forward_begin: unknown flags 0x%x", flags);
    if (zo__reserve(rt, (void **)&rt->ctx, &rt->cap_ctx, rt->n_ctx + 1, sizeof *rt->ctx))
        return zo__fail(rt, ZO_ERR_NOMEM, "zo_forward_begin");
    uint32_t gslot;
    zo_status s = alloc_graph(rt, &gslot);
    if (s) return zo__fail(rt, s, "zo_forward_begin: graph table");
    int eval = (flags & ZO_FWD_EVAL) != 0;
    if (flags & ZO_FWD_ROOT) {
        s = zo__coord_reset_step(rt, &rt->coord[ZO_IS_DS(rt) ? 0 : eval]);
        if (s == ZO_ERR_NOMEM || s == ZO_ERR_LIMIT) {
            /* nothing happened; the graph slot stays on the free list */
            rt->graphs[gslot].free_next = rt->graphs_free;
            rt->graphs_free = gslot;
            return s;
        }
        rt->st.steps++;
        zo__emit(rt, ZO_EV_RESET_STEP, ZO_NO_MODULE, ZO_NO_PARAM, 0, 0, 0, 0, eval ? "eval" : "train");
    }
    zo_graph_rec *g = &rt->graphs[gslot];
    g->in_use = 1;
    g->building = 1;
    g->eval = (uint8_t)eval;
    g->root = (flags & ZO_FWD_ROOT) != 0;
    g->n_calls = 0;
    g->seq = rt->graph_seq++;
    rt->ctx[rt->n_ctx].type = ZO_CTX_FWD;
    rt->ctx[rt->n_ctx].graph = gslot;
    rt->ctx[rt->n_ctx].epoch = 0;
    rt->n_ctx++;
    *out_graph = zo__mk_graph(rt, gslot);
    zo__emit(rt, ZO_EV_FORWARD_BEGIN, ZO_NO_MODULE, ZO_NO_PARAM, *out_graph, 0, 0, 0, NULL);
    return ZO_OK;
}

zo_status zo__sweep_unheld(zo_runtime *rt, int wait_inflight) {
    zo_status first = ZO_OK;
    uint32_t n = zo__live_pars_sorted(rt);
    for (uint32_t t = 0; t < n; t++) {
        zo_param_id p = rt->live_sorted[t];
        zo_par *pr = &rt->pars[p];
        if (pr->status == ZO_PARAM_INFLIGHT) {
            if (!wait_inflight) continue;
            zo_status s = zo__wait_param(rt, p);
            if (s) {
                if (!first) first = s;
                continue;
            }
        }
        if (pr->status == ZO_PARAM_AVAILABLE && pr->n_act == 0 && !pr->persistent) {
            zo_status s = zo__release_param(rt, p, 1);
            if (s && !first) first = s;
        }
    }
    return first;
}

zo_status zo_forward_end(zo_runtime *rt, zo_graph gh) {
    if (!rt) return zo__fail_tls(ZO_ERR_INVALID_ARG, "%s: rt is NULL", __func__);
    uint32_t gslot = graph_slot(rt, gh);
    if (gslot == ZO_NONE32) return zo__fail(rt, ZO_ERR_BAD_HANDLE, "zo_forward_end: unknown graph");
    if (rt->n_ctx == 0 || rt->ctx[rt->n_ctx - 1].type != ZO_CTX_FWD || rt->ctx[rt->n_ctx - 1].graph != gslot)
        return zo__fail(rt, ZO_ERR_PROTOCOL, "zo_forward_end: graph is not the innermost forward pass");
    for (uint32_t i = 0; i < rt->n_fstack; i++)
        if (rt->calls[rt->fstack[i]].graph == gslot)
            return zo__fail(rt, ZO_ERR_PROTOCOL, "zo_forward_end: module %u still has an open call",
                            rt->calls[rt->fstack[i]].m);
    zo_graph_rec *g = &rt->graphs[gslot];
    zo_status first = ZO_OK;
    if (g->eval && g->root && !ZO_IS_DS(rt)) {
        /* DeepSpeed 0.14's end-of-forward hook under no_grad (0.15.4 and
         * 0.19.8 have none: the DeepSpeed-shaped policies skip it); a
         * failure here (ZO_ERR_NOMEM building the trace) leaves the pass
         * open */
        first = zo__coord_reset_step(rt, &rt->coord[1]);
        if (first == ZO_ERR_NOMEM || first == ZO_ERR_LIMIT) return first;
        rt->st.steps++;
        zo__emit(rt, ZO_EV_RESET_STEP, ZO_NO_MODULE, ZO_NO_PARAM, gh, 0, 0, 0, "eval end-of-forward");
    }
    rt->n_ctx--;
    g->building = 0;
    zo__emit(rt, ZO_EV_FORWARD_END, ZO_NO_MODULE, ZO_NO_PARAM, gh, 0, 0, 0, NULL);
    if (!g->any_grad) {
        /* nothing to backpropagate: the graph ends here */
        zo_status s = free_graph(rt, gslot, 1);
        if (s && !first) first = s;
        if (rt->pol->sweep && rt->n_ctx == 0) {
            s = rt->pol->sweep(rt, 1);
            if (s && !first) first = s;
        }
    }
    return first;
}

zo_status zo_pre_forward(zo_runtime *rt, zo_module_id m, unsigned call_flags) {
    if (!rt) return zo__fail_tls(ZO_ERR_INVALID_ARG, "%s: rt is NULL", __func__);
    zo_status s = check_module(rt, m, "zo_pre_forward");
    if (s) return s;
    if (call_flags & ~ZO_CALL_GRAD)
        return zo__fail(rt, ZO_ERR_INVALID_ARG, "zo_pre_forward: unknown flags 0x%x", call_flags);
    if (rt->mods[m].in_leaf)
        return zo__fail(rt, ZO_ERR_PROTOCOL, "zo_pre_forward: module %u is inside a z3 leaf module (no hooks)", m);
    s = zo__hook_legal(rt, ZO__HOOK_PRE_FORWARD, ZO__CALL_NONE, m);
    if (s) return s;
    if (zo__reserve(rt, (void **)&rt->fstack, &rt->cap_fstack, rt->n_fstack + 1, sizeof *rt->fstack))
        return zo__fail(rt, ZO_ERR_NOMEM, "zo_pre_forward: forward stack");
    if (rt->pol->pre_forward_reserve) {
        s = rt->pol->pre_forward_reserve(rt, m);
        if (s) return s;
    }
    uint32_t gslot = rt->ctx[rt->n_ctx - 1].graph;
    zo_graph_rec *g = &rt->graphs[gslot];
    if (zo__reserve(rt, (void **)&g->calls, &g->cap_calls, g->n_calls + 1, sizeof *g->calls))
        return zo__fail(rt, ZO_ERR_NOMEM, "zo_pre_forward: the graph's call list");
    uint32_t idx;
    s = alloc_call(rt, &idx);
    if (s) return zo__fail(rt, s, "zo_pre_forward: call table");
    zo_call_rec *c = &rt->calls[idx];
    uint32_t gen = c->gen;
    memset(c, 0, sizeof *c);
    c->gen = gen;
    c->in_use = 1;
    c->m = m;
    c->graph = gslot;
    c->on_stack = 1;
    c->recompute = zo__n_bwd(rt) > 0;
    c->grad = (call_flags & ZO_CALL_GRAD) != 0;
    zo_mod *md = &rt->mods[m];
    /* link */
    c->mod_prev = ZO_NONE32;
    c->mod_next = rt->mod_calls[m];
    if (c->mod_next != ZO_NONE32) rt->calls[c->mod_next].mod_prev = idx;
    rt->mod_calls[m] = idx;
    c->ggen = g->gen;
    g->calls[g->n_calls].idx = idx;
    g->calls[g->n_calls].m_sole = m | (c->mod_next == ZO_NONE32 ? ZO_GC_SOLE : 0);
    g->n_calls++;
    if (c->grad) g->any_grad = 1;
    rt->live_calls++;
    rt->fstack[rt->n_fstack++] = idx;
    md->open_calls++;
    zo__emit(rt, ZO_EV_PRE_FORWARD, m, ZO_NO_PARAM, zo__mk_graph(rt, gslot), 0, 0, 0,
             c->recompute ? "recompute" : NULL);
    /* fetch_sub_module(m, forward=True) */
    int activated = 0;
    s = zo__coord_fetch(rt, zo__coord_of_graph(rt, gslot), m, &activated);
    if (!activated) {
        /* nothing happened: undo the push (idx is still the newest of its graph's calls) */
        rt->n_fstack--;
        md->open_calls--;
        rt->graphs[gslot].n_calls--;
        (void)free_call(rt, idx);
        return s;
    }
    return rt->pol->pre_forward ? rt->pol->pre_forward(rt, idx, s) : s;
}

zo_status zo_track_inputs(zo_runtime *rt, zo_module_id m, size_t n, const uint8_t *requires_grad,
                          zo_grad_handle *out_handles) {
    if (!rt) return zo__fail_tls(ZO_ERR_INVALID_ARG, "%s: rt is NULL", __func__);
    zo_status s = check_module(rt, m, "zo_track_inputs");
    if (s) return s;
    if (n > 0 && (!requires_grad || !out_handles))
        return zo__fail(rt, ZO_ERR_INVALID_ARG, "zo_track_inputs: NULL arrays for %zu inputs", n);
    if (n >= (1u << 20)) return zo__fail(rt, ZO_ERR_LIMIT, "zo_track_inputs: %zu inputs", n);
    int64_t si = find_open(rt, m);
    if (si < 0) return zo__fail(rt, ZO_ERR_PROTOCOL, "zo_track_inputs: module %u has no open call", m);
    uint32_t idx = rt->fstack[si];
    zo_call_rec *c = &rt->calls[idx];
    s = zo__hook_legal(rt, ZO__HOOK_TRACK_INPUTS, zo__call_phase_of(c), m);
    if (s) return s;
    uint32_t k = 0;
    for (size_t i = 0; i < n; i++) k += requires_grad[i] != 0;
    return rt->pol->track_inputs(rt, idx, n, requires_grad, k, out_handles);
}

zo_status zo_post_forward(zo_runtime *rt, zo_module_id m) {
    if (!rt) return zo__fail_tls(ZO_ERR_INVALID_ARG, "%s: rt is NULL", __func__);
    zo_status s = check_module(rt, m, "zo_post_forward");
    if (s) return s;
    int64_t si = find_open(rt, m);
    if (si < 0) return zo__fail(rt, ZO_ERR_PROTOCOL, "zo_post_forward: module %u has no open call", m);
    if ((uint32_t)si + 1 != rt->n_fstack) /* PyTorch's forward hooks nest: a child's call ends before its caller's */
        return zo__fail(rt, ZO_ERR_PROTOCOL,
                        "zo_post_forward: module %u's call is not the innermost open call (module %u's call "
                        "is still open inside it: end it first, or zo_forward_abort() an exception)",
                        m, rt->calls[rt->fstack[rt->n_fstack - 1]].m);
    uint32_t idx = rt->fstack[si];
    s = zo__hook_legal(rt, ZO__HOOK_POST_FORWARD, zo__call_phase_of(&rt->calls[idx]), m);
    if (s) return s;
    rt->n_fstack--; /* the innermost call (checked above) */
    zo_call_rec *c = &rt->calls[idx];
    zo_mod *md = &rt->mods[m];
    md->open_calls--;
    c->on_stack = 0;
    c->ended = 1;
    md->last_ended = idx;
    md->last_ended_gen = c->gen;
    zo__emit(rt, ZO_EV_POST_FORWARD, m, ZO_NO_PARAM, zo__mk_graph(rt, c->graph), 0, 0, 0,
             c->recompute ? "recompute" : NULL);
    return rt->pol->post_forward(rt, idx, zo__coord_of_graph(rt, c->graph));
}

zo_status zo_track_outputs(zo_runtime *rt, zo_module_id m, size_t n, const uint8_t *requires_grad,
                           zo_grad_handle *out_handles) {
    if (!rt) return zo__fail_tls(ZO_ERR_INVALID_ARG, "%s: rt is NULL", __func__);
    zo_status s = check_module(rt, m, "zo_track_outputs");
    if (s) return s;
    if (n > 0 && (!requires_grad || !out_handles))
        return zo__fail(rt, ZO_ERR_INVALID_ARG, "zo_track_outputs: NULL arrays for %zu outputs", n);
    if (n >= (1u << 20)) return zo__fail(rt, ZO_ERR_LIMIT, "zo_track_outputs: %zu outputs", n);
    zo_mod *md = &rt->mods[m];
    uint32_t idx = md->last_ended;
    if (idx == ZO_NONE32 || rt->calls[idx].gen != md->last_ended_gen || !zo__call_live(rt, &rt->calls[idx]))
        return zo__fail(rt, ZO_ERR_PROTOCOL, "zo_track_outputs: module %u has no call that just ended", m);
    zo_call_rec *c = &rt->calls[idx];
    s = zo__hook_legal(rt, ZO__HOOK_TRACK_OUTPUTS, zo__call_phase_of(c), m);
    if (s) return s;
    c->c_done = 1;
    c->n_out = (uint32_t)n;
    md->last_ended = ZO_NONE32;
    return rt->pol->track_outputs(rt, idx, n, requires_grad, out_handles);
}

zo_status zo_module_enter(zo_runtime *rt, zo_module_id m, unsigned call_flags, size_t n_in,
                          const uint8_t *requires_grad, zo_grad_handle *out_handles) {
    if (!rt) return zo__fail_tls(ZO_ERR_INVALID_ARG, "%s: rt is NULL", __func__);
    /* hook D's argument checks first: a refused call has no effect */
    if (n_in > 0 && (!requires_grad || !out_handles))
        return zo__fail(rt, ZO_ERR_INVALID_ARG, "zo_module_enter: NULL arrays for %zu inputs", n_in);
    if (n_in >= (1u << 20)) return zo__fail(rt, ZO_ERR_LIMIT, "zo_module_enter: %zu inputs", n_in);
    zo_status s = zo_pre_forward(rt, m, call_flags);
    if (s) return s;
    return zo_track_inputs(rt, m, n_in, requires_grad, out_handles);
}

zo_status zo_module_exit(zo_runtime *rt, zo_module_id m, size_t n_out, const uint8_t *requires_grad,
                         zo_grad_handle *out_handles) {
    if (!rt) return zo__fail_tls(ZO_ERR_INVALID_ARG, "%s: rt is NULL", __func__);
    if (n_out > 0 && (!requires_grad || !out_handles))
        return zo__fail(rt, ZO_ERR_INVALID_ARG, "zo_module_exit: NULL arrays for %zu outputs", n_out);
    if (n_out >= (1u << 20)) return zo__fail(rt, ZO_ERR_LIMIT, "zo_module_exit: %zu outputs", n_out);
    zo_status s = zo_post_forward(rt, m);
    if (s) return s;
    return zo_track_outputs(rt, m, n_out, requires_grad, out_handles);
}

zo_status zo_forward_abort(zo_runtime *rt, zo_module_id catcher) {
    if (!rt) return zo__fail_tls(ZO_ERR_INVALID_ARG, "%s: rt is NULL", __func__);
    if (catcher != ZO_NO_MODULE) {
        zo_status s = check_module(rt, catcher, "zo_forward_abort");
        if (s) return s;
    }
    zo_status st = zo__hook_legal(rt, ZO__HOOK_FORWARD_ABORT, ZO__CALL_NONE, catcher);
    if (st) return st;
    uint32_t cur = rt->ctx[rt->n_ctx - 1].graph;
    /* the calls of the innermost context form the top of the stack */
    uint32_t floor = rt->n_fstack;
    while (floor > 0 && rt->calls[rt->fstack[floor - 1]].graph == cur) floor--;
    uint32_t keep = floor;
    if (catcher != ZO_NO_MODULE) {
        int64_t si = find_open(rt, catcher);
        if (si < 0 || (uint32_t)si < floor)
            return zo__fail(rt, ZO_ERR_PROTOCOL, "zo_forward_abort: catcher %u is not on the forward stack", catcher);
        keep = (uint32_t)si + 1;
    }
    zo__emit(rt, ZO_EV_FORWARD_ABORT, catcher, ZO_NO_PARAM, zo__mk_graph(rt, cur), 0, 0, 0, NULL);
    zo_status first = ZO_OK;
    while (rt->n_fstack > keep) {
        uint32_t idx = rt->fstack[--rt->n_fstack];
        zo_call_rec *c = &rt->calls[idx];
        zo_mod *md = &rt->mods[c->m];
        md->open_calls--;
        c->on_stack = 0;
        c->ended = 1;
        c->c_done = 1; /* hook C never runs */
        if (rt->pol->unwound) {
            zo_status s = rt->pol->unwound(rt, idx);
            if (s && !first) first = s;
        }
    }
    if (catcher == ZO_NO_MODULE && rt->ctx[rt->n_ctx - 1].type == ZO_CTX_FWD) {
        /* caught outside every module: this forward pass is over */
        rt->n_ctx--;
        rt->graphs[cur].building = 0;
        zo_status s = free_graph(rt, cur, 1);
        if (s && !first) first = s;
        if (rt->pol->sweep && zo__n_bwd(rt) == 0 && rt->n_fstack == 0) {
            s = rt->pol->sweep(rt, rt->n_ctx == 0);
            if (s && !first) first = s;
        }
    }
    return first;
}

/* ------------------------------------------------------------------ */
/* backward                                                             */
/* ------------------------------------------------------------------ */

zo_status zo_backward_begin(zo_runtime *rt, zo_graph gh, int retain_graph) {
    if (!rt) return zo__fail_tls(ZO_ERR_INVALID_ARG, "%s: rt is NULL", __func__);
    uint32_t gslot = graph_slot(rt, gh);
    if (gslot == ZO_NONE32) return zo__fail(rt, ZO_ERR_BAD_HANDLE, "zo_backward_begin: unknown graph");
    zo_graph_rec *g = &rt->graphs[gslot];
    if (g->building) return zo__fail(rt, ZO_ERR_PROTOCOL, "zo_backward_begin: graph still being built");
    if (g->running) return zo__fail(rt, ZO_ERR_PROTOCOL, "zo_backward_begin: graph already being backpropagated");
    if (zo__reserve(rt, (void **)&rt->ctx, &rt->cap_ctx, rt->n_ctx + 1, sizeof *rt->ctx))
        return zo__fail(rt, ZO_ERR_NOMEM, "zo_backward_begin");
    if (zo__n_bwd(rt) == 0) rt->bwd_epoch++;
    rt->ctx[rt->n_ctx].type = ZO_CTX_BWD;
    rt->ctx[rt->n_ctx].graph = gslot;
    rt->ctx[rt->n_ctx].epoch = rt->bwd_epoch;
    rt->n_ctx++;
    rt->n_bwd_ctx++;
    g->running = 1;
    g->retain = retain_graph != 0;
    zo__emit(rt, ZO_EV_BACKWARD_BEGIN, ZO_NO_MODULE, ZO_NO_PARAM, gh, 0, retain_graph != 0, 0, NULL);
    return ZO_OK;
}

zo_status zo_output_grad(zo_runtime *rt, zo_grad_handle h) {
    if (!rt) return zo__fail_tls(ZO_ERR_INVALID_ARG, "%s: rt is NULL", __func__);
    return rt->pol->output_grad(rt, h, zo__h_kind(rt, h));
}

zo_status zo_input_grad(zo_runtime *rt, zo_grad_handle h) {
    if (!rt) return zo__fail_tls(ZO_ERR_INVALID_ARG, "%s: rt is NULL", __func__);
    return rt->pol->input_grad(rt, h, zo__h_kind(rt, h));
}

zo_status zo_param_grad_ready(zo_runtime *rt, zo_param_id p) {
    if (!rt) return zo__fail_tls(ZO_ERR_INVALID_ARG, "%s: rt is NULL", __func__);
    if (p >= rt->n_pars) return zo__fail(rt, ZO_ERR_BAD_HANDLE, "zo_param_grad_ready: unknown parameter %u", p);
    zo_par *pr = &rt->pars[p];
    if (!pr->trainable) return zo__fail(rt, ZO_ERR_INVALID_ARG, "zo_param_grad_ready: parameter %u is frozen", p);
    zo_status s = zo__hook_legal(rt, ZO__HOOK_PARAM_GRAD_READY, ZO__CALL_NONE, ZO_NO_MODULE);
    if (s) return s;
    s = zo__rebuild(rt);
    if (s) return s;
    zo__emit(rt, ZO_EV_PARAM_GRAD_READY, ZO_NO_MODULE, p, 0, 0, 0, 0, NULL);
    return rt->pol->param_grad_ready(rt, p);
}

zo_status zo_backward_end(zo_runtime *rt, zo_graph gh) {
    if (!rt) return zo__fail_tls(ZO_ERR_INVALID_ARG, "%s: rt is NULL", __func__);
    uint32_t gslot = graph_slot(rt, gh);
    if (gslot == ZO_NONE32) return zo__fail(rt, ZO_ERR_BAD_HANDLE, "zo_backward_end: unknown graph");
    if (rt->n_ctx == 0 || rt->ctx[rt->n_ctx - 1].type != ZO_CTX_BWD || rt->ctx[rt->n_ctx - 1].graph != gslot)
        return zo__fail(rt, ZO_ERR_PROTOCOL, "zo_backward_end: graph is not the innermost running backward");
    for (uint32_t i = 0; i < rt->n_fstack; i++)
        if (rt->calls[rt->fstack[i]].graph == gslot)
            return zo__fail(rt, ZO_ERR_PROTOCOL,
                            "zo_backward_end: module %u still has an open (recompute) call: "
                            "zo_forward_abort() it first",
                            rt->calls[rt->fstack[i]].m);
    zo_graph_rec *g = &rt->graphs[gslot];
    rt->n_ctx--;
    rt->n_bwd_ctx--;
    int outermost = zo__n_bwd(rt) == 0;
    zo__emit(rt, ZO_EV_BACKWARD_END, ZO_NO_MODULE, ZO_NO_PARAM, gh, 0, g->retain, 0, NULL);
    zo_status first = rt->pol->backward_end(rt, gslot, gh, outermost);
    g->running = 0;
    if (!g->retain) {
        zo_status s = free_graph(rt, gslot, 0);
        if (s && !first) first = s;
    }
    if (outermost && rt->pol->sweep) {
        zo_status s = rt->pol->sweep(rt, 1);
        if (s && !first) first = s;
    }
    return first;
}

zo_status zo_graph_discard(zo_runtime *rt, zo_graph gh) {
    if (!rt) return zo__fail_tls(ZO_ERR_INVALID_ARG, "%s: rt is NULL", __func__);
    uint32_t gslot = graph_slot(rt, gh);
    if (gslot == ZO_NONE32) return zo__fail(rt, ZO_ERR_BAD_HANDLE, "zo_graph_discard: unknown graph");
    zo_graph_rec *g = &rt->graphs[gslot];
    if (g->building || g->running)
        return zo__fail(rt, ZO_ERR_PROTOCOL, "zo_graph_discard: graph is being built or backpropagated");
    zo_status first = free_graph(rt, gslot, 1);
    if (rt->pol->sweep && rt->n_ctx == 0) {
        /* nothing else is running: what the discarded pass gathered or
         * prefetched for its backward is released now */
        zo_status s = rt->pol->sweep(rt, 1);
        if (s && !first) first = s;
    }
    return first;
}

/* ------------------------------------------------------------------ */
/* access, sweep, reset                                                 */
/* ------------------------------------------------------------------ */

zo_status zo_param_access(zo_runtime *rt, zo_module_id m, zo_param_id p, const void **out_data, size_t *out_bytes) {
    if (!rt) return zo__fail_tls(ZO_ERR_INVALID_ARG, "%s: rt is NULL", __func__);
    if (!out_data) return zo__fail(rt, ZO_ERR_INVALID_ARG, "zo_param_access: out_data is NULL");
    *out_data = NULL;
    if (out_bytes) *out_bytes = 0;
    zo_status s = check_module(rt, m, "zo_param_access");
    if (s) return s;
    if (p >= rt->n_pars) return zo__fail(rt, ZO_ERR_BAD_HANDLE, "zo_param_access: unknown parameter %u", p);
    zo_par *pr = &rt->pars[p];
    zo__emit(rt, ZO_EV_PARAM_ACCESS, m, p, 0, 0, 0, 0, zo_param_status_name(pr->status));
    if (pr->status == ZO_PARAM_NOT_AVAILABLE) {
        if (ZO_IS_DS(rt) && rt->n_fstack == 0) /* DeepSpeed gathers on access only inside a forward */
            return zo__fail(rt, ZO_ERR_NOT_AVAILABLE,
                            "module %u read parameter %u while it is NOT_AVAILABLE (no gather outside forward)", m, p);
        s = zo__gather(rt, &p, 1, 0);
        if (s) return s;
        rt->st.unplanned_fetches++;
        zo__emit(rt, ZO_EV_UNPLANNED_FETCH, m, p, 0, 0, 0, 0, "gather on access");
    }
    if (pr->status == ZO_PARAM_INFLIGHT) {
        s = zo__wait_param(rt, p);
        if (s) return s;
    }
    *out_data = pr->full;
    if (out_bytes) *out_bytes = pr->full ? (size_t)pr->numel * (pr->esz_m1 + 1u) : 0;
    return ZO_OK;
}

zo_status zo_release_all(zo_runtime *rt) {
    if (!rt) return zo__fail_tls(ZO_ERR_INVALID_ARG, "%s: rt is NULL", __func__);
    zo__emit(rt, ZO_EV_RELEASE_ALL, ZO_NO_MODULE, ZO_NO_PARAM, 0, 0, 0, 0, NULL);
    if (rt->cfg.verify_collectives) {
        /* the optimizer step's collectives: on a mismatch (or a failed
         * exchange) the sweep does not run, the call has no effect */
        zo_status s = fp_verify_step(rt);
        if (s) return s;
    }
    zo_status first = ZO_OK;
    /* only live parameters have something to wait, clear or release; the
     * sorted copy stays valid through both loops (waits and releases only) */
    uint32_t n = zo__live_pars_sorted(rt);
    for (uint32_t t = 0; t < n; t++) {
        zo_param_id p = rt->live_sorted[t];
        zo_par *pr = &rt->pars[p];
        if (pr->status == ZO_PARAM_INFLIGHT) {
            zo_status s = zo__wait_param(rt, p);
            if (s && !first) first = s;
        }
        /* release_and_reset_all (DeepSpeed 0.19.8, 0.15.4): ds_active_sub_modules.clear()
         * and __inflight_param_registry.pop(param) */
        pr->n_act = 0;
        zo__par_set_ds_reg(rt, p, 0);
    }
    if (rt->pol->release_all_calls) rt->pol->release_all_calls(rt);
    for (uint32_t t = 0; t < n; t++) {
        zo_param_id p = rt->live_sorted[t];
        /* release_and_reset_all: DeepSpeed partitions ds_persist parameters
         * too (the next fetch gathers them again); per-call keeps them */
        zo_status s = zo__release_param(rt, p, 1 | ZO_DS_REL(rt));
        if (s && !first) first = s;
    }
    if (rt->pol->step_end) {
        zo_status s = rt->pol->step_end(rt);
        if (s && !first) first = s;
    }
    /* idle graphs end here */
    for (uint32_t gs = 0; gs < rt->n_graphs; gs++) {
        zo_graph_rec *g = &rt->graphs[gs];
        if (g->in_use && !g->building && !g->running) {
            zo_status s = free_graph(rt, gs, 0);
            if (s && !first) first = s;
        }
    }
    return first;
}

zo_status zo_reset_step(zo_runtime *rt, int eval) {
    if (!rt) return zo__fail_tls(ZO_ERR_INVALID_ARG, "%s: rt is NULL", __func__);
    if (eval != 0 && eval != 1) return zo__fail(rt, ZO_ERR_INVALID_ARG, "zo_reset_step: eval must be 0 or 1");
    zo_coord *co = &rt->coord[ZO_IS_DS(rt) ? 0 : eval]; /* one coordinator (0.15+) */
    for (uint32_t i = 0; i < rt->n_fstack; i++)
        if (zo__coord_of_graph(rt, rt->calls[rt->fstack[i]].graph) == co)
            return zo__fail(rt, ZO_ERR_PROTOCOL,
                            "zo_reset_step: module %u's call of this coordinator is open (reset_step runs "
                            "at the start of a forward, before any module call)",
                            rt->calls[rt->fstack[i]].m);
    zo_status s = zo__coord_reset_step(rt, co);
    if (s == ZO_ERR_NOMEM || s == ZO_ERR_LIMIT) return s; /* no effect */
    rt->st.steps++;
    zo__emit(rt, ZO_EV_RESET_STEP, ZO_NO_MODULE, ZO_NO_PARAM, 0, 0, 0, 0, eval ? "eval" : "train");
    return s;
}
