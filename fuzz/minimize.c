/*
 * minimize.c - structure-aware scenario minimiser (see minimize.h).
 *
 * Candidates are enumerated per change kind with a flat index; a change
 * is kept when the candidate is valid, strictly smaller (zs_min_cost,
 * lexicographic) and still violates the same invariant under the same
 * policy and order.  After an accepted change the same index is tried
 * again (the item there is now a different one); a round goes over all
 * kinds; rounds repeat until one accepts nothing.
 */
#include "minimize.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ranks.h"
#include "scn.h"
#include "world.h"

void zs_min_opts_init(zs_min_opts *o) {
    memset(o, 0, sizeof *o);
    o->policy = -1;
    o->order_mode = -1;
    o->inv = 0;
    zs_run_opts_init(&o->run);
    o->max_runs = 0;
}

void zs_min_size_of(const zs_scenario *s, zs_min_size *out) {
    memset(out, 0, sizeof *out);
    out->steps = s->n_steps;
    for (unsigned i = 0; i < s->n_steps; i++) {
        out->passes += s->step[i].n_passes;
        for (unsigned q = 0; q < s->step[i].n_passes; q++) out->calls += s->step[i].pass[q].n_calls;
    }
    out->modules = s->n_modules;
    out->params = s->n_params;
    out->uses = s->n_uses;
    out->order_bytes = s->cfg.order_mode == ZS_ORDER_FUZZED ? s->n_order : 0;
    out->lines = zs_scn_line_count(s);
}

/* ------------------------------------------------------------------ */
/* Rank edits follow the structure                                      */
/* ------------------------------------------------------------------ */

/* Removes edit k. */
static void edit_remove(zs_scenario *s, unsigned k) {
    for (unsigned j = k; j + 1 < s->n_edits; j++) s->edit[j] = s->edit[j + 1];
    s->n_edits--;
    memset(&s->edit[s->n_edits], 0, sizeof s->edit[0]);
}

/* Calls of step si pass pi were renumbered: map[c] is the new index of
 * old call c, or -1 if it is gone (edits naming it are dropped). */
static void edits_remap_calls(zs_scenario *s, unsigned si, unsigned pi, const int *map, unsigned n) {
    for (unsigned k = s->n_edits; k-- > 0;) {
        zs_rank_edit *e = &s->edit[k];
        if (e->kind == ZS_EDIT_SKIP_STEP || e->step != si || e->pass != pi) continue;
        if (e->call >= n || map[e->call] < 0)
            edit_remove(s, k);
        else
            e->call = (zs_id)map[e->call];
    }
}

/* Module m was removed (ids above it shift down): ROUTE edits to m go. */
static void edits_remap_module(zs_scenario *s, unsigned m) {
    for (unsigned k = s->n_edits; k-- > 0;) {
        zs_rank_edit *e = &s->edit[k];
        if (e->kind != ZS_EDIT_ROUTE) continue;
        if (e->module == m)
            edit_remove(s, k);
        else if (e->module > m)
            e->module--;
    }
}

/* Step si removed (keep < 0) or pass `keep` of it became its only pass
 * (keep >= 0, the step turned into a train step). */
static void edits_remap_step(zs_scenario *s, unsigned si, int keep) {
    for (unsigned k = s->n_edits; k-- > 0;) {
        zs_rank_edit *e = &s->edit[k];
        if (e->step < si) continue;
        if (e->step > si) {
            if (keep < 0) e->step--;
            continue;
        }
        if (keep < 0)
            edit_remove(s, k);
        else if (e->kind != ZS_EDIT_SKIP_STEP) {
            if (e->pass != (unsigned)keep)
                edit_remove(s, k);
            else
                e->pass = 0;
        }
    }
}

/* Pass q of step si removed. */
static void edits_remap_pass(zs_scenario *s, unsigned si, unsigned q) {
    for (unsigned k = s->n_edits; k-- > 0;) {
        zs_rank_edit *e = &s->edit[k];
        if (e->step != si || e->kind == ZS_EDIT_SKIP_STEP || e->pass < q) continue;
        if (e->pass == q)
            edit_remove(s, k);
        else
            e->pass--;
    }
}

/* ------------------------------------------------------------------ */
/* Editing a pass                                                       */
/* ------------------------------------------------------------------ */

static void ref_remove(zs_ref *list, uint8_t *n, unsigned i) {
    for (unsigned k = i; k + 1 < *n; k++) list[k] = list[k + 1];
    (*n)--;
    memset(&list[*n], 0, sizeof list[*n]);
}

static void mix_remove(zs_call *cl, unsigned k) {
    for (unsigned q = k; q + 1 < cl->n_mix; q++) cl->mix[q] = cl->mix[q + 1];
    cl->n_mix--;
    memset(&cl->mix[cl->n_mix], 0, sizeof cl->mix[0]);
}

/* Input slot `slot` (positional or keyword) of call c is gone: its mixed
 * terms go, later slots move down by one. */
static void mix_slot_gone(zs_call *cl, unsigned slot) {
    for (unsigned k = cl->n_mix; k-- > 0;) {
        if (cl->mix[k].slot == slot)
            mix_remove(cl, k);
        else if (cl->mix[k].slot > slot)
            cl->mix[k].slot--;
    }
}

static void drop_arg_refs(zs_pass *p, unsigned c, unsigned i);

/* Removes keyword input k of call c (ARG n_in + k in its scope). */
static void drop_kw(zs_pass *p, unsigned c, unsigned k) {
    zs_call *cl = &p->calls[c];
    if (k >= cl->n_kw) return;
    unsigned slot = (unsigned)cl->n_in + k;
    ref_remove(cl->kw, &cl->n_kw, k);
    mix_slot_gone(cl, slot);
    drop_arg_refs(p, c, slot);
}

/* References to input slot i of call c (in its own scope: its use[], its
 * children's inputs, keyword inputs and mixed terms) are gone; higher
 * slots move down by one. */
static void drop_arg_refs(zs_pass *p, unsigned c, unsigned i) {
    zs_call *cl = &p->calls[c];
    for (unsigned k = cl->n_use; k-- > 0;) {
        zs_ref *r = &cl->use[k];
        if (r->kind != ZS_REF_ARG) continue;
        if (r->index == i)
            ref_remove(cl->use, &cl->n_use, k);
        else if (r->index > i)
            r->index--;
    }
    for (unsigned j = 0; j < ZS_MAX_OUT; j++) {
        zs_ref *r = &cl->alias[j];
        if (!((cl->out_alias >> j) & 1u) || r->kind != ZS_REF_ARG) continue;
        if (r->index == i)
            cl->out_alias &= (uint8_t) ~(1u << j); /* the op makes it instead */
        else if (r->index > i)
            r->index--;
    }
    for (unsigned j = c + 1; j < p->n_calls; j++) {
        zs_call *ch = &p->calls[j];
        if (ch->parent != c) continue;
        for (unsigned k = ch->n_mix; k-- > 0;) {
            zs_ref *r = &ch->mix[k].ref;
            if (r->kind != ZS_REF_ARG) continue;
            if (r->index == i)
                mix_remove(ch, k);
            else if (r->index > i)
                r->index--;
        }
        for (unsigned k = ch->n_kw; k-- > 0;) {
            zs_ref *r = &ch->kw[k];
            if (r->kind != ZS_REF_ARG) continue;
            if (r->index == i)
                drop_kw(p, j, k);
            else if (r->index > i)
                r->index--;
        }
        for (unsigned k = ch->n_in; k-- > 0;) {
            zs_ref *r = &ch->in[k];
            if (r->kind != ZS_REF_ARG) continue;
            if (r->index == i)
                zs_min_pass_drop_input(p, j, k);
            else if (r->index > i)
                r->index--;
        }
    }
}

void zs_min_pass_drop_input(zs_pass *p, unsigned c, unsigned i) {
    zs_call *cl = &p->calls[c];
    if (i >= cl->n_in) return;
    ref_remove(cl->in, &cl->n_in, i);
    mix_slot_gone(cl, i);
    drop_arg_refs(p, c, i);
}

void zs_min_pass_drop_output(zs_pass *p, unsigned c, unsigned j) {
    zs_call *cl = &p->calls[c];
    if (j >= cl->n_out) return;
    cl->n_out--;
    cl->out_norg = (uint8_t)((cl->out_norg & ((1u << j) - 1)) | ((cl->out_norg >> (j + 1)) << j));
    for (unsigned q = j; q + 1 < ZS_MAX_OUT; q++) cl->alias[q] = cl->alias[q + 1];
    memset(&cl->alias[ZS_MAX_OUT - 1], 0, sizeof cl->alias[0]);
    cl->out_alias = (uint8_t)((cl->out_alias & ((1u << j) - 1)) | ((cl->out_alias >> (j + 1)) << j));
    unsigned par = cl->parent;
    if (par == ZS_NONE) {
        uint8_t m = p->loss_mask;
        p->loss_mask = (uint8_t)((m & ((1u << j) - 1)) | ((m >> (j + 1)) << j));
        return;
    }
    zs_call *pc = &p->calls[par];
    for (unsigned k = pc->n_use; k-- > 0;) {
        zs_ref *r = &pc->use[k];
        if (r->kind != ZS_REF_OUT || r->call != c) continue;
        if (r->index == j)
            ref_remove(pc->use, &pc->n_use, k);
        else if (r->index > j)
            r->index--;
    }
    for (unsigned q = 0; q < ZS_MAX_OUT; q++) {
        zs_ref *r = &pc->alias[q];
        if (!((pc->out_alias >> q) & 1u) || r->kind != ZS_REF_OUT || r->call != c) continue;
        if (r->index == j)
            pc->out_alias &= (uint8_t) ~(1u << q); /* the op makes it instead */
        else if (r->index > j)
            r->index--;
    }
    for (unsigned s = c + 1; s < p->n_calls; s++) {
        zs_call *sc = &p->calls[s];
        if (sc->parent != par) continue;
        for (unsigned k = sc->n_mix; k-- > 0;) {
            zs_ref *r = &sc->mix[k].ref;
            if (r->kind != ZS_REF_OUT || r->call != c) continue;
            if (r->index == j)
                mix_remove(sc, k);
            else if (r->index > j)
                r->index--;
        }
        for (unsigned k = sc->n_kw; k-- > 0;) {
            zs_ref *r = &sc->kw[k];
            if (r->kind != ZS_REF_OUT || r->call != c) continue;
            if (r->index == j)
                drop_kw(p, s, k);
            else if (r->index > j)
                r->index--;
        }
        for (unsigned k = sc->n_in; k-- > 0;) {
            zs_ref *r = &sc->in[k];
            if (r->kind != ZS_REF_OUT || r->call != c) continue;
            if (r->index == j)
                zs_min_pass_drop_input(p, s, k);
            else if (r->index > j)
                r->index--;
        }
    }
}

/* end (exclusive) of call c's subtree in pre-order */
static unsigned subtree_end(const zs_pass *p, unsigned c) {
    int d = zs_call_depth(p, c);
    unsigned e = c + 1;
    while (e < p->n_calls && zs_call_depth(p, e) > d) e++;
    return e;
}

void zs_min_pass_drop_call(zs_pass *p, unsigned c) {
    if (c == 0 || c >= p->n_calls) return;
    while (p->calls[c].n_out) zs_min_pass_drop_output(p, c, p->calls[c].n_out - 1u);
    unsigned e = subtree_end(p, c), n = e - c;
    for (unsigned j = c; j + n < p->n_calls; j++) p->calls[j] = p->calls[j + n];
    p->n_calls = (uint32_t)(p->n_calls - n);
    memset(&p->calls[p->n_calls], 0, sizeof(zs_call) * n);
#define REMAP(x) ((x) != ZS_NONE && (x) >= e ? (zs_id)((x)-n) : (x))
    for (unsigned j = 0; j < p->n_calls; j++) {
        zs_call *cl = &p->calls[j];
        cl->parent = REMAP(cl->parent);
        cl->catcher = REMAP(cl->catcher);
        for (unsigned k = 0; k < cl->n_in; k++)
            if (cl->in[k].kind == ZS_REF_OUT) cl->in[k].call = REMAP(cl->in[k].call);
        for (unsigned k = 0; k < cl->n_use; k++)
            if (cl->use[k].kind == ZS_REF_OUT) cl->use[k].call = REMAP(cl->use[k].call);
        for (unsigned k = 0; k < cl->n_kw; k++)
            if (cl->kw[k].kind == ZS_REF_OUT) cl->kw[k].call = REMAP(cl->kw[k].call);
        for (unsigned k = 0; k < ZS_MAX_OUT; k++)
            if (((cl->out_alias >> k) & 1u) && cl->alias[k].kind == ZS_REF_OUT)
                cl->alias[k].call = REMAP(cl->alias[k].call);
        for (unsigned k = 0; k < cl->n_mix; k++)
            if (cl->mix[k].ref.kind == ZS_REF_OUT) cl->mix[k].ref.call = REMAP(cl->mix[k].ref.call);
    }
#undef REMAP
}

/* zs_min_pass_drop_call on step si pass pi of s, edits following */
static void drop_call_s(zs_scenario *s, unsigned si, unsigned pi, unsigned c) {
    zs_pass *p = &s->step[si].pass[pi];
    if (c == 0 || c >= p->n_calls) return;
    unsigned n = p->n_calls, e = subtree_end(p, c);
    if (!s->n_edits) {
        zs_min_pass_drop_call(p, c);
        return;
    }
    int *map = malloc((size_t)n * sizeof *map);
    if (!map) return; /* out of memory: the call stays (the candidate gives no change) */
    for (unsigned j = 0; j < n; j++) map[j] = j < c ? (int)j : j < e ? -1 : (int)(j - (e - c));
    zs_min_pass_drop_call(p, c);
    edits_remap_calls(s, si, pi, map, n);
    free(map);
}

void zs_min_drop_param(zs_scenario *s, unsigned q) {
    if (q >= s->n_params) return;
    for (unsigned k = q; k + 1 < s->n_params; k++) s->par[k] = s->par[k + 1];
    s->n_params--;
    memset(&s->par[s->n_params], 0, sizeof s->par[0]);
    unsigned o = 0;
    for (unsigned u = 0; u < s->n_uses; u++) {
        zs_use x = s->use[u];
        if (x.param == q) continue;
        if (x.param > q) x.param--;
        s->use[o++] = x;
    }
    for (unsigned u = o; u < s->n_uses; u++) memset(&s->use[u], 0, sizeof s->use[u]);
    s->n_uses = (uint32_t)o;
    /* mixed inputs' parameter terms: the dropped one goes, later ids move down */
    for (unsigned i = 0; i < s->n_steps; i++)
        for (unsigned pq = 0; pq < s->step[i].n_passes; pq++) {
            zs_pass *p = &s->step[i].pass[pq];
            for (unsigned c = 0; c < p->n_calls; c++) {
                zs_call *cl = &p->calls[c];
                for (unsigned k = cl->n_mix; k-- > 0;) {
                    zs_ref *r = &cl->mix[k].ref;
                    if (r->kind != ZS_REF_PARAM) continue;
                    if (r->call == q)
                        mix_remove(cl, k);
                    else if (r->call > q)
                        r->call--;
                }
            }
        }
}

/* Removes module m's slot once nothing refers to it any more: the rank
 * edits are remapped, later modules move down one id and every module
 * reference (parents, owners, uses, callees) follows. */
static void erase_module_slot(zs_scenario *s, unsigned m) {
    if (s->n_edits) edits_remap_module(s, m);
    for (unsigned k = m; k + 1 < s->n_modules; k++) s->mod[k] = s->mod[k + 1];
    s->n_modules--;
    memset(&s->mod[s->n_modules], 0, sizeof s->mod[0]);
#define MREMAP(x) ((x) != ZS_NONE && (x) > m ? (zs_id)((x)-1) : (x))
    for (unsigned k = 0; k < s->n_modules; k++) s->mod[k].parent = MREMAP(s->mod[k].parent);
    for (unsigned q = 0; q < s->n_params; q++) s->par[q].owner = MREMAP(s->par[q].owner);
    for (unsigned u = 0; u < s->n_uses; u++) s->use[u].module = MREMAP(s->use[u].module);
    for (unsigned i = 0; i < s->n_steps; i++)
        for (unsigned q = 0; q < s->step[i].n_passes; q++) {
            zs_pass *p = &s->step[i].pass[q];
            for (unsigned c = 0; c < p->n_calls; c++) p->calls[c].module = MREMAP(p->calls[c].module);
        }
#undef MREMAP
}

int zs_min_drop_module(zs_scenario *s, unsigned m) {
    if (m == 0 || m >= s->n_modules) return -1;
    for (unsigned k = m + 1; k < s->n_modules; k++)
        if (s->mod[k].parent == m) return -1;
    /* calls of m (they have no children: m has no child modules) */
    for (unsigned i = 0; i < s->n_steps; i++)
        for (unsigned q = 0; q < s->step[i].n_passes; q++) {
            zs_pass *p = &s->step[i].pass[q];
            for (unsigned c = p->n_calls; c-- > 1;)
                if (c < p->n_calls && p->calls[c].module == m) drop_call_s(s, i, q, c);
        }
    for (unsigned q = s->n_params; q-- > 0;)
        if (s->par[q].owner == m) zs_min_drop_param(s, q);
    unsigned o = 0;
    for (unsigned u = 0; u < s->n_uses; u++)
        if (s->use[u].module != m) s->use[o++] = s->use[u];
    for (unsigned u = o; u < s->n_uses; u++) memset(&s->use[u], 0, sizeof s->use[u]);
    s->n_uses = (uint32_t)o;
    /* re-index */
    erase_module_slot(s, m);
    return 0;
}

/* Splices call c out of pass p: its child calls become calls of c's
 * caller at c's place, its inputs are substituted into them, and
 * references to its outputs are redirected to what its op consumed (or
 * dropped).  Returns 0, or -1 if it cannot be done (root call, a
 * descendant's exception is caught by c). */
static int splice_call(zs_pass *p, unsigned c) {
    if (c == 0 || c >= p->n_calls) return -1;
    zs_call *cc = &p->calls[c];
    unsigned par = cc->parent, e = subtree_end(p, c);
    /* keyword and mixed inputs around c: drop them first (C_DROP_EXT) */
    for (unsigned j = par; j < p->n_calls; j++)
        if ((j == c || p->calls[j].parent == c || p->calls[j].parent == par) && (p->calls[j].n_kw || p->calls[j].n_mix))
            return -1;
    for (unsigned j = c + 1; j < e; j++)
        if ((p->calls[j].flags & ZS_CALL_RAISE) && p->calls[j].catcher == c) return -1;
    zs_call orig = *cc;
    /* (a) inputs of c's children: ARG i -> c's input i */
    for (unsigned j = c + 1; j < e; j++) {
        zs_call *ch = &p->calls[j];
        if (ch->parent != c) continue;
        for (unsigned k = 0; k < ch->n_in; k++)
            if (ch->in[k].kind == ZS_REF_ARG) {
                uint8_t det = ch->in[k].detach;
                if (ch->in[k].index >= orig.n_in) return -1;
                ch->in[k] = orig.in[ch->in[k].index];
                ch->in[k].detach |= det;
            }
    }
    /* (c) references to c's outputs (caller's use, later siblings' inputs) */
    zs_call *pc = &p->calls[par];
    for (unsigned k = pc->n_use; k-- > 0;) {
        zs_ref *r = &pc->use[k];
        if (r->kind != ZS_REF_OUT || r->call != c) continue;
        int ok = 0;
        if (orig.n_use || ((orig.out_alias >> r->index) & 1u)) {
            /* an aliased output is its tensor; else what the op consumed */
            zs_ref u = ((orig.out_alias >> r->index) & 1u)
                           ? orig.alias[r->index]
                           : orig.use[r->index < orig.n_use ? r->index : orig.n_use - 1u];
            uint8_t det = r->detach | u.detach;
            if (u.kind == ZS_REF_ARG && u.index < orig.n_in) u = orig.in[u.index];
            if (u.kind == ZS_REF_ARG || u.kind == ZS_REF_OUT) {
                *r = u;
                r->detach = det;
                ok = 1;
            }
        }
        if (!ok) ref_remove(pc->use, &pc->n_use, k);
    }
    for (unsigned q = 0; q < ZS_MAX_OUT; q++) {
        zs_ref *r = &pc->alias[q];
        if (!((pc->out_alias >> q) & 1u) || r->kind != ZS_REF_OUT || r->call != c) continue;
        int ok = 0;
        if ((orig.out_alias >> r->index) & 1u) {
            zs_ref u = orig.alias[r->index];
            uint8_t det = r->detach | u.detach;
            if (u.kind == ZS_REF_ARG && u.index < orig.n_in) u = orig.in[u.index];
            if (u.kind == ZS_REF_ARG || u.kind == ZS_REF_OUT) {
                *r = u;
                r->detach = det;
                ok = 1;
            }
        }
        if (!ok) pc->out_alias &= (uint8_t) ~(1u << q); /* the caller's op makes it instead */
    }
    for (unsigned s = e; s < p->n_calls; s++) {
        zs_call *sc = &p->calls[s];
        if (sc->parent != par) continue;
        for (unsigned k = sc->n_in; k-- > 0;) {
            zs_ref *r = &sc->in[k];
            if (r->kind != ZS_REF_OUT || r->call != c) continue;
            if (orig.n_use || ((orig.out_alias >> r->index) & 1u)) {
                zs_ref u = ((orig.out_alias >> r->index) & 1u)
                               ? orig.alias[r->index]
                               : orig.use[r->index < orig.n_use ? r->index : orig.n_use - 1u];
                uint8_t det = r->detach | u.detach;
                if (u.kind == ZS_REF_ARG && u.index < orig.n_in) u = orig.in[u.index];
                *r = u;
                r->detach = det;
            } else {
                zs_min_pass_drop_input(p, s, k);
            }
        }
    }
    /* remove entry c; its children move up to the caller */
    for (unsigned j = c + 1; j < e; j++)
        if (p->calls[j].parent == c) p->calls[j].parent = (zs_id)par;
    for (unsigned j = c; j + 1 < p->n_calls; j++) p->calls[j] = p->calls[j + 1];
    p->n_calls--;
    memset(&p->calls[p->n_calls], 0, sizeof p->calls[0]);
#define REMAP1(x) ((x) != ZS_NONE && (x) > c ? (zs_id)((x)-1) : (x))
    for (unsigned j = 0; j < p->n_calls; j++) {
        zs_call *cl = &p->calls[j];
        cl->parent = REMAP1(cl->parent);
        cl->catcher = REMAP1(cl->catcher);
        for (unsigned k = 0; k < cl->n_in; k++)
            if (cl->in[k].kind == ZS_REF_OUT) cl->in[k].call = REMAP1(cl->in[k].call);
        for (unsigned k = 0; k < cl->n_use; k++)
            if (cl->use[k].kind == ZS_REF_OUT) cl->use[k].call = REMAP1(cl->use[k].call);
        for (unsigned k = 0; k < cl->n_kw; k++)
            if (cl->kw[k].kind == ZS_REF_OUT) cl->kw[k].call = REMAP1(cl->kw[k].call);
        for (unsigned k = 0; k < ZS_MAX_OUT; k++)
            if (((cl->out_alias >> k) & 1u) && cl->alias[k].kind == ZS_REF_OUT)
                cl->alias[k].call = REMAP1(cl->alias[k].call);
        for (unsigned k = 0; k < cl->n_mix; k++)
            if (cl->mix[k].ref.kind == ZS_REF_OUT) cl->mix[k].ref.call = REMAP1(cl->mix[k].ref.call);
    }
#undef REMAP1
    return 0;
}

/* Removes module m (not the root) by splicing: its child modules become
 * children of its parent, its parameters move to its parent, and each of
 * its calls is replaced by its child calls (splice_call).  Returns 0 or -1. */
static int splice_module(zs_scenario *s, unsigned m) {
    if (m == 0 || m >= s->n_modules) return -1;
    unsigned up = s->mod[m].parent;
    for (unsigned i = 0; i < s->n_steps; i++)
        for (unsigned q = 0; q < s->step[i].n_passes; q++) {
            zs_pass *p = &s->step[i].pass[q];
            for (unsigned c = p->n_calls; c-- > 1;) {
                if (c >= p->n_calls || p->calls[c].module != m) continue;
                unsigned n = p->n_calls;
                int *map = NULL;
                if (s->n_edits && !(map = malloc((size_t)n * sizeof *map))) return -1;
                if (splice_call(p, c) != 0) {
                    free(map);
                    return -1;
                }
                if (map) {
                    for (unsigned j = 0; j < n; j++) map[j] = j < c ? (int)j : j == c ? -1 : (int)j - 1;
                    edits_remap_calls(s, i, q, map, n);
                    free(map);
                }
            }
        }
    for (unsigned q = 0; q < s->n_params; q++)
        if (s->par[q].owner == m) s->par[q].owner = (zs_id)up;
    unsigned o = 0;
    for (unsigned u = 0; u < s->n_uses; u++) {
        zs_use x = s->use[u];
        if (x.module == m) {
            x.module = (zs_id)up;
            int dup = s->par[x.param].owner == up;
            for (unsigned k = 0; k < o && !dup; k++) dup = s->use[k].module == x.module && s->use[k].param == x.param;
            if (dup) continue;
        }
        s->use[o++] = x;
    }
    for (unsigned u = o; u < s->n_uses; u++) memset(&s->use[u], 0, sizeof s->use[u]);
    s->n_uses = (uint32_t)o;
    for (unsigned k = m + 1; k < s->n_modules; k++)
        if (s->mod[k].parent == m) s->mod[k].parent = (zs_id)up;
    erase_module_slot(s, m);
    return 0;
}

/* drops module m and its whole subtree (deepest / highest ids first) */
static int drop_module_subtree(zs_scenario *s, unsigned m) {
    if (m == 0 || m >= s->n_modules) return -1;
    unsigned e = m + 1;
    while (e < s->n_modules && zs_module_is_ancestor(s, m, e)) e++;
    for (unsigned k = e; k-- > m;)
        if (zs_min_drop_module(s, k) != 0) return -1;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Cost                                                                 */
/* ------------------------------------------------------------------ */

/* The config zs_scenario_init gives (what the minimiser moves towards). */
static zs_config default_config(void) {
    static zs_config cfg;
    static int have;
    if (!have) {
        zs_scenario d;
        memset(&d, 0, sizeof d);
        zs_decode(NULL, 0, &d); /* the config is set even if the arrays could not be */
        cfg = d.cfg;
        zs_scenario_free(&d);
        have = 1;
    }
    return cfg;
}

/* Clears passes from..ZS_MAX_PASSES-1 of st, keeping their storage. */
static void clear_passes(zs_step *st, unsigned from) {
    for (unsigned k = from; k < ZS_MAX_PASSES; k++) {
        st->pass[k].n_calls = 0;
        st->pass[k].loss_mask = 0;
    }
}

#define NCOST 5
static void cost_of(const zs_scenario *s, uint64_t c[NCOST]) {
    struct {
        zs_config cfg;
    } d = {default_config()};
    memset(c, 0, sizeof(uint64_t) * NCOST);
    c[0] = (uint64_t)s->n_steps + s->n_modules + s->n_params + s->n_uses;
    for (unsigned i = 0; i < s->n_steps; i++) {
        const zs_step *st = &s->step[i];
        c[0] += st->n_passes;
        if (st->kind != ZS_STEP_TRAIN) c[2]++;
        for (unsigned q = 0; q < st->n_passes; q++) {
            const zs_pass *p = &st->pass[q];
            c[0] += p->n_calls;
            c[1] += (uint64_t)__builtin_popcount(p->loss_mask);
            for (unsigned k = 0; k < p->n_calls; k++) {
                const zs_call *cl = &p->calls[k];
                c[1] += (uint64_t)cl->n_in + cl->n_out + cl->n_use + cl->n_kw + cl->n_mix +
                        (uint64_t)__builtin_popcount(cl->out_norg) + (uint64_t)__builtin_popcount(cl->out_alias) +
                        cl->op_nosave;
                c[2] += (uint64_t)__builtin_popcount(cl->flags);
                for (unsigned r = 0; r < cl->n_in; r++)
                    c[2] += (uint64_t)cl->in[r].detach + (cl->in[r].kind == ZS_REF_OUT);
                for (unsigned r = 0; r < cl->n_use; r++)
                    c[2] += (uint64_t)cl->use[r].detach + (cl->use[r].kind == ZS_REF_OUT);
            }
        }
    }
    for (unsigned m = 0; m < s->n_modules; m++) {
        c[2] += (s->mod[m].flags & ZS_MOD_Z3_LEAF) ? 1 : 0;
        c[2] += (s->mod[m].flags & ZS_MOD_GATHER_ALWAYS) ? 1 : 0;
    }
    c[0] += s->n_edits;
    c[2] += (uint64_t)s->cfg.all_ranks + s->cfg.verify_collectives;
    for (unsigned k = 0; k < s->n_edits; k++) c[4] += (uint64_t)s->edit[k].rank + s->edit[k].kind;
    for (unsigned q = 0; q < s->n_params; q++) {
        c[2] += (s->par[q].flags & ZS_PARAM_FROZEN) ? 1 : 0;
        c[3] += s->par[q].elem_size != 4;
        c[3] += (uint64_t)zs_module_depth(s, s->par[q].owner);
        c[4] += s->par[q].numel;
    }
    c[2] += s->cfg.order_mode == ZS_ORDER_FUZZED;
    c[3] += s->cfg.deferred != d.cfg.deferred;
    c[3] += s->cfg.world_size != d.cfg.world_size;
    for (int k = 0; k < ZS_TH_COUNT; k++)
        c[3] += *zs_config_threshold((zs_config *)&s->cfg, k) != *zs_config_threshold(&d.cfg, k);
    c[4] += (uint64_t)s->cfg.world_size + s->cfg.rank + s->cfg.progress_every;
    if (s->cfg.order_mode == ZS_ORDER_FUZZED) {
        c[4] += s->n_order;
        for (unsigned k = 0; k < s->n_order; k++) c[4] += s->order[k];
    }
}

static int cost_less(const uint64_t a[NCOST], const uint64_t b[NCOST]) {
    for (int i = 0; i < NCOST; i++) {
        if (a[i] < b[i]) return 1;
        if (a[i] > b[i]) return 0;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Candidates                                                           */
/* ------------------------------------------------------------------ */

enum {
    C_DROP_EDIT,
    C_DROP_STEP,
    C_STEP_TO_TRAIN,
    C_DROP_PASS,
    C_DROP_SUBTREE,
    C_SPLICE_MODULE,
    C_DROP_CALL,
    C_DROP_MODULE,
    C_DROP_PARAM,
    C_DROP_USE,
    C_DROP_OUTPUT,
    C_DROP_INPUT,
    C_DROP_EXT,
    C_DROP_USEREF,
    C_DROP_LOSS,
    C_CLEAR_CALLFLAG,
    C_CLEAR_DETACH,
    C_REF_TO_ARG,
    C_CLEAR_LEAF,
    C_CLEAR_GATHER,
    C_CLEAR_FROZEN,
    C_CONFIG,
    C_NUMEL_ONE,
    C_NUMEL_HALF,
    C_ELEM,
    C_PARAM_UP,
    C_ORDER,
    C_KINDS
};

static const char *const kind_names[C_KINDS] = {"drop rank edit",
                                                "drop step",
                                                "step -> train",
                                                "drop pass",
                                                "drop module subtree",
                                                "splice module",
                                                "drop call",
                                                "drop module",
                                                "drop param",
                                                "drop use",
                                                "drop output",
                                                "drop input",
                                                "drop keyword/mixed input",
                                                "drop op use",
                                                "drop loss term",
                                                "clear call flag",
                                                "clear detach",
                                                "child output -> arg0/batch_rg",
                                                "clear z3_leaf",
                                                "clear gather_always",
                                                "clear frozen",
                                                "config default",
                                                "numel -> 1",
                                                "numel / 2",
                                                "elem_size -> 4",
                                                "param -> parent module",
                                                "order bytes"};

/* iterate (step, pass, call) in order; returns 1 and sets pointers for the
 * k-th call with index >= first, else 0 */
static int nth_call(zs_scenario *s, unsigned k, unsigned first, unsigned *si, unsigned *pi, unsigned *ci) {
    for (unsigned i = 0; i < s->n_steps; i++)
        for (unsigned q = 0; q < s->step[i].n_passes; q++) {
            zs_pass *p = &s->step[i].pass[q];
            unsigned n = p->n_calls > first ? p->n_calls - first : 0;
            if (k < n) {
                *si = i;
                *pi = q;
                *ci = first + k;
                return 1;
            }
            k -= n;
        }
    return 0;
}

enum { CAND_END = -1, CAND_SKIP = 0, CAND_OK = 1 };

/* Builds candidate (kind, idx) from cur into out.  CAND_END: no item idx
 * for this kind; CAND_SKIP: item exists but gives no change. */
static int make_candidate1(zs_scenario *s, int kind, unsigned idx, int keep_order);

static int make_candidate(const zs_scenario *cur, int kind, unsigned idx, zs_scenario *out, int keep_order) {
    if (zs_scenario_copy(out, cur)) return CAND_SKIP; /* out of memory: no candidate */
    zs_scenario *s = out;
    int rc = make_candidate1(s, kind, idx, keep_order);
    /* edits the change made invalid (a route whose subtree no longer maps,
     * a raise on a call that now unwinds, ...) go; the candidate stays valid */
    if (rc == CAND_OK && s->n_edits) zs_scenario_drop_invalid_edits(s);
    return rc;
}

static int make_candidate1(zs_scenario *s, int kind, unsigned idx, int keep_order) {
    unsigned si, pi, ci;
    switch (kind) {
    case C_DROP_EDIT:
        if (idx >= s->n_edits) return CAND_END;
        edit_remove(s, idx);
        return CAND_OK;
    case C_DROP_STEP:
        if (idx >= s->n_steps) return CAND_END;
        if (s->n_steps < 2) return CAND_SKIP;
        {
            /* rotate step idx to the end: every step keeps its own storage */
            zs_step gone = s->step[idx];
            for (unsigned i = idx; i + 1 < s->n_steps; i++) s->step[i] = s->step[i + 1];
            s->n_steps--;
            s->step[s->n_steps] = gone;
            s->step[s->n_steps].kind = 0;
            s->step[s->n_steps].n_passes = 0;
            clear_passes(&s->step[s->n_steps], 0);
        }
        edits_remap_step(s, idx, -1);
        return CAND_OK;
    case C_STEP_TO_TRAIN: {
        /* idx = step * ZS_MAX_PASSES + pass to keep */
        unsigned i = idx / ZS_MAX_PASSES, q = idx % ZS_MAX_PASSES;
        if (i >= s->n_steps) return CAND_END;
        zs_step *st = &s->step[i];
        if (q >= st->n_passes || st->kind == ZS_STEP_TRAIN) return CAND_SKIP;
        if (q) { /* swap: each pass keeps its own storage */
            zs_pass x = st->pass[0];
            st->pass[0] = st->pass[q];
            st->pass[q] = x;
        }
        clear_passes(st, 1);
        st->kind = ZS_STEP_TRAIN;
        st->n_passes = 1;
        edits_remap_step(s, i, (int)q);
        return CAND_OK;
    }
    case C_DROP_PASS: {
        unsigned i = idx / ZS_MAX_PASSES, q = idx % ZS_MAX_PASSES;
        if (i >= s->n_steps) return CAND_END;
        zs_step *st = &s->step[i];
        if (q >= st->n_passes || st->n_passes <= 2) return CAND_SKIP;
        {
            zs_pass gone = st->pass[q]; /* rotated to the end, storage kept */
            for (unsigned k = q; k + 1 < st->n_passes; k++) st->pass[k] = st->pass[k + 1];
            st->n_passes--;
            st->pass[st->n_passes] = gone;
            clear_passes(st, st->n_passes);
        }
        edits_remap_pass(s, i, q);
        return CAND_OK;
    }
    case C_DROP_SUBTREE:
        if (idx + 1 >= s->n_modules) return CAND_END;
        {
            unsigned m = idx + 1;
            if (m + 1 >= s->n_modules || !zs_module_is_ancestor(s, m, m + 1)) return CAND_SKIP;
            return drop_module_subtree(s, m) == 0 ? CAND_OK : CAND_SKIP;
        }
    case C_SPLICE_MODULE:
        if (idx + 1 >= s->n_modules) return CAND_END;
        return splice_module(s, idx + 1) == 0 ? CAND_OK : CAND_SKIP;
    case C_DROP_MODULE:
        if (idx + 1 >= s->n_modules) return CAND_END;
        return zs_min_drop_module(s, idx + 1) == 0 ? CAND_OK : CAND_SKIP;
    case C_DROP_CALL:
        if (!nth_call(s, idx, 1, &si, &pi, &ci)) return CAND_END;
        drop_call_s(s, si, pi, ci);
        return CAND_OK;
    case C_DROP_PARAM:
        if (idx >= s->n_params) return CAND_END;
        zs_min_drop_param(s, idx);
        return CAND_OK;
    case C_DROP_USE:
        if (idx >= s->n_uses) return CAND_END;
        for (unsigned u = idx; u + 1 < s->n_uses; u++) s->use[u] = s->use[u + 1];
        s->n_uses--;
        memset(&s->use[s->n_uses], 0, sizeof s->use[0]);
        return CAND_OK;
    case C_DROP_OUTPUT:
    case C_DROP_INPUT:
    case C_DROP_EXT:
    case C_DROP_USEREF:
    case C_CLEAR_CALLFLAG:
    case C_CLEAR_DETACH:
    case C_REF_TO_ARG: {
        /* idx = call# * 16 + slot */
        unsigned slot = idx % 16;
        if (!nth_call(s, idx / 16, 0, &si, &pi, &ci)) return CAND_END;
        zs_pass *p = &s->step[si].pass[pi];
        zs_call *cl = &p->calls[ci];
        if (kind == C_DROP_OUTPUT) {
            if (slot >= cl->n_out) return CAND_SKIP;
            zs_min_pass_drop_output(p, ci, slot);
        } else if (kind == C_DROP_INPUT) {
            if (slot >= cl->n_in) return CAND_SKIP;
            zs_min_pass_drop_input(p, ci, slot);
        } else if (kind == C_DROP_EXT) {
            /* slot < ZS_MAX_MIX: a mixed input's extra term; then the keyword
             * inputs; then the outputs without grad */
            if (slot < ZS_MAX_MIX) {
                if (slot >= cl->n_mix) return CAND_SKIP;
                mix_remove(cl, slot);
            } else if (slot == 16 - 1 && cl->op_nosave && !cl->out_norg && !cl->out_alias) {
                cl->op_nosave = 0;
            } else if (slot >= ZS_MAX_MIX + ZS_MAX_KW) {
                unsigned j = slot - ZS_MAX_MIX - ZS_MAX_KW;
                if (!(((cl->out_norg | cl->out_alias) >> j) & 1u)) return CAND_SKIP;
                cl->out_norg &= (uint8_t) ~(1u << j);
                cl->out_alias &= (uint8_t) ~(1u << j);
            } else {
                if (slot - ZS_MAX_MIX >= cl->n_kw) return CAND_SKIP;
                drop_kw(p, ci, slot - ZS_MAX_MIX);
            }
        } else if (kind == C_DROP_USEREF) {
            if (slot >= cl->n_use) return CAND_SKIP;
            ref_remove(cl->use, &cl->n_use, slot);
        } else if (kind == C_CLEAR_CALLFLAG) {
            /* slots 0..3: ZS_CALL_FLAGS_ALL's bits; slot 4: ZS_CALL_CKPT_BODY (the
             * body's checkpoint becomes the call's); a checkpoint kind goes with it */
            if (slot >= 5 || !(cl->flags & (1u << slot))) return CAND_SKIP;
            cl->flags &= (uint8_t) ~(1u << slot);
            if ((1u << slot) == ZS_CALL_RAISE) cl->catcher = ZS_NONE;
            if ((1u << slot) & (ZS_CALL_CKPT_RE | ZS_CALL_CKPT_NRE)) cl->flags &= (uint8_t)~ZS_CALL_CKPT_BODY;
        } else if (kind == C_REF_TO_ARG) {
            /* a child output consumed by the op, or a sibling output passed as
             * an input, becomes the enclosing call's first input instead
             * (lets the producing call be dropped) */
            zs_ref *r;
            unsigned scope_in;
            if (slot < ZS_MAX_IN) {
                if (slot >= cl->n_in || cl->parent == ZS_NONE) return CAND_SKIP;
                r = &cl->in[slot];
                scope_in = p->calls[cl->parent].n_in;
            } else {
                unsigned k = slot - ZS_MAX_IN;
                if (k >= cl->n_use) return CAND_SKIP;
                r = &cl->use[k];
                scope_in = cl->n_in;
            }
            if (r->kind != ZS_REF_OUT) return CAND_SKIP;
            if (scope_in) {
                r->kind = ZS_REF_ARG;
            } else if (slot < ZS_MAX_IN) {
                r->kind = ZS_REF_BATCH_RG; /* an input with no enclosing input: the batch leaf */
            } else {
                return CAND_SKIP;
            }
            r->call = 0;
            r->index = 0;
            r->raw = 0;
        } else {
            /* .detach goes; a raw output (outK.J.raw) becomes the hooked one first */
            zs_ref *r;
            if (slot < ZS_MAX_IN) {
                if (slot >= cl->n_in) return CAND_SKIP;
                r = &cl->in[slot];
            } else {
                unsigned k = slot - ZS_MAX_IN;
                if (k >= cl->n_use) return CAND_SKIP;
                r = &cl->use[k];
            }
            if (r->raw)
                r->raw = 0;
            else if (r->detach)
                r->detach = 0;
            else
                return CAND_SKIP;
        }
        return CAND_OK;
    }
    case C_DROP_LOSS: {
        unsigned i = idx / (ZS_MAX_PASSES * 8), q = (idx / 8) % ZS_MAX_PASSES, b = idx % 8;
        if (i >= s->n_steps) return CAND_END;
        if (q >= s->step[i].n_passes) return CAND_SKIP;
        zs_pass *p = &s->step[i].pass[q];
        if (!(p->loss_mask & (1u << b))) return CAND_SKIP;
        p->loss_mask &= (uint8_t) ~(1u << b);
        return CAND_OK;
    }
    case C_CLEAR_LEAF:
        if (idx >= s->n_modules) return CAND_END;
        if (!(s->mod[idx].flags & ZS_MOD_Z3_LEAF)) return CAND_SKIP;
        s->mod[idx].flags &= (uint8_t)~ZS_MOD_Z3_LEAF;
        return CAND_OK;
    case C_CLEAR_GATHER:
        if (idx >= s->n_modules) return CAND_END;
        if (!(s->mod[idx].flags & ZS_MOD_GATHER_ALWAYS)) return CAND_SKIP;
        s->mod[idx].flags &= (uint8_t)~ZS_MOD_GATHER_ALWAYS;
        return CAND_OK;
    case C_CLEAR_FROZEN:
        if (idx >= s->n_params) return CAND_END;
        if (!(s->par[idx].flags & ZS_PARAM_FROZEN)) return CAND_SKIP;
        s->par[idx].flags &= (uint8_t)~ZS_PARAM_FROZEN;
        return CAND_OK;
    case C_NUMEL_ONE:
        if (idx >= s->n_params) return CAND_END;
        if (s->par[idx].numel == 1) return CAND_SKIP;
        s->par[idx].numel = 1;
        return CAND_OK;
    case C_NUMEL_HALF:
        if (idx >= s->n_params) return CAND_END;
        if (s->par[idx].numel <= 1) return CAND_SKIP;
        s->par[idx].numel /= 2;
        return CAND_OK;
    case C_ELEM:
        if (idx >= s->n_params) return CAND_END;
        if (s->par[idx].elem_size == 4) return CAND_SKIP;
        s->par[idx].elem_size = 4;
        return CAND_OK;
    case C_PARAM_UP: {
        /* move a parameter to its owner's parent (lets the owner be dropped) */
        if (idx >= s->n_params) return CAND_END;
        unsigned ow = s->par[idx].owner;
        if (ow == 0) return CAND_SKIP;
        unsigned up = s->mod[ow].parent;
        s->par[idx].owner = (zs_id)up;
        /* a use of the parameter by its new owner is now implied */
        unsigned o = 0;
        for (unsigned u = 0; u < s->n_uses; u++)
            if (!(s->use[u].param == idx && s->use[u].module == up)) s->use[o++] = s->use[u];
        for (unsigned u = o; u < s->n_uses; u++) memset(&s->use[u], 0, sizeof s->use[u]);
        s->n_uses = (uint32_t)o;
        return CAND_OK;
    }
    case C_CONFIG: {
        struct {
            zs_config cfg;
        } d = {default_config()};
        zs_config *c = &s->cfg;
        switch (idx) {
        case 0:
            if (c->world_size == 1) return CAND_SKIP;
            c->world_size = 1;
            c->rank = 0;
            c->all_ranks = 0; /* one rank left: its own program is the base one */
            s->n_edits = 0;
            return CAND_OK;
        case 1:
            if (c->rank == 0) return CAND_SKIP;
            c->rank = 0;
            return CAND_OK;
        case 2:
            if (!c->deferred) return CAND_SKIP;
            c->deferred = 0;
            c->progress_every = 0;
            return CAND_OK;
        case 3:
            if (!c->progress_every) return CAND_SKIP;
            c->progress_every = 0;
            return CAND_OK;
        case 4:
            if (c->order_mode == ZS_ORDER_ENGINE || keep_order) return CAND_SKIP;
            c->order_mode = ZS_ORDER_ENGINE;
            s->n_order = 0;
            memset(s->order, 0, sizeof s->order);
            return CAND_OK;
        case 5 + ZS_TH_COUNT:
            /* one rank fewer (all-ranks scenarios; the others go to W = 1 above) */
            if (!c->all_ranks || c->world_size <= 2) return CAND_SKIP;
            c->world_size--;
            if (c->rank >= c->world_size) c->rank = (uint8_t)(c->world_size - 1);
            for (unsigned k = s->n_edits; k-- > 0;)
                if (s->edit[k].rank >= c->world_size) edit_remove(s, k);
            return CAND_OK;
        case 6 + ZS_TH_COUNT:
            /* one rank's view instead of all ranks (the rank edits go) */
            if (!c->all_ranks) return CAND_SKIP;
            c->all_ranks = 0;
            s->n_edits = 0;
            return CAND_OK;
        case 7 + ZS_TH_COUNT:
            if (!c->verify_collectives) return CAND_SKIP;
            c->verify_collectives = 0;
            return CAND_OK;
        default:
            if (idx >= 8 + ZS_TH_COUNT) return CAND_END;
            {
                uint64_t *v = zs_config_threshold(c, (int)idx - 5);
                uint64_t dv = *zs_config_threshold(&d.cfg, (int)idx - 5);
                if (*v == dv) return CAND_SKIP;
                *v = dv;
                return CAND_OK;
            }
        }
    }
    case C_ORDER: {
        if (s->cfg.order_mode != ZS_ORDER_FUZZED) return CAND_END;
        unsigned n = s->n_order;
        if (idx == 0) {
            if (n < 2) return CAND_SKIP;
            s->n_order = (uint16_t)(n / 2);
        } else if (idx == 1) {
            if (n < 1) return CAND_SKIP;
            s->n_order = (uint16_t)(n - 1);
        } else {
            unsigned k = idx - 2;
            if (k >= n) return CAND_END;
            if (!s->order[k]) return CAND_SKIP;
            s->order[k] = 0;
            return CAND_OK;
        }
        memset(s->order + s->n_order, 0, sizeof s->order - s->n_order);
        return CAND_OK;
    }
    }
    return CAND_END;
}

/* one run: zs_run under the caller's run options, or the caller's predicate */
static int run_verdict(const zs_min_opts *o, const zs_scenario *s, int policy, zs_sim_result *r) {
    if (!o->verdict) {
        zs_run_opts ro = o->run;
        ro.policy = policy;
        ro.order_mode = -1;
        ro.stop_on_violation = 1;
        ro.abort_on_violation = 0;
        ro.trace = ro.events = ro.report = NULL;
        zs_outcome out;
        int v = zs_run(s, &ro, &out);
        if (r) *r = out.r;
        return v;
    }
    zs_violation v;
    memset(&v, 0, sizeof v);
    int rc = o->verdict(s, policy, -1, o->run.cap, &v, o->verdict_ctx);
    if (r) {
        memset(r, 0, sizeof *r);
        r->violated = rc != ZS_INV_NONE && rc != ZS_SCN_SETUP;
        r->v = v;
    }
    return rc;
}

int zs_minimize(zs_scenario *s, const zs_min_opts *o, zs_min_stats *st) {
    zs_min_stats dummy;
    if (!st) st = &dummy;
    memset(st, 0, sizeof *st);
    zs_min_opts def;
    if (!o) {
        zs_min_opts_init(&def);
        o = &def;
    }
    if (zs_scenario_validate(s, NULL, 0) != 0) return -1;
    clock_t t0 = clock();
    zs_scenario *cur = calloc(1, sizeof *cur), *cand = calloc(1, sizeof *cand);
    if (!cur || !cand || zs_scenario_copy(cur, s)) {
        zs_scenario_free(cur);
        free(cur);
        free(cand);
        return -1;
    }
    int policy = o->policy >= 0 ? o->policy : cur->cfg.policy;
    int order = o->order_mode >= 0 ? o->order_mode : cur->cfg.order_mode;
    cur->cfg.policy = (uint8_t)policy;
    if (order != cur->cfg.order_mode) {
        cur->cfg.order_mode = (uint8_t)order;
        if (order == ZS_ORDER_ENGINE) {
            cur->n_order = 0;
            memset(cur->order, 0, sizeof cur->order);
        }
    }
    zs_min_size_of(cur, &st->before);
    st->policy = policy;
    zs_sim_result r;
    int inv = run_verdict(o, cur, -1, &r);
    st->runs = 1;
    if (inv == ZS_INV_NONE || inv == ZS_SCN_SETUP || (o->inv && inv != o->inv)) {
        st->inv = inv;
        zs_scenario_free(cur);
        free(cur);
        free(cand);
        return 1;
    }
    st->inv = inv;
    st->v = r.v;
    int allv[4] = {0, 0, 0, 0};
    if (o->same_verdicts)
        for (int q = 0; q < 4; q++) allv[q] = q == policy ? inv : run_verdict(o, cur, q, NULL);
    uint64_t ccur[NCOST], ccand[NCOST];
    cost_of(cur, ccur);
    int changed = 1;
    while (changed) {
        changed = 0;
        st->rounds++;
        for (int kind = 0; kind < C_KINDS; kind++) {
            for (unsigned idx = 0;;) {
                if (o->max_runs && st->runs >= o->max_runs) goto done;
                int mc = make_candidate(cur, kind, idx, cand, o->order_mode >= 0);
                if (mc == CAND_END) break;
                if (mc == CAND_SKIP || zs_scenario_validate(cand, NULL, 0) != 0) {
                    idx++;
                    continue;
                }
                cost_of(cand, ccand);
                if (!cost_less(ccand, ccur)) {
                    idx++;
                    continue;
                }
                st->runs++;
                int v = run_verdict(o, cand, -1, &r);
                if (v == inv && o->same_verdicts) {
                    zs_sim_result r2;
                    for (int q = 0; q < 4 && v == inv; q++) {
                        if (q == policy) continue;
                        st->runs++;
                        if (run_verdict(o, cand, q, &r2) != allv[q]) v = -1;
                    }
                }
                if (v == inv) {
                    zs_scenario *x = cur; /* the candidate becomes current; its storage too */
                    cur = cand;
                    cand = x;
                    memcpy(ccur, ccand, sizeof ccur);
                    st->v = r.v;
                    st->accepted++;
                    changed = 1;
                    if (o->verbose) fprintf(stderr, "minimize: %s #%u\n", kind_names[kind], idx);
                    /* same idx again: the item there changed */
                } else {
                    idx++;
                }
            }
        }
    }
done:;
    int rc = zs_scenario_copy(s, cur) ? -1 : 0;
    zs_min_size_of(s, &st->after);
    st->seconds = (double)(clock() - t0) / CLOCKS_PER_SEC;
    zs_scenario_free(cur);
    zs_scenario_free(cand);
    free(cur);
    free(cand);
    return rc;
}

int zs_scenario_strip_ext(zs_scenario *s) {
    for (unsigned i = 0; i < s->n_steps; i++)
        for (unsigned q = 0; q < s->step[i].n_passes; q++) {
            zs_pass *p = &s->step[i].pass[q];
            for (unsigned c = 0; c < p->n_calls; c++) {
                zs_call *cl = &p->calls[c];
                while (cl->n_mix) mix_remove(cl, cl->n_mix - 1u);
                while (cl->n_kw) drop_kw(p, c, cl->n_kw - 1u);
                cl->out_norg = 0;
                cl->out_alias = 0;
                memset(cl->alias, 0, sizeof cl->alias);
                cl->op_nosave = 0;
                cl->flags &= (uint8_t)~ZS_CALL_CKPT_BODY;                  /* the call's checkpoint instead */
                for (unsigned k = 0; k < cl->n_in; k++) cl->in[k].raw = 0; /* the hooked outputs */
                for (unsigned k = 0; k < cl->n_use; k++) cl->use[k].raw = 0;
            }
        }
    return zs_scenario_validate(s, NULL, 0) == 0 && !zs_scenario_has_ext(s) ? 0 : -1;
}
