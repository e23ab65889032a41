/*
 * policy_lazy_init.c - "lazy-init" (ZO_GRADS_LAZY_INIT): the first version
 * of the seed pull request: ds_grads_remaining is created as 0 by its first
 * use (getattr with a default) and never reset, so counts of earlier steps
 * carry over.  DeepSpeed's hook bodies are policy_deepspeed.c's.
 */
#include "policy.h"

const zo_policy zo__policy_LAZY_INIT = {ZO_DS_HOOKS, .counter_lazy = 1};
