#!/usr/bin/python3
"""torch_oracle.py - run a zoffload scenario on real PyTorch autograd.

Reads a scenario as JSON (`zofuzz print --json FILE`, docs/scenario-model.md §5),
builds it from real torch.nn.Module objects with real nn.Parameter tensors,
registers DeepSpeed-shaped stage-3 hooks on every module, executes the step
program with real autograd (torch.no_grad, Tensor.detach,
torch.utils.checkpoint with use_reentrant True/False, Python exceptions,
loss.backward(retain_graph=...)), and prints the canonical hook trace of
docs/scenario-model.md §4 - the same lines the simulator (fuzz/sim.c)
prints.  Nothing about *when* a hook fires is computed here: PyTorch decides
(which tensors require grad, which autograd nodes exist, in which order the
engine runs them, when a checkpoint recomputes).  The oracle only keeps the
counters of the chosen policy, in Python, as DeepSpeed's hooks (and the seed
PR's variants) keep them.

Usage:
  torch_oracle.py [--policy P] SCENARIO.json            trace on stdout
  torch_oracle.py --policies P1,P2,.. --out-suffix .oracle A.json B.json ...
        batch mode: for every A.json and policy P writes A.P.oracle next to it
        (A = the file name without .json).  One process for many scenarios:
        `import torch` is the slow part.
Policies: per-call, reset-on-forward, lazy-init, init-at-register
(default: the scenario's config.policy).

Torch profiles (the scenario's config "torch_profile", --torch-profile
overrides): "2.x" (the reference: torch 2.x, checked with PyPI's torch
2.15.0; non-reentrant checkpoint early stop on, its default),
"2.x-no-early-stop" (the same torch under
torch.utils.checkpoint.set_checkpoint_early_stop(False)), "1.13" (Debian's
python3-torch 1.13.1 under /usr/bin/python3).  A profile run on the wrong
torch release is refused (ORACLEERROR), so a comparison always names the
release it was checked against.  See docs/oracles.md.
"""

import argparse
import json
import os
import sys
import threading
import warnings

import torch
import torch.utils.checkpoint as tcheckpoint

warnings.filterwarnings("ignore")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from zo_names import POLICIES  # noqa: E402  (include/zoffload.h)
TORCH_PROFILES = ("2.x", "2.x-no-early-stop", "1.13")


def torch_profile_of(sc, override=None):
    """The scenario's torch profile, checked against the torch running here."""
    prof = override or sc["config"].get("torch_profile", "2.x")
    if prof not in TORCH_PROFILES:
        raise ValueError("unknown torch profile %r" % prof)
    major = torch.__version__.split(".")[0]
    want = "1" if prof == "1.13" else "2"
    if major != want or (prof == "1.13" and not torch.__version__.startswith("1.13")):
        raise ValueError("torch profile %s needs torch %s, this is torch %s" % (
            prof, "1.13" if prof == "1.13" else "2.x", torch.__version__))
    return prof
PARAM_NUMEL_CAP = 4  # real tensors are tiny: shapes do not matter to hook timing


class OracleRaise(Exception):
    """The exception a ZS_CALL_RAISE module's forward raises."""

    def __init__(self, catcher_call):
        super().__init__("zoffload scenario raise")
        self.catcher_call = catcher_call  # call index, or -1: caught by the step's code


class StopRun(Exception):
    """PyTorch raised (TORCHERROR printed): the run ends, as the simulator's does."""


# ----------------------------------------------------------------------
# DeepSpeed-shaped autograd Functions (deepspeed/runtime/zero/
# parameter_offload.py: PostBackwardFunctionModule and
# PreBackwardFunctionForModule), with the counters of every policy.
# ----------------------------------------------------------------------


class PostBackwardFunctionModule(torch.autograd.Function):
    """Hook D's per-input function: counts in forward, POST in backward."""

    @staticmethod
    def forward(ctx, rt, module, window, x):
        ctx.rt = rt
        ctx.module = module
        ctx.window = window
        # DeepSpeed: `if output.requires_grad: module.ds_grads_remaining += 1`
        # (x.requires_grad is the tensor's own flag; grad mode is off inside
        # Function.forward, the flag is not affected by it)
        if x.requires_grad and rt.legacy:
            if not hasattr(module, "ds_grads_remaining"):
                # lazy-init: created as 0 on first access.  reset-on-forward
                # set it in hook D already, init-at-register at registration.
                module.ds_grads_remaining = 0
            module.ds_grads_remaining += 1
        return x.detach()

    @staticmethod
    def backward(ctx, g):
        rt, module = ctx.rt, ctx.module
        if rt.legacy:
            before = rt.counter(module, "ds_grads_remaining")
            if not hasattr(module, "ds_grads_remaining"):
                module.ds_grads_remaining = 0
            module.ds_grads_remaining -= 1
            after = str(module.ds_grads_remaining)
            # (ds_grads_remaining == 0 and no retain_graph backward running:
            #  DeepSpeed releases the module here; not part of the trace)
        else:
            w = ctx.window
            if w is not None and w["epoch"] != rt.bwd_epoch:
                # zoffload per-call: a retain_graph backward over the same
                # graph runs the call's window again from its full count
                w["epoch"], w["count"] = rt.bwd_epoch, w["k"]
            if w is not None and w["count"] > 0:
                before = str(w["count"])
                w["count"] -= 1
                after = str(w["count"])
            else:
                before = after = "?"
        rt.line("POST m=%d c=%s->%s" % (module.zo_id, before, after))
        return None, None, None, g


class PreBackwardFunctionForModule(torch.autograd.Function):
    """Hook C's per-output function: ref count in forward, PRE in backward."""

    @staticmethod
    def forward(ctx, rt, module, x):
        ctx.rt = rt
        ctx.module = module
        if rt.legacy:
            if not hasattr(module, "applied_pre_backward_ref_cnt"):
                module.applied_pre_backward_ref_cnt = 0
            module.applied_pre_backward_ref_cnt += 1
        return x.detach()

    @staticmethod
    def backward(ctx, g):
        rt, module = ctx.rt, ctx.module
        if rt.legacy:
            # DeepSpeed's _run_before_backward_function
            before = rt.counter(module, "applied_pre_backward_ref_cnt")
            if getattr(module, "applied_pre_backward_ref_cnt", 0) > 0:
                # (pre_sub_module_backward_function: fetch; not in the trace)
                module.applied_pre_backward_ref_cnt -= 1
            after = rt.counter(module, "applied_pre_backward_ref_cnt")
        else:
            before = after = "?"
        rt.line("PRE m=%d r=%s->%s" % (module.zo_id, before, after))
        return None, None, g


class ModuleOp(torch.autograd.Function):
    """A module's own computation: consumes its use[] tensors and its
    parameters, produces n_out fresh tensors.  Saves exactly one tensor, so
    a non-reentrant checkpoint region stores one entry per op node."""

    @staticmethod
    def forward(ctx, n_out, *inputs):
        outs = tuple(torch.zeros(1) for _ in range(n_out))
        ctx.save_for_backward(outs[0])
        ctx.shapes = [t.shape for t in inputs]
        return outs

    @staticmethod
    def backward(ctx, *grads):
        _ = ctx.saved_tensors  # what triggers a non-reentrant recompute
        return (None,) + tuple(torch.zeros(s) for s in ctx.shapes)


class ModuleOpNoSave(torch.autograd.Function):
    """ModuleOp of a call marked nosave: the same node, no saved tensor (a
    residual sum), so it never triggers a non-reentrant recompute."""

    @staticmethod
    def forward(ctx, n_out, *inputs):
        ctx.shapes = [t.shape for t in inputs]
        return tuple(torch.zeros(1) for _ in range(n_out))

    @staticmethod
    def backward(ctx, *grads):
        return (None,) + tuple(torch.zeros(s) for s in ctx.shapes)


class MixFunction(torch.autograd.Function):
    """A mixed input (.scn `arg0 + out1.0`): the caller's parameter-free op
    (a residual sum) over the input's terms, one node with an edge to each
    term that requires grad; it saves nothing."""

    @staticmethod
    def forward(ctx, *terms):
        ctx.shapes = [t.shape for t in terms]
        return torch.zeros(1)

    @staticmethod
    def backward(ctx, g):
        return tuple(torch.zeros(s) for s in ctx.shapes)


class LossFunction(torch.autograd.Function):
    """The loss: one node whose edges go to the summed root outputs in order."""

    @staticmethod
    def forward(ctx, *outs):
        ctx.n = len(outs)
        return torch.zeros(())

    @staticmethod
    def backward(ctx, g):
        return tuple(torch.zeros(1) for _ in range(ctx.n))


# ----------------------------------------------------------------------
# Modules
# ----------------------------------------------------------------------


class ScenarioModule(torch.nn.Module):
    def __init__(self, rt, mid):
        super().__init__()
        self.rt = rt
        self.zo_id = mid
        self.pset = []  # parameters its op reads (zs_module_param_set)
        self.pending = []  # (execution context, call index) of the next forward

    def forward(self, *args, **kwargs):
        x, ci = self.pending.pop()
        # keyword inputs (not seen by hook D) follow the positional ones
        args = args + tuple(kwargs[k] for k in sorted(kwargs, key=lambda k: int(k[2:])))
        if x.p.calls[ci].get("checkpoint_body") and torch.is_grad_enabled():
            return self.rt.body_checkpoint(x, ci, args)
        return self.rt.body(x, ci, args)


class Execution:
    """One execution of a pass's calls (the forward, or a checkpoint
    recompute): the outputs each call produced and its wrapped inputs."""

    def __init__(self, p):
        self.p = p
        self.out = {}
        self.raw = {}  # (call, j) -> the output before hook C (outK.J.raw)
        self.win = {}


class PassState:
    def __init__(self, spec, num):
        self.spec = spec
        self.num = num
        self.calls = spec["calls"]
        self.children = [[] for _ in self.calls]
        for c in self.calls:
            if c["parent"] >= 0:
                self.children[c["parent"]].append(c["id"])
        self.batch = torch.zeros(1)
        self.batch_rg = torch.zeros(1, requires_grad=True)
        self.aborted = False
        self.discarded = False
        self.freed = False
        self.loss = None
        self.execs = []


class Run:
    def __init__(self, sc, policy, out):
        self.sc = sc
        self.policy = policy
        self.legacy = policy != "per-call"
        self.out = out
        self.graph_count = 0
        self.ctx = []  # "F"/"B" stack: the runtime's forward/backward contexts
        self.pending_inner = []  # graph numbers of reentrant recomputes awaiting their backward
        self.top_backward = None
        self.bwd_epoch = 0  # top-level backwards started so far
        self.keep = []  # grad accumulators, hook handles
        self.build()
        self.install_pgrad_hooks()
        self.install_hooks()
        if not getattr(self, "full_engine", False):
            # (the DeepSpeed oracle's full engine registers DeepSpeed's own)
            self.install_leaf_backward_hooks()

    # -- output ---------------------------------------------------------

    def line(self, s):
        self.out.append(s)

    def counter(self, module, name):
        v = getattr(module, name, None)
        return "?" if v is None else str(v)

    # -- model ----------------------------------------------------------

    def param_numel(self, p):
        return min(p["numel"], PARAM_NUMEL_CAP)

    def build(self):
        """The module tree and its parameters (real torch.nn objects)."""
        sc = self.sc
        mods = []
        for m in sc["modules"]:
            mod = ScenarioModule(self, m["id"])
            if m["parent"] >= 0:
                mods[m["parent"]].add_module("m%d" % m["id"], mod)
            mods.append(mod)
        self.mods = mods
        self.parent = [m["parent"] for m in sc["modules"]]
        self.z3_leaf = [bool(m["z3_leaf"]) for m in sc["modules"]]
        # gather-always (ZO_MODULE_GATHER_ALWAYS; absent in older exports)
        self.gather_always = [bool(m.get("gather_always", False)) for m in sc["modules"]]
        params = []
        for p in sc["params"]:
            t = torch.nn.Parameter(torch.zeros(self.param_numel(p)),
                                   requires_grad=not p["frozen"])
            t.zo_id = p["id"]
            mods[p["owner"]].register_parameter("p%d" % p["id"], t)
            params.append(t)
        self.params = params
        owner = [p["owner"] for p in sc["params"]]
        uses = [[] for _ in mods]
        for u in sc["uses"]:
            uses[u["module"]].append(u["param"])

        def in_leaf(m):  # strictly inside a z3 leaf's subtree
            a = self.parent[m]
            while a >= 0:
                if self.z3_leaf[a]:
                    return True
                a = self.parent[a]
            return False

        def is_anc(a, b):
            while b >= 0:
                if a == b:
                    return True
                b = self.parent[b]
            return False

        def under_ga(m):  # strictly below a gather-always module
            a = self.parent[m]
            while a >= 0:
                if self.gather_always[a]:
                    return True
                a = self.parent[a]
            return False

        self.uses_of = uses
        self.in_leaf = [in_leaf(m) for m in range(len(mods))]
        for mid, mod in enumerate(mods):
            s = set(i for i, o in enumerate(owner) if o == mid)
            s.update(uses[mid])
            # zs_module_param_set: a z3 leaf, or an effective gather-always
            # module (not inside a leaf, not below another one), reads its
            # whole subtree's parameters
            whole = self.z3_leaf[mid] or (self.gather_always[mid] and not self.in_leaf[mid]
                                          and not under_ga(mid))
            if whole:
                s.update(i for i, o in enumerate(owner) if is_anc(mid, o))
            mod.pset = [params[i] for i in sorted(s)]

    def install_pgrad_hooks(self):
        params = self.params
        # post-accumulate-grad hooks of trainable parameters.  torch 1.13
        # has no Tensor.register_post_accumulate_grad_hook (2.1+): hook the
        # parameter's AccumulateGrad node, as DeepSpeed's stage 3 does
        # (param.expand_as(param).grad_fn.next_functions[0][0]); keeping the
        # node alive keeps it the parameter's accumulator in every graph.
        for t in params:
            if not t.requires_grad:
                continue
            pid = t.zo_id
            if hasattr(t, "register_post_accumulate_grad_hook"):
                # torch 2.1+: what DeepSpeed 0.19's stage 3 registers
                self.keep.append(t.register_post_accumulate_grad_hook(
                    lambda p, pid=pid: self.line("PGRAD p=%d" % pid)))
                continue
            acc = t.expand_as(t).grad_fn.next_functions[0][0]
            acc.register_hook(lambda gi, go, pid=pid: self.line("PGRAD p=%d" % pid))
            self.keep.append(acc)

    def install_hooks(self):
        # DeepSpeed's registration order: pre-hook A, forward hooks B and
        # C, pre-hook D (PyTorch runs pre-hooks A, D then forward hooks
        # B, C).  Modules inside a z3 leaf get no hooks.
        for mid, mod in enumerate(self.mods):
            if self.in_leaf[mid]:
                continue
            if self.policy == "init-at-register":
                mod.ds_grads_remaining = 0
            mod.register_forward_pre_hook(self.hook_a)
            mod.register_forward_hook(self.hook_b)
            mod.register_forward_hook(self.hook_c)
            mod.register_forward_pre_hook(self.hook_d)

    def install_leaf_backward_hooks(self):
        """DeepSpeed 0.19's ZeRO-3 optimizer (stage3.py create_reduce_and_remove_grad_hooks)
        registers a full backward hook, reduce_leaf_module_grads, on every z3 leaf module
        whose subtree owns a trainable parameter.  The hook itself reduces gradients (no
        trace line), but its BackwardHookFunction nodes over the module's inputs and
        outputs change when the module's pre- and post-backward hooks run.  The upstream
        policies under the "0.19" DeepSpeed profile model that engine, so the hook is
        registered here too (a no-op with the same autograd structure)."""
        if not self.legacy or self.sc["config"].get("ds_profile", "0.19") != "0.19":
            return
        owner = [p["owner"] for p in self.sc["params"]]
        for mid, mod in enumerate(self.mods):
            if not self.z3_leaf[mid] or self.in_leaf[mid]:
                continue
            if any(not p["frozen"] and self._is_anc(mid, owner[p["id"]]) for p in self.sc["params"]):
                self.keep.append(mod.register_full_backward_hook(lambda m, gi, go: None))

    def _is_anc(self, a, b):
        while b >= 0:
            if a == b:
                return True
            b = self.parent[b]
        return False

    # -- hooks ----------------------------------------------------------

    def hook_a(self, module, inputs):
        self.line("A m=%d" % module.zo_id)

    def hook_d(self, module, inputs):
        before = self.counter(module, "ds_grads_remaining")
        window = None
        if self.legacy:
            if self.policy == "reset-on-forward":
                module.ds_grads_remaining = 0  # DeepSpeed upstream
        else:
            k = sum(1 for x in inputs if x.requires_grad)
            before = "0"
            if torch.is_grad_enabled() and k > 0 and self.ctx and self.ctx[-1] == "F":
                window = {"count": k, "k": k, "epoch": self.bwd_epoch}
        wrapped = tuple(PostBackwardFunctionModule.apply(self, module, window, x) for x in inputs)
        if self.legacy:
            after = self.counter(module, "ds_grads_remaining")
        else:
            after = str(window["count"]) if window else "0"
        self.line("D m=%d n=%d rg=%s c=%s->%s" % (
            module.zo_id, len(inputs), ",".join("1" if x.requires_grad else "0" for x in inputs),
            before, after))
        return wrapped

    def hook_b(self, module, inputs, outputs):
        self.line("B m=%d" % module.zo_id)

    def hook_c(self, module, inputs, outputs):
        if self.legacy:
            before = self.counter(module, "applied_pre_backward_ref_cnt")
            if before == "?":
                before = "0"  # created as 0 on first use (printed as the runtime reports it)
        wrapped = tuple(PreBackwardFunctionForModule.apply(self, module, y) for y in outputs)
        if self.legacy:
            after = self.counter(module, "applied_pre_backward_ref_cnt")
            if after == "?":
                after = "0"
        else:
            before = after = "?"
        self.line("C m=%d n=%d rg=%s r=%s->%s" % (
            module.zo_id, len(outputs), ",".join("1" if y.requires_grad else "0" for y in outputs),
            before, after))
        return wrapped

    # -- forward programs -----------------------------------------------

    def resolve(self, x, scope_call, ref):
        """A reference in the scope of call `scope_call` (-1: the step's code)."""
        k = ref["kind"]
        if k == "batch":
            t = x.p.batch
        elif k == "batch_rg":
            t = x.p.batch_rg
        elif k == "arg":
            t = x.win[scope_call][ref["index"]]
        elif k == "out" and ref.get("raw"):
            # the output as the producing module made it, cached on self:
            # no PreBackward node of its hook C on this path
            t = x.raw[(ref["call"], ref["index"])]
        elif k == "param":
            # a mixed input's parameter term: the caller's op reads the
            # parameter itself (fused MoE experts, transformers 5.24.0)
            t = self.params[ref["call"]]  # the parameter's ds_id
        else:
            t = x.out[(ref["call"], ref["index"])]
        return t.detach() if ref["detach"] else t

    def invoke(self, x, ci, args, kwargs=None):
        """module(*args, **kwargs) for call ci in execution x."""
        mod = self.mods[x.p.calls[ci]["module"]]
        mod.pending.append((x, ci))
        try:
            outs = mod(*args, **(kwargs or {}))
        finally:
            if mod.pending and mod.pending[-1] == (x, ci):  # forward never ran
                mod.pending.pop()
        for j, t in enumerate(outs):
            x.out[(ci, j)] = t
        return outs

    def call(self, x, ci, args, kwargs=None):
        """What the caller's code does for call ci: plain, no_grad, checkpoint."""
        c = x.p.calls[ci]
        ck = c["checkpoint"]
        if ck == "none" or c.get("checkpoint_body"):
            return self.invoke(x, ci, args, kwargs)
        outs = self.checkpointed(x, ci, args, ck, self.invoke)
        for j, t in enumerate(outs):
            x.out[(ci, j)] = t
        return outs

    def checkpointed(self, x, ci, args, ck, run):
        """torch.utils.checkpoint of run(x, ci, args) (a whole call or a
        checkpointed body), kind ck: the original forward runs in x; a
        recompute runs in a fresh Execution, as its own forward pass (FWD /
        ENDFWD lines, a nested backward) when reentrant.  The outputs as a
        tuple."""
        p = x.p
        state = {"n": 0}

        def run_function(*a):
            state["n"] += 1
            if state["n"] == 1:  # the original forward
                return run(x, ci, a)
            x2 = Execution(p)
            p.execs.append(x2)
            if ck == "reentrant":
                # CheckpointFunction.backward: recompute on detached inputs
                # under enable_grad: a new forward pass (graph)
                num = self.graph_count
                self.graph_count += 1
                self.line("FWD g=%d" % num)
                self.ctx.append("F")
                outs = run(x2, ci, a)
                self.ctx.pop()
                self.line("ENDFWD g=%d" % num)
                self.pending_inner.append(num)
                return outs
            # non-reentrant: recompute inside the unpack hook of the backward
            return run(x2, ci, a)

        outs = tcheckpoint.checkpoint(run_function, *args, use_reentrant=(ck == "reentrant"))
        if isinstance(outs, torch.Tensor):
            outs = (outs,)
        return outs

    def body_checkpoint(self, x, ci, args):
        """ScenarioModule.forward of a call whose body is checkpointed, as
        transformers 5.24.0's GradientCheckpointingLayer after
        gradient_checkpointing_enable() runs it:
        checkpoint(partial(forward, self, **kwargs), *args, use_reentrant=...)
        inside the module's __call__ (its hooks A, D before the region, B, C
        after it); a recompute reruns the body alone."""
        c = x.p.calls[ci]
        outs = self.checkpointed(x, ci, args, c["checkpoint"], self.body)
        if c.get("nograd"):  # what hook C sees: CheckpointFunction's outputs all require grad
            outs = tuple(t.detach() if j in c["nograd"] else t for j, t in enumerate(outs))
        return outs

    def body(self, x, ci, args):
        """ScenarioModule.forward of call ci: child calls, raise, own op."""
        p = x.p
        c = p.calls[ci]
        x.win[ci] = args
        for j in p.children[ci]:
            ch = p.calls[j]
            terms = [[self.resolve(x, ci, r)] for r in ch["inputs"] + ch.get("kw", [])]
            for m in ch.get("mix", []):
                terms[m["slot"]].append(self.resolve(x, ci, m["ref"]))
            vals = [t[0] if len(t) == 1 else MixFunction.apply(*t) for t in terms]
            n_in = len(ch["inputs"])
            cargs = tuple(vals[:n_in])
            ckw = {"kw%d" % k: v for k, v in enumerate(vals[n_in:])}
            try:
                if ch["no_grad"]:
                    with torch.no_grad():
                        self.call(x, j, cargs, ckw)
                else:
                    self.call(x, j, cargs, ckw)
            except OracleRaise as e:
                if e.catcher_call == ci:
                    continue  # caught here: the body goes on with its next child call
                raise
        if c["raise"]:
            cat = c["catcher"]
            self.line("ABORT catcher=%d" % (p.calls[cat]["module"] if cat >= 0 else -1))
            raise OracleRaise(cat)
        mod = self.mods[c["module"]]
        n_out = c["n_out"]
        if n_out == 0:
            return ()
        used = [self.resolve(x, ci, r) for r in c["uses"]]
        alias = c.get("alias", {})
        if len(alias) < n_out:
            outs = (ModuleOpNoSave if c.get("nosave") else ModuleOp).apply(n_out, *used, *mod.pset)
        else:
            outs = (None,) * n_out
        # aliased outputs: a tensor of the call's scope returned as is
        outs = tuple(self.resolve(x, ci, alias[str(j)]) if str(j) in alias else t for j, t in enumerate(outs))
        for j, t in enumerate(outs):  # what the module caches on self (outK.J.raw)
            x.raw[(ci, j)] = t
        if c.get("nograd"):  # outputs that never require grad (integer indices, detached)
            outs = tuple(t.detach() if j in c["nograd"] else t for j, t in enumerate(outs))
        return outs

    # -- steps ------------------------------------------------------------

    def traced_backward(self, tensors, grad_tensors=None, retain_graph=None, *a, **kw):
        """torch.autograd.backward with BWD/ENDBWD lines (installed while the
        oracle runs, so CheckpointFunction's inner backward is seen too)."""
        if self.top_backward is not None:
            num, retain = self.top_backward
            self.top_backward = None
            self.bwd_epoch += 1
        else:
            num, retain = self.pending_inner.pop(), bool(retain_graph)
        self.line("BWD g=%d retain=%d" % (num, 1 if retain else 0))
        self.ctx.append("B")
        _orig_backward(tensors, grad_tensors, retain_graph, *a, **kw)
        self.ctx.pop()
        self.line("ENDBWD g=%d" % num)

    def forward(self, spec, evalmode):
        p = PassState(spec, self.graph_count)
        self.graph_count += 1
        self.line("FWD g=%d" % p.num)
        self.ctx.append("F")
        x = Execution(p)
        p.execs.append(x)
        c0 = p.calls[0]
        args = tuple(self.resolve(x, -1, r) for r in c0["inputs"])
        try:
            if evalmode or c0["no_grad"]:
                with torch.no_grad():
                    outs = self.invoke(x, 0, args)
            else:
                outs = self.invoke(x, 0, args)
        except OracleRaise:
            # caught by the step's code: the forward of this pass is abandoned
            self.ctx.pop()
            p.aborted = True
            return p
        self.ctx.pop()
        self.line("ENDFWD g=%d" % p.num)
        if evalmode:
            self.line("DISCARD g=%d" % p.num)
            p.discarded = True
            return p
        p.loss = LossFunction.apply(*[outs[j] for j in spec["loss"]])
        return p

    def backward(self, p, retain):
        if p.aborted or p.discarded or p.freed:
            return
        if not p.loss.requires_grad:
            # loss.backward() would raise "element 0 of tensors does not
            # require grad": the training loop skips the backward
            self.line("DISCARD g=%d" % p.num)
            p.discarded = True
            return
        self.top_backward = (p.num, retain)
        try:
            self.run_backward(p.loss, retain)
        except RuntimeError as e:
            msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            self.line("TORCHERROR %s" % msg)
            raise StopRun()
        if not retain:
            p.freed = True

    # -- what the training loop does (overridden by the DeepSpeed oracle) --

    def run_backward(self, loss, retain):
        torch.autograd.backward(loss, retain_graph=retain)

    def sweep(self):
        """The optimizer step: DeepSpeed's release_and_reset_all."""
        self.line("SWEEP")

    def set_training(self, training):
        pass

    def run(self):
        for si, st in enumerate(self.sc["steps"]):
            kind = st["kind"]
            self.line("STEP %d %s" % (si, kind))
            passes = st["passes"]
            if kind == "eval":
                self.set_training(False)
                self.forward(passes[0], True)
                self.set_training(True)
            elif kind == "train":
                p = self.forward(passes[0], False)
                self.backward(p, False)
                self.sweep()
            elif kind == "retain":
                p = self.forward(passes[0], False)
                self.backward(p, True)
                self.backward(p, False)
                self.sweep()
            elif kind == "accum":
                for spec in passes:
                    p = self.forward(spec, False)
                    self.backward(p, False)
                self.sweep()
            elif kind == "interleave":
                ps = [self.forward(spec, False) for spec in passes]
                for p in ps:
                    self.backward(p, False)
                self.sweep()
            else:
                raise ValueError("unknown step kind %r" % kind)


_orig_backward = torch.autograd.backward
_current = threading.local()


def _dispatch_backward(*a, **kw):
    r = getattr(_current, "run", None)
    if r is None:
        return _orig_backward(*a, **kw)
    return r.traced_backward(*a, **kw)


torch.autograd.backward = _dispatch_backward


def trace(sc, policy, torch_profile=None):
    """The canonical trace of scenario sc (parsed JSON) under policy, as a
    list of lines.  Each run uses a fresh thread: the autograd engine's CPU
    ready queue is thread-local, and a run stopped by a PyTorch error may
    leave dead tasks in it that would perturb the next run's heap.

    An all-ranks scenario with rank edits is one program per rank: the
    oracle runs single-rank programs only, as `zofuzz traces` materialises them
    (zs_scenario_for_rank), so it refuses the un-materialised form."""
    if sc["config"].get("all_ranks") and sc.get("edits"):
        raise ValueError("all-ranks scenario with rank edits: run each rank's program "
                         "(`zofuzz traces` writes them as NAME#rankR)")
    prof = torch_profile_of(sc, torch_profile)
    out = []
    err = []

    def work():
        r = Run(sc, policy, out)
        _current.run = r
        try:
            if prof == "2.x-no-early-stop":
                with tcheckpoint.set_checkpoint_early_stop(False):
                    r.run()
            else:
                r.run()
        except StopRun:
            pass
        except BaseException as e:  # an oracle bug, not a PyTorch behaviour
            err.append(e)
        finally:
            _current.run = None

    t = threading.Thread(target=work)
    t.start()
    t.join()
    if err:
        raise err[0]
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--policy", choices=POLICIES)
    ap.add_argument("--policies", help="comma-separated policies (batch mode)")
    ap.add_argument("--out-suffix", help="batch mode: write FILE-without-.json.POLICY+SUFFIX")
    ap.add_argument("--torch-profile", choices=TORCH_PROFILES,
                    help="override the scenarios' torch profile")
    a = ap.parse_args(argv)
    rc = 0
    for f in a.files:
        with open(f) as fh:
            sc = json.load(fh)
        if a.out_suffix:
            pols = a.policies.split(",") if a.policies else [sc["config"]["policy"]]
            base = f[:-5] if f.endswith(".json") else f
            for pol in pols:
                try:
                    lines = trace(sc, pol, a.torch_profile)
                    text = "\n".join(lines) + "\n"
                except Exception as e:  # report and go on with the batch
                    text = "ORACLEERROR %s: %s\n" % (type(e).__name__, e)
                    rc = 1
                with open("%s.%s%s" % (base, pol, a.out_suffix), "w") as fh:
                    fh.write(text)
        else:
            pol = a.policy or sc["config"]["policy"]
            sys.stdout.write("\n".join(trace(sc, pol, a.torch_profile)) + "\n")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
