/*
 * ranks.h - rank edits: their rules and each rank's program.
 *
 * An all-ranks scenario (cfg.all_ranks) holds one base program and rank
 * edits (zs_rank_edit, scenario.h) that change one rank's copy of it.
 * zs_scenario_for_rank() builds rank r's view as an ordinary single-rank
 * scenario, which is what the simulator runs on that rank; the world
 * driver, the tools and the oracles' exports call it.
 *
 * An edit is valid (zs_edit_check) if the pass it changes, with it and the
 * edits of that pass before it applied, is a valid pass (zs_pass_validate,
 * the rules of every pass).  The codec draws an edit from the candidate
 * lists below and keeps it if zs_edit_check accepts it; the .scn parser's
 * and the minimiser's checks are the codec's (zs_scenario_validate,
 * zs_scenario_drop_invalid_edits).
 */
#ifndef ZS_RANKS_H
#define ZS_RANKS_H

#include "scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Rank r's program: *out = s with the edits of rank r applied, cfg.rank
 *  = r, cfg.all_ranks = 0, n_edits = 0 (cfg.verify_collectives kept) - an
 *  ordinary single-rank scenario, valid whenever s is.  Works for any
 *  scenario (with all_ranks = 0 it is s with rank r).  out is zero-filled
 *  or a scenario (storage reused); out == s is allowed.  Returns 0, or -1
 *  with a message in err if an edit cannot be applied (s invalid) or
 *  memory could not be allocated ("out of memory"). */
int zs_scenario_for_rank(const zs_scenario *s, unsigned r, zs_scenario *out, char *err, size_t errlen);

/** Rank r's program as zs_scenario_for_rank makes it, without copying s:
 *  *view becomes a shallow copy of s (the modules, parameters, uses and
 *  the calls of every pass rank r does not edit are s's own arrays,
 *  borrowed: valid while s is neither changed nor freed; never free or
 *  change a view) with cfg.rank = r, cfg.all_ranks = 0, n_edits = 0, the
 *  passes rank r's edits change materialised into own's storage (own:
 *  zero-filled or a scenario whose storage is reused; free it with
 *  zs_scenario_free after the last use of view) and the steps rank r skips
 *  left out.  zs_scenario_equal_strict to zs_scenario_for_rank(s, r).
 *  view, own and s must be three different scenarios.  Returns 0, or -1
 *  with a message in err as zs_scenario_for_rank (*view is then unusable). */
int zs_scenario_rank_view(const zs_scenario *s, unsigned r, zs_scenario *view, zs_scenario *own, char *err,
                          size_t errlen);

/** Drops the rank edits of s that are not valid given the edits before
 *  them (in sort order; the edits are sorted first), as zs_decode does,
 *  e.g. after a tool removed calls or steps.  The rest of s must be valid.
 *  Clears n_edits if cfg.all_ranks is 0.  Returns the number dropped. */
int zs_scenario_drop_invalid_edits(zs_scenario *s);

/* ------------------------------------------------------------------ */
/* The rules, for the codec                                             */
/* ------------------------------------------------------------------ */

/** The module tree as ROUTE edits see it: children lists and structural
 *  classes (two modules are in one class iff they have the same z3_leaf
 *  flag and children of the same classes in the same order). */
typedef struct zs_mtree {
    unsigned n;
    /* one allocation of 5 * n entries (zs_mtree_build, zs_mtree_free) */
    uint32_t *nkids;
    uint32_t *first; /* children of m: kid[first[m] .. first[m] + nkids[m]) */
    zs_id *kid;
    uint32_t *crank; /* index of m among its parent's children */
    zs_id *cls;      /* structural class: id of a representative module */
} zs_mtree;

/** 0, or -1 if out of memory (t empty then). */
int zs_mtree_build(const zs_scenario *s, zs_mtree *t);
void zs_mtree_free(zs_mtree *t);

/** ROUTE candidates of pass p: (call c >= 1, sibling module m of c's
 *  callee).  Bucket 0 holds the siblings with the callee's structure
 *  (useful routes: the subtree maps), bucket 1 the others.  Returns the
 *  bucket's size; sets (*oc, *om) to the pair at index `want` (if it
 *  exists) and *fidx to the index of the pair (fc, fm) (unchanged if
 *  absent). */
unsigned zs_route_scan(const zs_scenario *s, const zs_mtree *t, const zs_pass *p, int bucket, unsigned want, zs_id *oc,
                       zs_id *om, unsigned fc, unsigned fm, unsigned *fidx);

/** RAISE candidates of pass p: the calls that complete in it, do not raise
 *  already and are not in or on a checkpointed call, written to out
 *  (capacity p->n_calls).  Returns their count, or -1 if out of memory. */
int zs_raise_candidates(const zs_pass *p, zs_id *out);

/** The edits' order: by (rank, step, pass, call, kind). */
int zs_edit_cmp(const zs_rank_edit *a, const zs_rank_edit *b);
/** Sorts e[0..n) in that order (stable). */
void zs_edits_sort(zs_rank_edit *e, unsigned n);

/** 0 if edit e of s may follow the edits kept[0..nk) (sorted, each valid
 *  given the ones before it); else -1 with a message in msg (may be
 *  NULL).  t is zs_mtree_build(s). */
int zs_edit_check(const zs_scenario *s, const zs_mtree *t, const zs_rank_edit *kept, unsigned nk, const zs_rank_edit *e,
                  char *msg, size_t msgn);
/** The storage zs_edit_check_in keeps from one check to the next:
 *  zero-initialise it, free it with zs_edit_scratch_free. */
typedef struct zs_edit_scratch {
    zs_pass pass; /* the materialised pass */
    char *blk;    /* the materialisation's working arrays */
    size_t cap;   /* bytes of blk */
} zs_edit_scratch;
void zs_edit_scratch_free(zs_edit_scratch *x);
/** zs_edit_check with its storage in *keep, kept for the next check, so
 *  that the checks of many edits allocate once. */
int zs_edit_check_in(const zs_scenario *s, const zs_mtree *t, const zs_rank_edit *kept, unsigned nk,
                     const zs_rank_edit *e, zs_edit_scratch *keep, char *msg, size_t msgn);

#ifdef __cplusplus
}
#endif
#endif /* ZS_RANKS_H */
