/*
 * export.h - a scenario as a standalone Python reproducer (`zofuzz export`).
 *
 * The script builds the scenario's model from torch.nn.Modules, runs its
 * steps as tools/torch_oracle.py / tools/deepspeed_oracle.py do, prints
 * one line per hook with the counters (and, on DeepSpeed, every
 * parameter's ds_status), checks the invariants it can observe in the real
 * library (I1, I3, I4, exceptions) and exits 1 with a one-line summary on
 * a violation, 0 otherwise.  It imports only torch (and deepspeed).  The
 * Python part that does not depend on the scenario is fuzz/export_template.py,
 * compiled into the library.
 */
#ifndef ZS_EXPORT_H
#define ZS_EXPORT_H

#include <stddef.h>

#include "scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { ZS_EXPORT_TORCH = 0, ZS_EXPORT_DEEPSPEED = 1 };

typedef struct zs_export_opts {
    int target;          /* ZS_EXPORT_* */
    const char *source;  /* the scenario file named in the header ("" or NULL: none) */
    const char *command; /* the command that made the script, for the header (NULL: none) */
    const char *script;  /* the script's file name for the "Run:" line (NULL: repro.py) */
    int rank;            /* >= 0: s is this rank's program of an all-ranks scenario; else -1 */
} zs_export_opts;

/** "torch" -> ZS_EXPORT_TORCH, "deepspeed" -> ZS_EXPORT_DEEPSPEED, else -1. */
int zs_export_target_from_name(const char *name);

/** The script for scenario s, a single-rank program (cfg.all_ranks 0;
 *  zs_scenario_for_rank gives one).  Runs the simulator on it for the
 *  header's verdict.  Returns a malloc'd NUL-terminated text, or NULL with
 *  a message in err[0..errlen). */
char *zs_export_script(const zs_scenario *s, const zs_export_opts *o, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* ZS_EXPORT_H */
