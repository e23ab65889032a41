/*
 * mpi_replay.c - zoffload under mpiexec: the model corpus replayed in W real
 * processes over the MPI data plane, and the MoE divergence check.
 *
 *   mpiexec -np 4 mpi_replay replay [--verify] [--cap BYTES] FILE.scn...
 *   mpiexec -np 4 mpi_replay divergence MOE.scn
 *   mpiexec -np 4 mpi_replay backend
 *
 * Every process is one rank (rank = MPI rank, W = MPI size, overriding the
 * scenario's world size).  Rank r runs its program (zs_scenario_for_rank) in
 * the simulator (fuzz/sim.h) with the hooks PyTorch + DeepSpeed would fire;
 * the runtime's backend is the mirror (tests/mpi/mpi_mirror.h): the
 * simulator's single-view host backend of rank r and the MPI backend
 * (zoffload_mpi.h) of rank r, every gathered parameter compared byte for
 * byte at completion, with the simulator's physical cap (ZS_SIM_DEFAULT_CAP
 * bytes per parameter, the same cap semantics on both sides).
 *
 * replay      for each file: every rank's invariants must hold (the checker
 *             of the simulator), no gathered parameter may differ.  Prints
 *             per model the gathered parameters compared (over all ranks)
 *             and the mismatches.  --verify: zo_config.verify_collectives = 1
 *             on every rank (every collective is preceded by the fingerprint
 *             exchange over MPI; a real model must give no mismatch).
 *             --cap BYTES: the physical cap for the files after it (default
 *             the simulator's 64; 0 = none).  Under a cap of C bytes only the
 *             ranks holding bytes below C contribute data (for a model's
 *             large tensors: rank 0 alone), so ctest also replays the small
 *             corpus/regressions scenarios with --cap 0, where every rank's
 *             shard moves between processes.
 * divergence  MOE.scn is a small MoE layer; rank 1 routes to a different
 *             expert (a ZS_EDIT_ROUTE rank edit on every step).  Three runs:
 *             (a) verify_collectives = 1: every rank must stop with
 *                 ZO_ERR_COLLECTIVE_MISMATCH (the message names both sides),
 *                 instead of issuing the divergent all-gather;
 *             (b) verify_collectives = 1 and ZS_MOD_GATHER_ALWAYS on the MoE
 *                 module: the same routing passes, everything compared equal;
 *             (c) verify_collectives = 0, no gather-always: the divergent
 *                 all-gathers of equal size are issued and MPI silently mixes
 *                 the two experts' shards - the mirror's byte comparison must
 *                 see it on every rank (why the fingerprint exists).
 * backend     the MPI backend's vtable directly: uncapped and capped
 *             (Iallgatherv) gathers (built a second time with tiny MPI
 *             count limits, mpi_replay_small_counts, so the derived-datatype,
 *             per-rank Ibcast and chunked reduce-scatter paths run too), query/wait, a buffer freed while in
 *             flight, reduce-scatter SUM/AVG, exchange, bad arguments.
 *
 * A watchdog (alarm, $ZO_MPI_WATCHDOG_S seconds, default 50) ends a process
 * that hangs in a collective with exit status 124, so a divergence that the
 * check misses fails the test instead of waiting for ctest's timeout.
 * Exit status: 0 when the expectation held on every rank (decided together:
 * MPI_Allreduce), else 1.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "mpi_mirror.h"
#include "ranks.h"
#include "scenario.h"
#include "scn.h"
#include "sim.h"
#include "zoffload_mpi.h"

static int g_rank, g_world;

static void watchdog(int sig) {
    (void)sig;
    static const char msg[] = "mpi_replay: watchdog: a collective did not complete (hang): exiting 124\n";
    ssize_t n = write(2, msg, sizeof msg - 1);
    (void)n;
    _exit(124);
}

static void say0(const char *fmt, ...) {
    if (g_rank != 0) return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fflush(stdout);
}

/* 1 on every rank if ok is 1 on every rank */
static int all_ok(int ok) {
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}

static uint64_t sum_u64(uint64_t v) {
    unsigned long long in = v, out = 0;
    MPI_Allreduce(&in, &out, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return out;
}

/* ------------------------------------------------------------------ */
/* One rank's simulator run over the mirror                            */
/* ------------------------------------------------------------------ */

typedef struct run_ctx {
    uint64_t cap;
    zo_backend *mpi;
    zo_mpi_mirror_stats mst;
    zo_mpi_stats mpist;
    char first[512];
    char err[256];
    int wrapped;
} run_ctx;

static zo_status wrap(void *user, zo_backend *host, zo_backend **out) {
    run_ctx *c = user;
    zo_mpi_config mc = ZO_MPI_CONFIG_INIT;
    mc.max_bytes_per_param = c->cap;
    zo_status st = zo_backend_mpi_create(&mc, &c->mpi);
    if (st) {
        snprintf(c->err, sizeof c->err, "zo_backend_mpi_create: %s: %s", zo_strerror(st), zo_mpi_create_error());
        return st;
    }
    st = zo_mpi_mirror_create(host, c->mpi, out);
    if (st) {
        snprintf(c->err, sizeof c->err, "zo_mpi_mirror_create: %s", zo_strerror(st));
        zo_backend_destroy(c->mpi);
        c->mpi = NULL;
        return st;
    }
    c->wrapped = 1;
    return ZO_OK;
}

static void unwrap(void *user, zo_backend *mirror) {
    run_ctx *c = user;
    c->mst = zo_mpi_mirror_get_stats(mirror);
    snprintf(c->first, sizeof c->first, "%s", zo_mpi_mirror_first_mismatch(mirror));
    zo_mpi_mirror_destroy(mirror);
    c->mpist = zo_mpi_get_stats(c->mpi);
    zo_backend_destroy(c->mpi);
    c->mpi = NULL;
}

typedef struct rank_result {
    int rc; /* zs_sim_run's return */
    zs_sim_result r;
    run_ctx rc_ctx;
} rank_result;

/* Runs this rank's program of base (W and verify already set) with physical
 * cap `cap` bytes per parameter on both backends (0 = none). */
static int run_rank(const zs_scenario *base, uint64_t cap, rank_result *out) {
    memset(out, 0, sizeof *out);
    zs_scenario *mine = calloc(1, sizeof *mine);
    if (!mine) {
        snprintf(out->rc_ctx.err, sizeof out->rc_ctx.err, "out of memory");
        return out->rc = -1;
    }
    char err[256] = "";
    if (zs_scenario_for_rank(base, (unsigned)g_rank, mine, err, sizeof err) != 0) {
        snprintf(out->rc_ctx.err, sizeof out->rc_ctx.err, "program of rank %d: %s", g_rank, err);
        zs_scenario_free(mine);
        free(mine);
        return out->rc = -1;
    }
    zs_sim_opts o;
    zs_sim_opts_init(&o);
    o.policy = ZO_GRADS_PER_CALL;
    o.stop_on_violation = 1;
    o.wrap_backend = wrap;
    o.unwrap_backend = unwrap;
    o.wrap_user = &out->rc_ctx;
    o.max_bytes_per_param = cap;
    out->rc_ctx.cap = cap;
    out->rc = zs_sim_run(mine, &o, &out->r);
    zs_scenario_free(mine);
    free(mine);
    return out->rc;
}

static int load(const char *path, zs_scenario *s, zs_scn_expect *ex) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "rank %d: cannot open %s\n", g_rank, path);
        return -1;
    }
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    zs_scn_error e;
    if (zs_scn_parse(buf, n, s, ex, &e) != 0) {
        fprintf(stderr, "rank %d: %s:%d:%d: %s\n", g_rank, path, e.line, e.col, e.msg);
        return -1;
    }
    return 0;
}

static const char *base_name(const char *p) {
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static void violation_line(const rank_result *rr, char *buf, size_t len) {
    if (rr->r.violated)
        zs_violation_format(&rr->r.v, buf, len);
    else if (rr->rc < 0)
        snprintf(buf, len, "setup: %.240s %.240s", rr->r.setup_msg, rr->rc_ctx.err);
    else
        snprintf(buf, len, "ok");
}

/* Prints every rank's line in rank order (rank 0 collects). */
static void print_ranks(const char *tag, const char *line) {
    char mine[512], *all = NULL;
    snprintf(mine, sizeof mine, "%s", line);
    if (g_rank == 0) all = malloc((size_t)g_world * sizeof mine);
    MPI_Gather(mine, (int)sizeof mine, MPI_CHAR, all, (int)sizeof mine, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (g_rank == 0 && all) {
        for (int r = 0; r < g_world; r++) printf("  %s rank %d: %s\n", tag, r, all + (size_t)r * sizeof mine);
        fflush(stdout);
    }
    free(all);
}

/* ------------------------------------------------------------------ */
/* replay                                                              */
/* ------------------------------------------------------------------ */

static int mode_replay(int argc, char **argv) {
    int verify = 0, ok_all = 1;
    uint64_t cap = ZS_SIM_DEFAULT_CAP;
    zs_scenario *s = calloc(1, sizeof *s);
    rank_result *rr = malloc(sizeof *rr);
    if (!s || !rr) return 1;
    say0("mpi_replay: %d processes, policy per-call, physical cap %u bytes per parameter (the simulator's) "
         "unless --cap\n",
         g_world, (unsigned)ZS_SIM_DEFAULT_CAP);
    uint64_t tot_cmp = 0, tot_mis = 0, tot_bytes = 0;
    int files = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--verify")) {
            verify = 1;
            say0("mpi_replay: verify_collectives = 1 on every rank\n");
            continue;
        }
        if (!strcmp(argv[i], "--cap") && i + 1 < argc) {
            cap = strtoull(argv[++i], NULL, 0);
            say0("mpi_replay: physical cap %llu bytes per parameter (0: none)\n", (unsigned long long)cap);
            continue;
        }
        double t0 = MPI_Wtime();
        zs_scn_expect ex0;
        memset(&ex0, 0, sizeof ex0);
        int ok = load(argv[i], s, &ex0) == 0;
        if (!all_ok(ok)) {
            ok_all = 0;
            continue;
        }
        s->cfg.world_size = (uint8_t)g_world;
        s->cfg.rank = 0;
        s->cfg.verify_collectives = (uint8_t)verify;
        /* a ranks=all file whose expect line says per-call=I8 diverges on purpose
         * (mixtral_moe_ranks.scn): with the fingerprint check every rank must stop
         * with ZO_ERR_COLLECTIVE_MISMATCH and no wrong byte may be delivered;
         * without it real MPI would hang or mix tensors, so it is not run */
        int diverges = s->cfg.all_ranks && ex0.have[ZO_GRADS_PER_CALL] && ex0.verdict[ZO_GRADS_PER_CALL] == ZS_INV_I8;
        if (diverges && !verify) {
            say0("%-24s skip  ranks diverge by design (expect per-call=I8); needs --verify\n", base_name(argv[i]));
            continue;
        }
        run_rank(s, cap, rr);
        const zo_mpi_mirror_stats *m = &rr->rc_ctx.mst;
        if (diverges)
            ok = rr->r.violated && rr->r.v.inv == ZS_INV_ERR && strstr(rr->r.v.msg, "ZO_ERR_COLLECTIVE_MISMATCH") &&
                 rr->rc_ctx.wrapped && m->mismatches == 0;
        else
            ok = rr->rc == 0 && !rr->r.violated && rr->rc_ctx.wrapped && m->mismatches == 0;
        uint64_t cmp = sum_u64(m->compared), mis = sum_u64(m->mismatches), bytes = sum_u64(m->bytes_compared);
        uint64_t ex = sum_u64(rr->rc_ctx.mpist.exchanges), gathers = sum_u64(rr->rc_ctx.mpist.gathers);
        int okk = all_ok(ok);
        if (diverges && okk) {
            char line[512];
            violation_line(rr, line, sizeof line);
            say0("%-24s ok    diverges by design: every rank stopped with ZO_ERR_COLLECTIVE_MISMATCH after %llu "
                 "fingerprint exchanges, %llu parameters compared before it, 0 mismatches\n",
                 base_name(argv[i]), (unsigned long long)ex, (unsigned long long)cmp);
            print_ranks(base_name(argv[i]), line);
            tot_cmp += cmp;
            tot_bytes += bytes;
            files++;
            continue;
        }
        say0(
            "%-24s %s  gathered parameters compared (all ranks) %6llu (%llu bytes), mismatches %llu, MPI all-gather groups "
            "%llu, fingerprint exchanges %llu, %.2f s\n",
            base_name(argv[i]), okk ? "ok  " : "FAIL", (unsigned long long)cmp, (unsigned long long)bytes,
            (unsigned long long)mis, (unsigned long long)gathers, (unsigned long long)ex, MPI_Wtime() - t0);
        if (!okk) {
            char line[512];
            violation_line(rr, line, sizeof line);
            if (m->mismatches) snprintf(line, sizeof line, "%s", rr->rc_ctx.first);
            print_ranks(base_name(argv[i]), line);
            ok_all = 0;
        }
        if (okk && cmp == 0) /* every parameter persistent or never used: nothing to compare */
            say0("  %s: nothing was gathered (noted, not a failure)\n", base_name(argv[i]));
        if (verify && okk && ex == 0) {
            say0("  %s: verify_collectives = 1 but no fingerprint was exchanged\n", base_name(argv[i]));
            ok_all = 0;
        }
        tot_cmp += cmp;
        tot_mis += mis;
        tot_bytes += bytes;
        files++;
    }
    say0(
        "mpi_replay: %d scenario files, %llu gathered parameters compared over %d ranks (%llu bytes), %llu mismatches: %s\n",
        files, (unsigned long long)tot_cmp, g_world, (unsigned long long)tot_bytes, (unsigned long long)tot_mis,
        ok_all && files && tot_cmp ? "PASS" : "FAIL");
    zs_scenario_free(s);
    free(s);
    free(rr);
    return ok_all && files && tot_cmp ? 0 : 1;
}

/* ------------------------------------------------------------------ */
/* divergence                                                          */
/* ------------------------------------------------------------------ */

static int find_module(const zs_scenario *s, const char *name) {
    for (unsigned i = 0; i < s->n_modules; i++)
        if (!strcmp(s->mod[i].name, name)) return (int)i;
    return -1;
}

static int mode_divergence(const char *path) {
    zs_scenario *s = calloc(1, sizeof *s);
    rank_result *rr = malloc(sizeof *rr);
    if (!s || !rr) return 1;
    if (!all_ok(load(path, s, NULL) == 0)) return 1;
    int moe = find_module(s, "moe"), e0 = find_module(s, "e0"), e1 = find_module(s, "e1");
    if (moe < 0 || e0 < 0 || e1 < 0) {
        say0("%s: needs modules moe, e0, e1\n", path);
        return 1;
    }
    s->cfg.world_size = (uint8_t)g_world;
    s->cfg.rank = 0;
    s->cfg.all_ranks = 1;
    /* rank 1 routes its tokens to e1 wherever the base program calls e0 */
    s->n_edits = 0;
    for (unsigned st = 0; st < s->n_steps; st++)
        for (unsigned p = 0; p < s->step[st].n_passes; p++)
            for (unsigned k = 0; k < s->step[st].pass[p].n_calls; k++)
                if (s->step[st].pass[p].calls[k].module == (zs_id)e0 && s->n_edits < ZS_MAX_RANK_EDITS) {
                    zs_rank_edit *e = &s->edit[s->n_edits++];
                    memset(e, 0, sizeof *e);
                    e->rank = 1;
                    e->kind = ZS_EDIT_ROUTE;
                    e->step = (uint8_t)st;
                    e->pass = (uint8_t)p;
                    e->call = (zs_id)k;
                    e->module = (zs_id)e1;
                }
    if (s->n_edits == 0) {
        say0("%s: the base program never calls e0\n", path);
        return 1;
    }
    say0("mpi_replay divergence: %s, %d processes, rank 1 routes to e1 where the others call e0 (%u edits)\n",
         base_name(path), g_world, (unsigned)s->n_edits);
    int pass = 1;
    char line[512];

    /* (a) fingerprint check on: ZO_ERR_COLLECTIVE_MISMATCH on every rank */
    s->cfg.verify_collectives = 1;
    s->mod[moe].flags &= (uint8_t)~ZS_MOD_GATHER_ALWAYS;
    run_rank(s, ZS_SIM_DEFAULT_CAP, rr);
    const char *msg = rr->r.v.msg;
    int ok = rr->r.violated && rr->r.v.inv == ZS_INV_ERR && strstr(msg, "ZO_ERR_COLLECTIVE_MISMATCH") &&
             strstr(msg, "rank 0") && strstr(msg, "rank 1") && rr->rc_ctx.mst.mismatches == 0;
    violation_line(rr, line, sizeof line);
    int okk = all_ok(ok);
    say0("(a) verify_collectives=1: %s (every rank must stop with ZO_ERR_COLLECTIVE_MISMATCH naming rank 0 and "
         "rank 1, no tensor mixed)\n",
         okk ? "ok" : "FAIL");
    print_ranks("(a)", line);
    pass &= okk;

    /* (b) gather-always on the MoE module: the same routing passes */
    s->mod[moe].flags |= ZS_MOD_GATHER_ALWAYS;
    run_rank(s, ZS_SIM_DEFAULT_CAP, rr);
    ok = rr->rc == 0 && !rr->r.violated && rr->rc_ctx.mst.mismatches == 0 && rr->rc_ctx.mst.compared > 0 &&
         rr->rc_ctx.mpist.exchanges > 0;
    violation_line(rr, line, sizeof line);
    uint64_t cmp = sum_u64(rr->rc_ctx.mst.compared), ex = sum_u64(rr->rc_ctx.mpist.exchanges);
    okk = all_ok(ok);
    say0("(b) verify_collectives=1 + gather-always on moe: %s (%llu gathered parameters compared, %llu "
         "fingerprints exchanged, no mismatch)\n",
         okk ? "ok" : "FAIL", (unsigned long long)cmp, (unsigned long long)ex);
    print_ranks("(b)", line);
    pass &= okk;

    /* (c) no check, no gather-always: MPI mixes the two experts' shards.  No
     * physical cap here: every rank must hold real bytes of its shard, so that
     * every rank receives a foreign shard and stops at the same collective.
     * (Under the 64-byte cap only rank 0 stores bytes of these 4 KiB
     * tensors: then only rank 1 sees foreign bytes, stops, and the other
     * ranks hang in their next collective - the NCCL hang itself, which
     * the watchdog would report.) */
    s->cfg.verify_collectives = 0;
    s->mod[moe].flags &= (uint8_t)~ZS_MOD_GATHER_ALWAYS;
    run_rank(s, 0, rr);
    ok = rr->rc_ctx.mst.mismatches > 0 && rr->r.violated;
    snprintf(line, sizeof line, "%s", rr->rc_ctx.mst.mismatches ? rr->rc_ctx.first : "no mismatch seen");
    okk = all_ok(ok);
    say0("(c) verify_collectives=0: %s (the divergent all-gathers run and silently mix tensors: every rank's "
         "comparison must catch it)\n",
         okk ? "ok" : "FAIL");
    print_ranks("(c)", line);
    pass &= okk;

    say0("mpi_replay divergence: %s\n", pass ? "PASS" : "FAIL");
    zs_scenario_free(s);
    free(s);
    free(rr);
    return pass ? 0 : 1;
}

/* ------------------------------------------------------------------ */
/* backend: the vtable directly                                        */
/* ------------------------------------------------------------------ */

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "rank %d: %s:%d: ", g_rank, __FILE__, __LINE__);                                           \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fprintf(stderr, "\n");                                                                                     \
            bad++;                                                                                                     \
        }                                                                                                              \
    } while (0)

static int gather_check(zo_backend *b, zo_param_id id, uint64_t numel, uint32_t es, uint64_t cap, int use_query) {
    int bad = 0;
    uint64_t W = (uint64_t)g_world, part = (numel + W - 1) / W, padded = part * W * es;
    uint64_t L = cap && cap < padded ? cap : padded;
    void *full = NULL;
    zo_work *w = NULL;
    CHECK(zo_backend_param_add(b, id, numel, es, part) == ZO_OK, "param_add: %s", zo_backend_last_error(b));
    CHECK(zo_backend_full_alloc(b, id, padded, &full) == ZO_OK, "full_alloc: %s", zo_backend_last_error(b));
    if (bad) return bad;
    zo_gather_item it = {id, full, numel, part, es};
    CHECK(zo_backend_all_gather_start(b, &it, 1, &w) == ZO_OK, "all_gather_start: %s", zo_backend_last_error(b));
    if (use_query) {
        int done = 0;
        for (long spin = 0; !done && spin < 100000000L; spin++) CHECK(zo_backend_query(b, w, &done) == ZO_OK, "query");
        CHECK(done, "query never reported done");
    }
    CHECK(zo_backend_wait(b, w) == ZO_OK, "wait: %s", zo_backend_last_error(b));
    zo_backend_work_free(b, w);
    const uint8_t *d = full;
    for (uint64_t j = 0; j < L; j++) {
        uint8_t want = j < numel * es ? zo_host_param_byte(id, j) : 0;
        if (d[j] != want) {
            CHECK(0, "param %u (numel %llu, cap %llu): byte %llu is %u, want %u", (unsigned)id,
                  (unsigned long long)numel, (unsigned long long)cap, (unsigned long long)j, d[j], want);
            break;
        }
    }
    CHECK(zo_mpi_physical_bytes(b, padded) == L, "physical bytes");
    zo_backend_full_free(b, id, full);
    return bad;
}

/* Counting allocator: LeakSanitizer is off under mpiexec (Open MPI keeps
 * allocations past MPI_Finalize), so the backend's own allocations are
 * accounted here: every byte it allocated must be freed by destroy. */
typedef struct count_alloc {
    long live;
    long total;
} count_alloc;

static void *ca_alloc(void *opaque, size_t n) {
    count_alloc *c = opaque;
    void *p = malloc(n);
    if (p) {
        c->live++;
        c->total++;
    }
    return p;
}

static void ca_free(void *opaque, void *p) {
    count_alloc *c = opaque;
    if (p) c->live--;
    free(p);
}

static int mode_backend(void) {
    int bad = 0;
    zo_backend *b = NULL;
    count_alloc ca = {0, 0};
    zo_mpi_config mc = ZO_MPI_CONFIG_INIT;
    mc.size = 3;
    CHECK(zo_backend_mpi_create(&mc, &b) == ZO_ERR_VERSION, "bad size accepted");
    CHECK(zo_backend_mpi_create(NULL, &b) == ZO_ERR_INVALID_ARG, "NULL config accepted");
    mc.size = sizeof mc;
    mc.comm = MPI_COMM_NULL;
    CHECK(zo_backend_mpi_create(&mc, &b) == ZO_ERR_INVALID_ARG, "MPI_COMM_NULL accepted");
    mc.comm = MPI_COMM_WORLD;
    mc.allocator.alloc = ca_alloc;
    CHECK(zo_backend_mpi_create(&mc, &b) == ZO_ERR_INVALID_ARG, "allocator with only alloc accepted");
    mc.allocator.free = ca_free;
    mc.allocator.opaque = &ca;

    /* uncapped: MPI_Iallgather, including a numel not divisible by W (padding) */
    CHECK(zo_backend_mpi_create(&mc, &b) == ZO_OK, "create: %s", zo_mpi_create_error());
    if (!b) return 1;
    const zo_backend_ops *o = b->ops;
    CHECK(o->version >= 2 && o->exchange, "ops version 2 with exchange");
    CHECK(o->world_size(b->ctx) == g_world && o->rank(b->ctx) == g_rank, "world/rank");
    bad += gather_check(b, 3, 1001, 4, 0, 0);
    bad += gather_check(b, 4, 7, 2, 0, 1);
    bad += gather_check(b, 5, 1, 8, 0, 0); /* one element: ranks 1.. hold only padding */

    /* a group of 3 items and a buffer freed while its gather is in flight */
    {
        zo_param_id ids[3] = {10, 11, 12};
        uint64_t numels[3] = {64, 100, 33};
        void *full[3] = {NULL, NULL, NULL};
        zo_gather_item its[3];
        for (int i = 0; i < 3; i++) {
            uint64_t part = (numels[i] + (uint64_t)g_world - 1) / (uint64_t)g_world;
            CHECK(zo_backend_param_add(b, ids[i], numels[i], 4, part) == ZO_OK, "param_add");
            CHECK(zo_backend_full_alloc(b, ids[i], part * (uint64_t)g_world * 4, &full[i]) == ZO_OK, "full_alloc");
            its[i] = (zo_gather_item){ids[i], full[i], numels[i], part, 4};
        }
        zo_work *w = NULL;
        CHECK(zo_backend_all_gather_start(b, its, 3, &w) == ZO_OK, "group: %s", zo_backend_last_error(b));
        /* the same parameter again while in flight: refused, nothing issued */
        zo_work *w2 = NULL;
        CHECK(zo_backend_all_gather_start(b, its, 1, &w2) == ZO_ERR_STATE && !w2, "double gather accepted");
        zo_backend_full_free(b, ids[2], full[2]); /* waits the group first */
        CHECK(zo_mpi_get_stats(b).blocking_frees == 1, "blocking free counted");
        CHECK(zo_backend_wait(b, w) == ZO_OK, "group wait: %s", zo_backend_last_error(b));
        for (int i = 0; i < 2; i++)
            for (uint64_t j = 0; j < numels[i] * 4; j++)
                if (((uint8_t *)full[i])[j] != zo_host_param_byte(ids[i], j)) {
                    CHECK(0, "group item %d byte %llu", i, (unsigned long long)j);
                    break;
                }
        zo_backend_work_free(b, w);
        zo_backend_full_free(b, ids[0], full[0]);
        zo_backend_full_free(b, ids[1], full[1]);
    }

    /* bad arguments: reported, nothing issued (every rank makes the same calls) */
    {
        void *full = NULL;
        zo_work *w = NULL;
        uint64_t p3 = (1001 + (uint64_t)g_world - 1) / (uint64_t)g_world;
        CHECK(zo_backend_param_add(b, 3, 1001, 4, p3) == ZO_ERR_EXISTS, "double param_add");
        CHECK(zo_backend_param_add(b, 20, 10, 4, 11) == ZO_ERR_INVALID_ARG, "bad partition accepted");
        CHECK(zo_backend_param_add(b, 21, 0, 4, 0) == ZO_ERR_INVALID_ARG, "numel 0 accepted");
        CHECK(zo_backend_full_alloc(b, 99, 16, &full) == ZO_ERR_BAD_HANDLE, "full_alloc of unknown param");
        zo_gather_item it = {3, (void *)&full, 1001, p3, 4};
        CHECK(zo_backend_all_gather_start(b, &it, 1, &w) == ZO_ERR_INVALID_ARG && !w, "foreign buffer accepted");
        CHECK(zo_backend_wait(b, (zo_work *)&full) == ZO_ERR_INVALID_ARG, "foreign work accepted");
        int done = 0;
        CHECK(zo_backend_query(b, (zo_work *)&full, &done) == ZO_ERR_INVALID_ARG, "foreign work accepted by query");
        CHECK(zo_backend_exchange(b, &done, 0, &done) == ZO_ERR_INVALID_ARG, "0-byte exchange accepted");
        CHECK(zo_backend_exchange(b, &done, 257, &done) == ZO_ERR_INVALID_ARG, "257-byte exchange accepted");
        zo_backend_full_free(b, 3, &full); /* foreign pointer: recorded, ignored */
        CHECK(strstr(zo_backend_last_error(b), "not a live full buffer") != NULL, "foreign free message");
        zo_backend_param_remove(b, 98);
        CHECK(strstr(zo_backend_last_error(b), "not added") != NULL, "unknown param_remove message");
    }

    /* exchange: rank r's message at offset r * bytes */
    {
        uint8_t msg[64], recv[64 * 64];
        for (int i = 0; i < 64; i++) msg[i] = (uint8_t)(g_rank * 31 + i);
        if (g_world <= 64) {
            CHECK(zo_backend_exchange(b, msg, 64, recv) == ZO_OK, "exchange: %s", zo_backend_last_error(b));
            for (int r = 0; r < g_world; r++)
                for (int i = 0; i < 64; i++)
                    if (recv[r * 64 + i] != (uint8_t)(r * 31 + i)) {
                        CHECK(0, "exchange: rank %d byte %d", r, i);
                        r = g_world;
                        break;
                    }
        }
    }

    /* reduce-scatter: every rank contributes g_r[j] = j % 13 - 6 + r; SUM over
     * ranks = W * (j % 13 - 6) + W(W-1)/2; AVG = that / W */
    {
        uint64_t numel = 1001;
        float *g = malloc(numel * sizeof *g);
        CHECK(g != NULL, "malloc");
        if (g) {
            for (uint64_t j = 0; j < numel; j++) g[j] = (float)(j % 13) - 6.0f + (float)g_rank;
            float one = 0;
            CHECK(zo_backend_reduce_scatter(b, 3, g, &one, 1000, 250, ZO_REDUCE_SUM) == ZO_ERR_INVALID_ARG,
                  "reduce_scatter with wrong numel accepted");
            CHECK(zo_backend_reduce_scatter(b, 3, g, &one, 1001, 251, (zo_reduce_op)7) == ZO_ERR_INVALID_ARG,
                  "unknown reduce op accepted");
            /* param 3 has numel 1001: use it */
            uint64_t p3 = (1001 + (uint64_t)g_world - 1) / (uint64_t)g_world;
            float *o3 = malloc(p3 * sizeof *o3);
            for (int avg = 0; o3 && avg < 2; avg++) {
                CHECK(zo_backend_reduce_scatter(b, 3, g, o3, 1001, p3, avg ? ZO_REDUCE_AVG : ZO_REDUCE_SUM) == ZO_OK,
                      "reduce_scatter: %s", zo_backend_last_error(b));
                float W = (float)g_world;
                for (uint64_t i = 0; i < p3; i++) {
                    uint64_t j = (uint64_t)g_rank * p3 + i;
                    float want = j < 1001 ? W * ((float)(j % 13) - 6.0f) + W * (W - 1.0f) / 2.0f : 0.0f;
                    if (avg) want /= W;
                    float d = o3[i] - want;
                    if (d > 1e-4f || d < -1e-4f) {
                        CHECK(0, "reduce_scatter %s elem %llu: %g, want %g", avg ? "AVG" : "SUM", (unsigned long long)i,
                              (double)o3[i], (double)want);
                        break;
                    }
                }
            }
            free(o3);
        }
        free(g);
    }
    zo_mpi_stats st = zo_mpi_get_stats(b);
    CHECK(st.gathers == 4 && st.exchanges == 1 && st.reduce_scatters == 2, "stats %llu gathers %llu exchanges %llu rs",
          (unsigned long long)st.gathers, (unsigned long long)st.exchanges, (unsigned long long)st.reduce_scatters);
    zo_backend_destroy(b);

    /* capped (the simulator's 64 bytes): MPI_Iallgatherv of each rank's stored part */
    b = NULL;
    mc.max_bytes_per_param = ZS_SIM_DEFAULT_CAP;
    CHECK(zo_backend_mpi_create(&mc, &b) == ZO_OK, "create capped: %s", zo_mpi_create_error());
    if (b) {
        bad += gather_check(b, 1, 1000, 4, ZS_SIM_DEFAULT_CAP, 0); /* rank 0 holds all 64 bytes */
        bad += gather_check(b, 2, 30, 4, ZS_SIM_DEFAULT_CAP, 1);   /* shards of 32 bytes: ranks 0, 1 */
        bad += gather_check(b, 7, 9, 2, ZS_SIM_DEFAULT_CAP, 0);    /* 24 padded bytes: under the cap */
        bad += gather_check(b, 8, 41, 3, ZS_SIM_DEFAULT_CAP, 0);   /* 33-byte shards: rank 1 holds a prefix */
        /* a gather left in flight at destroy: destroy waits for it */
        void *full = NULL;
        zo_work *w = NULL;
        CHECK(zo_backend_param_add(b, 9, 400, 4, 100) == ZO_OK || g_world != 4, "param_add");
        if (g_world == 4 && zo_backend_full_alloc(b, 9, 1600, &full) == ZO_OK) {
            zo_gather_item it = {9, full, 400, 100, 4};
            CHECK(zo_backend_all_gather_start(b, &it, 1, &w) == ZO_OK, "gather left in flight");
        }
        zo_backend_destroy(b);
    }
    /* a cap that two ranks' bytes reach (W = 4: rank 0 1000 bytes, rank 1 500) */
    b = NULL;
    mc.max_bytes_per_param = 1500;
    CHECK(zo_backend_mpi_create(&mc, &b) == ZO_OK, "create capped 1500: %s", zo_mpi_create_error());
    if (b) {
        bad += gather_check(b, 30, 1000, 4, 1500, 0);
        bad += gather_check(b, 31, 250, 8, 1500, 1);
        zo_backend_destroy(b);
    }
    CHECK(ca.live == 0 && ca.total > 0, "the backend left %ld of its %ld allocations unfreed", ca.live, ca.total);
    int okk = all_ok(bad == 0);
    say0("mpi_replay backend: %d processes: %s\n", g_world, okk ? "PASS" : "FAIL");
    return okk ? 0 : 1;
}

/* ------------------------------------------------------------------ */

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_world);
    const char *wd = getenv("ZO_MPI_WATCHDOG_S");
    unsigned secs = wd && *wd ? (unsigned)strtoul(wd, NULL, 10) : 50u;
    if (secs) {
        signal(SIGALRM, watchdog);
        alarm(secs);
    }
    int rc = 2;
    if (g_world < 2 || g_world > ZS_MAX_WORLD) {
        say0("mpi_replay: needs 2..%d processes (mpiexec -np 4), got %d\n", ZS_MAX_WORLD, g_world);
    } else if (argc >= 3 && !strcmp(argv[1], "replay")) {
        rc = mode_replay(argc - 2, argv + 2);
    } else if (argc == 3 && !strcmp(argv[1], "divergence")) {
        rc = mode_divergence(argv[2]);
    } else if (argc == 2 && !strcmp(argv[1], "backend")) {
        rc = mode_backend();
    } else {
        say0("usage: mpiexec -np 4 %s replay [--verify] FILE.scn... | divergence MOE.scn | backend\n", argv[0]);
    }
    alarm(0);
    MPI_Finalize();
    return rc;
}
