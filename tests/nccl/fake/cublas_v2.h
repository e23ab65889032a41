/*
 * Fake cublas_v2.h (tests only): cublasSgemm and cublasSaxpy with cuBLAS's
 * column-major semantics on "device" memory of the fake CUDA runtime, so
 * the example trainer's --nccl path (row-major to column-major mapping,
 * device pointers, shard-local SGD) runs without a GPU.  fake_cuda.c.
 */
#ifndef ZO_FAKE_CUBLAS_V2_H
#define ZO_FAKE_CUBLAS_V2_H

#include "cuda_runtime_api.h"

typedef struct fake_blas *cublasHandle_t;
typedef enum { CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_INVALID_VALUE = 7 } cublasStatus_t;
typedef enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 } cublasOperation_t;

cublasStatus_t cublasCreate(cublasHandle_t *h);
cublasStatus_t cublasDestroy(cublasHandle_t h);
cublasStatus_t cublasSgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                           const float *alpha, const float *A, int lda, const float *B, int ldb, const float *beta,
                           float *C, int ldc);
cublasStatus_t cublasSaxpy(cublasHandle_t h, int n, const float *alpha, const float *x, int incx, float *y, int incy);

#endif
