/*
 * fuzz_wide - a fuzz target that runs through F small functions and does
 * next to nothing in each: the exec/s the fuzz engine reaches by itself for
 * a target that hits as many distinct edges per execution as another one
 * (bench/fuzzbench.py speed, cell engine-wide; docs/benchmarks.md,
 * section 3).
 *
 * libFuzzer (LLVM 14) does work for every coverage feature an execution
 * hits, whatever the target: it visits each non-zero inline 8-bit counter,
 * looks its feature up in tables of 2^21 entries, and with entropic
 * scheduling counts its frequency.  bench/fuzz_empty hits a handful of
 * features: its cost per execution is the engine's least, its exec/s the
 * ceiling of every target.  A target hitting K features pays that plus the
 * work on K features; this one adds as little of its own as it can (edge
 * coverage only, no comparison callbacks: bench/CMakeLists.txt), so its
 * exec/s at K features is close to the ceiling of a target that wide.
 *
 * F comes from the environment variable ZO_BENCH_WIDE_FUNCS (0 to
 * ZW_MAX_FUNCS; absent: 0; anything else exits 2 with a message).  Each function is a call
 * and one branch on the input, two features with clang 14 (fuzzbench.py
 * measures them with -runs=0 and picks F); the first input byte decides
 * which side of each branch runs, and the loop over the input's bytes
 * gives inputs of different lengths different hit counts, so the engine
 * has coverage to follow and keeps a corpus of more than a few inputs.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define ZW_MAX_FUNCS 2000

static volatile unsigned g_sink;
static unsigned g_funcs;

#define ZW_N(a, b, c, d) ((a)*1000 + (b)*100 + (c)*10 + (d))

/* one function per number 0000..1999: noinline, so that each keeps its
 * own blocks (an inlined one could become a conditional move) */
#define ZW_FN(a, b, c, d)                                                                                              \
    __attribute__((noinline)) static void zw_##a##b##c##d(unsigned x) {                                                \
        if (x & (1u << (ZW_N(a, b, c, d) % 7)))                                                                        \
            g_sink += ZW_N(a, b, c, d);                                                                                \
        else                                                                                                           \
            g_sink ^= ZW_N(a, b, c, d);                                                                                \
    }
#define ZW_CALL(a, b, c, d)                                                                                            \
    if (ZW_N(a, b, c, d) >= g_funcs) return;                                                                           \
    zw_##a##b##c##d(x);

#define ZW_D(M, a, b, c)                                                                                               \
    M(a, b, c, 0)                                                                                                      \
    M(a, b, c, 1)                                                                                                      \
    M(a, b, c, 2) M(a, b, c, 3) M(a, b, c, 4) M(a, b, c, 5) M(a, b, c, 6) M(a, b, c, 7) M(a, b, c, 8) M(a, b, c, 9)
#define ZW_C(M, a, b)                                                                                                  \
    ZW_D(M, a, b, 0)                                                                                                   \
    ZW_D(M, a, b, 1)                                                                                                   \
    ZW_D(M, a, b, 2) ZW_D(M, a, b, 3) ZW_D(M, a, b, 4) ZW_D(M, a, b, 5) ZW_D(M, a, b, 6) ZW_D(M, a, b, 7)              \
        ZW_D(M, a, b, 8) ZW_D(M, a, b, 9)
#define ZW_B(M, a)                                                                                                     \
    ZW_C(M, a, 0)                                                                                                      \
    ZW_C(M, a, 1)                                                                                                      \
    ZW_C(M, a, 2) ZW_C(M, a, 3) ZW_C(M, a, 4) ZW_C(M, a, 5) ZW_C(M, a, 6) ZW_C(M, a, 7) ZW_C(M, a, 8) ZW_C(M, a, 9)
#define ZW_ALL(M) ZW_B(M, 0) ZW_B(M, 1)

ZW_ALL(ZW_FN)

static void run_all(unsigned x) { ZW_ALL(ZW_CALL) }

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    const char *v = getenv("ZO_BENCH_WIDE_FUNCS");
    if (!v) return 0;
    char *end = NULL;
    unsigned long f = strtoul(v, &end, 10);
    if (v[0] < '0' || v[0] > '9' || *end != 0 || f > ZW_MAX_FUNCS) {
        fprintf(stderr, "fuzz_wide: ZO_BENCH_WIDE_FUNCS=\"%s\": expected a whole number from 0 to %d\n", v,
                ZW_MAX_FUNCS);
        exit(2);
    }
    g_funcs = (unsigned)f;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    unsigned s = 0;
    for (size_t i = 0; i < size; i++) s += data[i];
    run_all(size ? data[0] : 0);
    g_sink ^= s;
    return 0;
}
