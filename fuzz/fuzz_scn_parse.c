/*
 * fuzz_scn_parse - fuzz target of the .scn text parser (fuzz/scn.c).
 *
 * Any input: zs_scn_parse must return without crashing, reading out of
 * bounds or leaking (ASan/UBSan/LSan).  An error must carry a line >= 1, a
 * column >= 1 and a message.  A success must be a valid scenario whose
 * canonical print parses back to a zs_scenario_equal_strict scenario with
 * the same expect line, and printing that again gives the same text
 * (docs/scenario-format.md guarantees).  A broken property aborts.
 *
 * Seeds: corpus/seeds/fuzz_scn_parse/ (the canonical text of every corpus
 * .scn, `zofuzz seeds`).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"
#include "scn.h"

static void fail(const char *what, const char *text) {
    fprintf(stderr, "fuzz_scn_parse: %s\n", what);
    if (text) fprintf(stderr, "--- printed text ---\n%s--- end ---\n", text);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static zs_scenario s, s2;
    zs_scn_expect e, e2;
    zs_scn_error err;
    if (zs_scn_parse((const char *)data, size, &s, &e, &err) != 0) {
        if (err.line < 1 || err.col < 1 || !err.msg[0]) fail("error without line/column/message", NULL);
        return 0;
    }
    char msg[200];
    if (zs_scenario_validate(&s, msg, sizeof msg) != 0) fail(msg, NULL);
    char *t = zs_scn_print(&s, &e);
    if (!t) fail("zs_scn_print failed on a parsed scenario", NULL);
    if (zs_scn_parse(t, strlen(t), &s2, &e2, &err) != 0) {
        fprintf(stderr, "reparse error %d:%d: %s\n", err.line, err.col, err.msg);
        fail("printed text does not parse", t);
    }
    if (!zs_scenario_equal_strict(&s, &s2)) fail("parse(print(s)) != s", t);
    if (memcmp(&e, &e2, sizeof e) != 0) fail("expect line changed by print/parse", t);
    char *t2 = zs_scn_print(&s2, &e2);
    if (!t2 || strcmp(t, t2) != 0) fail("print is not canonical", t);
    free(t);
    free(t2);
    return 0;
}
