/*
 * fuzz_hooks - the main fuzz target: realistic hook orders.
 *
 * The input is decoded into a scenario (fuzz/codec.c: every byte string is
 * a valid scenario), executed against the real runtime by the
 * PyTorch-faithful simulator (fuzz/sim.c) and checked after every event
 * (fuzz/check.c).  A violation prints the invariant, step, event, module,
 * parameter and policy and aborts, so the engine records a crash.
 *
 * Settings: the environment variables of fuzz/settings.h's table
 * (ZOFUZZ_POLICY, ZOFUZZ_ORDER, ZOFUZZ_CAP, ZOFUZZ_VERIFY, ZOFUZZ_TRACE,
 * ZOFUZZ_SKIP_DISCARD_I3 and, for all-ranks inputs, ZOFUZZ_ONE_RANK, ZOFUZZ_INVARIANTS,
 * ZOFUZZ_GATHER_ALWAYS, ZOFUZZ_EDITS); `zofuzz settings` lists them with
 * their values and defaults, docs/fuzzing.md carries the same table.  A bad
 * value exits 2 before the first input.
 *
 * Each input runs through zs_run (fuzz/run.h): all-ranks inputs
 * (cfg.all_ranks, per-rank programs) run every rank in one host world
 * (fuzz/world.h) and also check I8 (identical collective
 * sequences across ranks), as ZOFUZZ_INVARIANTS says.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "run.h"
#include "scenario.h"
#include "settings.h"

static int g_init;
static zs_settings g_set;

/* the environment, through the settings table (fuzz/settings.h); a bad
 * value stops the target before the first input */
static void init_env(void) {
    if (g_init) return;
    g_init = 1;
    zs_settings_init(&g_set);
    char err[300];
    if (zs_settings_from_env(&g_set, err, sizeof err) != 0) {
        fprintf(stderr, "fuzz_hooks: %s\n", err);
        exit(2);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    init_env();
    fprintf(stderr, "fuzz_hooks: policy %s%s%s%s\n",
            g_set.policy < 0 ? "from the scenario" : zs_policy_name((unsigned)g_set.policy),
            g_set.world.only_i8         ? ", only I8 (any divergence)"
            : g_set.world.skip_i8       ? ", I8 not checked"
            : g_set.world.blame_runtime ? ", I8 where the runtime is to blame"
                                        : ", any divergence is I8",
            g_set.world.protect_routers ? ", gather-always routers" : "",
            g_set.world.edit_mask != ~0u ? ", some edit kinds only" : "");
    return 0;
}

/* One rank's view allocates from an arena that is emptied after every input
 * (fuzz/arena.h: ASan still sees overflows and uses after free in it); a
 * block still live then is a leak of the runtime, which LeakSanitizer
 * cannot see in the arena, so it is a finding here.  The world's ranks,
 * when they run as coroutines of this thread, do the same with an arena
 * each, and the host world with one of its own: each is used by one of
 * them alone, so that memory one rank frees is never another's. */
static zs_arena *g_arena;
static zo_allocator g_alloc;
static zs_arena *g_world_arena[ZS_MAX_WORLD + 1]; /* ranks 0..W-1, then the host world */
static zo_allocator g_world_alloc[ZS_MAX_WORLD + 1];

/* The arenas of the world's ranks and host world, created at the first
 * all-ranks input (none: malloc, as with ZOFUZZ_RANKS=threads). */
static void world_arenas(zs_run_opts *o) {
    if (g_set.world.threads) return;
    for (unsigned q = 0; q <= ZS_MAX_WORLD; q++)
        if (!g_world_arena[q]) {
            g_world_arena[q] = zs_arena_create(0);
            if (!g_world_arena[q]) return;
            g_world_alloc[q] = zs_arena_allocator(g_world_arena[q]);
        }
    for (unsigned q = 0; q < ZS_MAX_WORLD; q++) o->rank_allocator[q] = &g_world_alloc[q];
    o->world_allocator = &g_world_alloc[ZS_MAX_WORLD];
}

static void leak_check(zs_arena *a) {
    size_t leaked = zs_arena_reset(a);
    if (leaked) {
        fprintf(stderr, "fuzz_hooks: %zu blocks allocated during the run were not freed (a leak)\n", leaked);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static zs_scenario s;
    init_env();
    if (!g_arena) {
        g_arena = zs_arena_create(0);
        if (g_arena) g_alloc = zs_arena_allocator(g_arena);
    }
    zs_decode(data, size, &s);
    zs_run_opts o;
    zs_run_opts_init(&o);
    zs_run_opts_from_settings(&o, &g_set);
    o.abort_on_violation = 1;
    if (g_set.trace) o.trace = stderr;
    if (g_arena) o.allocator = &g_alloc;
    if (s.cfg.all_ranks && !g_set.one_rank) world_arenas(&o);
    zs_outcome out;
    zs_run(&s, &o, &out); /* aborts on a finding */
    if (g_arena) leak_check(g_arena);
    if (o.world_allocator)
        for (unsigned q = 0; q <= ZS_MAX_WORLD; q++) leak_check(g_world_arena[q]);
    return 0;
}
