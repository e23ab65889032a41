/*
 * world.h - runs an all-ranks scenario: W ranks, each its own simulator
 * and runtime, in one multi-rank host world (zo_host_world,
 * zoffload_backend.h), and checks invariant I8.  The ranks run as
 * coroutines of the calling thread (the default) or each on its own thread
 * (zs_world_opts.threads); the result is the same.
 *
 *   I8  the collective sequences of all ranks are identical: the k-th
 *       collective (coalesced all-gather, fingerprint exchange,
 *       reduce-scatter) of every rank has the same kind and the same
 *       items (parameter id, numel, element size; exchange: bytes and
 *       content).  ZeRO-3 is SPMD: a difference is an NCCL hang (or
 *       silently mixed tensors) in real training.
 *
 * Each rank runs its program (zs_scenario_rank_view: the ordinary
 * single-rank scenario of zs_scenario_for_rank, sharing s's storage)
 * through zs_sim_run with its host backend joined to the world and wrapped
 * in a recorder that logs every collective with the rank's hook stack at
 * that moment (zs_sim_opts.context).
 *
 * Verdict (no false positives, the SQLite way): a rank that stopped at its
 * own violation (I1-I7, ERR) or at a PyTorch error leaves the world early
 * and the other ranks then "hang"; that is reported as the root cause, not
 * as I8, unless the collective sequences already differed at an index
 * below the number of collectives the stopping rank had issued when it
 * stopped.  ZO_ERR_COLLECTIVE_MISMATCH returned by hooks (the world's
 * matcher, the runtime's fingerprint check) are consequences of I8, never
 * separate findings.  Deterministic: the same scenario and options give
 * the same result every time (the world's outcome depends only on each
 * rank's own call sequence, never on thread timing).  The one exception is
 * in the threaded mode: whether a wait found its all-gather complete
 * already (rank_result[].stats.blocking_waits, and the word after each WAIT
 * in o->events) depends on the threads' timing there; nothing else does.
 */
#ifndef ZS_WORLD_H
#define ZS_WORLD_H

#include <stdint.h>

#include "check.h"
#include "scenario.h"
#include "sim.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { ZS_WORLD_GATHER = 0, ZS_WORLD_EXCHANGE = 1, ZS_WORLD_REDUCE = 2 };

/** Bytes of zs_world_result.report (the long I8 report: both ranks'
 *  collectives around the divergence and their hook stacks). */
#define ZS_WORLD_REPORT_LEN 8192

typedef struct zs_world_result {
    int world_size;  /* W */
    int verdict;     /* ZS_INV_NONE, ZS_INV_I1..ZS_INV_ERR (root cause on rank `rank`),
                                ZS_INV_I8 */
    int rank;        /* rank of an I1..ERR finding, or of a torch/setup error; -1 */
    int violated;    /* 1: v holds the finding (verdict != NONE) */
    zs_violation v;  /* the finding; for I8: inv ZS_INV_I8, step/what of rank a, msg
                                the short form ("collective 7: rank 0 all-gather [p3 16x4B] at
                                ... vs rank 1 all-gather [p5 16x4B] at ...") */
    int torch_error; /* a rank stopped where PyTorch would raise (not a finding) */
    char torch_msg[160];
    int setup_error; /* the world, a backend or a runtime could not be set up */
    char setup_msg[256];
    /* I8 details */
    int64_t divergence; /* first differing collective index, -1: none */
    int div_rank[2];    /* the two ranks compared (rank 0 and the first rank that differs) */
    int i8_program;     /* blame_runtime: 1 if the divergence was the programs' own (no finding) */
    int div_kind[2];    /* their collectives at the divergence: ZS_WORLD_GATHER, _EXCHANGE,
                                _REDUCE, or -1 (the rank had finished) */
    /* per rank */
    zs_sim_result rank_result[ZS_MAX_WORLD];
    uint64_t collectives[ZS_MAX_WORLD]; /* collectives each rank issued (recorded) */
    int mismatched[ZS_MAX_WORLD];       /* 1: a hook of the rank got ZO_ERR_COLLECTIVE_MISMATCH */
    char world_report[256];             /* zo_host_world_report's first mismatch / would-hang, or "" */
    char report[ZS_WORLD_REPORT_LEN];   /* long report of the finding (I8: both ranks' collectives
                                         around the divergence with their hook stacks), or "" */
} zs_world_result;

/** World options on top of the per-rank simulator options. */
typedef struct zs_world_opts {
    int only_i8;       /* 1: check only I8; ranks keep running past their own I1-I7/ERR
                                violations (measures I8 under legacy policies, which break
                                I1/I3 anyway).  0: every invariant, as described above */
    int blame_runtime; /* 1: a divergence is an I8 finding only when the runtime is to
                                blame (zs_world_i8_runtime_blamed); a divergence the ranks'
                                programs explain is measured (divergence, i8_program = 1) and
                                the other invariants are checked as with skip_i8.  fuzz_hooks'
                                default (the main job hunts runtime bugs); 0: any divergence
                                is I8 (zofuzz repro/verify: a program's divergence is the
                                finding the user wants to see) */
    int skip_i8;       /* 1: every invariant but I8 (each rank in the world, I1-I7/ERR);
                                a divergence is still measured (zs_world_result.divergence) but
                                is no finding - for property tests whose random rank edits
                                diverge by construction */
    FILE *report;      /* on a finding, the long report is written here (or NULL) */
    int threads;       /* 0 (default): every rank a coroutine of the calling thread, on its
                                own stack, switched when it blocks in the world (one thread, no
                                hand-offs; zo_host_world_sched).  1: each rank on its own
                                thread (a pool kept across runs), blocking on the world's
                                condition variable.  The result is the same byte for byte */
    /* coroutines only (threads 0; ignored with threads 1): the allocator of
     * rank q's simulator, runtime and host backend (rank_alloc[q]) and of
     * the host world (world_alloc), each used by one rank or the world
     * alone - the fuzz target's per-execution arenas (fuzz/arena.h).  NULL
     * (default): malloc */
    const zo_allocator *rank_alloc[ZS_MAX_WORLD];
    const zo_allocator *world_alloc;
} zs_world_opts;

void zs_world_opts_init(zs_world_opts *wo);

/** The all-ranks engine under zs_run (fuzz/run.h), which callers use;
 *  this is called directly only by its own tests.
 *  Runs scenario s (valid; any scenario: W = s->cfg.world_size ranks,
 *  with W = 1 one rank in a world of one) with every rank in one host
 *  world, the ranks' simulators as wo->threads says, and fills *r (caller's
 *  memory; about 20 KB).  o: per-rank simulator options (NULL: defaults):
 *  policy, order, cap, verify_collectives, skip_discard_i3 apply to every
 *  rank; o->trace / o->events get every rank's output after the run, rank
 *  by rank ("# rank r" headers; deterministic); with abort_on_violation a
 *  finding prints the long report to stderr and abort()s after all ranks
 *  finished; stop_on_violation is forced to 1 (0 with wo->only_i8);
 *  world, context, wrap_backend and on_choice are the world's own.
 *  wo: NULL = defaults.
 *  Returns 0 (no finding; r->torch_error may be set), 1 (finding:
 *  r->verdict), -1 (setup error: r->setup_msg). */
int zs_world_run(const zs_scenario *s, const zs_sim_opts *o, const zs_world_opts *wo, zs_world_result *r);
/** Summarises a world run as one zs_sim_result (zs_run's outcome,
 *  fuzz/run.h): violated/v (the finding,
 *  I8 included), torch_error/torch_msg, setup_error/setup_msg, and the
 *  counters summed over the ranks; stats of rank 0. */
void zs_world_to_sim_result(const zs_world_result *w, zs_sim_result *r);

/** Prints the summary of r (verdict line, per-rank counts, the long
 *  report) to f. */
void zs_world_print(FILE *f, const zs_world_result *r);

/* fuzz_hooks / enumeration knobs ------------------------------------ */

/** 1 if the divergence of r (r->divergence >= 0, div_kind set) is the
 *  runtime's fault rather than the ranks' programs': (a) the programs differ
 *  only by ROUTE edits of calls inside gather-always modules between
 *  replicas (same shape, parameters and tied uses: MoE experts), whose
 *  contract (ZO_MODULE_GATHER_ALWAYS) is identical collectives on every
 *  rank, or there is no edit at all (SPMD); or (b) verify_collectives
 *  (`verify`: the effective setting) is on and a diverging all-gather or
 *  reduce-scatter got past the fingerprint exchange.  Any other divergence
 *  (skip, exit, raise, skip-step, unprotected routing) is the program's:
 *  real NCCL would hang, and the runtime can only report it (which (b)
 *  checks when the check is on). */
int zs_world_i8_runtime_blamed(const zs_scenario *s, const zs_world_result *r, int verify);

/** ZOFUZZ_GATHER_ALWAYS=routers: sets ZS_MOD_GATHER_ALWAYS on the parent
 *  module of every ROUTE edit's base callee, where the scenario stays
 *  valid (the remedy under test).  Returns the number of modules marked. */
int zs_world_protect_routers(zs_scenario *s);
/** ZOFUZZ_EDITS=route: drops every rank edit of another kind than
 *  `kind_mask` allows (bit k = keep ZS_EDIT_k); if the result is invalid,
 *  drops all edits.  Returns the number of edits kept. */
int zs_world_keep_edits(zs_scenario *s, unsigned kind_mask);

/** The all-ranks environment knobs of fuzz_hooks (docs/fuzzing.md), also
 *  honoured by `zofuzz run` when it replays a crash in-process. */
typedef struct zs_world_env {
    unsigned edit_mask;  /* ZOFUZZ_EDITS=route,skip,...: bit k keeps ZS_EDIT_k (~0u: all) */
    int protect_routers; /* ZOFUZZ_GATHER_ALWAYS=routers */
    int only_i8;         /* ZOFUZZ_INVARIANTS=I8 */
    int skip_i8;         /* ZOFUZZ_INVARIANTS=no-I8 */
    int blame_runtime;   /* ZOFUZZ_INVARIANTS=all (the default): I8 only when the runtime is
                                to blame; ZOFUZZ_INVARIANTS=programs: any divergence is I8 */
    int threads;         /* ZOFUZZ_RANKS=threads: zs_world_opts.threads = 1 */
} zs_world_env;
/** Sets one knob from its text, as the environment variable or the zofuzz
 *  option spells it: knob "invariants" (all|programs|I8|no-I8; "" = all),
 *  "gather-always" (routers; "" or "0" = off), "edits" (a comma list of
 *  edit kinds; "" or "all" = every kind), "ranks" (coroutines|threads;
 *  "" = coroutines).  Returns 0, or -1 with a message
 *  in err[0..errlen) for an unknown knob or value.  Shared by
 *  the settings table (fuzz/settings.h) for the environment and zofuzz's
 *  --invariants/--edits/--gather-always. */
int zs_world_env_set(zs_world_env *e, const char *knob, const char *value, char *err, size_t errlen);
/** Applies edit_mask and protect_routers to an all-ranks scenario (no
 *  effect on others). */
void zs_world_env_apply(const zs_world_env *e, zs_scenario *s);

#ifdef __cplusplus
}
#endif
#endif /* ZS_WORLD_H */
