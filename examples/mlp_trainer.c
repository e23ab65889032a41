/*
 * mlp_trainer.c - a small ZeRO-3 training loop on libzoffload.
 *
 * A two-layer MLP (fc1: D -> HID, ReLU, fc2: HID -> OUT) learns a fixed
 * random "teacher" function by mean squared error.  Its four parameters are
 * registered with the runtime and partitioned over W data-parallel ranks;
 * every step calls the hooks in the order PyTorch fires DeepSpeed's stage-3
 * hooks: the forward gathers fc1's then fc2's parameters and releases them,
 * the backward gathers them again (pre-backward), computes the gradients,
 * reduce-scatters them to the owning shards (backend reduce_scatter, AVG),
 * and each rank applies SGD to its own shard only.  The next step's gathers
 * see the updated shards.  It prints the loss, which goes down.
 *
 *   mlp_trainer [--steps N] [--world W] [--lr LR] [--batch B] [--check]
 *               [--nccl] [--bootstrap-dir DIR] [--quiet]
 *
 * Host backend (default): W simulated ranks in this process (default 2),
 * CPU math.  The host backend's convention is that every rank sees the same
 * data, so the W ranks run the same step; each rank has its own runtime and
 * host backend (an in-process world whose shards it stores); after the
 * optimizer step the ranks' updated own shards are copied into the other
 * ranks' worlds, which is what the all-gathers of a real world would read.
 *
 * --nccl (only when built with CUDA, NCCL and cuBLAS): one process per GPU,
 * rank / world / device from the launcher (mpirun, torchrun, srun; see
 * docs/gpu.md); several ranks meet through the file bootstrap in
 * --bootstrap-dir (default /tmp, tag $ZO_NCCL_RUN_ID).  Parameters are
 * gathered by NCCL into device memory, the matmuls run on cuBLAS, the small
 * element-wise parts (bias, ReLU, loss) on the host; gradients are
 * reduce-scattered by ncclReduceScatter (device pointers) and SGD is a
 * cublasSaxpy on the device shard.  Each rank draws its own batches.
 *
 * --check: exit status 1 unless the mean loss of the last 10 steps is below
 * half of the first 10 steps' (the ctest examples/mlp_trainer).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_host_internal.h" /* zo_host_shard: the host world's shard storage */
#include "zoffload.h"
#include "zoffload_backend.h"

#ifdef ZO_EXAMPLE_NCCL
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "zoffload_nccl.h"
#endif
#ifdef ZO_NCCL_FAKE
#include "fake_control.h" /* test build against tests/nccl/fake: checks the fake's bookkeeping at exit */
#endif

enum { D = 16, HID = 32, OUT = 4, MAXW = 16, NP = 4 };
enum { P_W1 = 0, P_B1 = 1, P_W2 = 2, P_B2 = 3 };
static const uint64_t k_numel[NP] = {HID * D, HID, OUT *HID, OUT};
static const char *k_name[NP] = {"weight", "bias", "weight", "bias"};

typedef struct rank_state {
    zo_runtime *rt;
    zo_backend *be;
    zo_module_id root, fc1, fc2;
    zo_param_id p[NP];
    float *gfull[NP];  /* full gradient (workspace memory) */
    float *gshard[NP]; /* this rank's reduced shard (workspace memory) */
} rank_state;

typedef struct trainer {
    int nccl, world, nlocal, batch, steps, quiet;
    float lr;
    rank_state rs[MAXW];
    float teacher[D * OUT];
#ifdef ZO_EXAMPLE_NCCL
    cublasHandle_t blas;
#endif
} trainer;

static trainer T;

#define CHECK(rt, call)                                                                                                \
    do {                                                                                                               \
        zo_status s_ = (call);                                                                                         \
        if (s_ != ZO_OK) {                                                                                             \
            fprintf(stderr, "%s:%d: %s: %s: %s\n", __FILE__, __LINE__, #call, zo_strerror(s_),                         \
                    (rt) ? zo_last_error(rt) : "");                                                                    \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

static void die(const char *what) {
    fprintf(stderr, "mlp_trainer: %s\n", what);
    exit(1);
}

/* ------------------------------------------------------------------ */
/* Workspace memory and math: host arrays, or device arrays + cuBLAS    */
/* ------------------------------------------------------------------ */

static float *ws_alloc(size_t n) {
#ifdef ZO_EXAMPLE_NCCL
    if (T.nccl) {
        void *p = NULL;
        if (cudaMalloc(&p, n * sizeof(float)) != cudaSuccess) die("cudaMalloc failed");
        cudaMemset(p, 0, n * sizeof(float));
        return p;
    }
#endif
    float *p = calloc(n, sizeof(float));
    if (!p) die("out of memory");
    return p;
}

static void ws_free(float *p) {
#ifdef ZO_EXAMPLE_NCCL
    if (T.nccl) {
        cudaFree(p);
        return;
    }
#endif
    free(p);
}

/* host <-> workspace copies (n floats); device copies run on the legacy
 * stream, the compute stream the NCCL backend orders its waits on */
static void to_ws(float *dst, const float *src, size_t n) {
#ifdef ZO_EXAMPLE_NCCL
    if (T.nccl) {
        if (cudaMemcpy(dst, src, n * sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess)
            die("cudaMemcpy H2D failed");
        return;
    }
#endif
    memcpy(dst, src, n * sizeof(float));
}

static void from_ws(float *dst, const float *src, size_t n) {
#ifdef ZO_EXAMPLE_NCCL
    if (T.nccl) {
        if (cudaMemcpy(dst, src, n * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess)
            die("cudaMemcpy D2H failed");
        return;
    }
#endif
    memcpy(dst, src, n * sizeof(float));
}

/* row-major C[M x N] = op(A)[M x K] * op(B)[K x N]; ta/tb: operand stored
 * transposed.  All three in workspace memory. */
static void mm(int ta, int tb, int M, int N, int K, const float *A, const float *B, float *C) {
#ifdef ZO_EXAMPLE_NCCL
    if (T.nccl) {
        /* column-major view of row-major data: C^T = op(B)^T op(A)^T */
        const float one = 1.0f, zero = 0.0f;
        cublasStatus_t s = cublasSgemm(T.blas, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K,
                                       &one, B, tb ? K : N, A, ta ? M : K, &zero, C, N);
        if (s != CUBLAS_STATUS_SUCCESS) die("cublasSgemm failed");
        return;
    }
#endif
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float acc = 0.0f;
            for (int k = 0; k < K; k++) {
                float a = ta ? A[(size_t)k * M + i] : A[(size_t)i * K + k];
                float b = tb ? B[(size_t)j * K + k] : B[(size_t)k * N + j];
                acc += a * b;
            }
            C[(size_t)i * N + j] = acc;
        }
}

/* ------------------------------------------------------------------ */
/* Data and initialisation                                               */
/* ------------------------------------------------------------------ */

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static float frand(uint64_t *s) /* uniform in [-1, 1) */
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (float)((*s >> 40) & 0xFFFFFF) / 8388608.0f - 1.0f;
}

static void make_batch(uint64_t *rng, float *x, float *t, int B) {
    for (int i = 0; i < B * D; i++) x[i] = frand(rng);
    for (int b = 0; b < B; b++)
        for (int o = 0; o < OUT; o++) {
            float acc = 0.0f;
            for (int k = 0; k < D; k++) acc += x[b * D + k] * T.teacher[k * OUT + o];
            t[b * OUT + o] = tanhf(acc);
        }
}

/* writes full[0..numel) of p's initial value */
static void init_full(int p, float *full) {
    uint64_t s = 12345u + 777u * (uint64_t)p;
    float scale = p == P_W1 ? 1.0f / sqrtf((float)D) : p == P_W2 ? 1.0f / sqrtf((float)HID) : 0.0f;
    for (uint64_t i = 0; i < k_numel[p]; i++) full[i] = scale * frand(&s);
}

static uint64_t part_of(int p) { return (k_numel[p] + (uint64_t)T.world - 1) / (uint64_t)T.world; }

/* host world: rank k's shard of p as stored in rank j's in-process world */
static float *host_slot(int j, int p, int k) {
    const uint8_t *d = NULL;
    uint64_t stored = 0;
    if (zo_host_shard(T.rs[j].be, T.rs[j].p[p], k, &d, &stored) != ZO_OK || stored != part_of(p) * sizeof(float))
        die("zo_host_shard failed");
    return (float *)(uintptr_t)d;
}

/* ------------------------------------------------------------------ */
/* Setup                                                                 */
/* ------------------------------------------------------------------ */

static void register_model(rank_state *r, int rank) {
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.world_size = T.world;
    cfg.rank = rank;
    cfg.backend = r->be;
    cfg.param_persistence_threshold = 0; /* nothing stays gathered across the optimizer step */
    CHECK(NULL, zo_runtime_create(&cfg, &r->rt));
    CHECK(r->rt, zo_module_register(r->rt, ZO_NO_MODULE, "mlp", 0, &r->root));
    CHECK(r->rt, zo_module_register(r->rt, r->root, "fc1", 0, &r->fc1));
    CHECK(r->rt, zo_module_register(r->rt, r->root, "fc2", 0, &r->fc2));
    for (int p = 0; p < NP; p++) {
        zo_module_id owner = p < 2 ? r->fc1 : r->fc2;
        CHECK(r->rt, zo_param_register(r->rt, owner, k_name[p], k_numel[p], sizeof(float), 0, &r->p[p]));
        r->gfull[p] = ws_alloc(k_numel[p]);
        r->gshard[p] = ws_alloc(part_of(p));
    }
}

static void setup_host(void) {
    T.nlocal = T.world;
    for (int k = 0; k < T.world; k++) {
        zo_host_config hc = ZO_HOST_CONFIG_INIT;
        hc.world_size = T.world;
        hc.rank = k;
        CHECK(NULL, zo_backend_host_create(&hc, &T.rs[k].be));
        register_model(&T.rs[k], k);
    }
    /* initial values: every slot of every in-process world */
    for (int p = 0; p < NP; p++) {
        uint64_t part = part_of(p);
        float *full = calloc(part * (uint64_t)T.world, sizeof(float)); /* zero padding */
        if (!full) die("out of memory");
        init_full(p, full);
        for (int j = 0; j < T.world; j++)
            for (int k = 0; k < T.world; k++)
                memcpy(host_slot(j, p, k), full + (uint64_t)k * part, part * sizeof(float));
        free(full);
    }
}

#ifdef ZO_EXAMPLE_NCCL
static int setup_nccl(const char *dir) {
    zo_nccl_config nc = ZO_NCCL_CONFIG_INIT;
    nc.init = ZO_NCCL_INIT_ZERO;
    nc.reduce_op = ZO_REDUCE_AVG;
    CHECK(NULL, zo_nccl_config_from_env(&nc));
    zo_status s = nc.world_size > 1 ? zo_backend_nccl_create_file(&nc, dir, NULL, &T.rs[0].be)
                                    : zo_backend_nccl_create_all(&nc, 1, NULL, &T.rs[0].be);
    if (s) {
        fprintf(stderr, "mlp_trainer: NCCL backend: %s: %s\n", zo_strerror(s), zo_nccl_create_error());
        return s == ZO_ERR_NO_DEVICE ? 2 : 1;
    }
    zo_backend *b = T.rs[0].be;
    T.world = b->ops->world_size(b->ctx);
    T.nlocal = 1;
    if (cudaSetDevice(zo_nccl_device(b)) != cudaSuccess || cublasCreate(&T.blas) != CUBLAS_STATUS_SUCCESS)
        die("cuBLAS initialisation failed");
    register_model(&T.rs[0], b->ops->rank(b->ctx));
    int rank = b->ops->rank(b->ctx);
    for (int p = 0; p < NP; p++) {
        uint64_t part = part_of(p);
        float *full = calloc(part * (uint64_t)T.world, sizeof(float));
        if (!full) die("out of memory");
        init_full(p, full);
        CHECK(T.rs[0].rt, zo_nccl_shard_upload(b, T.rs[0].p[p], 0, full + (uint64_t)rank * part, part * sizeof(float)));
        free(full);
    }
    return 0;
}
#endif

/* ------------------------------------------------------------------ */
/* One training step of one rank                                         */
/* ------------------------------------------------------------------ */

static const float *param(rank_state *r, zo_module_id m, int p) {
    const void *d = NULL;
    CHECK(r->rt, zo_param_access(r->rt, m, r->p[p], &d, NULL));
    return d;
}

static void reduce(rank_state *r, int p) {
    zo_status s;
#ifdef ZO_EXAMPLE_NCCL
    if (T.nccl)
        s = zo_nccl_reduce_grads(r->be, r->p[p], r->gfull[p], r->gshard[p], k_numel[p], part_of(p));
    else
#endif
        s = zo_backend_reduce_scatter(r->be, r->p[p], r->gfull[p], r->gshard[p], k_numel[p], part_of(p), ZO_REDUCE_AVG);
    if (s) {
        const char *m = zo_backend_last_error(r->be);
        fprintf(stderr, "mlp_trainer: reduce_scatter: %s: %s\n", zo_strerror(s), m ? m : "");
        exit(1);
    }
    CHECK(r->rt, zo_param_grad_ready(r->rt, r->p[p]));
}

static float step_rank(int k, const float *x, const float *t) {
    rank_state *r = &T.rs[k];
    zo_runtime *rt = r->rt;
    const int B = T.batch;
    static float h[1024 * HID], y[1024 * OUT], dy[1024 * OUT], dh[1024 * HID], hb[HID], ob[OUT], db[HID];
    float *xw = ws_alloc((size_t)B * D), *hw = ws_alloc((size_t)B * HID), *yw = ws_alloc((size_t)B * OUT);
    float *dyw = ws_alloc((size_t)B * OUT), *dhw = ws_alloc((size_t)B * HID);
    uint8_t no = 0, yes = 1;
    zo_graph g;
    zo_grad_handle root_in, fc1_in, fc2_in, fc1_out, fc2_out, root_out;

    /* ---- forward ---- */
    CHECK(rt, zo_forward_begin(rt, ZO_FWD_ROOT, &g));
    CHECK(rt, zo_pre_forward(rt, r->root, ZO_CALL_GRAD));
    CHECK(rt, zo_track_inputs(rt, r->root, 1, &no, &root_in)); /* x does not require grad */
    CHECK(rt, zo_pre_forward(rt, r->fc1, ZO_CALL_GRAD));       /* gathers fc1.weight, fc1.bias */
    CHECK(rt, zo_track_inputs(rt, r->fc1, 1, &no, &fc1_in));
    to_ws(xw, x, (size_t)B * D);
    mm(0, 1, B, HID, D, xw, param(r, r->fc1, P_W1), hw); /* x W1^T */
    from_ws(h, hw, (size_t)B * HID);
    from_ws(hb, param(r, r->fc1, P_B1), HID);
    for (int i = 0; i < B * HID; i++) {
        float v = h[i] + hb[i % HID];
        h[i] = v > 0.0f ? v : 0.0f;
    }
    CHECK(rt, zo_post_forward(rt, r->fc1)); /* releases fc1's parameters */
    CHECK(rt, zo_track_outputs(rt, r->fc1, 1, &yes, &fc1_out));
    CHECK(rt, zo_pre_forward(rt, r->fc2, ZO_CALL_GRAD));
    CHECK(rt, zo_track_inputs(rt, r->fc2, 1, &yes, &fc2_in)); /* h requires grad: a window */
    to_ws(hw, h, (size_t)B * HID);
    mm(0, 1, B, OUT, HID, hw, param(r, r->fc2, P_W2), yw); /* h W2^T */
    from_ws(y, yw, (size_t)B * OUT);
    from_ws(ob, param(r, r->fc2, P_B2), OUT);
    float loss = 0.0f;
    for (int i = 0; i < B * OUT; i++) {
        y[i] += ob[i % OUT];
        float e = y[i] - t[i];
        loss += 0.5f * e * e / (float)B;
        dy[i] = e / (float)B;
    }
    CHECK(rt, zo_post_forward(rt, r->fc2));
    CHECK(rt, zo_track_outputs(rt, r->fc2, 1, &yes, &fc2_out));
    CHECK(rt, zo_post_forward(rt, r->root));
    CHECK(rt, zo_track_outputs(rt, r->root, 1, &yes, &root_out));
    CHECK(rt, zo_forward_end(rt, g));

    /* ---- backward, autograd engine order ---- */
    CHECK(rt, zo_backward_begin(rt, g, 0));
    CHECK(rt, zo_output_grad(rt, root_out));
    CHECK(rt, zo_output_grad(rt, fc2_out)); /* pre-backward of fc2: gathers fc2 again */
    to_ws(dyw, dy, (size_t)B * OUT);
    mm(1, 0, OUT, HID, B, dyw, hw, r->gfull[P_W2]); /* dW2 = dy^T h */
    memset(ob, 0, sizeof ob);
    for (int i = 0; i < B * OUT; i++) ob[i % OUT] += dy[i];
    to_ws(r->gfull[P_B2], ob, OUT);
    mm(0, 0, B, HID, OUT, dyw, param(r, r->fc2, P_W2), dhw); /* dh = dy W2 */
    reduce(r, P_W2);                                         /* reduce-scatter, then the post-accumulate-grad hook */
    reduce(r, P_B2);                                         /* fc2's trainable parameters are all ready: released */
    CHECK(rt, zo_input_grad(rt, fc2_in));
    from_ws(dh, dhw, (size_t)B * HID);
    memset(db, 0, sizeof db);
    for (int i = 0; i < B * HID; i++) {
        if (h[i] <= 0.0f) dh[i] = 0.0f; /* ReLU */
        db[i % HID] += dh[i];
    }
    CHECK(rt, zo_output_grad(rt, fc1_out)); /* pre-backward of fc1: gathers fc1 */
    to_ws(dhw, dh, (size_t)B * HID);
    mm(1, 0, HID, D, B, dhw, xw, r->gfull[P_W1]); /* dW1 = dh^T x */
    to_ws(r->gfull[P_B1], db, HID);
    reduce(r, P_W1);
    reduce(r, P_B1);
    CHECK(rt, zo_backward_end(rt, g));

    /* ---- optimizer: SGD on this rank's shards only ---- */
    for (int p = 0; p < NP; p++) {
        uint64_t part = part_of(p);
#ifdef ZO_EXAMPLE_NCCL
        if (T.nccl) {
            void *shard = NULL;
            CHECK(rt, zo_nccl_shard(r->be, r->p[p], &shard, NULL, NULL));
            float alpha = -T.lr;
            if (cublasSaxpy(T.blas, (int)part, &alpha, r->gshard[p], 1, shard, 1) != CUBLAS_STATUS_SUCCESS)
                die("cublasSaxpy failed");
            continue;
        }
#endif
        float *shard = host_slot(k, p, k);
        for (uint64_t i = 0; i < part; i++) shard[i] -= T.lr * r->gshard[p][i];
    }
#ifdef ZO_EXAMPLE_NCCL
    if (T.nccl) CHECK(rt, zo_nccl_mark_shards_written(r->be)); /* the next all-gather waits for the saxpys */
#endif
    CHECK(rt, zo_release_all(rt));
    ws_free(xw);
    ws_free(hw);
    ws_free(yw);
    ws_free(dyw);
    ws_free(dhw);
    return loss;
}

/* host world: rank k's updated shard k reaches every other in-process world */
static void exchange_host_shards(void) {
    for (int p = 0; p < NP; p++)
        for (int k = 0; k < T.world; k++)
            for (int j = 0; j < T.world; j++)
                if (j != k) memcpy(host_slot(j, p, k), host_slot(k, p, k), part_of(p) * sizeof(float));
}

int main(int argc, char **argv) {
    int check = 0;
    const char *dir = "/tmp";
    T.world = 2;
    T.steps = 300;
    T.batch = 32;
    T.lr = 0.1f;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--steps") && i + 1 < argc)
            T.steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--world") && i + 1 < argc)
            T.world = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--lr") && i + 1 < argc)
            T.lr = (float)atof(argv[++i]);
        else if (!strcmp(argv[i], "--batch") && i + 1 < argc)
            T.batch = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--bootstrap-dir") && i + 1 < argc)
            dir = argv[++i];
        else if (!strcmp(argv[i], "--check"))
            check = 1;
        else if (!strcmp(argv[i], "--quiet"))
            T.quiet = 1;
        else if (!strcmp(argv[i], "--nccl"))
            T.nccl = 1;
        else {
            fprintf(stderr, "usage: mlp_trainer [--steps N] [--world W] [--lr LR] [--batch B] [--check] [--nccl] "
                            "[--bootstrap-dir DIR] [--quiet]\n");
            return 2;
        }
    }
    if (T.steps < 20 || T.world < 1 || T.world > MAXW || T.batch < 1 || T.batch > 1024)
        die("--steps >= 20, --world 1..16, --batch 1..1024");
    uint64_t trng = 42;
    for (int i = 0; i < D * OUT; i++) T.teacher[i] = 1.5f * frand(&trng);

    int rank = 0;
    if (T.nccl) {
#ifdef ZO_EXAMPLE_NCCL
        int rc = setup_nccl(dir);
        if (rc) return rc;
        rank = T.rs[0].be->ops->rank(T.rs[0].be->ctx);
        g_rng ^= 0x1000193ull * (uint64_t)(rank + 1); /* data parallel: each rank its own batches */
#else
        (void)dir;
        die("--nccl: this build has no NCCL backend (configure with CUDA and NCCL found, see docs/gpu.md)");
#endif
    } else {
        setup_host();
    }
    if (!T.quiet && rank == 0)
        printf("mlp_trainer: %s backend, world %d, MLP %d-%d-%d, batch %d, lr %g, %d steps\n", T.nccl ? "nccl" : "host",
               T.world, D, HID, OUT, T.batch, (double)T.lr, T.steps);

    float *x = malloc(sizeof(float) * (size_t)T.batch * D), *t = malloc(sizeof(float) * (size_t)T.batch * OUT);
    if (!x || !t) die("out of memory");
    double first = 0, last = 0;
    for (int s = 0; s < T.steps; s++) {
        make_batch(&g_rng, x, t, T.batch);
        float loss = 0.0f;
        for (int k = 0; k < T.nlocal; k++)
            loss = step_rank(k, x, t); /* host world: identical data, identical loss on every rank */
        if (!T.nccl) exchange_host_shards();
        if (s < 10) first += loss / 10.0;
        if (s >= T.steps - 10) last += loss / 10.0;
        if (!T.quiet && rank == 0 && (s % 25 == 0 || s == T.steps - 1))
            printf("step %4d  loss %.5f\n", s, (double)loss);
    }
    zo_stats st;
    CHECK(T.rs[0].rt, zo_get_stats(T.rs[0].rt, &st));
    if (rank == 0)
        printf("mlp_trainer: mean loss first 10 steps %.5f, last 10 steps %.5f; rank 0: %llu all-gathers, "
               "%llu releases, peak %llu live elements\n",
               first, last, (unsigned long long)st.gathers, (unsigned long long)st.releases,
               (unsigned long long)st.peak_live_numel);
    for (int k = 0; k < T.nlocal; k++) {
        CHECK(T.rs[k].rt, zo_runtime_destroy(T.rs[k].rt));
        for (int p = 0; p < NP; p++) {
            ws_free(T.rs[k].gfull[p]);
            ws_free(T.rs[k].gshard[p]);
        }
        zo_backend_destroy(T.rs[k].be);
    }
#ifdef ZO_EXAMPLE_NCCL
    if (T.nccl) cublasDestroy(T.blas);
#endif
    free(x);
    free(t);
#ifdef ZO_NCCL_FAKE
    fake_counters fc = fake_get();
    if (fc.misuse || fc.bad_frees || fc.device_allocs || fc.pinned_allocs || fc.comms || fc.streams || fc.events) {
        fprintf(stderr,
                "mlp_trainer: fake CUDA: misuse %ld, bad frees %ld, left: %ld device, %ld pinned, %ld comms, "
                "%ld streams, %ld events\n",
                fc.misuse, fc.bad_frees, fc.device_allocs, fc.pinned_allocs, fc.comms, fc.streams, fc.events);
        return 1;
    }
#endif
    if (check && !(last < 0.5 * first)) {
        fprintf(stderr, "mlp_trainer: --check failed: the loss did not halve (%.5f -> %.5f)\n", first, last);
        return 1;
    }
    return 0;
}
