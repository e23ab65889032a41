/*
 * scenario_json.h - JSON export of a scenario (docs/scenario-model.md §5),
 * read by tools/torch_oracle.py.
 */
#ifndef ZS_SCENARIO_JSON_H
#define ZS_SCENARIO_JSON_H

#include <stdio.h>

#include "scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Writes s as one JSON object to f.  Returns 0, or -1 on a write error. */
int zs_scenario_write_json(const zs_scenario *s, FILE *f);

#ifdef __cplusplus
}
#endif
#endif /* ZS_SCENARIO_JSON_H */
