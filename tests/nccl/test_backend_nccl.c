/*
 * test_backend_nccl.c - cmocka tests of the CUDA + NCCL backend
 * (runtime/backend_nccl.c), built by cmake/nccl.cmake when CUDA and NCCL
 * are found; ctest name nccl/test_backend_nccl.
 *
 * Two groups, chosen by what the machine has (cudaGetDeviceCount):
 *   no device  creation of every kind returns ZO_ERR_NO_DEVICE with a
 *              message naming the CUDA error; nothing is left behind (no
 *              bootstrap file); config validation and the launcher
 *              environment parsing, which need no device.
 *   devices    W = 1 and W = every device (one thread per rank,
 *              ncclCommInitAll): gathered bytes equal the host backend's
 *              content function for many sizes, element sizes and groups,
 *              in device and cpu-offloaded (pinned, pageable) shards, both
 *              wait modes; back-pressure; reduce-scatter (host and device
 *              pointers) against the host backend's arithmetic; bad handles;
 *              one training step through the runtime's hooks.
 * The group that does not apply is reported as skipped by cmocka.
 *
 * ZO_NCCL_TEST_EXPECT_DEVICE=1 makes "no device" a failure (the GPU script
 * sets it so a broken driver cannot pass as a clean skip).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <pthread.h>

#include <cuda_runtime_api.h>

#include "zoffload.h"
#include "zoffload_backend.h"
#include "zoffload_testing.h"
#include "zoffload_nccl.h"
#include "mirror_backend.h"
#include "backend_nccl_internal.h"
#ifdef ZO_NCCL_FAKE
#include "fake_control.h"
#endif

static int g_ndev = 0; /* devices present; 0 if none or no driver */
static char g_count_err[256];

#define ST_EQ(got, want)                                                                                               \
    do {                                                                                                               \
        zo_status g_ = (got), w_ = (want);                                                                             \
        if (g_ != w_) {                                                                                                \
            print_error("%s returned %d (%s), expected %d (%s); create_error: \"%s\"\n", #got, g_, zo_strerror(g_),    \
                        w_, zo_strerror(w_), zo_nccl_create_error());                                                  \
            fail();                                                                                                    \
        }                                                                                                              \
    } while (0)

#define BE_OK(b, call)                                                                                                 \
    do {                                                                                                               \
        zo_status g_ = (call);                                                                                         \
        if (g_ != ZO_OK) {                                                                                             \
            print_error("%s returned %d (%s): %s\n", #call, g_, zo_strerror(g_), zo_backend_last_error(b));            \
            fail();                                                                                                    \
        }                                                                                                              \
    } while (0)

static zo_nccl_config cfg1(void) {
    zo_nccl_config c = ZO_NCCL_CONFIG_INIT;
    c.world_size = 1;
    c.rank = 0;
    c.local_device = 0;
    return c;
}

/* ------------------------------------------------------------------ */
/* Without a device                                                     */
/* ------------------------------------------------------------------ */

#define NEED_NO_DEVICE()                                                                                               \
    do {                                                                                                               \
        if (g_ndev > 0) skip();                                                                                        \
    } while (0)

static void expect_no_device_msg(void) {
    const char *m = zo_nccl_create_error();
    assert_non_null(m);
    if (!strstr(m, "no CUDA device")) {
        print_error("message: \"%s\"\n", m);
        fail();
    }
}

static void test_nodev_create(void **state) {
    (void)state;
    NEED_NO_DEVICE();
    zo_nccl_config c = cfg1();
    zo_nccl_unique_id id;
    memset(&id, 0, sizeof id);
    zo_backend *b = (zo_backend *)(uintptr_t)1;
    ST_EQ(zo_backend_nccl_create(&c, &id, &b), ZO_ERR_NO_DEVICE);
    assert_null(b);
    expect_no_device_msg();
    /* the message carries the CUDA error's name */
    assert_non_null(strstr(zo_nccl_create_error(), "cuda"));
}

static void test_nodev_create_all(void **state) {
    (void)state;
    NEED_NO_DEVICE();
    zo_nccl_config c = ZO_NCCL_CONFIG_INIT;
    zo_backend *bs[2] = {(zo_backend *)(uintptr_t)1, (zo_backend *)(uintptr_t)1};
    ST_EQ(zo_backend_nccl_create_all(&c, 2, NULL, bs), ZO_ERR_NO_DEVICE);
    assert_null(bs[0]);
    assert_null(bs[1]);
    expect_no_device_msg();
}

static void test_nodev_create_file(void **state) {
    (void)state;
    NEED_NO_DEVICE();
    char dir[] = "/tmp/zo_nccl_test_XXXXXX";
    assert_non_null(mkdtemp(dir));
    zo_nccl_config c = cfg1();
    zo_backend *b = NULL;
    ST_EQ(zo_backend_nccl_create_file(&c, dir, "t1", &b), ZO_ERR_NO_DEVICE);
    assert_null(b);
    expect_no_device_msg();
    /* nothing written: the device check comes before the id file */
    char path[256];
    snprintf(path, sizeof path, "%s/zoffload-nccl-t1.id", dir);
    assert_int_not_equal(access(path, F_OK), 0);
    assert_int_equal(rmdir(dir), 0);
}

static void test_nodev_create_mpi(void **state) {
    (void)state;
    NEED_NO_DEVICE();
    zo_nccl_config c = cfg1();
    zo_backend *b = NULL;
    if (!zo_nccl_have_mpi()) {
        ST_EQ(zo_backend_nccl_create_mpi(&c, NULL, &b), ZO_ERR_UNSUPPORTED);
        assert_non_null(strstr(zo_nccl_create_error(), "without MPI"));
    } else {
        /* MPI not initialised by this test: refused before any MPI call */
        ST_EQ(zo_backend_nccl_create_mpi(&c, NULL, &b), ZO_ERR_INVALID_ARG);
    }
    assert_null(b);
}

/* ------------------------------------------------------------------ */
/* Any machine: configuration and environment                           */
/* ------------------------------------------------------------------ */

static void test_config_validation(void **state) {
    (void)state;
    zo_nccl_unique_id id;
    memset(&id, 0, sizeof id);
    zo_backend *b = NULL;
    zo_nccl_config c = cfg1();
    c.size = sizeof c - 8;
    ST_EQ(zo_backend_nccl_create(&c, &id, &b), ZO_ERR_VERSION);
    c = cfg1();
    c.version = 99;
    ST_EQ(zo_backend_nccl_create(&c, &id, &b), ZO_ERR_VERSION);
    c = cfg1();
    c.offload_param = (zo_nccl_offload)7;
    ST_EQ(zo_backend_nccl_create(&c, &id, &b), ZO_ERR_INVALID_ARG);
    c = cfg1();
    c.pin_memory = 2;
    ST_EQ(zo_backend_nccl_create(&c, &id, &b), ZO_ERR_INVALID_ARG);
    c = cfg1();
    c.max_outstanding_gathers = -1;
    ST_EQ(zo_backend_nccl_create(&c, &id, &b), ZO_ERR_INVALID_ARG);
    c = cfg1();
    c.reduce_op = (zo_reduce_op)5;
    ST_EQ(zo_backend_nccl_create(&c, &id, &b), ZO_ERR_INVALID_ARG);
    c = cfg1();
    c.rank = 1; /* world 1 */
    ST_EQ(zo_backend_nccl_create(&c, &id, &b), ZO_ERR_INVALID_ARG);
    c = cfg1();
    ST_EQ(zo_backend_nccl_create(&c, NULL, &b), ZO_ERR_INVALID_ARG);
    ST_EQ(zo_backend_nccl_create(NULL, &id, &b), ZO_ERR_INVALID_ARG);
    ST_EQ(zo_backend_nccl_create(&c, &id, NULL), ZO_ERR_INVALID_ARG);
    ST_EQ(zo_backend_nccl_create_file(&c, NULL, NULL, &b), ZO_ERR_INVALID_ARG);
    ST_EQ(zo_backend_nccl_create_file(&c, "/tmp", "a/b", &b), ZO_ERR_INVALID_ARG);
    ST_EQ(zo_backend_nccl_create_all(&c, 0, NULL, &b), ZO_ERR_INVALID_ARG);
    assert_null(b);
    assert_true(strlen(zo_nccl_create_error()) > 0);
}

static void clear_env(void) {
    const char *v[] = {"OMPI_COMM_WORLD_RANK",
                       "OMPI_COMM_WORLD_SIZE",
                       "OMPI_COMM_WORLD_LOCAL_RANK",
                       "RANK",
                       "WORLD_SIZE",
                       "LOCAL_RANK"};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) unsetenv(v[i]);
}

static void test_config_from_env(void **state) {
    (void)state;
    clear_env();
    zo_nccl_config c = ZO_NCCL_CONFIG_INIT;
    ST_EQ(zo_nccl_config_from_env(&c), ZO_OK);
    assert_int_equal(c.world_size, 1);
    assert_int_equal(c.rank, 0);
    assert_int_equal(c.local_device, ZO_NCCL_FROM_ENV);

    /* torchrun / Slurm style */
    setenv("WORLD_SIZE", "8", 1);
    setenv("RANK", "5", 1);
    setenv("LOCAL_RANK", "1", 1);
    zo_nccl_config d = ZO_NCCL_CONFIG_INIT;
    ST_EQ(zo_nccl_config_from_env(&d), ZO_OK);
    assert_int_equal(d.world_size, 8);
    assert_int_equal(d.rank, 5);
    assert_int_equal(d.local_device, 1);

    /* Open MPI's variables win */
    setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
    setenv("OMPI_COMM_WORLD_RANK", "3", 1);
    setenv("OMPI_COMM_WORLD_LOCAL_RANK", "2", 1);
    zo_nccl_config e = ZO_NCCL_CONFIG_INIT;
    ST_EQ(zo_nccl_config_from_env(&e), ZO_OK);
    assert_int_equal(e.world_size, 4);
    assert_int_equal(e.rank, 3);
    assert_int_equal(e.local_device, 2);

    /* explicit fields are kept */
    zo_nccl_config f = ZO_NCCL_CONFIG_INIT;
    f.local_device = 0;
    ST_EQ(zo_nccl_config_from_env(&f), ZO_OK);
    assert_int_equal(f.local_device, 0);
    assert_int_equal(f.rank, 3);

    /* malformed and inconsistent values */
    setenv("OMPI_COMM_WORLD_RANK", "x3", 1);
    zo_nccl_config g = ZO_NCCL_CONFIG_INIT;
    ST_EQ(zo_nccl_config_from_env(&g), ZO_ERR_INVALID_ARG);
    assert_non_null(strstr(zo_nccl_create_error(), "OMPI_COMM_WORLD_RANK"));
    setenv("OMPI_COMM_WORLD_RANK", "4", 1);
    zo_nccl_config h = ZO_NCCL_CONFIG_INIT;
    ST_EQ(zo_nccl_config_from_env(&h), ZO_ERR_INVALID_ARG);
    clear_env();
}

/* ncclGetUniqueId needs no GPU */
static void test_unique_id(void **state) {
    (void)state;
    zo_nccl_unique_id a, b, zero;
    memset(&zero, 0, sizeof zero);
    zo_status s = zo_nccl_get_unique_id(&a);
    if (s != ZO_OK) {
        /* a sandbox without any network interface: a clean error, then skip */
        ST_EQ(s, ZO_ERR_BACKEND);
        assert_non_null(strstr(zo_nccl_create_error(), "ncclGetUniqueId"));
        skip();
    }
    ST_EQ(zo_nccl_get_unique_id(&b), ZO_OK);
    assert_memory_not_equal(&a, &zero, sizeof a);
    assert_memory_not_equal(&a, &b, sizeof a);
    ST_EQ(zo_nccl_get_unique_id(NULL), ZO_ERR_INVALID_ARG);
}

static int count_entries(const char *dir) {
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    if (d) closedir(d);
    return n;
}

/* the file bootstrap's id exchange: atomic publish, polling fetch, checks */
static void test_bootstrap_file(void **state) {
    (void)state;
    char dir[] = "/tmp/zo_nccl_boot_XXXXXX", path[512];
    assert_non_null(mkdtemp(dir));
    zo_nccl_unique_id id, got;
    if (zo_nccl_get_unique_id(&id) != ZO_OK) /* no network interface: any bytes will do here */
        for (size_t i = 0; i < sizeof id.bytes; i++) id.bytes[i] = (char)(i * 7 + 1);

    ST_EQ(zo__nccl_bootstrap_publish(dir, "run1", 4, &id), ZO_OK);
    assert_int_equal(count_entries(dir), 1); /* no temp file left */
    memset(&got, 0, sizeof got);
    ST_EQ(zo__nccl_bootstrap_fetch(dir, "run1", 4, 3, 1000, &got), ZO_OK);
    assert_memory_equal(&got, &id, sizeof id);

    /* a file written for another world size is refused, not used */
    ST_EQ(zo__nccl_bootstrap_fetch(dir, "run1", 8, 1, 1000, &got), ZO_ERR_BACKEND);
    assert_non_null(strstr(zo_nccl_create_error(), "world size 4"));

    /* a file that is not ours */
    ST_EQ(zo__nccl_bootstrap_path(dir, "junk", path, sizeof path), ZO_OK);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs("not an id", f);
    fclose(f);
    ST_EQ(zo__nccl_bootstrap_fetch(dir, "junk", 2, 1, 1000, &got), ZO_ERR_BACKEND);
    assert_non_null(strstr(zo_nccl_create_error(), "not a zoffload NCCL id file"));
    unlink(path);

    /* rank 0 never came */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ST_EQ(zo__nccl_bootstrap_fetch(dir, "absent", 2, 1, 60, &got), ZO_ERR_BACKEND);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_non_null(strstr(zo_nccl_create_error(), "waited 60 ms"));
    assert_true((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 >= 60);

    /* rank 0 publishes while the reader is already polling */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct timespec ts = {0, 150 * 1000 * 1000};
        nanosleep(&ts, NULL);
        _exit(zo__nccl_bootstrap_publish(dir, "late", 2, &id) == ZO_OK ? 0 : 1);
    }
    memset(&got, 0, sizeof got);
    ST_EQ(zo__nccl_bootstrap_fetch(dir, "late", 2, 1, 10000, &got), ZO_OK);
    assert_memory_equal(&got, &id, sizeof id);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);

    /* tag from the launcher, else "default"; '/' refused */
    const char *vars[] = {"ZO_NCCL_RUN_ID", "SLURM_JOB_ID", "OMPI_MCA_ess_base_jobid", "TORCHELASTIC_RUN_ID"};
    char *saved[4];
    for (int i = 0; i < 4; i++) {
        const char *v = getenv(vars[i]);
        saved[i] = v ? strdup(v) : NULL;
        unsetenv(vars[i]);
    }
    ST_EQ(zo__nccl_bootstrap_path(dir, NULL, path, sizeof path), ZO_OK);
    assert_non_null(strstr(path, "/zoffload-nccl-default.id"));
    setenv("OMPI_MCA_ess_base_jobid", "777", 1);
    ST_EQ(zo__nccl_bootstrap_path(dir, "", path, sizeof path), ZO_OK);
    assert_non_null(strstr(path, "/zoffload-nccl-777.id"));
    setenv("ZO_NCCL_RUN_ID", "mine", 1);
    ST_EQ(zo__nccl_bootstrap_path(dir, NULL, path, sizeof path), ZO_OK);
    assert_non_null(strstr(path, "/zoffload-nccl-mine.id"));
    ST_EQ(zo__nccl_bootstrap_path(dir, "a/b", path, sizeof path), ZO_ERR_INVALID_ARG);
    ST_EQ(zo__nccl_bootstrap_path(NULL, "x", path, sizeof path), ZO_ERR_INVALID_ARG);
    for (int i = 0; i < 4; i++) {
        if (saved[i])
            setenv(vars[i], saved[i], 1);
        else
            unsetenv(vars[i]);
        free(saved[i]);
    }

    ST_EQ(zo__nccl_bootstrap_path(dir, "run1", path, sizeof path), ZO_OK);
    unlink(path);
    ST_EQ(zo__nccl_bootstrap_path(dir, "late", path, sizeof path), ZO_OK);
    unlink(path);
    assert_int_equal(count_entries(dir), 0);
    assert_int_equal(rmdir(dir), 0);
}

static void test_helpers_reject_other_backends(void **state) {
    (void)state;
    zo_host_config hc = ZO_HOST_CONFIG_INIT;
    zo_backend *h = NULL;
    assert_int_equal(zo_backend_host_create(&hc, &h), ZO_OK);
    assert_int_equal(zo_nccl_is_nccl(h), 0);
    assert_int_equal(zo_nccl_is_nccl(NULL), 0);
    assert_int_equal(zo_nccl_device(h), ZO_ERR_INVALID_ARG);
    assert_null(zo_nccl_gather_stream(h));
    void *p = NULL;
    assert_int_equal(zo_nccl_shard(h, 0, &p, NULL, NULL), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_nccl_mark_shards_written(h), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_nccl_synchronize(NULL), ZO_ERR_INVALID_ARG);
    zo_nccl_stats st;
    assert_int_equal(zo_nccl_get_stats(h, &st), ZO_ERR_INVALID_ARG);
    float g = 0, o = 0;
    assert_int_equal(zo_nccl_reduce_scatter(h, 0, &g, &o, 1, 1, ZO_REDUCE_SUM), ZO_ERR_INVALID_ARG);
    zo_backend_destroy(h);
}

/* ------------------------------------------------------------------ */
/* With devices                                                         */
/* ------------------------------------------------------------------ */

#define NEED_DEVICE()                                                                                                  \
    do {                                                                                                               \
        if (g_ndev <= 0) skip();                                                                                       \
    } while (0)

/* gathers every (numel, elem_size) of a table on backend b (rank r of W)
 * in groups of 3 and compares with the content function.  Returns the
 * number of mismatching parameters; 0 on success.  On a backend error
 * prints it and returns -1. */
typedef struct gcase {
    uint64_t numel;
    uint32_t elem;
} gcase;
static const gcase g_cases[] = {{1, 4},  {3, 1},   {7, 2}, {1000, 4}, {1001, 8}, {65537, 4}, {(1u << 20) + 3, 2},
                                {5, 64}, {4096, 4}};
#define N_CASES (sizeof g_cases / sizeof g_cases[0])

static int gather_check(zo_backend *b, zo_param_id base, int do_host_wait_check) {
    const zo_backend_ops *ops = b->ops;
    void *ctx = b->ctx;
    int W = ops->world_size(ctx);
    int bad = 0;
    for (size_t i = 0; i < N_CASES; i++) {
        uint64_t part = (g_cases[i].numel + (uint64_t)W - 1) / (uint64_t)W;
        if (zo_backend_param_add(b, base + (zo_param_id)i, g_cases[i].numel, g_cases[i].elem, part) != ZO_OK) {
            print_error("param_add: %s\n", zo_backend_last_error(b));
            return -1;
        }
    }
    for (size_t i0 = 0; i0 < N_CASES; i0 += 3) {
        zo_gather_item it[3];
        size_t n = 0;
        for (size_t i = i0; i < N_CASES && n < 3; i++, n++) {
            uint64_t part = (g_cases[i].numel + (uint64_t)W - 1) / (uint64_t)W;
            it[n].param = base + (zo_param_id)i;
            it[n].numel = g_cases[i].numel;
            it[n].partition_numel = part;
            it[n].elem_size = g_cases[i].elem;
            if (zo_backend_full_alloc(b, it[n].param, (size_t)(part * (uint64_t)W * g_cases[i].elem), &it[n].full)) {
                print_error("full_alloc: %s\n", zo_backend_last_error(b));
                return -1;
            }
        }
        zo_work *w = NULL;
        if (zo_backend_all_gather_start(b, it, n, &w) || zo_backend_wait(b, w)) {
            print_error("gather: %s\n", zo_backend_last_error(b));
            return -1;
        }
        int done = 0;
        if (do_host_wait_check) {
            /* host-mode wait: complete as soon as wait returned */
            if (zo_backend_query(b, w, &done) || !done) {
                print_error("query after a host wait: done %d: %s\n", done, zo_backend_last_error(b));
                bad++;
            }
        }
        zo_backend_work_free(b, w);
        for (size_t k = 0; k < n; k++) {
            size_t bytes = (size_t)(it[k].numel * it[k].elem_size);
            uint8_t *h = malloc(bytes);
            assert_non_null(h);
            /* compute stream = legacy stream: cudaMemcpy is ordered after the stream-mode wait */
            assert_int_equal(cudaMemcpy(h, it[k].full, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
            for (size_t j = 0; j < bytes; j++)
                if (h[j] != zo_host_param_byte(it[k].param, j)) {
                    print_error("param %u (numel %llu, elem %u): byte %zu is %u, expected %u\n", (unsigned)it[k].param,
                                (unsigned long long)it[k].numel, (unsigned)it[k].elem_size, j, h[j],
                                zo_host_param_byte(it[k].param, j));
                    bad++;
                    break;
                }
            free(h);
            zo_backend_full_free(b, it[k].param, it[k].full);
        }
    }
    for (size_t i = 0; i < N_CASES; i++) zo_backend_param_remove(b, base + (zo_param_id)i);
    return bad;
}

/* reduce-scatter of a known gradient, host and device pointers, against the
 * host backend of the same world/rank (every rank passes the same
 * gradient, the host backend's convention).  Returns mismatches or -1. */
static int rs_check(zo_backend *b, zo_param_id p, uint64_t numel, zo_reduce_op op) {
    const zo_backend_ops *ops = b->ops;
    int W = ops->world_size(b->ctx), r = ops->rank(b->ctx);
    uint64_t part = (numel + (uint64_t)W - 1) / (uint64_t)W;
    zo_host_config hc = ZO_HOST_CONFIG_INIT;
    hc.world_size = W;
    hc.rank = r;
    zo_backend *h = NULL;
    if (zo_backend_host_create(&hc, &h) || zo_backend_param_add(h, p, numel, 4, part) ||
        zo_backend_param_add(b, p, numel, 4, part)) {
        print_error("setup: %s\n", zo_backend_last_error(b));
        return -1;
    }
    float *g = malloc(numel * sizeof *g), *want = malloc(part * sizeof *want), *got = malloc(part * sizeof *got);
    assert_true(g && want && got);
    for (uint64_t i = 0; i < numel; i++) g[i] = (float)((i * 37u) % 101u) * 0.25f - 7.0f;
    assert_int_equal(zo_backend_reduce_scatter(h, p, g, want, numel, part, op), ZO_OK);
    int bad = 0;
    for (int mode = 0; mode < 2; mode++) {
        memset(got, 0xff, part * sizeof *got);
        zo_status s;
        if (mode == 0) {
            s = zo_nccl_reduce_scatter(b, p, g, got, numel, part, op);
        } else {
            float *dg = NULL, *dout = NULL;
            assert_int_equal(cudaMalloc((void **)&dg, numel * sizeof *dg), cudaSuccess);
            assert_int_equal(cudaMalloc((void **)&dout, part * sizeof *dout), cudaSuccess);
            assert_int_equal(cudaMemcpy(dg, g, numel * sizeof *g, cudaMemcpyHostToDevice), cudaSuccess);
            s = zo_nccl_reduce_scatter(b, p, dg, dout, numel, part, op);
            /* stream-ordered: the legacy-stream copy comes after it */
            assert_int_equal(cudaMemcpy(got, dout, part * sizeof *got, cudaMemcpyDeviceToHost), cudaSuccess);
            cudaFree(dg);
            cudaFree(dout);
        }
        if (s) {
            print_error("reduce_scatter (%s pointers): %s\n", mode ? "device" : "host", zo_backend_last_error(b));
            bad = -1;
            break;
        }
        for (uint64_t i = 0; i < part; i++) {
            float d = got[i] - want[i];
            if (d < 0) d = -d;
            float tol = 1e-5f * (want[i] < 0 ? -want[i] : want[i]) + 1e-6f;
            if (d > tol) {
                print_error("reduce_scatter %s (%s pointers) W=%d r=%d: elem %llu = %g, host backend %g\n",
                            op == ZO_REDUCE_AVG ? "avg" : "sum", mode ? "device" : "host", W, r, (unsigned long long)i,
                            got[i], want[i]);
                bad++;
                break;
            }
        }
    }
    free(g);
    free(want);
    free(got);
    zo_backend_param_remove(b, p);
    zo_backend_destroy(h);
    return bad;
}

static zo_backend *make1(zo_nccl_config c) {
    zo_backend *b = NULL;
    zo_status s = zo_backend_nccl_create_all(&c, 1, NULL, &b);
    if (s) {
        print_error("create_all(1): %s: %s\n", zo_strerror(s), zo_nccl_create_error());
        fail();
    }
    return b;
}

static void test_dev_gather_w1(void **state) {
    (void)state;
    NEED_DEVICE();
    for (int mode = 0; mode < 4; mode++) {
        zo_nccl_config c = cfg1();
        c.wait_host = mode & 1;
        if (mode >= 2) c.offload_param = ZO_NCCL_OFFLOAD_CPU;
        zo_backend *b = make1(c);
        assert_int_equal(gather_check(b, 0, c.wait_host), 0);
        zo_nccl_stats st;
        assert_int_equal(zo_nccl_get_stats(b, &st), ZO_OK);
        assert_int_equal(st.live_full_buffers, 0);
        assert_int_equal(st.live_works, 0);
        assert_true(st.gathers >= 3);
        if (mode >= 2) assert_true(st.h2d_bytes > 0);
        zo_backend_destroy(b);
    }
    /* pageable offload */
    zo_nccl_config c = cfg1();
    c.offload_param = ZO_NCCL_OFFLOAD_CPU;
    c.pin_memory = 0;
    zo_backend *b = make1(c);
    assert_int_equal(gather_check(b, 100, 0), 0);
    zo_backend_destroy(b);
}

static void test_dev_backpressure(void **state) {
    (void)state;
    NEED_DEVICE();
    zo_nccl_config c = cfg1();
    c.max_outstanding_gathers = 1;
    zo_backend *b = make1(c);
    enum { N = 6 };
    uint64_t numel = 1u << 22; /* 16 MiB float32: long enough to still be running */
    zo_work *w[N];
    void *full[N];
    for (int i = 0; i < N; i++) {
        BE_OK(b, zo_backend_param_add(b, (zo_param_id)i, numel, 4, numel));
        BE_OK(b, zo_backend_full_alloc(b, (zo_param_id)i, numel * 4, &full[i]));
        zo_gather_item it = {(zo_param_id)i, full[i], numel, numel, 4};
        BE_OK(b, zo_backend_all_gather_start(b, &it, 1, &w[i]));
        zo_nccl_stats st;
        assert_int_equal(zo_nccl_get_stats(b, &st), ZO_OK);
        assert_true(st.outstanding <= 1);
    }
    for (int i = 0; i < N; i++) {
        BE_OK(b, zo_backend_wait(b, w[i]));
        zo_backend_work_free(b, w[i]);
    }
    uint8_t h[64];
    assert_int_equal(cudaMemcpy(h, (uint8_t *)full[N - 1] + 4096, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
    for (size_t j = 0; j < sizeof h; j++) assert_int_equal(h[j], zo_host_param_byte(N - 1, 4096 + j));
    for (int i = 0; i < N; i++) zo_backend_full_free(b, (zo_param_id)i, full[i]);
    zo_backend_destroy(b);
}

static void test_dev_bad_handles(void **state) {
    (void)state;
    NEED_DEVICE();
    zo_backend *b = make1(cfg1());
    void *full = NULL;
    assert_int_equal(zo_backend_full_alloc(b, 3, 64, &full), ZO_ERR_BAD_HANDLE);
    assert_non_null(strstr(zo_backend_last_error(b), "not added"));
    BE_OK(b, zo_backend_param_add(b, 3, 16, 4, 16));
    assert_int_equal(zo_backend_param_add(b, 3, 16, 4, 16), ZO_ERR_EXISTS);
    assert_int_equal(zo_backend_param_add(b, 4, 16, 4, 8), ZO_ERR_INVALID_ARG); /* not ceil(16/1) */
    int local = 0;
    zo_gather_item it = {3, &local, 16, 16, 4};
    zo_work *w = NULL;
    assert_int_equal(zo_backend_all_gather_start(b, &it, 1, &w), ZO_ERR_INVALID_ARG);
    assert_non_null(strstr(zo_backend_last_error(b), "full_alloc"));
    BE_OK(b, zo_backend_full_alloc(b, 3, 32, &full)); /* too small */
    it.full = full;
    assert_int_equal(zo_backend_all_gather_start(b, &it, 1, &w), ZO_ERR_INVALID_ARG);
    zo_backend_full_free(b, 3, full);
    zo_backend_full_free(b, 3, full); /* double free: reported, not passed to CUDA */
    assert_non_null(strstr(zo_backend_last_error(b), "not a live full buffer"));
    int done = 0;
    assert_int_equal(zo_backend_query(b, (zo_work *)&local, &done), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_backend_wait(b, (zo_work *)&local), ZO_ERR_INVALID_ARG);
    zo_backend_work_free(b, (zo_work *)&local);
    assert_non_null(strstr(zo_backend_last_error(b), "not a live work"));
    float g[16] = {0}, o[16];
    assert_int_equal(zo_backend_reduce_scatter(b, 9, g, o, 16, 16, ZO_REDUCE_SUM), ZO_ERR_BAD_HANDLE);
    assert_int_equal(zo_backend_reduce_scatter(b, 3, g, o, 15, 16, ZO_REDUCE_SUM), ZO_ERR_INVALID_ARG);
    zo_nccl_stats st;
    assert_int_equal(zo_nccl_get_stats(b, &st), ZO_OK);
    assert_int_equal(st.live_full_buffers, 0);
    zo_backend_destroy(b);
}

static void test_dev_reduce_scatter_w1(void **state) {
    (void)state;
    NEED_DEVICE();
    zo_backend *b = make1(cfg1());
    assert_int_equal(rs_check(b, 0, 1, ZO_REDUCE_SUM), 0);
    assert_int_equal(rs_check(b, 1, 1000, ZO_REDUCE_AVG), 0);
    assert_int_equal(rs_check(b, 2, 100003, ZO_REDUCE_SUM), 0);
    zo_backend_destroy(b);
}

/* exchange (the verify_collectives fingerprint all-gather): every rank sends
 * a rank-specific pattern of 1..256 bytes; recv holds every rank's bytes in
 * rank order.  Bad arguments are rejected before anything is enqueued.
 * Returns the number of problems. */
static int xchg_check(zo_backend *b) {
    const zo_backend_ops *ops = b->ops;
    int W = ops->world_size(b->ctx), r = ops->rank(b->ctx), bad = 0;
    if (ops->version < 2u || !ops->exchange) {
        print_error("nccl backend: no exchange op (ops version %u)\n", ops->version);
        return 1;
    }
    zo_nccl_stats st0, st1;
    assert_int_equal(zo_nccl_get_stats(b, &st0), ZO_OK);
#ifdef ZO_NCCL_FAKE
    long misuse0 = fake_get().misuse;
#endif
    static const size_t sizes[] = {1, 8, 64, 255, 256};
    uint8_t send[256];
    uint8_t *recv = malloc((size_t)W * 256 + 1);
    assert_non_null(recv);
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        for (size_t i = 0; i < n; i++) send[i] = (uint8_t)(r * 17 + i * 3 + n);
        memset(recv, 0xEE, (size_t)W * 256 + 1);
        zo_status s = zo_backend_exchange(b, send, n, recv);
        if (s) {
            print_error("exchange(%zu bytes) on rank %d: %s\n", n, r, zo_backend_last_error(b));
            bad++;
            continue;
        }
        for (int q = 0; q < W; q++)
            for (size_t i = 0; i < n; i++)
                if (recv[(size_t)q * n + i] != (uint8_t)(q * 17 + i * 3 + n)) {
                    print_error("exchange(%zu bytes) on rank %d: rank %d's byte %zu is %u\n", n, r, q, i,
                                recv[(size_t)q * n + i]);
                    bad++;
                    q = W;
                    break;
                }
        if (recv[(size_t)W * n] != 0xEE) {
            print_error("exchange(%zu bytes): wrote past W * bytes\n", n);
            bad++;
        }
    }
    assert_int_equal(zo_backend_exchange(b, send, 0, recv), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_backend_exchange(b, send, 257, recv), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_backend_exchange(b, NULL, 4, recv), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_backend_exchange(b, send, 4, NULL), ZO_ERR_INVALID_ARG);
    assert_non_null(strstr(zo_backend_last_error(b), "exchange"));
    assert_int_equal(zo_nccl_get_stats(b, &st1), ZO_OK);
    if (st1.exchanges - st0.exchanges != sizeof sizes / sizeof sizes[0]) {
        print_error("zo_nccl_stats.exchanges went from %llu to %llu\n", (unsigned long long)st0.exchanges,
                    (unsigned long long)st1.exchanges);
        bad++;
    }
#ifdef ZO_NCCL_FAKE
    if (fake_get().misuse != misuse0) {
        print_error("exchange misused the fake NCCL (buffers not device memory, overlapping send/recv)\n");
        bad++;
    }
#endif
    free(recv);
    return bad;
}

static void test_dev_exchange_w1(void **state) {
    (void)state;
    NEED_DEVICE();
    for (int mode = 0; mode < 2; mode++) {
        zo_nccl_config c = cfg1();
        c.wait_host = mode;
        zo_backend *b = make1(c);
        assert_int_equal(xchg_check(b), 0);
        zo_backend_destroy(b);
    }
}

/* The runtime's fingerprint check (zo_config.verify_collectives) on the NCCL
 * data plane: one exchange before each collective, data still right. */
static void test_dev_runtime_verify(void **state) {
    (void)state;
    NEED_DEVICE();
    zo_backend *b = make1(cfg1());
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.backend = b;
    cfg.param_persistence_threshold = 0;
    cfg.verify_collectives = 1;
    zo_runtime *rt = NULL;
    assert_int_equal(zo_runtime_create(&cfg, &rt), ZO_OK);
    zo_module_id root;
    zo_param_id w;
    assert_int_equal(zo_module_register(rt, ZO_NO_MODULE, "m", 0, &root), ZO_OK);
    assert_int_equal(zo_param_register(rt, root, "w", 5000, 4, 0, &w), ZO_OK);
    for (int step = 0; step < 2; step++) {
        zo_graph g;
        assert_int_equal(zo_forward_begin(rt, ZO_FWD_ROOT | ZO_FWD_EVAL, &g), ZO_OK);
        assert_int_equal(zo_pre_forward(rt, root, 0), ZO_OK);
        const void *data = NULL;
        assert_int_equal(zo_param_access(rt, root, w, &data, NULL), ZO_OK);
        uint8_t h[64];
        assert_int_equal(cudaMemcpy(h, data, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
        for (size_t j = 0; j < sizeof h; j++) assert_int_equal(h[j], zo_host_param_byte(w, j));
        assert_int_equal(zo_post_forward(rt, root), ZO_OK);
        assert_int_equal(zo_forward_end(rt, g), ZO_OK);
        assert_int_equal(zo_release_all(rt), ZO_OK);
    }
    zo_nccl_stats st;
    assert_int_equal(zo_nccl_get_stats(b, &st), ZO_OK);
    assert_true(st.exchanges >= st.gathers);
    assert_true(st.gathers >= 2);
    assert_int_equal(zo_runtime_destroy(rt), ZO_OK);
    zo_backend_destroy(b);
}

/* README's training step through the runtime's hooks, NCCL data plane */
static void test_dev_runtime_step(void **state) {
    (void)state;
    NEED_DEVICE();
    zo_backend *b = make1(cfg1());
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.backend = b;
    cfg.param_persistence_threshold = 0;
    zo_runtime *rt = NULL;
    assert_int_equal(zo_runtime_create(&cfg, &rt), ZO_OK);
    zo_module_id root, fc;
    zo_param_id w;
    zo_graph g;
    zo_grad_handle xh, yh, fo, ro;
    uint8_t yes = 1;
    assert_int_equal(zo_module_register(rt, ZO_NO_MODULE, "model", 0, &root), ZO_OK);
    assert_int_equal(zo_module_register(rt, root, "fc", 0, &fc), ZO_OK);
    assert_int_equal(zo_param_register(rt, fc, "weight", 1000000, 4, 0, &w), ZO_OK);
    for (int step = 0; step < 3; step++) {
        assert_int_equal(zo_forward_begin(rt, ZO_FWD_ROOT, &g), ZO_OK);
        assert_int_equal(zo_pre_forward(rt, root, ZO_CALL_GRAD), ZO_OK);
        assert_int_equal(zo_track_inputs(rt, root, 1, &yes, &xh), ZO_OK);
        assert_int_equal(zo_pre_forward(rt, fc, ZO_CALL_GRAD), ZO_OK);
        assert_int_equal(zo_track_inputs(rt, fc, 1, &yes, &yh), ZO_OK);
        const void *data = NULL;
        size_t bytes = 0;
        assert_int_equal(zo_param_access(rt, fc, w, &data, &bytes), ZO_OK);
        assert_int_equal(bytes, 4000000);
        uint8_t h[256];
        assert_int_equal(cudaMemcpy(h, (const uint8_t *)data + 1000, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
        for (size_t j = 0; j < sizeof h; j++) assert_int_equal(h[j], zo_host_param_byte(w, 1000 + j));
        assert_int_equal(zo_post_forward(rt, fc), ZO_OK);
        assert_int_equal(zo_track_outputs(rt, fc, 1, &yes, &fo), ZO_OK);
        assert_int_equal(zo_post_forward(rt, root), ZO_OK);
        assert_int_equal(zo_track_outputs(rt, root, 1, &yes, &ro), ZO_OK);
        assert_int_equal(zo_forward_end(rt, g), ZO_OK);
        assert_int_equal(zo_backward_begin(rt, g, 0), ZO_OK);
        assert_int_equal(zo_output_grad(rt, ro), ZO_OK);
        assert_int_equal(zo_output_grad(rt, fo), ZO_OK);
        assert_int_equal(zo_param_grad_ready(rt, w), ZO_OK);
        assert_int_equal(zo_input_grad(rt, yh), ZO_OK);
        assert_int_equal(zo_input_grad(rt, xh), ZO_OK);
        assert_int_equal(zo_backward_end(rt, g), ZO_OK);
        assert_int_equal(zo_release_all(rt), ZO_OK);
        zo_param_info info;
        assert_int_equal(zo_param_get_info(rt, w, &info), ZO_OK);
        assert_int_equal(info.status, ZO_PARAM_NOT_AVAILABLE);
    }
    zo_nccl_stats st;
    assert_int_equal(zo_nccl_get_stats(b, &st), ZO_OK);
    assert_int_equal(st.live_full_buffers, 0);
    /* step 0 gathers in forward and backward, later steps keep the weight
     * from forward to backward (trace reuse distance): 4 with the host
     * backend in the same sequence */
    assert_true(st.gathers >= 4);
    assert_int_equal(zo_runtime_destroy(rt), ZO_OK);
    zo_backend_destroy(b);
}

/* the mirror backend (used by the corpus replay): host world W = 4 against
 * the NCCL world of one device, prefetching runtime, several parameters;
 * every gathered parameter compared, none differs */
static void test_dev_runtime_mirror(void **state) {
    (void)state;
    NEED_DEVICE();
    zo_nccl_config nc = cfg1();
    nc.wait_host = 1;
    zo_backend *nb = make1(nc);
    zo_host_config hc = ZO_HOST_CONFIG_INIT;
    zo_host_testing ht = ZO_HOST_TESTING_INIT;
    hc.testing = &ht;
    hc.world_size = 4;
    hc.rank = 1;
    ht.deferred = 1;
    zo_backend *hb = NULL, *mb = NULL;
    assert_int_equal(zo_backend_host_create(&hc, &hb), ZO_OK);
    assert_int_equal(zo_mirror_create(hb, nb, 0, 0, &mb), ZO_OK);
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.world_size = 4;
    cfg.rank = 1;
    cfg.backend = mb;
    cfg.param_persistence_threshold = 10;
    zo_runtime *rt = NULL;
    assert_int_equal(zo_runtime_create(&cfg, &rt), ZO_OK);
    zo_module_id root, m[4];
    zo_param_id p[4];
    assert_int_equal(zo_module_register(rt, ZO_NO_MODULE, "model", 0, &root), ZO_OK);
    for (int i = 0; i < 4; i++) {
        char name[8];
        snprintf(name, sizeof name, "l%d", i);
        assert_int_equal(zo_module_register(rt, root, name, 0, &m[i]), ZO_OK);
        assert_int_equal(zo_param_register(rt, m[i], "w", 1000u + 777u * (unsigned)i, (uint32_t)(1u << i), 0, &p[i]),
                         ZO_OK);
    }
    for (int step = 0; step < 3; step++) { /* step 0 records the trace, later steps prefetch */
        zo_graph g;
        assert_int_equal(zo_forward_begin(rt, ZO_FWD_ROOT | ZO_FWD_EVAL, &g), ZO_OK);
        assert_int_equal(zo_pre_forward(rt, root, 0), ZO_OK);
        for (int i = 0; i < 4; i++) {
            const void *d;
            assert_int_equal(zo_pre_forward(rt, m[i], 0), ZO_OK);
            if (zo_param_access(rt, m[i], p[i], &d, NULL) != ZO_OK) {
                print_error("access: %s\n", zo_last_error(rt));
                fail();
            }
            assert_int_equal(zo_post_forward(rt, m[i]), ZO_OK);
        }
        assert_int_equal(zo_post_forward(rt, root), ZO_OK);
        assert_int_equal(zo_forward_end(rt, g), ZO_OK);
    }
    zo_mirror_stats st = zo_mirror_get_stats(mb);
    assert_int_equal(st.mismatches, 0);
    assert_true(st.compared >= 12);
    assert_int_equal(zo_runtime_destroy(rt), ZO_OK);
    zo_backend_destroy(mb);
    zo_backend_destroy(hb);
    zo_backend_destroy(nb);
}

/* every device, one thread per rank */
typedef struct rank_arg {
    zo_backend *b;
    int bad;
} rank_arg;

static void *rank_main(void *p) {
    rank_arg *a = p;
    cudaSetDevice(zo_nccl_device(a->b));
    int g = gather_check(a->b, 0, 0);
    int r1 = rs_check(a->b, 50, 12345, ZO_REDUCE_SUM);
    int r2 = rs_check(a->b, 51, 777, ZO_REDUCE_AVG);
    int x = xchg_check(a->b);
    a->bad = (g != 0) + (r1 != 0) + (r2 != 0) + (x != 0);
    return NULL;
}

static void test_dev_all_devices(void **state) {
    (void)state;
    NEED_DEVICE();
    int n = g_ndev;
    const char *e = getenv("ZO_NCCL_TEST_WORLD");
    if (e && atoi(e) > 0 && atoi(e) <= g_ndev) n = atoi(e);
    zo_backend **bs = calloc((size_t)n, sizeof *bs);
    rank_arg *args = calloc((size_t)n, sizeof *args);
    pthread_t *th = calloc((size_t)n, sizeof *th);
    assert_true(bs && args && th);
    zo_nccl_config c = ZO_NCCL_CONFIG_INIT;
    zo_status s = zo_backend_nccl_create_all(&c, n, NULL, bs);
    if (s) {
        print_error("create_all(%d): %s\n", n, zo_nccl_create_error());
        fail();
    }
    print_message("all-gather / reduce-scatter / exchange on %d device(s), one thread per rank\n", n);
    for (int i = 0; i < n; i++) {
        args[i].b = bs[i];
        assert_int_equal(pthread_create(&th[i], NULL, rank_main, &args[i]), 0);
    }
    int bad = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(th[i], NULL);
        bad += args[i].bad;
    }
    for (int i = 0; i < n; i++) zo_backend_destroy(bs[i]);
    free(bs);
    free(args);
    free(th);
    assert_int_equal(bad, 0);
}

static void test_dev_too_many_devices(void **state) {
    (void)state;
    NEED_DEVICE();
    zo_nccl_config c = ZO_NCCL_CONFIG_INIT;
    zo_backend *bs[1] = {NULL};
    int devs[1] = {g_ndev}; /* one past the last */
    ST_EQ(zo_backend_nccl_create_all(&c, 1, devs, bs), ZO_ERR_NO_DEVICE);
    assert_non_null(strstr(zo_nccl_create_error(), "device(s) are present"));
    zo_nccl_config d = cfg1();
    d.local_device = g_ndev;
    zo_nccl_unique_id id;
    memset(&id, 0, sizeof id);
    zo_backend *b = NULL;
    ST_EQ(zo_backend_nccl_create(&d, &id, &b), ZO_ERR_NO_DEVICE);
    assert_null(b);
}

#ifdef ZO_NCCL_FAKE
/* ------------------------------------------------------------------ */
/* Fake CUDA/NCCL only (tests/nccl/fake): protocol and error paths that  */
/* a real GPU cannot be made to produce on demand                        */
/* ------------------------------------------------------------------ */

static zo_backend *fake1(int max_out, int wait_host) {
    zo_nccl_config c = cfg1();
    c.max_outstanding_gathers = max_out;
    c.wait_host = wait_host;
    return make1(c);
}

/* the stream/event protocol of one gather, one wait and one release */
static void test_fake_stream_protocol(void **state) {
    (void)state;
    NEED_DEVICE();
    fake_reset();
    zo_backend *b = fake1(16, 0);
    BE_OK(b, zo_backend_param_add(b, 0, 100, 4, 100));
    void *full = NULL;
    zo_work *w = NULL;
    BE_OK(b, zo_backend_full_alloc(b, 0, 400, &full));
    zo_gather_item it = {0, full, 100, 100, 4};
    fake_counters c0 = fake_get();
    BE_OK(b, zo_backend_all_gather_start(b, &it, 1, &w));
    fake_counters c1 = fake_get();
    assert_int_equal(c1.groups - c0.groups, 1);
    assert_int_equal(c1.allgathers - c0.allgathers, 1);
    assert_int_equal(c1.group_depth, 0);
    BE_OK(b, zo_backend_wait(b, w)); /* stream mode: the compute (legacy) stream waits, no host sync */
    fake_counters c2 = fake_get();
    assert_int_equal(c2.waits_on_legacy - c1.waits_on_legacy, 1);
    zo_backend_work_free(b, w);
    zo_backend_full_free(b, 0, full); /* gather stream waits for compute, then cudaFreeAsync on it */
    fake_counters c3 = fake_get();
    assert_int_equal(c3.stream_waits - c2.stream_waits, 1);
    assert_int_equal(c3.frees_async - c2.frees_async, 1);
    assert_ptr_equal(c3.last_free_stream, zo_nccl_gather_stream(b));
    zo_nccl_stats st;
    assert_int_equal(zo_nccl_get_stats(b, &st), ZO_OK);
    assert_int_equal(st.stream_waits, 1);
    assert_int_equal(st.host_waits, 0);
    zo_backend_destroy(b);
    fake_counters c4 = fake_get();
    assert_int_equal(c4.device_allocs, 0);
    assert_int_equal(c4.pinned_allocs, 0);
    assert_int_equal(c4.streams, 0);
    assert_int_equal(c4.events, 0);
    assert_int_equal(c4.pools, 0);
    assert_int_equal(c4.comms, 0);
    assert_int_equal(c4.bad_frees, 0);
    assert_int_equal(c4.misuse, 0);
}

/* an incomplete gather: query says not done until the event completed;
 * back-pressure blocks on the oldest work beyond max_outstanding_gathers */
static void test_fake_backpressure_and_query(void **state) {
    (void)state;
    NEED_DEVICE();
    fake_reset();
    zo_backend *b = fake1(2, 0);
    enum { N = 5 };
    void *full[N];
    zo_work *w[N];
    fake_set_event_delay(3);
    for (int i = 0; i < N; i++) {
        BE_OK(b, zo_backend_param_add(b, (zo_param_id)i, 10, 4, 10));
        BE_OK(b, zo_backend_full_alloc(b, (zo_param_id)i, 40, &full[i]));
        zo_gather_item it = {(zo_param_id)i, full[i], 10, 10, 4};
        BE_OK(b, zo_backend_all_gather_start(b, &it, 1, &w[i]));
        zo_nccl_stats st;
        assert_int_equal(zo_nccl_get_stats(b, &st), ZO_OK);
        assert_true(st.outstanding <= 2);
    }
    /* the prefetch hint (ops version 3) touches only host memory: no CUDA
     * or NCCL call, no counter moves, for a known or an unknown parameter */
    {
        assert_int_equal(b->ops->version, 3u);
        assert_non_null(b->ops->prefetch);
        zo_nccl_stats a, z;
        fake_counters fa = fake_get();
        assert_int_equal(zo_nccl_get_stats(b, &a), ZO_OK);
        zo_backend_prefetch(b, 0);
        zo_backend_prefetch(b, N - 1);
        zo_backend_prefetch(b, 999);
        zo_backend_prefetch(b, ZO_NO_PARAM);
        assert_int_equal(zo_nccl_get_stats(b, &z), ZO_OK);
        fake_counters fz = fake_get();
        assert_memory_equal(&a, &z, sizeof a);
        assert_int_equal(fa.device_allocs, fz.device_allocs);
        assert_int_equal(fa.pinned_allocs, fz.pinned_allocs);
        assert_int_equal(fa.events, fz.events);
        assert_int_equal(fa.stream_waits, fz.stream_waits);
        assert_int_equal(fa.groups, fz.groups);
        assert_int_equal(fa.allgathers, fz.allgathers);
        assert_int_equal(fa.misuse, fz.misuse);
    }
    zo_nccl_stats st;
    assert_int_equal(zo_nccl_get_stats(b, &st), ZO_OK);
    assert_int_equal(st.backpressure_waits, N - 2);
    assert_int_equal(st.live_works, N);
    /* the newest work: not done for 3 queries, then done */
    int done = 1;
    BE_OK(b, zo_backend_query(b, w[N - 1], &done));
    assert_int_equal(done, 0);
    BE_OK(b, zo_backend_query(b, w[N - 1], &done));
    BE_OK(b, zo_backend_query(b, w[N - 1], &done));
    assert_int_equal(done, 0);
    BE_OK(b, zo_backend_query(b, w[N - 1], &done));
    assert_int_equal(done, 1);
    for (int i = 0; i < N; i++) {
        BE_OK(b, zo_backend_wait(b, w[i]));
        zo_backend_work_free(b, w[i]);
        zo_backend_full_free(b, (zo_param_id)i, full[i]);
    }
    assert_int_equal(zo_nccl_get_stats(b, &st), ZO_OK);
    assert_int_equal(st.outstanding, 0);
    assert_int_equal(st.live_works, 0);
    zo_backend_destroy(b);
    /* host-mode wait blocks (polls) until the event completed */
    fake_reset();
    b = fake1(0, 1);
    BE_OK(b, zo_backend_param_add(b, 0, 10, 4, 10));
    BE_OK(b, zo_backend_full_alloc(b, 0, 40, &full[0]));
    fake_set_event_delay(5);
    zo_gather_item it = {0, full[0], 10, 10, 4};
    BE_OK(b, zo_backend_all_gather_start(b, &it, 1, &w[0]));
    BE_OK(b, zo_backend_wait(b, w[0]));
    BE_OK(b, zo_backend_query(b, w[0], &done));
    assert_int_equal(done, 1);
    zo_backend_work_free(b, w[0]);
    zo_backend_full_free(b, 0, full[0]);
    assert_int_equal(zo_nccl_get_stats(b, &st), ZO_OK);
    assert_int_equal(st.host_waits, 1);
    zo_backend_destroy(b);
    assert_int_equal(fake_get().device_allocs, 0);
}

/* every CUDA/NCCL failure becomes a zo_status with the library's message;
 * nothing is left half done */
static void test_fake_error_mapping(void **state) {
    (void)state;
    NEED_DEVICE();
    fake_reset();
    zo_backend *b = fake1(16, 0);
    void *full = NULL;
    zo_work *w = NULL;

    fake_fail("cudaMalloc", 1, cudaErrorMemoryAllocation);
    assert_int_equal(zo_backend_param_add(b, 0, 64, 4, 64), ZO_ERR_NOMEM);
    assert_non_null(strstr(zo_backend_last_error(b), "cudaErrorMemoryAllocation"));
    assert_non_null(strstr(zo_backend_last_error(b), "param_add(0)"));
    BE_OK(b, zo_backend_param_add(b, 0, 64, 4, 64)); /* nothing was kept: the retry works */

    fake_fail("cudaMemcpy", 1, cudaErrorLaunchFailure); /* pattern upload */
    assert_int_equal(zo_backend_param_add(b, 1, 64, 4, 64), ZO_ERR_BACKEND);
    assert_non_null(strstr(zo_backend_last_error(b), "cudaErrorLaunchFailure"));
    BE_OK(b, zo_backend_param_add(b, 1, 64, 4, 64));

    fake_fail("cudaMallocFromPoolAsync", 1, cudaErrorMemoryAllocation);
    assert_int_equal(zo_backend_full_alloc(b, 0, 256, &full), ZO_ERR_NOMEM);
    assert_null(full);
    assert_non_null(strstr(zo_backend_last_error(b), "cudaMallocFromPoolAsync"));
    BE_OK(b, zo_backend_full_alloc(b, 0, 256, &full));

    zo_gather_item it = {0, full, 64, 64, 4};
    fake_fail("ncclAllGather", 1, ncclUnhandledCudaError);
    assert_int_equal(zo_backend_all_gather_start(b, &it, 1, &w), ZO_ERR_BACKEND);
    assert_null(w);
    assert_non_null(strstr(zo_backend_last_error(b), "unhandled cuda error"));
    assert_non_null(strstr(zo_backend_last_error(b), "fake NCCL last error"));
    assert_int_equal(fake_get().group_depth, 0); /* the group was closed */
    fake_fail("ncclGroupEnd", 1, ncclSystemError);
    assert_int_equal(zo_backend_all_gather_start(b, &it, 1, &w), ZO_ERR_BACKEND);
    assert_non_null(strstr(zo_backend_last_error(b), "ncclGroupEnd"));
    fake_fail("cudaEventRecord", 1, cudaErrorLaunchFailure);
    assert_int_equal(zo_backend_all_gather_start(b, &it, 1, &w), ZO_ERR_BACKEND);
    zo_nccl_stats st;
    assert_int_equal(zo_nccl_get_stats(b, &st), ZO_OK);
    assert_int_equal(st.live_works, 0);
    assert_int_equal(st.outstanding, 0);

    BE_OK(b, zo_backend_all_gather_start(b, &it, 1, &w));
    fake_fail("cudaEventQuery", 1, cudaErrorLaunchFailure);
    int done = 0;
    assert_int_equal(zo_backend_query(b, w, &done), ZO_ERR_BACKEND);
    assert_non_null(strstr(zo_backend_last_error(b), "cudaEventQuery"));
    /* still incomplete as far as the backend knows: wait makes the compute
     * stream wait, and that failure is reported too */
    fake_fail("cudaStreamWaitEvent", 1, cudaErrorLaunchFailure);
    assert_int_equal(zo_backend_wait(b, w), ZO_ERR_BACKEND);
    assert_non_null(strstr(zo_backend_last_error(b), "cudaStreamWaitEvent(compute)"));
    BE_OK(b, zo_backend_wait(b, w));
    BE_OK(b, zo_backend_query(b, w, &done));
    assert_int_equal(done, 1);
    BE_OK(b, zo_backend_wait(b, w)); /* known complete: nothing to order */
    zo_backend_work_free(b, w);

    float g[64], out[64];
    for (int i = 0; i < 64; i++) g[i] = (float)i;
    fake_fail("ncclReduceScatter", 1, ncclRemoteError);
    assert_int_equal(zo_backend_reduce_scatter(b, 0, g, out, 64, 64, ZO_REDUCE_SUM), ZO_ERR_BACKEND);
    assert_non_null(strstr(zo_backend_last_error(b), "remote process exited"));
    BE_OK(b, zo_backend_reduce_scatter(b, 0, g, out, 64, 64, ZO_REDUCE_AVG));
    for (int i = 0; i < 64; i++) assert_true(out[i] == g[i]);
    zo_backend_full_free(b, 0, full);
    zo_backend_destroy(b);
    fake_counters c = fake_get();
    assert_int_equal(c.device_allocs, 0);
    assert_int_equal(c.bad_frees, 0);
    assert_int_equal(c.misuse, 0);

    /* creation: a failure after ncclCommInitAll releases the communicator,
     * streams and events it made */
    fake_reset();
    zo_nccl_config cf = cfg1();
    zo_backend *bs[1] = {NULL};
    fake_fail("cudaMemPoolCreate", 1, cudaErrorMemoryAllocation);
    ST_EQ(zo_backend_nccl_create_all(&cf, 1, NULL, bs), ZO_ERR_NOMEM);
    assert_null(bs[0]);
    assert_non_null(strstr(zo_nccl_create_error(), "cudaMemPoolCreate"));
    fake_fail("ncclCommInitAll", 1, ncclSystemError);
    ST_EQ(zo_backend_nccl_create_all(&cf, 1, NULL, bs), ZO_ERR_BACKEND);
    assert_non_null(strstr(zo_nccl_create_error(), "ncclCommInitAll"));
    fake_fail("ncclCommInitRank", 1, ncclRemoteError);
    zo_nccl_unique_id id;
    ST_EQ(zo_nccl_get_unique_id(&id), ZO_OK);
    ST_EQ(zo_backend_nccl_create(&cf, &id, &bs[0]), ZO_ERR_BACKEND);
    assert_non_null(strstr(zo_nccl_create_error(), "ncclCommInitRank"));
    c = fake_get();
    assert_int_equal(c.comms, 0);
    assert_int_equal(c.streams, 0);
    assert_int_equal(c.events, 0);
    assert_int_equal(c.pools, 0);
    /* the uid path works end to end with the fake */
    ST_EQ(zo_backend_nccl_create(&cf, &id, &bs[0]), ZO_OK);
    zo_backend_destroy(bs[0]);
    /* cudaGetDeviceCount failing or reporting 0: no device */
    fake_fail("cudaGetDeviceCount", 1, cudaErrorInsufficientDriver);
    ST_EQ(zo_backend_nccl_create_all(&cf, 1, NULL, bs), ZO_ERR_NO_DEVICE);
    assert_non_null(strstr(zo_nccl_create_error(), "cudaErrorInsufficientDriver"));
}

/* an asynchronous NCCL error: reported at query/wait, the communicator is
 * aborted once, every later collective fails cleanly, destroy works */
static void test_fake_async_error(void **state) {
    (void)state;
    NEED_DEVICE();
    fake_reset();
    zo_backend *b = fake1(16, 0);
    void *full = NULL;
    zo_work *w = NULL;
    BE_OK(b, zo_backend_param_add(b, 0, 8, 4, 8));
    BE_OK(b, zo_backend_full_alloc(b, 0, 32, &full));
    zo_gather_item it = {0, full, 8, 8, 4};
    BE_OK(b, zo_backend_all_gather_start(b, &it, 1, &w));
    fake_set_async_error(ncclRemoteError);
    int done = 0;
    assert_int_equal(zo_backend_query(b, w, &done), ZO_ERR_BACKEND);
    assert_non_null(strstr(zo_backend_last_error(b), "asynchronous NCCL error"));
    assert_non_null(strstr(zo_backend_last_error(b), "aborted"));
    assert_int_equal(fake_get().aborted_comms, 1);
    assert_int_equal(zo_backend_wait(b, w), ZO_ERR_BACKEND);
    assert_non_null(strstr(zo_backend_last_error(b), "unusable"));
    zo_work *w2 = NULL;
    assert_int_equal(zo_backend_all_gather_start(b, &it, 1, &w2), ZO_ERR_BACKEND);
    float g[8] = {0}, out[8];
    assert_int_equal(zo_backend_reduce_scatter(b, 0, g, out, 8, 8, ZO_REDUCE_SUM), ZO_ERR_BACKEND);
    assert_int_equal(zo_nccl_synchronize(b), ZO_ERR_BACKEND);
    zo_backend_work_free(b, w);
    zo_backend_full_free(b, 0, full);
    zo_backend_destroy(b); /* no second destroy of the aborted communicator */
    fake_counters c = fake_get();
    assert_int_equal(c.misuse, 0);
    assert_int_equal(c.comms, 0);
    fake_set_async_error(ncclSuccess);
}

/* cpu offload: the H2D copy goes into this rank's slot of the full buffer
 * and the all-gather runs in place; pageable shards are never handed to
 * NCCL (the fake refuses host pointers) */
static void test_fake_offload_in_place(void **state) {
    (void)state;
    NEED_DEVICE();
    for (int pin = 0; pin < 2; pin++) {
        fake_reset();
        zo_nccl_config c = cfg1();
        c.offload_param = ZO_NCCL_OFFLOAD_CPU;
        c.pin_memory = pin;
        zo_backend *b = make1(c);
        BE_OK(b, zo_backend_param_add(b, 3, 1000, 2, 1000));
        assert_int_equal(fake_get().pinned_allocs, pin);
        void *shard = NULL;
        size_t bytes = 0;
        int on_host = 0;
        assert_int_equal(zo_nccl_shard(b, 3, &shard, &bytes, &on_host), ZO_OK);
        assert_int_equal(on_host, 1);
        assert_int_equal(bytes, 2000);
        uint8_t v[16];
        memset(v, 0x5a, sizeof v);
        assert_int_equal(zo_nccl_shard_upload(b, 3, 100, v, sizeof v), ZO_OK);
        assert_int_equal(zo_nccl_shard_upload(b, 3, 1990, v, sizeof v), ZO_ERR_INVALID_ARG);
        void *full = NULL;
        zo_work *w = NULL;
        BE_OK(b, zo_backend_full_alloc(b, 3, 2000, &full));
        zo_gather_item it = {3, full, 1000, 2, 2};
        assert_int_equal(zo_backend_all_gather_start(b, &it, 1, &w), ZO_ERR_INVALID_ARG); /* partition mismatch */
        it.partition_numel = 1000;
        BE_OK(b, zo_backend_all_gather_start(b, &it, 1, &w));
        BE_OK(b, zo_backend_wait(b, w));
        zo_backend_work_free(b, w);
        uint8_t h[2000];
        assert_int_equal(cudaMemcpy(h, full, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
        for (size_t j = 0; j < sizeof h; j++)
            assert_int_equal(h[j], j >= 100 && j < 116 ? 0x5a : zo_host_param_byte(3, j));
        zo_nccl_stats st;
        assert_int_equal(zo_nccl_get_stats(b, &st), ZO_OK);
        assert_int_equal(st.h2d_bytes, 2000);
        zo_backend_full_free(b, 3, full);
        zo_backend_destroy(b);
        fake_counters fc = fake_get();
        assert_int_equal(fc.misuse, 0);
        assert_int_equal(fc.pinned_allocs, 0);
        assert_int_equal(fc.device_allocs, 0);
    }
}
/* several ranks (threads) meet through the file bootstrap, then gather and
 * reduce-scatter as one world of 3; the id file is gone afterwards */
typedef struct boot_arg {
    const char *dir;
    int rank;
    zo_status st;
    int bad;
    char msg[256];
} boot_arg;

static void *boot_rank(void *p) {
    boot_arg *a = p;
    zo_nccl_config c = ZO_NCCL_CONFIG_INIT;
    c.world_size = 3;
    c.rank = a->rank;
    c.local_device = a->rank;
    c.bootstrap_timeout_ms = 10000;
    zo_backend *b = NULL;
    a->st = zo_backend_nccl_create_file(&c, a->dir, "threads", &b);
    if (a->st) {
        snprintf(a->msg, sizeof a->msg, "%s", zo_nccl_create_error());
        return NULL;
    }
    int g = gather_check(b, 300, 0);
    int r = rs_check(b, 400, 1001, ZO_REDUCE_AVG);
    a->bad = (g != 0) + (r != 0);
    zo_backend_destroy(b);
    return NULL;
}

static void test_fake_file_bootstrap_threads(void **state) {
    (void)state;
    NEED_DEVICE();
    fake_reset();
    fake_set_device_count(3);
    char dir[] = "/tmp/zo_nccl_fboot_XXXXXX";
    assert_non_null(mkdtemp(dir));
    boot_arg a[3];
    pthread_t th[3];
    for (int r = 2; r >= 0; r--) { /* readers first: they poll until rank 0 publishes */
        memset(&a[r], 0, sizeof a[r]);
        a[r].dir = dir;
        a[r].rank = r;
        assert_int_equal(pthread_create(&th[r], NULL, boot_rank, &a[r]), 0);
    }
    for (int r = 0; r < 3; r++) pthread_join(th[r], NULL);
    fake_set_device_count(-1);
    for (int r = 0; r < 3; r++) {
        if (a[r].st) print_error("rank %d: %s: %s\n", r, zo_strerror(a[r].st), a[r].msg);
        assert_int_equal(a[r].st, ZO_OK);
        assert_int_equal(a[r].bad, 0);
    }
    assert_int_equal(count_entries(dir), 0); /* rank 0 removed the id file */
    assert_int_equal(rmdir(dir), 0);
    fake_counters c = fake_get();
    assert_int_equal(c.comms, 0);
    assert_int_equal(c.misuse, 0);
    assert_int_equal(c.device_allocs, 0);
}
/* the mirror's comparison can fail: a corrupted NCCL all-gather is reported
 * as a backend error at the access that waits for it */
static void test_fake_mirror_detects_corruption(void **state) {
    (void)state;
    NEED_DEVICE();
    fake_reset();
    zo_nccl_config nc = cfg1();
    nc.wait_host = 1;
    zo_backend *nb = make1(nc);
    zo_host_config hc = ZO_HOST_CONFIG_INIT;
    hc.world_size = 2;
    zo_backend *hb = NULL, *mb = NULL;
    assert_int_equal(zo_backend_host_create(&hc, &hb), ZO_OK);
    assert_int_equal(zo_mirror_create(hb, nb, 0, 0, &mb), ZO_OK);
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.world_size = 2;
    cfg.backend = mb;
    zo_runtime *rt = NULL;
    assert_int_equal(zo_runtime_create(&cfg, &rt), ZO_OK);
    zo_module_id root;
    zo_param_id p;
    assert_int_equal(zo_module_register(rt, ZO_NO_MODULE, "m", 0, &root), ZO_OK);
    assert_int_equal(zo_param_register(rt, root, "w", 4096, 4, 0, &p), ZO_OK);
    zo_graph g;
    const void *d = NULL;
    assert_int_equal(zo_forward_begin(rt, ZO_FWD_ROOT | ZO_FWD_EVAL, &g), ZO_OK);
    fake_corrupt_allgather(1);
    zo_status s = zo_pre_forward(rt, root, 0); /* gathers and waits: the mirror compares */
    if (s == ZO_OK) s = zo_param_access(rt, root, p, &d, NULL);
    assert_int_equal(s, ZO_ERR_BACKEND);
    assert_non_null(strstr(zo_last_error(rt), "mirror: param 0 byte"));
    assert_int_equal(zo_mirror_get_stats(mb).mismatches, 1);
    assert_non_null(strstr(zo_mirror_first_mismatch(mb), "content function"));
    assert_int_equal(zo_runtime_destroy(rt), ZO_OK);
    zo_backend_destroy(mb);
    zo_backend_destroy(hb);
    zo_backend_destroy(nb);
    assert_int_equal(fake_get().device_allocs, 0);
}
/* exchange's error paths: staging allocation, the all-gather, the copies,
 * a broken communicator; the staging buffer is allocated once */
static void test_fake_exchange_errors(void **state) {
    (void)state;
    NEED_DEVICE();
    fake_reset();
    long before = fake_get().device_allocs;
    zo_backend *b = fake1(0, 0);
    uint8_t send[16] = {1, 2, 3}, recv[16];
    long dev0 = fake_get().device_allocs;
    fake_fail("cudaMalloc", 1, cudaErrorMemoryAllocation);
    assert_int_equal(zo_backend_exchange(b, send, 16, recv), ZO_ERR_NOMEM);
    assert_non_null(strstr(zo_backend_last_error(b), "exchange: cudaMalloc"));
    assert_int_equal(zo_backend_exchange(b, send, 16, recv), ZO_OK);
    assert_memory_equal(recv, send, 16);
    assert_int_equal(fake_get().device_allocs, dev0 + 1); /* the staging buffer */
    long ag = fake_get().allgathers;
    assert_int_equal(zo_backend_exchange(b, send, 3, recv), ZO_OK);
    assert_int_equal(fake_get().device_allocs, dev0 + 1); /* allocated once */
    assert_int_equal(fake_get().allgathers, ag + 1);
    fake_fail("ncclAllGather", 1, ncclSystemError);
    assert_int_equal(zo_backend_exchange(b, send, 16, recv), ZO_ERR_BACKEND);
    assert_non_null(strstr(zo_backend_last_error(b), "exchange: ncclAllGather"));
    fake_fail("cudaMemcpyAsync", 1, cudaErrorLaunchFailure);
    assert_int_equal(zo_backend_exchange(b, send, 16, recv), ZO_ERR_BACKEND);
    assert_non_null(strstr(zo_backend_last_error(b), "exchange: cudaMemcpyAsync"));
    fake_set_async_error(ncclRemoteError);
    assert_int_equal(zo_backend_exchange(b, send, 16, recv), ZO_ERR_BACKEND);
    fake_set_async_error(ncclSuccess);
    assert_int_equal(zo_backend_exchange(b, send, 16, recv), ZO_ERR_BACKEND); /* communicator aborted */
    zo_backend_destroy(b);
    assert_int_equal(fake_get().device_allocs, before); /* staging freed */
    fake_reset();
}

/* the mirror backend's exchange: the host world's answer (W copies in a
 * single view of W = 3), the NCCL exchange run and checked alongside */
static void test_fake_mirror_exchange(void **state) {
    (void)state;
    NEED_DEVICE();
    fake_reset();
    zo_backend *nb = make1(cfg1());
    zo_host_config hc = ZO_HOST_CONFIG_INIT;
    hc.world_size = 3;
    hc.rank = 2;
    zo_backend *hb = NULL, *mb = NULL;
    assert_int_equal(zo_backend_host_create(&hc, &hb), ZO_OK);
    assert_int_equal(zo_mirror_create(hb, nb, 0, 0, &mb), ZO_OK);
    uint8_t send[40], recv[120];
    for (int i = 0; i < 40; i++) send[i] = (uint8_t)(i * 7 + 1);
    long ag = fake_get().allgathers;
    assert_int_equal(zo_backend_exchange(mb, send, 40, recv), ZO_OK);
    for (int r = 0; r < 3; r++) assert_memory_equal(recv + r * 40, send, 40);
    assert_int_equal(fake_get().allgathers, ag + 1);
    assert_int_equal(zo_mirror_get_stats(mb).exchanges_compared, 1);
    /* a corrupted NCCL exchange is caught */
    fake_corrupt_allgather(1);
    assert_int_equal(zo_backend_exchange(mb, send, 40, recv), ZO_ERR_BACKEND);
    assert_non_null(strstr(zo_backend_last_error(mb), "mirror: exchange"));
    assert_int_equal(zo_mirror_get_stats(mb).mismatches, 1);
    zo_backend_destroy(mb);
    zo_backend_destroy(hb);
    zo_backend_destroy(nb);
    fake_reset();
}
#endif /* ZO_NCCL_FAKE */

int main(void) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        snprintf(g_count_err, sizeof g_count_err, "%s", cudaGetErrorName(e));
        n = 0;
    }
    g_ndev = n;
    const char *ex = getenv("ZO_NCCL_TEST_EXPECT_DEVICE");
    if (ex && !strcmp(ex, "1") && g_ndev <= 0) {
        fprintf(stderr, "test_backend_nccl: ZO_NCCL_TEST_EXPECT_DEVICE=1 but no CUDA device (%s)\n",
                g_count_err[0] ? g_count_err : "0 devices");
        return 1;
    }
    printf("test_backend_nccl: %d CUDA device(s)%s%s\n", g_ndev, g_count_err[0] ? ", cudaGetDeviceCount: " : "",
           g_count_err);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_validation),
        cmocka_unit_test(test_config_from_env),
        cmocka_unit_test(test_helpers_reject_other_backends),
        cmocka_unit_test(test_unique_id),
        cmocka_unit_test(test_bootstrap_file),
        cmocka_unit_test(test_nodev_create),
        cmocka_unit_test(test_nodev_create_all),
        cmocka_unit_test(test_nodev_create_file),
        cmocka_unit_test(test_nodev_create_mpi),
        cmocka_unit_test(test_dev_too_many_devices),
        cmocka_unit_test(test_dev_gather_w1),
        cmocka_unit_test(test_dev_backpressure),
        cmocka_unit_test(test_dev_bad_handles),
        cmocka_unit_test(test_dev_reduce_scatter_w1),
        cmocka_unit_test(test_dev_exchange_w1),
        cmocka_unit_test(test_dev_runtime_verify),
        cmocka_unit_test(test_dev_runtime_step),
        cmocka_unit_test(test_dev_runtime_mirror),
        cmocka_unit_test(test_dev_all_devices),
#ifdef ZO_NCCL_FAKE
        cmocka_unit_test(test_fake_stream_protocol),
        cmocka_unit_test(test_fake_backpressure_and_query),
        cmocka_unit_test(test_fake_error_mapping),
        cmocka_unit_test(test_fake_async_error),
        cmocka_unit_test(test_fake_offload_in_place),
        cmocka_unit_test(test_fake_file_bootstrap_threads),
        cmocka_unit_test(test_fake_mirror_detects_corruption),
        cmocka_unit_test(test_fake_exchange_errors),
        cmocka_unit_test(test_fake_mirror_exchange),
#endif
    };
    return cmocka_run_group_tests_name("nccl backend", tests, NULL, NULL);
}
