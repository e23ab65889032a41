/*
 * settings.h - every setting of the fuzz harness, once.
 *
 * One table (redis' config.c): each setting's name, environment variable,
 * zofuzz option, accepted values, default and help text.  The fuzz targets
 * read the environment through it (zs_settings_from_env), zofuzz parses
 * its options through it (zs_settings_set), and `zofuzz settings` prints
 * it (as text for --help, as the Markdown table of docs/fuzzing.md with
 * --markdown; ctest checks that the docs carry the current table).  An
 * unknown value is an error everywhere, from the environment too.
 *
 * A new setting is one row of ZS_SETTINGS_MAP and its field in zs_settings
 * (plus a case in zs_settings_set when its values are not BOOL, UINT or
 * PATH).
 */
#ifndef ZS_SETTINGS_H
#define ZS_SETTINGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "world.h"

#ifdef __cplusplus
extern "C" {
#endif

/* XX(ID, kind, zs_settings field, name, environment variable, zofuzz
 *    option ("" if none), values, default, help).  Kinds: BOOL (0|1, an int
 *    field), UINT (a number, uint64_t), PATH (a non-empty string, const
 *    char *, NULL standing for the computed default), CHOICE (parsed by its
 *    own case in zs_settings_set). */
#define ZS_SETTINGS_MAP(XX)                                                                                            \
    XX(POLICY, CHOICE, policy, "policy", "ZOFUZZ_POLICY", "--policy",                                                  \
       "per-call|reset-on-forward|lazy-init|init-at-register|scenario", "per-call",                                    \
       "counter policy every input runs under; scenario: the input's own policy byte (fuzz_api's default)")            \
    XX(ORDER, CHOICE, order_mode, "order", "ZOFUZZ_ORDER", "--order", "engine|fuzzed|scenario", "scenario",            \
       "backward ready-node order: the engine's, the fuzzed order bytes, or the input's own choice")                   \
    XX(CAP, UINT, cap, "cap", "ZOFUZZ_CAP", "--cap", "bytes (0 = full copies)", "64",                                  \
       "physical bytes the host backend stores per parameter")                                                         \
    XX(VERIFY, CHOICE, verify, "verify", "ZOFUZZ_VERIFY", "--verify", "0|1|scenario", "scenario",                      \
       "zo_config.verify_collectives for every input (scenario: the input's own)")                                     \
    XX(TRACE, BOOL, trace, "trace", "ZOFUZZ_TRACE", "", "0|1", "0",                                                    \
       "print every input's canonical hook trace (fuzz_hooks) or its API calls (fuzz_api) to stderr")                  \
    XX(SKIP_DISCARD_I3, BOOL, skip_discard_i3, "skip-discard-i3", "ZOFUZZ_SKIP_DISCARD_I3", "", "0|1", "0",            \
       "triage only: skip the I3 check after a graph discard, to look past that finding class")                        \
    XX(ONE_RANK, BOOL, one_rank, "one-rank", "ZOFUZZ_ONE_RANK", "", "0|1", "0",                                        \
       "fuzz_hooks: run an all-ranks input as rank cfg.rank's view only (no host world, no I8), as a single-rank "     \
       "input runs: the harness's single-rank speed on any corpus")                                                    \
    XX(INVARIANTS, CHOICE, world, "invariants", "ZOFUZZ_INVARIANTS", "--invariants", "all|programs|I8|no-I8", "all",   \
       "all-ranks inputs: all = I8 only where the runtime is to blame; programs = any divergence is I8; "              \
       "I8 = only I8; no-I8 = every invariant but I8")                                                                 \
    XX(GATHER_ALWAYS, CHOICE, world, "gather-always", "ZOFUZZ_GATHER_ALWAYS", "--gather-always", "routers|0", "0",     \
       "all-ranks inputs: mark every ROUTE edit's router gather-always before running (the remedy under test)")        \
    XX(EDITS, CHOICE, world, "edits", "ZOFUZZ_EDITS", "--edits",                                                       \
       "all or a comma list of route,skip,exit,raise,skip-step", "all",                                                \
       "all-ranks inputs: keep only rank edits of these kinds")                                                        \
    XX(RANKS, CHOICE, world, "ranks", "ZOFUZZ_RANKS", "", "coroutines|threads", "coroutines",                          \
       "all-ranks inputs: every rank a coroutine of the calling thread, or each rank on a thread of its own (the "     \
       "same results: docs/fuzzing.md, the world driver)")                                                             \
    XX(WORK, PATH, work, "work", "ZOFUZZ_WORK", "--work", "a directory", "zofuzz-work/ beside the zofuzz binary",      \
       "zofuzz run: where corpora, crashes and logs go")                                                               \
    XX(SOURCE_DIR, PATH, source_dir, "source-dir", "ZOFUZZ_SOURCE_DIR", "", "a directory",                             \
       "the source tree zofuzz was built from", "where zofuzz finds corpus/ (seeds, models, regressions)")

typedef enum zs_setting_kind { ZS_KIND_BOOL, ZS_KIND_UINT, ZS_KIND_PATH, ZS_KIND_CHOICE } zs_setting_kind;

typedef enum zs_setting_id {
#define ZS__SETTING_ENUM(id, kind, field, name, env, flag, values, def, help) ZS_SET_##id,
    ZS_SETTINGS_MAP(ZS__SETTING_ENUM)
#undef ZS__SETTING_ENUM
        ZS_SET_COUNT
} zs_setting_id;

/** One row of the table. */
typedef struct zs_setting_def {
    zs_setting_kind kind;
    size_t offset; /* of its field in zs_settings */
    const char *name, *env, *flag, *values, *def, *help;
} zs_setting_def;
extern const zs_setting_def zs_setting_defs[ZS_SET_COUNT];

/** The settings' values. */
typedef struct zs_settings {
    int policy;             /* zo_grads_policy, or -1: the scenario's */
    int order_mode;         /* ZS_ORDER_ENGINE / ZS_ORDER_FUZZED, or -1: the scenario's */
    uint64_t cap;           /* bytes */
    int verify;             /* 0 / 1, or -1: the scenario's */
    int trace;              /* 0 / 1 */
    int skip_discard_i3;    /* 0 / 1 */
    int one_rank;           /* 0 / 1 */
    zs_world_env world;     /* invariants, gather-always, edits, ranks */
    const char *work;       /* NULL: the default; else the value given (not copied) */
    const char *source_dir; /* NULL: the default; else the value given (not copied) */
    unsigned set;           /* bit ZS_SET_x: given (environment or option), not the default */
} zs_settings;

/** Every setting at its default. */
void zs_settings_init(zs_settings *s);
/** Sets setting `id` from its text.  Returns 0, or -1 with "name: why" in
 *  err[0..errlen) for an unknown value (s unchanged). */
int zs_settings_set(zs_settings *s, zs_setting_id id, const char *value, char *err, size_t errlen);

/** A count as the settings and zofuzz's numeric options take it: decimal
 *  digits only (no sign, space, 0x or leading-zero octal reading), below
 *  2^64.  0 and *out set, or -1 with *out unchanged. */
int zs_parse_u64(const char *v, uint64_t *out);
/** Reads every setting's environment variable that is set and non-empty.
 *  Returns 0, or -1 with "VARIABLE: why" in err for the first bad value. */
int zs_settings_from_env(zs_settings *s, char *err, size_t errlen);
/** The setting whose zofuzz option is `flag` ("--policy"), or -1. */
int zs_settings_by_flag(const char *flag);
/** The table as text (one setting per paragraph, for --help) or, with
 *  markdown, as the Markdown table of docs/fuzzing.md. */
void zs_settings_print(FILE *f, int markdown);

#ifdef __cplusplus
}
#endif
#endif /* ZS_SETTINGS_H */
