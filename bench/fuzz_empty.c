/*
 * fuzz_empty - a fuzz target that does next to nothing: the exec/s the
 * fuzz engine reaches on this machine by itself (bench/fuzzbench.py speed,
 * cell "engine-only"; docs/benchmarks.md, section 3).
 *
 * Every engine adds a cost per execution of its own: libFuzzer's feature
 * bookkeeping (small here: a handful of edges), AFL++ persistent mode's
 * hand-off with its fork server (the target stops itself with SIGSTOP after
 * every input and is continued with SIGCONT, a pipe message each way).  An
 * execution of a real target cannot be cheaper than this one under the same
 * engine, so the cell is the ceiling against which the fuzz_hooks exec/s
 * goals are read.
 *
 * The input is read (a byte sum) and one branch depends on it, so the
 * engine has coverage to follow and nothing is optimised away.
 */
#include <stddef.h>
#include <stdint.h>

static volatile unsigned g_sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    unsigned s = 0;
    for (size_t i = 0; i < size; i++) s += data[i];
    if (size >= 4 && data[0] == 'Z') s ^= 1u;
    g_sink = s;
    return 0;
}
