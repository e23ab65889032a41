/*
 * host_faults.c - fault injection into the host backend (zo_host_set_fault,
 * zoffload_testing.h; the semantics are in backend_host.c's header comment
 * under "Fault injection").
 */
#include <string.h>
#include <time.h>

#include "host.h"

/* Counts one operation at pt; returns the armed fault's action if it
 * applies to this operation, else ZO_HOST_FAULT_NONE. */
zo_host_fault_action zo__host_fault_hit(host_ctx *c, zo_host_fault_point pt) {
    uint64_t n = ++c->fault_ops[pt];
    const zo_host_fault *f = &c->fault;
    if (f->action == ZO_HOST_FAULT_NONE || f->point != pt || f->at == 0 || n < f->at ||
        n - f->at >= (f->count ? f->count : 1u))
        return ZO_HOST_FAULT_NONE;
    c->fault_fired++;
    return f->action;
}

zo_status zo__host_fault_status(const host_ctx *c) { return c->fault.status ? c->fault.status : ZO_ERR_BACKEND; }

/* FAIL_WORK at a completion check: the work completes now, copying nothing. */
void zo__host_doom_now(host_ctx *c, host_work *w) {
    if (w->done) {
        if (w->status == ZO_OK) w->status = zo__host_fault_status(c);
        zo__host_fail(c, w->status, "host backend: injected fault: the all-gather failed");
        return;
    }
    w->doomed = zo__host_fault_status(c);
    zo__host_complete(c, w);
}

void zo__host_sleep_us(uint32_t us) {
    if (!us) return;
    struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000L};
    while (nanosleep(&ts, &ts) != 0) {}
}

zo_status zo_host_set_fault(zo_backend *b, const zo_host_fault *f) {
    const host_ctx *cc = zo__host_of(b);
    if (!cc) return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_host_set_fault: b is %s", b ? "not a host backend" : "NULL");
    host_ctx *c = (host_ctx *)cc;
    if (f) {
        if ((f->point != ZO_HOST_FAULT_GATHER && f->point != ZO_HOST_FAULT_WAIT) ||
            (f->action != ZO_HOST_FAULT_NONE && f->action != ZO_HOST_FAULT_FAIL && f->action != ZO_HOST_FAULT_DELAY &&
             f->action != ZO_HOST_FAULT_FAIL_WORK) ||
            f->status > 0)
            return zo__host_fail(c, ZO_ERR_INVALID_ARG, "host backend: zo_host_set_fault: bad point, action or status");
        c->fault = *f;
    } else {
        memset(&c->fault, 0, sizeof c->fault);
    }
    c->fault_action = c->fault.action;
    c->fault_ops[0] = c->fault_ops[1] = 0;
    c->fault_fired = 0;
    return ZO_OK;
}

uint64_t zo_host_fault_ops(const zo_backend *b, zo_host_fault_point point) {
    const host_ctx *c = zo__host_of(b);
    if (!c || (point != ZO_HOST_FAULT_GATHER && point != ZO_HOST_FAULT_WAIT)) return 0;
    return c->fault_ops[point];
}

uint64_t zo_host_fault_fired(const zo_backend *b) {
    const host_ctx *c = zo__host_of(b);
    return c ? c->fault_fired : 0;
}
