/*
 * fake_control.h - steering and observing the fake CUDA/NCCL of this
 * directory (tests only).
 */
#ifndef ZO_FAKE_CONTROL_H
#define ZO_FAKE_CONTROL_H

#include "nccl.h"

typedef struct fake_counters {
    long device_allocs;                 /* live cudaMalloc + pool allocations */
    long pinned_allocs;                 /* live cudaHostAlloc */
    long streams, events, pools, comms; /* live objects */
    long aborted_comms;
    long stream_waits;    /* cudaStreamWaitEvent calls */
    long waits_on_legacy; /* ... made by the legacy stream (NULL) */
    long frees_async;     /* cudaFreeAsync calls */
    cudaStream_t last_free_stream;
    long groups;     /* ncclGroupEnd calls */
    int group_depth; /* open ncclGroupStart */
    long allgathers, reduce_scatters;
    long bad_frees; /* frees of pointers the fake does not know */
    long misuse;    /* use of a destroyed/aborted comm, unbalanced groups, ... */
} fake_counters;

fake_counters fake_get(void);
void fake_reset(void);
/** Device count reported by cudaGetDeviceCount (default: $FAKE_CUDA_NDEV, else 1). */
void fake_set_device_count(int n);
/** The n-th next call (1 = the next) of the function named fn returns err
 *  (a cudaError_t or an ncclResult_t, by fn's family). */
void fake_fail(const char *fn, int n, int err);
/** Every event recorded from now on reports cudaErrorNotReady to the first
 *  k cudaEventQuery calls. */
void fake_set_event_delay(int k);
/** The n-th next all-gather (1 = the next) flips one byte of what it
 *  delivers (tests that a comparison can fail). */
void fake_corrupt_allgather(int n);
/** Asynchronous error every communicator reports from now on. */
void fake_set_async_error(ncclResult_t r);

#endif
