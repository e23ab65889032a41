/*
 * mpi_verify_bench.c - what zo_config.verify_collectives costs per
 * collective over MPI, in W real processes:
 *
 *   mpiexec -np 4 mpi_verify_bench [--iters N] [--rounds R] [--small B] [--large B]
 *
 * Every rank runs one runtime (per-call policy, prefetch off, persistence
 * threshold 0) over the MPI backend (no cap: real bytes) with one module
 * owning one float32 parameter; one iteration is one eval-style forward of
 * that module (zo_forward_begin, hook A = one all-gather and its wait, hook
 * B = release, zo_forward_end), so exactly one all-gather per iteration,
 * plus - with verify_collectives = 1 - the runtime's 64-byte fingerprint
 * exchange (MPI_Allgather) before it.
 *
 * Sizes: --small bytes (default 1024: 1 KiB) and --large bytes (default
 * 1048576: 1 MiB) per parameter (the full tensor; each rank holds 1/W).
 * For each size, R rounds (default 5) alternate the two runtimes (verify 0,
 * then 1), N iterations each (default 2000 small / 200 large), all ranks
 * starting together (MPI_Barrier); time is rank 0's MPI_Wtime.  Reported:
 * gathers/s of each, and the ratio verify/plain of the summed times over the
 * same rounds (so drift of a shared machine hits both alike).
 *
 * Built by tests/mpi/CMakeLists.txt (bench/ has its own CMakeLists.txt owned
 * by the benchmark harness); ctest runs it once with a few iterations
 * (mpi/verify_bench_smoke) so that it keeps working.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "zoffload_mpi.h"

static int g_rank, g_world;

typedef struct bench_rt {
    zo_backend *be;
    zo_runtime *rt;
    zo_module_id m;
} bench_rt;

static int setup(bench_rt *b, int verify, uint64_t bytes) {
    memset(b, 0, sizeof *b);
    zo_mpi_config mc = ZO_MPI_CONFIG_INIT;
    zo_status st = zo_backend_mpi_create(&mc, &b->be);
    if (st) {
        fprintf(stderr, "rank %d: zo_backend_mpi_create: %s: %s\n", g_rank, zo_strerror(st), zo_mpi_create_error());
        return -1;
    }
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.world_size = g_world;
    cfg.rank = g_rank;
    cfg.param_persistence_threshold = 0;
    cfg.prefetch_bucket_size = 0;
    cfg.backend = b->be;
    cfg.verify_collectives = verify;
    zo_param_id p;
    if ((st = zo_runtime_create(&cfg, &b->rt)) != ZO_OK ||
        (st = zo_module_register(b->rt, ZO_NO_MODULE, "layer", 0, &b->m)) != ZO_OK ||
        (st = zo_param_register(b->rt, b->m, "w", bytes / 4 ? bytes / 4 : 1, 4, 0, &p)) != ZO_OK) {
        fprintf(stderr, "rank %d: setup (verify %d): %s: %s\n", g_rank, verify, zo_strerror(st), zo_last_error(b->rt));
        return -1;
    }
    return 0;
}

static void teardown(bench_rt *b) {
    zo_runtime_destroy(b->rt);
    zo_backend_destroy(b->be);
}

/* n iterations; returns 0 or -1 */
static int iterate(bench_rt *b, long n) {
    for (long i = 0; i < n; i++) {
        zo_graph g = 0;
        zo_status st = zo_forward_begin(b->rt, ZO_FWD_ROOT, &g);
        if (!st) st = zo_pre_forward(b->rt, b->m, 0);
        if (!st) st = zo_post_forward(b->rt, b->m);
        if (!st) st = zo_forward_end(b->rt, g);
        if (st) {
            fprintf(stderr, "rank %d: iteration %ld: %s: %s\n", g_rank, i, zo_strerror(st), zo_last_error(b->rt));
            return -1;
        }
    }
    return 0;
}

static int bench_size(uint64_t bytes, long iters, int rounds) {
    bench_rt plain, verify;
    if (setup(&plain, 0, bytes) || setup(&verify, 1, bytes)) return -1;
    /* warm-up: connections, buffers */
    if (iterate(&plain, iters / 10 + 1) || iterate(&verify, iters / 10 + 1)) return -1;
    uint64_t g0 = zo_mpi_get_stats(verify.be).gathers, x0 = zo_mpi_get_stats(verify.be).exchanges;
    double t[2] = {0, 0};
    for (int r = 0; r < rounds; r++)
        for (int v = 0; v < 2; v++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            if (iterate(v ? &verify : &plain, iters)) return -1;
            MPI_Barrier(MPI_COMM_WORLD);
            t[v] += MPI_Wtime() - t0;
        }
    uint64_t g1 = zo_mpi_get_stats(verify.be).gathers, x1 = zo_mpi_get_stats(verify.be).exchanges;
    if (g_rank == 0) {
        double n = (double)iters * rounds;
        printf("%8llu bytes  plain %9.0f gathers/s (%7.2f us)  verify %9.0f gathers/s (%7.2f us)  "
               "ratio verify/plain time %.3f  (+%.2f us per collective; %llu exchanges for %llu gathers)\n",
               (unsigned long long)bytes, n / t[0], 1e6 * t[0] / n, n / t[1], 1e6 * t[1] / n, t[1] / t[0],
               1e6 * (t[1] - t[0]) / n, (unsigned long long)(x1 - x0), (unsigned long long)(g1 - g0));
        fflush(stdout);
    }
    int ok = (x1 - x0) == (g1 - g0) && g1 > g0; /* one fingerprint per all-gather */
    teardown(&plain);
    teardown(&verify);
    return ok ? 0 : -1;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_world);
    long iters = 0;
    int rounds = 5;
    uint64_t small = 1024, large = 1u << 20;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--iters"))
            iters = strtol(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--rounds"))
            rounds = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--small"))
            small = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--large"))
            large = strtoull(argv[i + 1], NULL, 10);
    }
    if (rounds < 1) rounds = 1;
    if (g_rank == 0)
        printf("mpi_verify_bench: %d processes, %d rounds, per-call policy, one all-gather per iteration\n", g_world,
               rounds);
    int rc = bench_size(small, iters > 0 ? iters : 2000, rounds);
    if (!rc) rc = bench_size(large, iters > 0 ? iters : 200, rounds);
    int bad = rc != 0, any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    MPI_Finalize();
    return any ? 1 : 0;
}
