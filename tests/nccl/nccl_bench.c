/*
 * nccl_bench.c - all-gather throughput of the NCCL backend against
 * cudaMemcpyAsync device-to-device of the same number of bytes, in the
 * same run (the gather benchmark; run by tests/gpu/run.sh).
 *
 *   nccl_bench [--iters N] [--max-mib M] [--world W]
 *
 * W ranks = W devices of this process (ncclCommInitAll, one thread per
 * rank; default 1).  For each size S (full bytes, 1 MiB .. M MiB, x4):
 *   gather   full_alloc + all_gather_start + wait (host mode) + work_free +
 *            full_free, N times on rank 0's thread (others mirror it);
 *            the time includes the stream-ordered pool allocation, as in
 *            the runtime's fetch path.
 *   memcpy   cudaMemcpyAsync D2D of S bytes on one stream, N times, then
 *            cudaStreamSynchronize.
 * Prints one line per size: bytes, GB/s of each (S * N / time), ratio.
 * Then the exchange op (the runtime's verify_collectives fingerprint: a
 * 64-byte all-gather with a host round trip), 10 * N times after a warm-up:
 * microseconds per exchange - the fingerprint check's cost per collective.
 * Exit status 0 on success, 2 when no device, 1 on an error.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "zoffload_nccl.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct targ {
    zo_backend *b;
    size_t full_bytes;
    int iters;
    double secs;
    int err;
} targ;

static void *gather_loop(void *p) {
    targ *a = p;
    const zo_backend_ops *ops = a->b->ops;
    void *ctx = a->b->ctx;
    int W = ops->world_size(ctx);
    cudaSetDevice(zo_nccl_device(a->b));
    uint64_t part = (a->full_bytes / 4 + (uint64_t)W - 1) / (uint64_t)W;
    uint64_t numel = part * (uint64_t)W;
    zo_param_id id = 0;
    if (ops->param_add(ctx, id, numel, 4, part)) {
        fprintf(stderr, "param_add: %s\n", ops->last_error(ctx));
        a->err = 1;
        return NULL;
    }
    for (int phase = 0; phase < 2 && !a->err; phase++) { /* 0: warm-up */
        int n = phase ? a->iters : 3;
        double t0 = now_s();
        for (int i = 0; i < n; i++) {
            void *full = NULL;
            zo_work *w = NULL;
            if (ops->full_alloc(ctx, id, (size_t)(numel * 4), &full)) {
                a->err = 1;
                break;
            }
            zo_gather_item it = {id, full, numel, part, 4};
            if (ops->all_gather_start(ctx, &it, 1, &w) || ops->wait(ctx, w)) {
                a->err = 1;
                ops->full_free(ctx, id, full);
                break;
            }
            ops->work_free(ctx, w);
            ops->full_free(ctx, id, full);
        }
        if (zo_nccl_synchronize(a->b)) a->err = 1;
        a->secs = now_s() - t0;
    }
    if (a->err) fprintf(stderr, "gather: %s\n", ops->last_error(ctx));
    ops->param_remove(ctx, id);
    return NULL;
}

/* 64-byte exchanges on every rank (each rank's thread) */
static void *exchange_loop(void *p) {
    targ *a = p;
    const zo_backend_ops *ops = a->b->ops;
    void *ctx = a->b->ctx;
    int W = ops->world_size(ctx), r = ops->rank(ctx);
    cudaSetDevice(zo_nccl_device(a->b));
    uint8_t send[64], *recv = malloc((size_t)W * 64);
    if (!recv || !ops->exchange) {
        a->err = 1;
        free(recv);
        return NULL;
    }
    memset(send, r, sizeof send);
    for (int phase = 0; phase < 2 && !a->err; phase++) {
        int n = phase ? a->iters : 10;
        double t0 = now_s();
        for (int i = 0; i < n; i++)
            if (ops->exchange(ctx, send, sizeof send, recv)) {
                fprintf(stderr, "exchange: %s\n", ops->last_error(ctx));
                a->err = 1;
                break;
            }
        a->secs = now_s() - t0;
    }
    for (int q = 0; q < W && !a->err; q++)
        if (recv[(size_t)q * 64] != q || recv[(size_t)q * 64 + 63] != q) {
            fprintf(stderr, "exchange: rank %d's bytes wrong on rank %d\n", q, r);
            a->err = 1;
        }
    free(recv);
    return NULL;
}

int main(int argc, char **argv) {
    int iters = 50, world = 1;
    size_t max_mib = 256;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--max-mib") && i + 1 < argc)
            max_mib = (size_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "--world") && i + 1 < argc)
            world = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: nccl_bench [--iters N] [--max-mib M] [--world W]\n");
            return 1;
        }
    }
    if (iters < 1 || world < 1) return 1;
    zo_nccl_config cfg = ZO_NCCL_CONFIG_INIT;
    cfg.wait_host = 1;
    zo_backend **bs = calloc((size_t)world, sizeof *bs);
    zo_status s = zo_backend_nccl_create_all(&cfg, world, NULL, bs);
    if (s) {
        fprintf(stderr, "nccl_bench: %s: %s\n", zo_strerror(s), zo_nccl_create_error());
        free(bs);
        return s == ZO_ERR_NO_DEVICE ? 2 : 1;
    }
    printf("# nccl_bench: world %d, %d iterations per size; GB/s = bytes * iters / seconds / 1e9\n", world, iters);
    printf("%-12s %12s %12s %8s\n", "full_bytes", "gather_GB/s", "memcpy_GB/s", "ratio");
    int rc = 0;
    for (size_t mib = 1; mib <= max_mib && !rc; mib *= 4) {
        size_t bytes = mib << 20;
        targ *a = calloc((size_t)world, sizeof *a);
        pthread_t *th = calloc((size_t)world, sizeof *th);
        for (int r = 0; r < world; r++) {
            a[r] = (targ){bs[r], bytes, iters, 0, 0};
            pthread_create(&th[r], NULL, gather_loop, &a[r]);
        }
        for (int r = 0; r < world; r++) {
            pthread_join(th[r], NULL);
            rc |= a[r].err;
        }
        double gsec = a[0].secs;
        /* cudaMemcpyAsync D2D of the same bytes on rank 0's device */
        cudaSetDevice(zo_nccl_device(bs[0]));
        void *src = NULL, *dst = NULL;
        cudaStream_t st;
        double msec = -1;
        if (cudaMalloc(&src, bytes) == cudaSuccess && cudaMalloc(&dst, bytes) == cudaSuccess &&
            cudaStreamCreate(&st) == cudaSuccess) {
            for (int i = 0; i < 3; i++) cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, st);
            cudaStreamSynchronize(st);
            double t0 = now_s();
            for (int i = 0; i < iters; i++) cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, st);
            if (cudaStreamSynchronize(st) == cudaSuccess) msec = now_s() - t0;
            cudaStreamDestroy(st);
        }
        cudaFree(src);
        cudaFree(dst);
        if (msec <= 0) {
            fprintf(stderr, "nccl_bench: cudaMemcpyAsync failed: %s\n", cudaGetErrorString(cudaGetLastError()));
            rc = 1;
        }
        if (!rc) {
            double g = (double)bytes * iters / gsec / 1e9, m = (double)bytes * iters / msec / 1e9;
            printf("%-12zu %12.2f %12.2f %8.3f\n", bytes, g, m, g / m);
        }
        free(a);
        free(th);
    }
    if (!rc) {
        targ *a = calloc((size_t)world, sizeof *a);
        pthread_t *th = calloc((size_t)world, sizeof *th);
        for (int r = 0; r < world; r++) {
            a[r] = (targ){bs[r], 0, iters * 10, 0, 0};
            pthread_create(&th[r], NULL, exchange_loop, &a[r]);
        }
        for (int r = 0; r < world; r++) {
            pthread_join(th[r], NULL);
            rc |= a[r].err;
        }
        if (!rc)
            printf("exchange: 64 bytes x %d ranks, %d iterations: %.1f us per exchange\n", world, iters * 10,
                   a[0].secs * 1e6 / (iters * 10));
        free(a);
        free(th);
    }
    for (int r = 0; r < world; r++) zo_backend_destroy(bs[r]);
    free(bs);
    return rc;
}
