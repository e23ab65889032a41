/*
 * enumerate.h - bounded exhaustive checking of the zoffload runtime
 * - every scenario of the scenario model up to a size bound, once
 * per equivalence class, under the single-device engine order or every
 * ready-node order, checked against I1-I7 (check.h) under each counter
 * policy.  docs/bounded-proofs.md explains the reductions and gives the
 * results.
 *
 * The library part is used by `zofuzz enumerate`, which forwards its
 * arguments to zo_enumerate_main().
 *
 * Units: numel and thresholds in ELEMENTS (as everywhere in the harness).
 */
#ifndef ZO_ENUMERATE_H
#define ZO_ENUMERATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "check.h"
#include "scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Size bound of the enumeration. */
typedef struct zo_enum_bounds {
    unsigned max_modules;  /**< module tree size N (1..6) */
    unsigned max_calls;    /**< K: module calls in the whole scenario, summed over every
                               forward pass of every step (1..16) */
    unsigned max_steps;    /**< S: steps (1..ZS_MAX_STEPS) */
    unsigned config_mask;  /**< bit i: fixed config i is used (0 = all) */
    unsigned feature_mask; /**< ZO_ENUM_F_* features enumerated (0 = all) */
} zo_enum_bounds;

/* Features (zo_enum_bounds.feature_mask): what the generator may use.
 * Plain train steps, trainable parameters, reuse, unused outputs and
 * requires_grad choices are always enumerated. */
#define ZO_ENUM_F_NOGRAD     0x01u /* torch.no_grad() around a call */
#define ZO_ENUM_F_CKPT       0x02u /* activation checkpointing, reentrant and non-reentrant */
#define ZO_ENUM_F_RAISE      0x04u /* exceptions (every catcher) */
#define ZO_ENUM_F_FROZEN     0x08u /* requires_grad=False parameters */
#define ZO_ENUM_F_EVAL       0x10u /* eval steps */
#define ZO_ENUM_F_RETAIN     0x20u /* retain_graph steps */
#define ZO_ENUM_F_ACCUM      0x40u /* gradient accumulation steps (2 passes) */
#define ZO_ENUM_F_INTERLEAVE 0x80u /* interleaved micro-batches (2 passes) */
#define ZO_ENUM_F_ALL        0xFFu
#define ZO_ENUM_F_NONE       0x100u /* the empty set (0 means "all") */
/** Parses "all" or a comma list of nograd,ckpt,raise,frozen,eval,retain,
 *  accum,interleave (or "none") into *mask.  Returns 0, or -1 for an
 *  unknown or empty item (an empty text, a trailing comma) with *mask
 *  unchanged. */
int zo_enum_parse_features(const char *text, unsigned *mask);

/* ------------------------------------------------------------------ */
/* Scenario generator                                                   */
/* ------------------------------------------------------------------ */

/** Number of fixed runtime configurations the generator uses
 *  (zo_enum_config()). */
#define ZO_ENUM_N_CONFIGS 2

/** The idx-th fixed configuration (0 <= idx < ZO_ENUM_N_CONFIGS) and the
 *  numel classes that configuration can tell apart (*n_classes values
 *  written to classes[0..3)).  Policy per-call, engine order.  Returns -1
 *  for a bad idx. */
int zo_enum_config(unsigned idx, zs_config *cfg, uint32_t classes[3], unsigned *n_classes);

/** Generator state: an odometer over the choice points of one scenario
 *  walk (see enumerate.c).  Plain struct; zero it with zo_enum_gen_init. */
#define ZO_ENUM_MAX_CHOICES 512
typedef struct zo_enum_gen {
    zo_enum_bounds b;
    uint16_t val[ZO_ENUM_MAX_CHOICES];
    uint16_t range[ZO_ENUM_MAX_CHOICES];
    unsigned n, pos;
    int started, done;
    uint64_t paths;   /**< walks made (including rejected ones) */
    uint64_t emitted; /**< canonical scenarios produced */
    /* automorphism cache of the last labelled tree */
    uint8_t tree_key[2 * ZS_CODEC_MAX_MODULES + 2]; /* the enumerator's trees are far smaller */
    unsigned n_auto;
    uint8_t autos[120][8];
    /* random probe mode (zo_enum_estimate): every choice is drawn at
     * random and weight is the product of the choices' ranges */
    int probe;
    uint64_t rng;
    double weight;
} zo_enum_gen;

/** Starts an enumeration with bounds b.  Returns -1 (and sets nothing
 *  else) if b is out of range. */
int zo_enum_gen_init(zo_enum_gen *g, const zo_enum_bounds *b);

/** Writes the next canonical scenario into *out (every field with meaning
 *  is written; unused array slots keep old contents, as zs_scenario_equal
 *  and the simulator ignore them).
 *  Returns 1, or 0 when the enumeration is exhausted.  Every scenario is
 *  produced exactly once, in a deterministic order; the k-th call (k = 0,
 *  1, ...) returns scenario number k (g->emitted - 1 after the call). */
int zo_enum_next(zo_enum_gen *g, zs_scenario *out);

/** Counts the scenarios of bound b (runs the generator only). */
uint64_t zo_enum_count(const zo_enum_bounds *b);

/** Estimates the number of scenarios of bound b in O(probes) walks
 *  (Knuth's estimator of a search tree's size: random walks down the
 *  choice tree, each accepted leaf weighted by the product of the ranges on
 *  its path; unbiased, its spread shrinks with more probes).  0 for a bad
 *  bound. */
double zo_enum_estimate(const zo_enum_bounds *b, unsigned probes, uint64_t seed);

/** zo_enum_count that reports on f (NULL: silent) every `every` seconds:
 *  scenarios counted so far and the rate. */
uint64_t zo_enum_count_progress(const zo_enum_bounds *b, FILE *f, double every);

/** Size key used to pick "the smallest" scenario: total calls, steps,
 *  modules, parameters, then encoded length. */
uint64_t zo_enum_size_key(const zs_scenario *s);

/* ------------------------------------------------------------------ */
/* Checking                                                             */
/* ------------------------------------------------------------------ */

enum { ZO_ENUM_ORDERS_ENGINE = 0, ZO_ENUM_ORDERS_ALL = 1 };

#define ZO_ENUM_REPRO_MAX 2048 /* bytes of the smallest counterexample kept */

/** One cell of the result table: (policy, invariant). */
typedef struct zo_enum_cell {
    uint64_t scenarios; /**< scenarios with at least one order whose first violation is this */
    uint64_t orders;    /**< violating orders (distinct traces) */
    uint64_t key;       /**< zo_enum_size_key of the smallest counterexample (UINT64_MAX: none) */
    uint32_t len;       /**< its byte encoding (zs_encode, policy and order bytes included) */
    uint8_t bytes[ZO_ENUM_REPRO_MAX];
    /** where the violations were detected: the simulator action
     *  (zs_violation.what with digits replaced by '#', e.g. "after DISCARD
     *  g=#"), first ZO_ENUM_SITES distinct sites, scenarios per site;
     *  site_other counts the rest */
    char site[4][40];
    uint64_t site_n[4];
    uint64_t site_other;
} zo_enum_cell;
#define ZO_ENUM_SITES 4

typedef struct zo_enum_policy_res {
    uint64_t runs;                   /**< zs_sim_run calls */
    uint64_t orders;                 /**< distinct runtime-observable orders checked (engine: 1 per scenario) */
    uint64_t torch_errors;           /**< scenario/orders PyTorch would reject (run stopped, not a finding) */
    uint64_t setup_errors;           /**< zs_sim_run returned -1 (a finding: counted under ERR too) */
    uint64_t order_cap_hits;         /**< order trees cut at the exploration cap (all mode) */
    uint64_t violating_scenarios;    /**< scenarios with any violation */
    uint64_t uninit_full;            /**< scenarios where a counter was accessed before initialisation
                               somewhere in a whole run (zo_stats.uninit_counter_events), runs
                               continued past their first violation: I2 beyond the first
                               violation, which is all the cell counts see */
    zo_enum_cell cell[ZS_INV_COUNT]; /**< index ZS_INV_I1..ZS_INV_ERR (0 unused) */
} zo_enum_policy_res;

/** Results of one shard (or of merged shards). */
typedef struct zo_enum_results {
    zo_enum_bounds b;
    int orders;           /**< ZO_ENUM_ORDERS_* */
    unsigned policy_mask; /**< bit p: policy p checked */
    unsigned shard_n;     /**< shards of the split */
    uint8_t *shard_seen;  /**< shard_n flags (malloc'd, owned) */
    uint64_t scenarios;   /**< scenarios checked */
    uint64_t invalid;     /**< generated scenarios zs_scenario_validate rejected (generator bug) */
    double seconds;       /**< wall time, summed over shards */
    zo_enum_policy_res pol[4];
} zo_enum_results;

/** Initialises r (shard_seen allocated for n shards, all unset).  Returns 0
 *  or -1 (out of memory). */
int zo_enum_results_init(zo_enum_results *r, const zo_enum_bounds *b, int orders, unsigned policy_mask,
                         unsigned shard_n);
void zo_enum_results_free(zo_enum_results *r);

/** Options of zo_enum_check_scenario. */
typedef struct zo_enum_opts {
    int orders; /**< ZO_ENUM_ORDERS_* */
    unsigned policy_mask;
    unsigned max_runs; /**< all mode: cap on simulator runs per scenario and policy */
} zo_enum_opts;

/** Checks one valid scenario under every policy of o->policy_mask and
 *  accumulates into *r (scenarios += 1).  s->cfg.policy/order_mode and the
 *  order bytes are changed during the runs and restored before returning.
 *  Returns the number of policies under which some order violated an
 *  invariant. */
int zo_enum_check_scenario(zs_scenario *s, const zo_enum_opts *o, zo_enum_results *r);

/** Runs part `sub` of `nsub` of shard `shard` of `nshard` of bound b into
 *  *r: scenario number k (0, 1, ... in generator order) belongs to shard
 *  k % nshard and, within it, to part (k / nshard) % nsub (--jobs splits a
 *  shard into parts).  progress[0] (if not NULL) is incremented after each
 *  scenario checked.  Returns 0, -1 on bad arguments / out of memory. */
int zo_enum_run_shard(const zo_enum_bounds *b, const zo_enum_opts *o, unsigned shard, unsigned nshard, unsigned sub,
                      unsigned nsub, zo_enum_results *r, volatile uint64_t *progress);

/** dst += src (same bounds, orders, policies and shard count, and no shard
 *  in both; else -1 and dst unchanged). */
int zo_enum_results_merge(zo_enum_results *dst, const zo_enum_results *src);

/** Results file (text, one key per line; see enumerate.c). */
int zo_enum_results_write(const zo_enum_results *r, FILE *f);
/** Reads a results file into *r (initialised here).  Returns 0 or -1 with
 *  a message in err. */
int zo_enum_results_read(zo_enum_results *r, FILE *f, char *err, size_t errlen);

/** Prints the policy x invariant table (and the smallest counterexamples)
 *  to f; writes each counterexample to "<prefix>-<policy>-<inv>.bin" (raw
 *  scenario bytes, readable by zofuzz) and ".trace" when prefix is
 *  not NULL.  Returns 0 when the per-call policy held everything (or was
 *  not checked), 1 otherwise. */
int zo_enum_report(const zo_enum_results *r, FILE *f, const char *prefix);

/** The `zofuzz enumerate` command line:
 *  [--max-modules N] [--max-calls K] [--max-steps S] [--orders engine|all]
 *  [--policy P|all] [--jobs J] [--shard i/n] [--out FILE] [--cex PREFIX]
 *  [--count] [--quiet] | --merge FILE...
 *  argv[0] is the command name.  Returns the process exit status: 0 the
 *  default policy (per-call) holds every invariant for the whole bound,
 *  1 it does not, 2 usage or I/O error. */
int zo_enumerate_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif /* ZO_ENUMERATE_H */
