/*
 * policy_init_at_register.c - "init-at-register" (ZO_GRADS_INIT_AT_REGISTER):
 * the final version of the seed pull request: ds_grads_remaining = 0 when
 * the hooks are registered on the module, never reset.  DeepSpeed's hook
 * bodies are policy_deepspeed.c's.
 */
#include "policy.h"

const zo_policy zo__policy_INIT_AT_REGISTER = {ZO_DS_HOOKS, .counter_at_register = 1};
