/*
 * mpi_check.c - the MPI bootstrap of the NCCL backend under mpirun
 * (ctest nccl/mpi_check, 2 ranks; built when MPI is found).
 *
 * Every rank asks for CUDA device `rank` (local_device = rank).  Expected:
 *   devices >= ranks: zo_backend_nccl_create_mpi succeeds on every rank, one
 *     all-gather through the runtime's vtable equals the content function,
 *     one reduce-scatter (SUM, same gradient on every rank) equals W * g;
 *   otherwise: every rank gets ZO_ERR_NO_DEVICE - the ranks that have their
 *     device too (MPI_Allreduce of the local verdict), so none is left
 *     waiting in ncclCommInitRank.
 * Exit status 0 when the expectation held on this rank.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <mpi.h>

#include "zoffload_nccl.h"

static int check_device_path(zo_backend *b, int rank, int world) {
    const zo_backend_ops *o = b->ops;
    uint64_t numel = 100003, part = (numel + (uint64_t)world - 1) / (uint64_t)world;
    void *full = NULL;
    zo_work *w = NULL;
    if (o->param_add(b->ctx, 7, numel, 4, part) || o->full_alloc(b->ctx, 7, part * (uint64_t)world * 4, &full))
        goto err;
    zo_gather_item it = {7, full, numel, part, 4};
    if (o->all_gather_start(b->ctx, &it, 1, &w) || o->wait(b->ctx, w)) goto err;
    o->work_free(b->ctx, w);
    uint8_t *h = malloc(numel * 4);
    float *g = malloc(numel * 4), *out = malloc(part * 4);
    if (!h || !g || !out || cudaMemcpy(h, full, numel * 4, cudaMemcpyDeviceToHost) != cudaSuccess) return 1;
    for (uint64_t i = 0; i < numel * 4; i++)
        if (h[i] != zo_host_param_byte(7, i)) {
            fprintf(stderr, "rank %d: gathered byte %llu differs\n", rank, (unsigned long long)i);
            return 1;
        }
    for (uint64_t i = 0; i < numel; i++) g[i] = (float)(i % 13) - 6.0f;
    if (o->reduce_scatter(b->ctx, 7, g, out, numel, part, ZO_REDUCE_SUM)) goto err;
    for (uint64_t i = 0; i < part && (uint64_t)rank * part + i < numel; i++)
        if (out[i] != (float)world * g[(uint64_t)rank * part + i]) {
            fprintf(stderr, "rank %d: reduce-scatter element %llu is %g\n", rank, (unsigned long long)i, out[i]);
            return 1;
        }
    o->full_free(b->ctx, 7, full);
    o->param_remove(b->ctx, 7);
    printf("rank %d/%d: all-gather and reduce-scatter through the MPI-bootstrapped NCCL backend: OK\n", rank, world);
    free(h);
    free(g);
    free(out);
    return 0;
err:
    fprintf(stderr, "rank %d: %s\n", rank, o->last_error(b->ctx));
    return 1;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, world = 1, count = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
    zo_nccl_config cfg = ZO_NCCL_CONFIG_INIT;
    cfg.local_device = rank;
    cfg.wait_timeout_ms = 60000;
    zo_backend *b = NULL;
    zo_status s = zo_backend_nccl_create_mpi(&cfg, NULL, &b);
    int rc;
    if (count >= world) {
        rc = s != ZO_OK;
        if (rc)
            fprintf(stderr, "rank %d: create_mpi: %s: %s\n", rank, zo_strerror(s), zo_nccl_create_error());
        else
            rc = check_device_path(b, rank, world);
    } else {
        rc = !(s == ZO_ERR_NO_DEVICE && b == NULL);
        printf("rank %d/%d (%d device(s)): create_mpi -> %s: %s\n", rank, world, count, zo_strerror(s),
               zo_nccl_create_error());
    }
    zo_backend_destroy(b);
    MPI_Finalize();
    return rc;
}
