/*
 * policy_reset_on_forward.c - "reset-on-forward" (ZO_GRADS_RESET_ON_FORWARD):
 * DeepSpeed upstream.  _post_backward_module_hook sets
 * module.ds_grads_remaining = 0 on every forward call before counting the
 * call's inputs, so a module called twice before its backward forgets the
 * first call's inputs and the counter goes negative (signed, as in
 * Python).  Legacy, kept for regression analysis; DeepSpeed's hook bodies
 * are policy_deepspeed.c's.
 */
#include "policy.h"

const zo_policy zo__policy_RESET_ON_FORWARD = {ZO_DS_HOOKS, .counter_reset_in_d = 1};
