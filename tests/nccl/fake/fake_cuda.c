/*
 * fake_cuda.c - host implementation of the fake CUDA runtime and NCCL in
 * this directory (tests only; see cuda_runtime_api.h).
 *
 * Memory: "device" allocations are malloc'ed and registered, so
 * cudaPointerGetAttributes tells device from pinned from plain host memory,
 * and a free of an unknown pointer is an error (counted), never a crash.
 * Streams execute every operation immediately; an event may be made to look
 * incomplete for its first k queries (fake_set_event_delay).  NCCL: one
 * rank per communicator, so an all-gather or a reduce-scatter is a copy.
 * Not thread-safe beyond what the single-rank tests need.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_control.h"

struct fake_stream { int flags; };
struct fake_event { int pending; };
struct fake_pool { int device; };
struct fake_comm { int rank, nranks, aborted; };

typedef struct alloc_rec {
    void *p;
    size_t bytes;
    int kind; /* 1 device, 2 pinned host */
    struct alloc_rec *next;
} alloc_rec;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static alloc_rec *g_allocs;
static fake_counters g_c;
static int g_ndev = -1, g_event_delay;
static ncclResult_t g_async;
static cudaError_t g_last;
static unsigned g_uid;
static struct { char fn[64]; int n; int err; } g_inj[8];

fake_counters fake_get(void) { return g_c; }

void fake_reset(void)
{
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
    g_async = ncclSuccess;
}

void fake_set_device_count(int n) { g_ndev = n; }
void fake_set_event_delay(int k) { g_event_delay = k; }
void fake_set_async_error(ncclResult_t r) { g_async = r; }

void fake_fail(const char *fn, int n, int err)
{
    for (size_t i = 0; i < sizeof g_inj / sizeof g_inj[0]; i++)
        if (!g_inj[i].n) {
            snprintf(g_inj[i].fn, sizeof g_inj[i].fn, "%s", fn);
            g_inj[i].n = n;
            g_inj[i].err = err;
            return;
        }
}

/* 0, or the injected error for this call of fn */
static int inj(const char *fn)
{
    for (size_t i = 0; i < sizeof g_inj / sizeof g_inj[0]; i++)
        if (g_inj[i].n && !strcmp(g_inj[i].fn, fn) && --g_inj[i].n == 0)
            return g_inj[i].err;
    return 0;
}

#define INJ_CUDA(fn)                                   \
    do {                                               \
        int e_ = inj(fn);                              \
        if (e_) return g_last = (cudaError_t)e_;       \
    } while (0)
#define INJ_NCCL(fn)                                   \
    do {                                               \
        int e_ = inj(fn);                              \
        if (e_) return (ncclResult_t)e_;               \
    } while (0)

static void reg(void *p, size_t bytes, int kind)
{
    alloc_rec *r = malloc(sizeof *r);
    if (!r)
        abort();
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

static int find(const void *p, int *kind)
{
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

static int unreg(void *p, int kind)
{
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
    if (!ok)
        g_c.bad_frees++;
    pthread_mutex_unlock(&g_mu);
    return ok;
}

/* ------------------------------------------------------------------ */
/* CUDA runtime                                                         */
/* ------------------------------------------------------------------ */

const char *cudaGetErrorName(cudaError_t e)
{
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

const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInsufficientDriver: return "CUDA driver version is insufficient for CUDA runtime version";
    default: return "fake CUDA error";
    }
}

cudaError_t cudaGetLastError(void)
{
    cudaError_t e = g_last;
    g_last = cudaSuccess;
    return e;
}

cudaError_t cudaGetDeviceCount(int *count)
{
    INJ_CUDA("cudaGetDeviceCount");
    if (g_ndev < 0) {
        const char *v = getenv("FAKE_CUDA_NDEV");
        g_ndev = v && *v ? atoi(v) : 1;
    }
    *count = g_ndev;
    return g_ndev > 0 ? cudaSuccess : (g_last = cudaErrorNoDevice);
}

cudaError_t cudaSetDevice(int device)
{
    INJ_CUDA("cudaSetDevice");
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || device < 0 || device >= n)
        return g_last = cudaErrorInvalidDevice;
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }

cudaError_t cudaMalloc(void **p, size_t bytes)
{
    INJ_CUDA("cudaMalloc");
    *p = malloc(bytes ? bytes : 1);
    if (!*p)
        return g_last = cudaErrorMemoryAllocation;
    reg(*p, bytes, 1);
    return cudaSuccess;
}

cudaError_t cudaFree(void *p)
{
    if (!p)
        return cudaSuccess;
    if (!unreg(p, 1))
        return g_last = cudaErrorInvalidValue;
    free(p);
    return cudaSuccess;
}

cudaError_t cudaHostAlloc(void **p, size_t bytes, unsigned int flags)
{
    (void)flags;
    INJ_CUDA("cudaHostAlloc");
    *p = malloc(bytes ? bytes : 1);
    if (!*p)
        return g_last = cudaErrorMemoryAllocation;
    reg(*p, bytes, 2);
    return cudaSuccess;
}

cudaError_t cudaFreeHost(void *p)
{
    if (!p)
        return cudaSuccess;
    if (!unreg(p, 2))
        return g_last = cudaErrorInvalidValue;
    free(p);
    return cudaSuccess;
}

cudaError_t cudaMemset(void *p, int v, size_t bytes)
{
    INJ_CUDA("cudaMemset");
    memset(p, v, bytes);
    return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *p, int v, size_t bytes, cudaStream_t s)
{
    (void)s;
    INJ_CUDA("cudaMemsetAsync");
    memset(p, v, bytes);
    return cudaSuccess;
}

static cudaError_t check_kind(const void *dst, const void *src, enum cudaMemcpyKind k)
{
    int kd = 0, ks = 0;
    int dd = find(dst, &kd) && kd == 1, sd = find(src, &ks) && ks == 1;
    int want_dd = k == cudaMemcpyHostToDevice || k == cudaMemcpyDeviceToDevice;
    int want_sd = k == cudaMemcpyDeviceToHost || k == cudaMemcpyDeviceToDevice;
    if (k != cudaMemcpyDefault && (dd != want_dd || sd != want_sd)) {
        g_c.misuse++; /* a real GPU would fault or copy garbage */
        return g_last = cudaErrorInvalidValue;
    }
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind k)
{
    INJ_CUDA("cudaMemcpy");
    if (check_kind(dst, src, k))
        return g_last;
    memmove(dst, src, bytes);
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind k, cudaStream_t s)
{
    (void)s;
    INJ_CUDA("cudaMemcpyAsync");
    if (check_kind(dst, src, k))
        return g_last;
    memmove(dst, src, bytes);
    return cudaSuccess;
}

cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *a, const void *p)
{
    int kind = 0;
    memset(a, 0, sizeof *a);
    if (find(p, &kind))
        a->type = kind == 1 ? cudaMemoryTypeDevice : cudaMemoryTypeHost;
    else
        a->type = cudaMemoryTypeUnregistered;
    return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags)
{
    INJ_CUDA("cudaStreamCreateWithFlags");
    *s = calloc(1, sizeof **s);
    if (!*s)
        return g_last = cudaErrorMemoryAllocation;
    (*s)->flags = (int)flags;
    g_c.streams++;
    return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    if (!s)
        return g_last = cudaErrorInvalidValue;
    free(s);
    g_c.streams--;
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    (void)s;
    INJ_CUDA("cudaStreamSynchronize");
    return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int flags)
{
    (void)flags;
    INJ_CUDA("cudaStreamWaitEvent");
    if (!e)
        return g_last = cudaErrorInvalidValue;
    g_c.stream_waits++;
    if (!s)
        g_c.waits_on_legacy++;
    return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags)
{
    (void)flags;
    INJ_CUDA("cudaEventCreateWithFlags");
    *e = calloc(1, sizeof **e);
    if (!*e)
        return g_last = cudaErrorMemoryAllocation;
    g_c.events++;
    return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    if (!e)
        return g_last = cudaErrorInvalidValue;
    free(e);
    g_c.events--;
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    (void)s;
    INJ_CUDA("cudaEventRecord");
    if (!e)
        return g_last = cudaErrorInvalidValue;
    e->pending = g_event_delay;
    return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t e)
{
    INJ_CUDA("cudaEventQuery");
    if (!e)
        return g_last = cudaErrorInvalidValue;
    if (e->pending > 0) {
        e->pending--;
        return cudaErrorNotReady;
    }
    return cudaSuccess;
}

cudaError_t cudaMemPoolCreate(cudaMemPool_t *pool, const struct cudaMemPoolProps *props)
{
    INJ_CUDA("cudaMemPoolCreate");
    if (props->allocType != cudaMemAllocationTypePinned || props->location.type != cudaMemLocationTypeDevice)
        return g_last = cudaErrorInvalidValue;
    *pool = calloc(1, sizeof **pool);
    if (!*pool)
        return g_last = cudaErrorMemoryAllocation;
    (*pool)->device = props->location.id;
    g_c.pools++;
    return cudaSuccess;
}

cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool)
{
    free(pool);
    g_c.pools--;
    return cudaSuccess;
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attr, void *value)
{
    (void)pool;
    (void)value;
    return attr == cudaMemPoolAttrReleaseThreshold ? cudaSuccess : (g_last = cudaErrorInvalidValue);
}

cudaError_t cudaMallocFromPoolAsync(void **p, size_t bytes, cudaMemPool_t pool, cudaStream_t s)
{
    (void)pool;
    (void)s;
    INJ_CUDA("cudaMallocFromPoolAsync");
    return cudaMalloc(p, bytes);
}

cudaError_t cudaFreeAsync(void *p, cudaStream_t s)
{
    INJ_CUDA("cudaFreeAsync");
    g_c.frees_async++;
    g_c.last_free_stream = s;
    return cudaFree(p);
}

/* ------------------------------------------------------------------ */
/* NCCL, one rank per communicator                                      */
/* ------------------------------------------------------------------ */

const char *ncclGetErrorString(ncclResult_t r)
{
    switch (r) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    default: return "fake nccl error";
    }
}

const char *ncclGetLastError(ncclComm_t comm)
{
    (void)comm;
    return "fake NCCL last error";
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    INJ_NCCL("ncclGetUniqueId");
    memset(id, 0, sizeof *id);
    snprintf(id->internal, sizeof id->internal, "fake-uid-%u", ++g_uid);
    return ncclSuccess;
}

static ncclResult_t new_comm(ncclComm_t *c, int nranks, int rank)
{
    if (nranks != 1 || rank != 0)
        return ncclInvalidUsage; /* the fake is a world of one */
    *c = calloc(1, sizeof **c);
    if (!*c)
        return ncclSystemError;
    (*c)->nranks = 1;
    g_c.comms++;
    return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
    (void)id;
    INJ_NCCL("ncclCommInitRank");
    return new_comm(comm, nranks, rank);
}

ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist)
{
    (void)devlist;
    INJ_NCCL("ncclCommInitAll");
    if (ndev != 1)
        return ncclInvalidUsage;
    return new_comm(&comms[0], 1, 0);
}

ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    if (!comm || comm->aborted) {
        g_c.misuse++;
        return ncclInvalidArgument;
    }
    free(comm);
    g_c.comms--;
    return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm)
{
    if (!comm) {
        g_c.misuse++;
        return ncclInvalidArgument;
    }
    free(comm);
    g_c.comms--;
    g_c.aborted_comms++;
    return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *async)
{
    if (!comm) {
        g_c.misuse++;
        return ncclInvalidArgument;
    }
    *async = g_async;
    return ncclSuccess;
}

ncclResult_t ncclGroupStart(void)
{
    INJ_NCCL("ncclGroupStart");
    g_c.group_depth++;
    return ncclSuccess;
}

ncclResult_t ncclGroupEnd(void)
{
    if (g_c.group_depth <= 0) {
        g_c.misuse++;
        return ncclInvalidUsage;
    }
    g_c.group_depth--;
    g_c.groups++;
    INJ_NCCL("ncclGroupEnd");
    return ncclSuccess;
}

static size_t tsize(ncclDataType_t t) { return t == ncclFloat32 || t == ncclInt32 ? 4 : 1; }

ncclResult_t ncclAllGather(const void *send, void *recv, size_t count, ncclDataType_t t, ncclComm_t comm,
                           cudaStream_t s)
{
    (void)s;
    INJ_NCCL("ncclAllGather");
    int k1 = 0, k2 = 0;
    if (!comm || !find(send, &k1) || k1 != 1 || !find(recv, &k2) || k2 != 1) {
        g_c.misuse++; /* NCCL needs device buffers */
        return ncclInvalidArgument;
    }
    memmove(recv, send, count * tsize(t));
    g_c.allgathers++;
    return ncclSuccess;
}

ncclResult_t ncclReduceScatter(const void *send, void *recv, size_t count, ncclDataType_t t, ncclRedOp_t op,
                               ncclComm_t comm, cudaStream_t s)
{
    (void)s;
    INJ_NCCL("ncclReduceScatter");
    int k1 = 0, k2 = 0;
    if (!comm || !find(send, &k1) || k1 != 1 || !find(recv, &k2) || k2 != 1 || t != ncclFloat32 ||
        (op != ncclSum && op != ncclAvg)) {
        g_c.misuse++;
        return ncclInvalidArgument;
    }
    memmove(recv, send, count * sizeof(float)); /* one rank: sum = avg = the input */
    g_c.reduce_scatters++;
    return ncclSuccess;
}

/* ------------------------------------------------------------------ */
/* cuBLAS (column-major, host loops on "device" memory)                 */
/* ------------------------------------------------------------------ */

#include "cublas_v2.h"

struct fake_blas { int unused; };

static int is_dev(const void *p)
{
    int k = 0;
    return find(p, &k) && k == 1;
}

cublasStatus_t cublasCreate(cublasHandle_t *h)
{
    *h = calloc(1, sizeof **h);
    return *h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasDestroy(cublasHandle_t h)
{
    free(h);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                           const float *alpha, const float *A, int lda, const float *B, int ldb, const float *beta,
                           float *C, int ldc)
{
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

cublasStatus_t cublasSaxpy(cublasHandle_t h, int n, const float *alpha, const float *x, int incx, float *y, int incy)
{
    if (!h || !is_dev(x) || !is_dev(y)) {
        g_c.misuse++;
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    for (int i = 0; i < n; i++)
        y[(size_t)i * incy] += *alpha * x[(size_t)i * incx];
    return CUBLAS_STATUS_SUCCESS;
}
