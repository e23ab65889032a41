/*
 * fake_cuda.c - host implementation of the fake CUDA runtime and NCCL in
 * this directory (tests only; see cuda_runtime_api.h).
 * NCCL worlds of several ranks live in one process, one thread per rank
 * (ncclCommInitAll, or ncclCommInitRank from several threads with one
 * unique id): every collective is a rendezvous of the world's threads
 * (pthread barrier), after which each rank copies (all-gather) or sums
 * (reduce-scatter) what it needs from the peers' buffers.
 *
 * Memory: "device" allocations are malloc'ed and registered, so
 * cudaPointerGetAttributes tells device from pinned from plain host memory,
 * and a free of an unknown pointer is an error (counted), never a crash.
 * Streams execute every operation immediately; an event may be made to look
 * incomplete for its first k queries (fake_set_event_delay).  Counters and
 * the allocation registry are mutex-protected; fault injection and event
 * delays are meant for single-threaded tests.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_control.h"

struct fake_stream {
    int flags;
};
struct fake_event {
    int pending;
};
struct fake_pool {
    int device;
};
typedef struct fake_world {
    int n, joined, refs;
    char uid[NCCL_UNIQUE_ID_BYTES];
    pthread_barrier_t bar;
    const void **send;
    void **recv;
    struct fake_world *next;
} fake_world;
struct fake_comm {
    int rank, nranks, aborted;
    fake_world *w;
};
static fake_world *g_worlds;

typedef struct alloc_rec {
    void *p;
    size_t bytes;
    int kind; /* 1 device, 2 pinned host */
    struct alloc_rec *next;
} alloc_rec;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static alloc_rec *g_allocs;
static fake_counters g_c;
static int g_ndev = -1, g_event_delay, g_corrupt;
static ncclResult_t g_async;
static cudaError_t g_last;
static unsigned g_uid;
static struct {
    char fn[64];
    int n;
    int err;
} g_inj[8];

fake_counters fake_get(void) { return g_c; }

void fake_reset(void) {
    long dev = g_c.device_allocs, pin = g_c.pinned_allocs, st = g_c.streams, ev = g_c.events, po = g_c.pools,
         co = g_c.comms;
    memset(&g_c, 0, sizeof g_c);
    /* live-object counts stay meaningful across a reset */
    g_c.device_allocs = dev;
    g_c.pinned_allocs = pin;
    g_c.streams = st;
    g_c.events = ev;
    g_c.pools = po;
    g_c.comms = co;
    memset(g_inj, 0, sizeof g_inj);
    g_event_delay = 0;
    g_corrupt = 0;
    g_async = ncclSuccess;
}

void fake_set_device_count(int n) { g_ndev = n; }
void fake_set_event_delay(int k) { g_event_delay = k; }
void fake_corrupt_allgather(int n) { g_corrupt = n; }
void fake_set_async_error(ncclResult_t r) { g_async = r; }

void fake_fail(const char *fn, int n, int err) {
    for (size_t i = 0; i < sizeof g_inj / sizeof g_inj[0]; i++)
        if (!g_inj[i].n) {
            snprintf(g_inj[i].fn, sizeof g_inj[i].fn, "%s", fn);
            g_inj[i].n = n;
            g_inj[i].err = err;
            return;
        }
}

/* 0, or the injected error for this call of fn */
static int inj(const char *fn) {
    for (size_t i = 0; i < sizeof g_inj / sizeof g_inj[0]; i++)
        if (g_inj[i].n && !strcmp(g_inj[i].fn, fn) && --g_inj[i].n == 0) return g_inj[i].err;
    return 0;
}

#define CNT(stmt)                                                                                                      \
    do {                                                                                                               \
        pthread_mutex_lock(&g_mu);                                                                                     \
        stmt;                                                                                                          \
        pthread_mutex_unlock(&g_mu);                                                                                   \
    } while (0)

#define INJ_CUDA(fn)                                                                                                   \
    do {                                                                                                               \
        int e_ = inj(fn);                                                                                              \
        if (e_) return g_last = (cudaError_t)e_;                                                                       \
    } while (0)
#define INJ_NCCL(fn)                                                                                                   \
    do {                                                                                                               \
        int e_ = inj(fn);                                                                                              \
        if (e_) return (ncclResult_t)e_;                                                                               \
    } while (0)

static void reg(void *p, size_t bytes, int kind) {
    alloc_rec *r = malloc(sizeof *r);
    if (!r) abort();
    r->p = p;
    r->bytes = bytes;
    r->kind = kind;
    pthread_mutex_lock(&g_mu);
    r->next = g_allocs;
    g_allocs = r;
    if (kind == 1)
        g_c.device_allocs++;
    else
        g_c.pinned_allocs++;
    pthread_mutex_unlock(&g_mu);
}

static int find(const void *p, int *kind) {
    int found = 0;
    pthread_mutex_lock(&g_mu);
    for (alloc_rec *r = g_allocs; r; r = r->next)
        if ((const char *)p >= (const char *)r->p && (const char *)p < (const char *)r->p + (r->bytes ? r->bytes : 1)) {
            *kind = r->kind;
            found = 1;
            break;
        }
    pthread_mutex_unlock(&g_mu);
    return found;
}

static int unreg(void *p, int kind) {
    int ok = 0;
    pthread_mutex_lock(&g_mu);
    for (alloc_rec **l = &g_allocs; *l; l = &(*l)->next)
        if ((*l)->p == p && (*l)->kind == kind) {
            alloc_rec *r = *l;
            *l = r->next;
            free(r);
            if (kind == 1)
                g_c.device_allocs--;
            else
                g_c.pinned_allocs--;
            ok = 1;
            break;
        }
    if (!ok) g_c.bad_frees++;
    pthread_mutex_unlock(&g_mu);
    return ok;
}

/* ------------------------------------------------------------------ */
/* CUDA runtime                                                         */
/* ------------------------------------------------------------------ */

const char *cudaGetErrorName(cudaError_t e) {
    switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInsufficientDriver: return "cudaErrorInsufficientDriver";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    default: return "cudaErrorUnknown";
    }
}

const char *cudaGetErrorString(cudaError_t e) {
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInsufficientDriver: return "CUDA driver version is insufficient for CUDA runtime version";
    default: return "fake CUDA error";
    }
}

cudaError_t cudaGetLastError(void) {
    cudaError_t e = g_last;
    g_last = cudaSuccess;
    return e;
}

cudaError_t cudaGetDeviceCount(int *count) {
    INJ_CUDA("cudaGetDeviceCount");
    if (g_ndev < 0) {
        const char *v = getenv("FAKE_CUDA_NDEV");
        g_ndev = v && *v ? atoi(v) : 1;
    }
    *count = g_ndev;
    return g_ndev > 0 ? cudaSuccess : (g_last = cudaErrorNoDevice);
}

cudaError_t cudaSetDevice(int device) {
    INJ_CUDA("cudaSetDevice");
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || device < 0 || device >= n) return g_last = cudaErrorInvalidDevice;
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }

cudaError_t cudaMalloc(void **p, size_t bytes) {
    INJ_CUDA("cudaMalloc");
    *p = malloc(bytes ? bytes : 1);
    if (!*p) return g_last = cudaErrorMemoryAllocation;
    reg(*p, bytes, 1);
    return cudaSuccess;
}

cudaError_t cudaFree(void *p) {
    if (!p) return cudaSuccess;
    if (!unreg(p, 1)) return g_last = cudaErrorInvalidValue;
    free(p);
    return cudaSuccess;
}

cudaError_t cudaHostAlloc(void **p, size_t bytes, unsigned int flags) {
    (void)flags;
    INJ_CUDA("cudaHostAlloc");
    *p = malloc(bytes ? bytes : 1);
    if (!*p) return g_last = cudaErrorMemoryAllocation;
    reg(*p, bytes, 2);
    return cudaSuccess;
}

cudaError_t cudaFreeHost(void *p) {
    if (!p) return cudaSuccess;
    if (!unreg(p, 2)) return g_last = cudaErrorInvalidValue;
    free(p);
    return cudaSuccess;
}

cudaError_t cudaMemset(void *p, int v, size_t bytes) {
    INJ_CUDA("cudaMemset");
    memset(p, v, bytes);
    return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *p, int v, size_t bytes, cudaStream_t s) {
    (void)s;
    INJ_CUDA("cudaMemsetAsync");
    memset(p, v, bytes);
    return cudaSuccess;
}

static cudaError_t check_kind(const void *dst, const void *src, enum cudaMemcpyKind k) {
    int kd = 0, ks = 0;
    int dd = find(dst, &kd) && kd == 1, sd = find(src, &ks) && ks == 1;
    int want_dd = k == cudaMemcpyHostToDevice || k == cudaMemcpyDeviceToDevice;
    int want_sd = k == cudaMemcpyDeviceToHost || k == cudaMemcpyDeviceToDevice;
    if (k != cudaMemcpyDefault && (dd != want_dd || sd != want_sd)) {
        CNT(g_c.misuse++); /* a real GPU would fault or copy garbage */
        return g_last = cudaErrorInvalidValue;
    }
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind k) {
    INJ_CUDA("cudaMemcpy");
    if (check_kind(dst, src, k)) return g_last;
    memmove(dst, src, bytes);
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind k, cudaStream_t s) {
    (void)s;
    INJ_CUDA("cudaMemcpyAsync");
    if (check_kind(dst, src, k)) return g_last;
    memmove(dst, src, bytes);
    return cudaSuccess;
}

cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *a, const void *p) {
    int kind = 0;
    memset(a, 0, sizeof *a);
    if (find(p, &kind))
        a->type = kind == 1 ? cudaMemoryTypeDevice : cudaMemoryTypeHost;
    else
        a->type = cudaMemoryTypeUnregistered;
    return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags) {
    INJ_CUDA("cudaStreamCreateWithFlags");
    *s = calloc(1, sizeof **s);
    if (!*s) return g_last = cudaErrorMemoryAllocation;
    (*s)->flags = (int)flags;
    CNT(g_c.streams++);
    return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t s) {
    if (!s) return g_last = cudaErrorInvalidValue;
    free(s);
    CNT(g_c.streams--);
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s) {
    (void)s;
    INJ_CUDA("cudaStreamSynchronize");
    return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int flags) {
    (void)flags;
    INJ_CUDA("cudaStreamWaitEvent");
    if (!e) return g_last = cudaErrorInvalidValue;
    CNT(g_c.stream_waits++);
    if (!s) CNT(g_c.waits_on_legacy++);
    return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags) {
    (void)flags;
    INJ_CUDA("cudaEventCreateWithFlags");
    *e = calloc(1, sizeof **e);
    if (!*e) return g_last = cudaErrorMemoryAllocation;
    CNT(g_c.events++);
    return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t e) {
    if (!e) return g_last = cudaErrorInvalidValue;
    free(e);
    CNT(g_c.events--);
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
    (void)s;
    INJ_CUDA("cudaEventRecord");
    if (!e) return g_last = cudaErrorInvalidValue;
    e->pending = g_event_delay;
    return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t e) {
    INJ_CUDA("cudaEventQuery");
    if (!e) return g_last = cudaErrorInvalidValue;
    if (e->pending > 0) {
        e->pending--;
        return cudaErrorNotReady;
    }
    return cudaSuccess;
}

cudaError_t cudaMemPoolCreate(cudaMemPool_t *pool, const struct cudaMemPoolProps *props) {
    INJ_CUDA("cudaMemPoolCreate");
    if (props->allocType != cudaMemAllocationTypePinned || props->location.type != cudaMemLocationTypeDevice)
        return g_last = cudaErrorInvalidValue;
    *pool = calloc(1, sizeof **pool);
    if (!*pool) return g_last = cudaErrorMemoryAllocation;
    (*pool)->device = props->location.id;
    CNT(g_c.pools++);
    return cudaSuccess;
}

cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool) {
    free(pool);
    CNT(g_c.pools--);
    return cudaSuccess;
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attr, void *value) {
    (void)pool;
    (void)value;
    return attr == cudaMemPoolAttrReleaseThreshold ? cudaSuccess : (g_last = cudaErrorInvalidValue);
}

cudaError_t cudaMallocFromPoolAsync(void **p, size_t bytes, cudaMemPool_t pool, cudaStream_t s) {
    (void)pool;
    (void)s;
    INJ_CUDA("cudaMallocFromPoolAsync");
    return cudaMalloc(p, bytes);
}

cudaError_t cudaFreeAsync(void *p, cudaStream_t s) {
    INJ_CUDA("cudaFreeAsync");
    CNT(g_c.frees_async++; g_c.last_free_stream = s);
    return cudaFree(p);
}

/* ------------------------------------------------------------------ */
/* NCCL: worlds of threads                                              */
/* ------------------------------------------------------------------ */

const char *ncclGetErrorString(ncclResult_t r) {
    switch (r) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    default: return "fake nccl error";
    }
}

const char *ncclGetLastError(ncclComm_t comm) {
    (void)comm;
    return "fake NCCL last error";
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
    INJ_NCCL("ncclGetUniqueId");
    memset(id, 0, sizeof *id);
    snprintf(id->internal, sizeof id->internal, "fake-uid-%u", ++g_uid);
    return ncclSuccess;
}

static fake_world *world_new(int n) {
    fake_world *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->n = n;
    w->send = calloc((size_t)n, sizeof *w->send);
    w->recv = calloc((size_t)n, sizeof *w->recv);
    if (!w->send || !w->recv || pthread_barrier_init(&w->bar, NULL, (unsigned)n)) {
        free(w->send);
        free(w->recv);
        free(w);
        return NULL;
    }
    return w;
}

static void world_unref(fake_world *w) {
    pthread_mutex_lock(&g_mu);
    int last = --w->refs == 0;
    if (last)
        for (fake_world **l = &g_worlds; *l; l = &(*l)->next)
            if (*l == w) {
                *l = w->next;
                break;
            }
    pthread_mutex_unlock(&g_mu);
    if (last) {
        pthread_barrier_destroy(&w->bar);
        free(w->send);
        free(w->recv);
        free(w);
    }
}

static ncclResult_t new_comm(ncclComm_t *c, fake_world *w, int rank) {
    *c = calloc(1, sizeof **c);
    if (!*c) return ncclSystemError;
    (*c)->nranks = w->n;
    (*c)->rank = rank;
    (*c)->w = w;
    pthread_mutex_lock(&g_mu);
    g_c.comms++;
    pthread_mutex_unlock(&g_mu);
    return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank) {
    INJ_NCCL("ncclCommInitRank");
    if (nranks < 1 || rank < 0 || rank >= nranks) return ncclInvalidArgument;
    /* ranks of one world meet by unique id (threads of this process) */
    pthread_mutex_lock(&g_mu);
    fake_world *w = g_worlds;
    while (w && (memcmp(w->uid, id.internal, sizeof w->uid) || w->joined == w->n)) w = w->next;
    if (!w) {
        w = world_new(nranks);
        if (!w) {
            pthread_mutex_unlock(&g_mu);
            return ncclSystemError;
        }
        memcpy(w->uid, id.internal, sizeof w->uid);
        w->next = g_worlds;
        g_worlds = w;
    }
    if (w->n != nranks) {
        pthread_mutex_unlock(&g_mu);
        return ncclInvalidUsage;
    }
    w->joined++;
    w->refs++;
    pthread_mutex_unlock(&g_mu);
    pthread_barrier_wait(&w->bar); /* init is collective */
    return new_comm(comm, w, rank);
}

ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist) {
    (void)devlist;
    INJ_NCCL("ncclCommInitAll");
    if (ndev < 1) return ncclInvalidArgument;
    fake_world *w = world_new(ndev);
    if (!w) return ncclSystemError;
    w->joined = w->refs = ndev;
    for (int i = 0; i < ndev; i++)
        if (new_comm(&comms[i], w, i) != ncclSuccess) return ncclSystemError;
    return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
    if (!comm || comm->aborted) {
        g_c.misuse++;
        return ncclInvalidArgument;
    }
    world_unref(comm->w);
    free(comm);
    pthread_mutex_lock(&g_mu);
    g_c.comms--;
    pthread_mutex_unlock(&g_mu);
    return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
    if (!comm) {
        g_c.misuse++;
        return ncclInvalidArgument;
    }
    world_unref(comm->w);
    free(comm);
    pthread_mutex_lock(&g_mu);
    g_c.comms--;
    g_c.aborted_comms++;
    pthread_mutex_unlock(&g_mu);
    return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *async) {
    if (!comm) {
        g_c.misuse++;
        return ncclInvalidArgument;
    }
    *async = g_async;
    return ncclSuccess;
}

static _Thread_local int t_group_depth;

ncclResult_t ncclGroupStart(void) {
    INJ_NCCL("ncclGroupStart");
    t_group_depth++;
    pthread_mutex_lock(&g_mu);
    g_c.group_depth++;
    pthread_mutex_unlock(&g_mu);
    return ncclSuccess;
}

ncclResult_t ncclGroupEnd(void) {
    pthread_mutex_lock(&g_mu);
    int bad = t_group_depth <= 0;
    if (bad) {
        g_c.misuse++;
    } else {
        t_group_depth--;
        g_c.group_depth--;
        g_c.groups++;
    }
    pthread_mutex_unlock(&g_mu);
    if (bad) return ncclInvalidUsage;
    INJ_NCCL("ncclGroupEnd");
    return ncclSuccess;
}

static size_t tsize(ncclDataType_t t) { return t == ncclFloat32 || t == ncclInt32 ? 4 : 1; }

static int coll_args_ok(const void *send, void *recv, ncclComm_t comm) {
    int k1 = 0, k2 = 0;
    int ok = comm && !comm->aborted && find(send, &k1) && k1 == 1 && find(recv, &k2) && k2 == 1;
    if (!ok) {
        pthread_mutex_lock(&g_mu);
        g_c.misuse++; /* NCCL needs device buffers */
        pthread_mutex_unlock(&g_mu);
    }
    return ok;
}

/* all-gather: rank r's count elements land at r * count in every recv */
ncclResult_t ncclAllGather(const void *send, void *recv, size_t count, ncclDataType_t t, ncclComm_t comm,
                           cudaStream_t s) {
    (void)s;
    INJ_NCCL("ncclAllGather");
    if (!coll_args_ok(send, recv, comm)) return ncclInvalidArgument;
    fake_world *w = comm->w;
    size_t bytes = count * tsize(t);
    /* NCCL: send is either exactly recv + rank * bytes (in place) or does not
     * overlap recv at all */
    const char *sb = send, *rb = recv;
    if (sb != rb + (size_t)comm->rank * bytes && sb < rb + bytes * (size_t)w->n && rb < sb + bytes) {
        CNT(g_c.misuse++);
        return ncclInvalidArgument;
    }
    w->send[comm->rank] = send;
    w->recv[comm->rank] = recv;
    pthread_barrier_wait(&w->bar);
    for (int p = 0; p < w->n; p++) memmove((char *)recv + (size_t)p * bytes, w->send[p], bytes);
    pthread_barrier_wait(&w->bar); /* nobody leaves while a peer still reads its send buffer */
    pthread_mutex_lock(&g_mu);
    g_c.allgathers++;
    if (g_corrupt > 0 && --g_corrupt == 0 && bytes * (size_t)w->n > 0)
        ((unsigned char *)recv)[(bytes * (size_t)w->n) / 2] ^= 0x40;
    pthread_mutex_unlock(&g_mu);
    return ncclSuccess;
}

/* reduce-scatter: rank r's recv[i] = op over p of send_p[r * count + i] */
ncclResult_t ncclReduceScatter(const void *send, void *recv, size_t count, ncclDataType_t t, ncclRedOp_t op,
                               ncclComm_t comm, cudaStream_t s) {
    (void)s;
    INJ_NCCL("ncclReduceScatter");
    if (!coll_args_ok(send, recv, comm) || t != ncclFloat32 || (op != ncclSum && op != ncclAvg))
        return ncclInvalidArgument;
    fake_world *w = comm->w;
    w->send[comm->rank] = send;
    pthread_barrier_wait(&w->bar);
    float *out = recv;
    for (size_t i = 0; i < count; i++) {
        float acc = 0.0f;
        for (int p = 0; p < w->n; p++) acc += ((const float *)w->send[p])[(size_t)comm->rank * count + i];
        out[i] = op == ncclAvg ? acc / (float)w->n : acc;
    }
    pthread_barrier_wait(&w->bar);
    pthread_mutex_lock(&g_mu);
    g_c.reduce_scatters++;
    pthread_mutex_unlock(&g_mu);
    return ncclSuccess;
}

/* ------------------------------------------------------------------ */
/* cuBLAS (column-major, host loops on "device" memory)                 */
/* ------------------------------------------------------------------ */

#include "cublas_v2.h"

struct fake_blas {
    int unused;
};

static int is_dev(const void *p) {
    int k = 0;
    return find(p, &k) && k == 1;
}

cublasStatus_t cublasCreate(cublasHandle_t *h) {
    *h = calloc(1, sizeof **h);
    return *h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasDestroy(cublasHandle_t h) {
    free(h);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                           const float *alpha, const float *A, int lda, const float *B, int ldb, const float *beta,
                           float *C, int ldc) {
    if (!h || !is_dev(A) || !is_dev(B) || !is_dev(C) || lda < (ta ? k : m) || ldb < (tb ? n : k) || ldc < m) {
        g_c.misuse++;
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            float acc = 0.0f;
            for (int l = 0; l < k; l++) {
                float a = ta == CUBLAS_OP_N ? A[i + (size_t)l * lda] : A[l + (size_t)i * lda];
                float b = tb == CUBLAS_OP_N ? B[l + (size_t)j * ldb] : B[j + (size_t)l * ldb];
                acc += a * b;
            }
            C[i + (size_t)j * ldc] = *alpha * acc + (*beta != 0.0f ? *beta * C[i + (size_t)j * ldc] : 0.0f);
        }
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSaxpy(cublasHandle_t h, int n, const float *alpha, const float *x, int incx, float *y, int incy) {
    if (!h || !is_dev(x) || !is_dev(y)) {
        g_c.misuse++;
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    for (int i = 0; i < n; i++) y[(size_t)i * incy] += *alpha * x[(size_t)i * incx];
    return CUBLAS_STATUS_SUCCESS;
}
