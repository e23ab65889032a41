/*
 * scn.h - the .scn text scenario format: parser and canonical printer.
 *
 * The format is specified in docs/scenario-format.md.  A .scn file holds
 * one scenario of the scenario model (scenario.h) with its module and
 * parameter names, plus an optional "expect" line of expected verdicts per
 * counter policy (regression files).
 *
 * Guarantees (tested by tests/corpus/test_scn.c and fuzz_scn_parse):
 *   - zs_scn_parse accepts exactly the texts that denote a valid scenario
 *     (zs_scenario_validate) and on anything else returns an error with a
 *     1-based line and column and what was expected.  It never crashes,
 *     never reads outside text[0..len) and allocates a bounded amount.
 *   - For every valid s: zs_scn_parse(zs_scn_print(s)) is
 *     zs_scenario_equal_strict to s (names included, as long as they are
 *     valid .scn names: [A-Za-z_][A-Za-z0-9_.-]*, at most 23 bytes; other
 *     names print as "_", i.e. unnamed).
 *   - zs_scn_print(zs_scn_parse(t)) is canonical: printing the result of
 *     parsing it again gives the same text.
 */
#ifndef ZS_SCN_H
#define ZS_SCN_H

#include <stddef.h>
#include <stdio.h>

#include "check.h"
#include "run.h"
#include "scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Verdict of one run (zs_run, run.h): ZS_INV_NONE ("ok"),
 *  ZS_INV_I1..ZS_INV_I8, or ZS_SCN_SETUP (the runtime refused the setup,
 *  "setup"). */
#define ZS_SCN_SETUP ZS_RUN_SETUP

/** The "expect" line: per policy (zo_grads_policy index 0..3), whether a
 *  verdict is stated and which, and the torch and DeepSpeed profiles the
 *  verdicts were measured under ("expect torch=2.x deepspeed=0.19
 *  per-call=ok ...").  zs_scn_parse resolves a profile the line leaves out
 *  to the scenario's config (so a parsed expect line with any verdict has
 *  have_torch = have_ds = 1); a runner applies them to the scenario's
 *  config (zs_scn_expect_apply) before comparing verdicts. */
typedef struct zs_scn_expect {
    int have[4];
    int verdict[4];        /* ZS_INV_* or ZS_SCN_SETUP */
    int have_torch, torch; /* ZS_TORCH_* */
    int have_ds, ds;       /* ZS_DS_* */
} zs_scn_expect;

/** Sets s's cfg.torch_profile / cfg.ds_profile to the profiles exp states
 *  (exp may be NULL: nothing changes). */
void zs_scn_expect_apply(const zs_scn_expect *exp, zs_scenario *s);

/** A parse error: 1-based line and column (column in bytes) and a message
 *  ("expected ')' or ',' after an input reference, found '-'"). */
typedef struct zs_scn_error {
    int line;
    int col;
    char msg[200];
} zs_scn_error;

/** Parses text[0..len) (need not be NUL-terminated) into *out (a valid
 *  scenario) and, if exp is not NULL, the expect line into *exp (all
 *  have[] 0 when there is none).  Returns 0 on success; -1 on a syntax or
 *  validity error, with *err filled (err may be NULL); *out is then
 *  unspecified.  Allocates a bounded working set (about 100 KiB) with malloc
 *  and frees it; -1 with "out of memory" if malloc fails. */
int zs_scn_parse(const char *text, size_t len, zs_scenario *out, zs_scn_expect *exp, zs_scn_error *err);

/** Canonical text of scenario s (which must be valid) with the expect line
 *  from exp (NULL or nothing stated: no expect line).  Returns a malloc'd
 *  NUL-terminated string owned by the caller (free()), or NULL if s is not
 *  valid or memory ran out. */
char *zs_scn_print(const zs_scenario *s, const zs_scn_expect *exp);

/** Writes zs_scn_print's text to f.  Returns 0, or -1 (invalid s / out of
 *  memory / write error). */
int zs_scn_fprint(FILE *f, const zs_scenario *s, const zs_scn_expect *exp);

/** Number of lines of zs_scn_print's text (0 on error): the "size" that
 *  zofuzz minimize reports. */
int zs_scn_line_count(const zs_scenario *s);

/** "ok", "I1".."I7", "ERR", "setup"; "?" for anything else. */
const char *zs_scn_verdict_name(int verdict);
/** Inverse of zs_scn_verdict_name; -1 if unknown. */
int zs_scn_verdict_from_name(const char *name);

/** 1 if the name is a valid .scn name (non-empty, [A-Za-z_][A-Za-z0-9_.-]*,
 *  at most ZS_NAME_LEN-1 bytes, not "_"). */
int zs_scn_name_valid(const char *name);

#ifdef __cplusplus
}
#endif
#endif /* ZS_SCN_H */
