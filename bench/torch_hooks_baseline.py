#!/usr/bin/python3
"""PyTorch baseline of benchmark 1 (docs/benchmarks.md): the cost per hook
event of DeepSpeed-shaped ZeRO-3 hooks implemented in Python on real
PyTorch, with counters only (no communication, no parameter movement).

Model: the same tree as bench/bench_hooks.c - a root, then blocks of one
layer module with three leaf children (leftovers: leaves under the root),
every module owning one trainable parameter (numel 1: the op is x * w, so
the tensor work is as small as PyTorch allows).  Each module's forward calls
its children in order, then multiplies by its own weight.

Hooks per module, registered in DeepSpeed's order
(deepspeed/runtime/zero/parameter_offload.py, _register_hooks_recursively):
  A  forward pre-hook   _pre_forward_module_hook: counter (fetch)
  B  forward hook       _post_forward_module_hook: counter (release)
  C  forward hook       _pre_backward_module_hook: every output tensor goes
                        through PreBackwardFunctionForModule
                        (applied_pre_backward_ref_cnt += 1)
  D  forward pre-hook   _post_backward_module_hook: ds_grads_remaining = 0,
                        every input tensor goes through
                        PostBackwardFunctionModule (+= 1 if it requires grad)
and in backward: PreBackwardFunctionForModule.backward (pre-backward:
counter, ref count -= 1), PostBackwardFunctionModule.backward
(ds_grads_remaining -= 1, at 0 counter), and a gradient hook on each
parameter (Tensor.register_hook: torch 1.13 has no post-accumulate-grad hook)
for grad-ready.

An event is one of these seven firings per module per step, as in
bench_hooks.  Two figures per module count, both CPU time of the process
(time.process_time_ns) per event:
  total     one training step (forward + loss.backward()) with the hooks,
            divided by the events: what a step costs per hook event
  hooks     (step with hooks - the same step without any hook) / events:
            what the hooks themselves add

Output (stdout, tab-separated, one line per repetition):
  torch <N> <rep> <total_ns_per_event> <hooks_ns_per_event> <steps> <events>
Progress on stderr.

usage: torch_hooks_baseline.py [--modules N,N,...] [--reps R] [--min-events E]
"""
import argparse
import sys
import time

import torch

EVENTS_PER_MODULE = 7


class Counters:
    __slots__ = ("fetch", "release", "pre_bwd", "post_bwd", "grad_ready")

    def __init__(self):
        self.fetch = self.release = self.pre_bwd = self.post_bwd = self.grad_ready = 0


C = Counters()


class PreBackwardFunctionForModule(torch.autograd.Function):
    """DeepSpeed's PreBackwardFunctionForModule (hook C's per-output node)."""

    @staticmethod
    def forward(ctx, module, outputs):
        ctx.module = module
        if not hasattr(module, "applied_pre_backward_ref_cnt"):
            module.applied_pre_backward_ref_cnt = 0
        module.applied_pre_backward_ref_cnt += 1
        return outputs.detach()

    @staticmethod
    def backward(ctx, *args):
        module = ctx.module
        if module.applied_pre_backward_ref_cnt > 0:
            C.pre_bwd += 1  # pre_sub_module_backward_function: fetch_sub_module
            module.applied_pre_backward_ref_cnt -= 1
        return (None,) + args


class PostBackwardFunctionModule(torch.autograd.Function):
    """DeepSpeed's PostBackwardFunctionModule (hook D's per-input node)."""

    @staticmethod
    def forward(ctx, module, output):
        ctx.module = module
        if output.requires_grad:
            module.ds_grads_remaining += 1
        return output.detach()

    @staticmethod
    def backward(ctx, *args):
        module = ctx.module
        module.ds_grads_remaining = module.ds_grads_remaining - 1
        if module.ds_grads_remaining == 0:
            C.post_bwd += 1  # post_sub_module_backward_function: release_sub_module
        return (None,) + args


def _apply_to_tensors_only(module, functional, outputs):
    # DeepSpeed's apply_to_tensors_only, for the tuple / tensor cases used here
    if isinstance(outputs, (tuple, list)):
        return type(outputs)(_apply_to_tensors_only(module, functional, o) for o in outputs)
    if isinstance(outputs, torch.Tensor):
        return functional.apply(module, outputs)
    return outputs


def hook_a(module, inputs):  # _pre_forward_module_hook
    C.fetch += 1


def hook_b(module, inputs, output):  # _post_forward_module_hook
    C.release += 1


def hook_c(module, inputs, output):  # _pre_backward_module_hook
    return _apply_to_tensors_only(module, PreBackwardFunctionForModule, output)


def hook_d(module, inputs):  # _post_backward_module_hook
    module.ds_grads_remaining = 0
    return _apply_to_tensors_only(module, PostBackwardFunctionModule, inputs)


def grad_ready(grad):
    C.grad_ready += 1
    return None


class Leaf(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(1))

    def forward(self, x):
        return x * self.weight


class Layer(torch.nn.Module):
    def __init__(self, n_children):
        super().__init__()
        self.kids = torch.nn.ModuleList(Leaf() for _ in range(n_children))
        self.weight = torch.nn.Parameter(torch.ones(1))

    def forward(self, x):
        for k in self.kids:
            x = k(x)
        return x * self.weight


def build(n):
    nblocks = (n - 1) // 4
    rest = (n - 1) - 4 * nblocks
    root = Layer(0)
    root.kids = torch.nn.ModuleList([Layer(3) for _ in range(nblocks)] + [Leaf() for _ in range(rest)])
    return root


def register(model):
    handles = []
    for m in model.modules():
        if isinstance(m, torch.nn.ModuleList):
            continue  # never called (as DeepSpeed: hooks on it never fire)
        handles.append(m.register_forward_pre_hook(hook_a))
        handles.append(m.register_forward_hook(hook_b))
        handles.append(m.register_forward_hook(hook_c))
        handles.append(m.register_forward_pre_hook(hook_d))
        handles.append(m.weight.register_hook(grad_ready))
    return handles


def step(model, x):
    model(x).sum().backward()


def timed(model, x, steps):
    a = time.process_time_ns()
    for _ in range(steps):
        step(model, x)
    return time.process_time_ns() - a


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--modules", default="100,1000,10000,100000")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--min-events", type=float, default=2e5)
    a = ap.parse_args()
    torch.set_num_threads(1)
    sys.setrecursionlimit(10000)
    for tok in a.modules.split(","):
        n = int(tok)
        model = build(n)
        n_mods = sum(1 for m in model.modules() if not isinstance(m, torch.nn.ModuleList))
        assert n_mods == n, (n_mods, n)
        x = torch.ones(1, requires_grad=True)
        ev_step = n * EVENTS_PER_MODULE
        steps = max(1, int(a.min_events / ev_step + 0.999))
        print("[bench] torch: N=%d modules, %d steps x %d reps (%d events/step)" % (n, steps, a.reps, ev_step),
              file=sys.stderr, flush=True)
        step(model, x)  # warm-up without hooks
        handles = register(model)
        step(model, x)  # warm-up with hooks
        # sanity: every hook fired once per module per step
        before = (C.fetch, C.release, C.pre_bwd, C.post_bwd, C.grad_ready)
        step(model, x)
        after = (C.fetch, C.release, C.pre_bwd, C.post_bwd, C.grad_ready)
        fired = [b - c for b, c in zip(after, before)]
        if fired != [n] * 5:
            print("torch_hooks_baseline: N=%d: hooks fired %s per step, expected %d each" % (n, fired, n),
                  file=sys.stderr)
            sys.exit(1)
        for r in range(a.reps):
            t_hooks = timed(model, x, steps)
            for h in handles:
                h.remove()
            t_plain = timed(model, x, steps)
            handles = register(model)
            events = ev_step * steps
            print("torch\t%d\t%d\t%.1f\t%.1f\t%d\t%d" % (n, r, t_hooks / events, (t_hooks - t_plain) / events,
                                                        steps, events), flush=True)
        for h in handles:
            h.remove()
        del model


if __name__ == "__main__":
    main()
