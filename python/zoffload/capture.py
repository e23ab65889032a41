"""zoffload.capture - turn a real PyTorch model's training step into a .scn.

    from zoffload.capture import capture
    sc = capture(model, step_fn, steps=2)   # runs step_fn(model, i) for i < steps
    sc.write_scn("model.scn")               # also writes model.scn.trace.<policy>
    sc.check("build/fuzz/zofuzz")           # simulator trace == real trace?

    python -m zoffload.capture my_train.py:step -o model.scn [--build build_model]
        [--steps N] [--zofuzz PATH] [--allow-approx]

The script names a step function and a model builder (default `build`, a
function of no arguments returning the torch.nn.Module).  The step function
receives the model and the step index and runs one training iteration the
way the user trains: forward(s) of the model (positional and keyword
inputs), `loss.backward()` (retain_graph allowed), an optimizer step; a
forward under `torch.no_grad()` with no backward is an eval step.  Its
return value is ignored.

What is recorded comes from the real run, not from a guess: DeepSpeed's
four stage-3 hooks (A pre-forward, D post-backward set-up, B post-forward,
C pre-backward set-up; registered in DeepSpeed 0.19's order, D on the
positional tensors only, C on every tensor of the output as DeepSpeed's
apply_to_tensors_only walks it) are installed on every module, and the
capture reads the module tree (named_modules() order), every parameter
(numel, element size, requires_grad, owner, tied uses), every call (nesting,
grad mode, checkpoint kind, exceptions, tensor inputs and outputs) and the
autograd structure between the hook nodes (walked in the real grad_fn
graph).  The hooks print the canonical trace of tools/torch_oracle.py for
the four counter policies at once (the counters are kept per policy; which
hook fires when is PyTorch's).

The scenario model has no parameter-free op between child calls, no
keyword tensors that require grad, no tensors crossing scopes: where the
real graph has one, the capture maps it to the nearest construct the model
has and records a note naming the construct and the module path.  check()
then decides: when the simulator's trace of the .scn equals the real trace
line for line under all four policies, the mapping is exact for hook
timing; when it does not, the CLI writes nothing (unless --allow-approx)
and names the notes.

Meta device: a model built on torch.device("meta") runs the same hooks and
the same autograd graph without memory; data-dependent control flow (MoE
routing by value, `nonzero`, `.item()`) cannot run there (torch raises and
the capture reports it).
"""

import argparse
import gc
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback

import torch
import torch.utils.checkpoint as tcheckpoint

POLICIES = ("per-call", "reset-on-forward", "lazy-init", "init-at-register")
LEGACY = POLICIES[1:]

# the scenario model's bounds, read from fuzz/scenario.h (zoffload/_limits.py)
from zoffload._limits import load_limits as _load_limits

_L = _load_limits()
MAX_MODULES = _L["MAX_MODULES"]
MAX_PARAMS = _L["MAX_PARAMS"]
MAX_USES = _L["MAX_USES"]
MAX_STEPS = _L["MAX_STEPS"]
MAX_PASSES = _L["MAX_PASSES"]
MAX_CALLS = _L["MAX_CALLS"]
MAX_CHILD_CALLS = _L["MAX_CHILD_CALLS"]
MAX_IN = _L["MAX_IN"]
MAX_OUT = _L["MAX_OUT"]
MAX_USE = _L["MAX_USE"]
MAX_KW = _L["MAX_KW"]
MAX_MIX = _L["MAX_MIX"]
MAX_NUMEL = _L["MAX_NUMEL"]
NAME_LEN = _L["NAME_LEN"]


class CaptureError(Exception):
    """Bad input or a construct the capture cannot represent: the message
    names the construct and the module path.  Nothing is written."""


# ----------------------------------------------------------------------
# DeepSpeed-shaped autograd Functions (parameter_offload.py's
# PostBackwardFunctionModule / PreBackwardFunctionForModule), counters of
# every policy at once.  ctx.zo_tag identifies the node in the graph walk.
# ----------------------------------------------------------------------


class _PostBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, rec, mid, window, tag, x):
        ctx.rec, ctx.mid, ctx.window, ctx.zo_tag = rec, mid, window, tag
        if x.requires_grad:
            for pol in LEGACY:
                st = rec.counters[pol]
                st.grads[mid] = st.grads.get(mid, 0) + 1
        return x.detach()

    @staticmethod
    def backward(ctx, g):
        rec, mid, w = ctx.rec, ctx.mid, ctx.window
        lines = {}
        for pol in LEGACY:
            st = rec.counters[pol]
            before = str(st.grads[mid]) if mid in st.grads else "?"
            st.grads[mid] = st.grads.get(mid, 0) - 1
            lines[pol] = "POST m=%d c=%s->%d" % (mid, before, st.grads[mid])
        if w is not None and w["epoch"] != rec.bwd_epoch:
            w["epoch"], w["count"] = rec.bwd_epoch, w["k"]
        if w is not None and w["count"] > 0:
            before = str(w["count"])
            w["count"] -= 1
            lines["per-call"] = "POST m=%d c=%s->%d" % (mid, before, w["count"])
        else:
            lines["per-call"] = "POST m=%d c=?->?" % mid
        rec.emit_per(lines)
        return None, None, None, None, g


class _PreBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, rec, mid, tag, x):
        ctx.rec, ctx.mid, ctx.zo_tag = rec, mid, tag
        for pol in LEGACY:
            st = rec.counters[pol]
            st.refs[mid] = st.refs.get(mid, 0) + 1
        return x.detach()

    @staticmethod
    def backward(ctx, g):
        rec, mid = ctx.rec, ctx.mid
        lines = {"per-call": "PRE m=%d r=?->?" % mid}
        for pol in LEGACY:
            st = rec.counters[pol]
            before = str(st.refs[mid]) if mid in st.refs else "?"
            if st.refs.get(mid, 0) > 0:
                st.refs[mid] -= 1
            after = str(st.refs[mid]) if mid in st.refs else "?"
            lines[pol] = "PRE m=%d r=%s->%s" % (mid, before, after)
        rec.emit_per(lines)
        return None, None, None, g


def _is_namedtuple(v):
    return isinstance(v, tuple) and hasattr(v, "_fields")


def _apply_tensors(fn, value):
    """DeepSpeed's apply_to_tensors_only: tuples/lists rebuilt, dicts
    (ModelOutput included) updated in place, tensors mapped."""
    if isinstance(value, (tuple, list)):
        out = [_apply_tensors(fn, v) for v in value]
        if _is_namedtuple(value):
            return value.__class__(*out)
        return value.__class__(out)
    if isinstance(value, dict):
        for k in list(value.keys()):
            value[k] = _apply_tensors(fn, value[k])
        return value
    if isinstance(value, torch.Tensor):
        return fn(value)
    return value


def _tensors(value, out):
    if isinstance(value, (tuple, list)):
        for v in value:
            _tensors(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _tensors(v, out)
    elif isinstance(value, torch.Tensor):
        out.append(value)
    return out


def _saves_tensor(node):
    """Whether an autograd node keeps a saved tensor (what a non-reentrant
    checkpoint's recompute is triggered by): its _raw_saved_* attributes
    (reading _saved_* would unpack them, and run that recompute)."""
    for a in dir(node):
        if a.startswith("_raw_saved_"):
            try:
                v = getattr(node, a)
            except Exception:
                return True
            if v is not None and not (isinstance(v, (tuple, list)) and not v):
                return True
    return False


class _Counters:
    def __init__(self):
        self.grads = {}  # ds_grads_remaining per module id (absent = not created)
        self.refs = {}   # applied_pre_backward_ref_cnt


# ----------------------------------------------------------------------
# Recorded structure
# ----------------------------------------------------------------------


class Call:
    def __init__(self, cid, mid, parent, path):
        self.id = cid
        self.module = mid
        self.parent = parent  # Call or None
        self.children = []
        self.path = path
        self.no_grad = False
        self.ckpt = None  # "reentrant" / "non-reentrant"
        self.ckpt_body = False  # the checkpoint region is the call's body (.scn ckpt=body-...)
        self.rec_args = {}  # reentrant body recompute: id(detached input) -> its index
        self.inputs = []  # ref strings in the caller's scope ("a + b": a mixed input)
        self.kw = []  # keyword inputs that require grad (ref strings, caller's scope)
        self.kw_nodes = {}  # id(grad_fn) of keyword input j -> j
        self.n_mix = 0
        self.norg = []  # outputs that do not require grad although grad mode is on
        self.alias = {}  # output j -> ref: a tensor of the call's scope returned as is
        self.nosave = False  # its op's nodes save no tensor (a residual sum)
        self.n_out = 0
        self.uses = []
        self.raised = False
        self.unwound = False
        self.catcher = None  # Call, or "outside"
        self.done = False
        self.pass_ = None


class Pass:
    def __init__(self, num):
        self.num = num
        self.calls = []
        self.grad = True
        self.loss = []
        self.aborted = False
        self.batch_rg = None
        self.backwards = 0
        self.root_out_nodes = []


class Scenario:
    """A captured program: module tree, parameters, steps; write_scn()
    writes the .scn and the real traces; check() runs the simulator."""

    def __init__(self):
        self.modules = []  # (name, parent, path, class)
        self.params = []   # dict(name, owner, numel, elem_size, frozen, path)
        self.uses = []     # (module, param)
        self.steps = []    # (kind, [Pass])
        self.traces = {p: [] for p in POLICIES}
        self.notes = []    # approximations: "module path: construct"
        self.limits = []   # bounds of the scenario model exceeded (no .scn can be written)
        self.info = []     # header comment lines
        self.checked = None
        self.expect = None

    # -- .scn text -----------------------------------------------------

    def _ref(self, r):
        return r

    def scn_text(self):
        L = []
        L.append("# captured by zoffload.capture (python/zoffload/capture.py) from a real run")
        for s in self.info:
            L.append("# " + s)
        if self.notes:
            L.append("# simplifications (the exactness check decides whether they change hook timing):")
            for n in self.notes:
                L.append("#   " + n)
        if self.checked:
            L.append("# exactness: " + self.checked)
        if self.expect:
            L.append(self.expect)
        # module tree
        depth = {}
        for i, (name, parent, path, cls) in enumerate(self.modules):
            d = 0 if parent is None else depth[parent] + 1
            depth[i] = d
            L.append("%smodule %s  # @%d %s %s" % ("  " * d, name, i, path or "(root)", cls))
        for i, p in enumerate(self.params):
            s = "param %s owner=@%d numel=%d" % (p["name"], p["owner"], p["numel"])
            if p["elem_size"] != 4:
                s += " elem_size=%d" % p["elem_size"]
            if p["frozen"]:
                s += " frozen"
            L.append(s + "  # @%d %s" % (i, p["path"]))
        for m, p in self.uses:
            L.append("use @%d @%d" % (m, p))
        for kind, passes in self.steps:
            multi = kind in ("accum", "interleave")
            if multi:
                L.append("step %s" % kind)
            for ps in passes:
                loss = ("loss=" + ",".join(str(j) for j in sorted(ps.loss))) if ps.loss else ""
                if multi:
                    L.append(("  pass " + loss).rstrip())
                    base = 2
                else:
                    L.append(("step %s %s" % (kind, loss)).rstrip())
                    base = 1
                for c in ps.calls:
                    d = 0
                    q = c.parent
                    while q is not None:
                        d += 1
                        q = q.parent
                    s = "call @%d(%s)" % (c.module, ", ".join(c.inputs + ["kw=" + k for k in c.kw]))
                    if c.n_out:
                        s += " -> %d" % c.n_out
                    if c.alias:
                        s += " alias(%s)" % ", ".join("%d=%s" % (j, c.alias[j]) for j in sorted(c.alias))
                    if c.norg and c.n_out:
                        s += " nograd(%s)" % ", ".join(str(j) for j in c.norg)
                    if c.uses:
                        s += " use(%s)" % ", ".join(c.uses)
                    if c.nosave and c.n_out and len(c.alias) < c.n_out:
                        s += " nosave"
                    if c.no_grad:
                        s += " no_grad"
                    if c.ckpt:
                        s += " ckpt=" + ("body-" if c.ckpt_body else "") + c.ckpt
                    if c.raised:
                        if c.catcher == "outside" or c.catcher is None:
                            s += " raise=outside"
                        else:
                            k, q = 0, c
                            while q is not c.catcher:
                                q = q.parent
                                k += 1
                            s += " raise=up%d" % k
                    L.append("  " * (base + d) + s + "  # " + (c.path or "(root)"))
        return "\n".join(L) + "\n"

    def write_scn(self, path, traces=True):
        """Writes the .scn and, with traces, PATH.trace.<policy> for each
        policy: the real hook traces.  A regular file (or a new name) is
        written through a temporary file renamed over it, so it never holds
        a partial scenario; a symbolic link's target the same way (the link
        stays); anything else that exists (a device, a FIFO) is written
        into, as a shell redirection would.  Raises CaptureError (nothing
        left behind) when it cannot be written."""
        check_output(path)
        text = self.scn_text()
        real = os.path.realpath(path)
        try:
            if os.path.exists(real) and not os.path.isfile(real):
                with open(real, "w") as f:
                    f.write(text)
            else:
                fd, tmp = tempfile.mkstemp(dir=os.path.dirname(real), prefix=".capture-", suffix=".scn")
                try:
                    with os.fdopen(fd, "w") as f:
                        f.write(text)
                    um = os.umask(0)
                    os.umask(um)
                    os.chmod(tmp, 0o666 & ~um)  # what open() gives the traces (mkstemp makes 0600)
                    os.replace(tmp, real)
                except BaseException:
                    try:
                        os.unlink(tmp)
                    except OSError:
                        pass
                    raise
            if traces:
                for pol in POLICIES:
                    with open("%s.trace.%s" % (path, pol), "w") as f:
                        f.write("\n".join(self.traces[pol]) + "\n")
        except OSError as e:
            raise CaptureError("capture: cannot write %s: %s" % (path, e.strerror or e)) from None

    # -- exactness ------------------------------------------------------

    def check(self, zofuzz):
        """Runs the simulator (`zofuzz traces`) on this scenario and
        compares its trace with the real one under every policy.  Returns
        (ok, message).  ok is None when the simulator refuses the file."""
        work = tempfile.mkdtemp(prefix="zo-capture-")
        try:
            f = os.path.join(work, "captured.scn")
            with open(f, "w") as fh:
                fh.write(self.scn_text())
            out = os.path.join(work, "sim")
            os.makedirs(out)
            r = subprocess.run([zofuzz, "traces", out, f], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
            if r.returncode != 0:
                return None, "the simulator refused the scenario: %s" % (r.stderr.strip() or r.stdout.strip())
            bad = []
            for pol in POLICIES:
                tf = os.path.join(out, "0.%s.trace" % pol)
                if not os.path.isfile(tf):
                    return None, ("%s traces wrote no %s: is it zoffload's zofuzz?"
                                  % (zofuzz, os.path.basename(tf)))
                with open(tf) as fh:
                    sim = fh.read().splitlines()
                real = self.traces[pol]
                i = _first_diff(sim, real)
                if i >= 0:
                    ctx = "; ".join("%d: sim %r real %r" % (
                        j + 1, sim[j] if j < len(sim) else "<end>", real[j] if j < len(real) else "<end>")
                        for j in range(max(0, i - 2), i + 1))
                    bad.append("%s: first difference at line %d (%s)" % (pol, i + 1, ctx))
            if bad:
                return False, "\n".join(bad)
            n = len(self.traces["reset-on-forward"])
            return True, "the simulator's trace equals the real trace under all four policies (%d lines each)" % n
        finally:
            shutil.rmtree(work, ignore_errors=True)


def _first_diff(a, b):
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else None
        y = b[i] if i < len(b) else None
        if x is not None and y is not None and x.startswith("TORCHERROR ") and y.startswith("TORCHERROR "):
            if x.startswith(y) or y.startswith(x):
                continue
        if x != y:
            return i
    return -1


# ----------------------------------------------------------------------
# The recorder
# ----------------------------------------------------------------------


def _short_names(paths):
    """.scn names (<= 23 bytes, [A-Za-z_][A-Za-z0-9_.-]*): the dotted path's
    last components that fit (the full path is in the line's comment); a
    leading layer index keeps its container's initial (layers.0.mlp ->
    l0.mlp)."""
    out = []
    for p in paths:
        comps = [re.sub(r"[^A-Za-z0-9_-]", "_", c) or "_" for c in p.split(".")] if p else ["_"]
        k = len(comps) - 1
        name = comps[k][:NAME_LEN]
        while k > 0:
            cand = comps[k - 1] + "." + name
            if len(cand) > NAME_LEN:
                break
            name, k = cand, k - 1
        if not re.match(r"[A-Za-z_]", name):
            lead = comps[k - 1][0] if k > 0 and re.match(r"[A-Za-z_]", comps[k - 1]) else "_"
            name = (lead + name)[:NAME_LEN]
        out.append(name)
    return out


class _Recorder:
    def __init__(self, model):
        if not isinstance(model, torch.nn.Module):
            raise CaptureError("capture: the model is a %s, not a torch.nn.Module" % type(model).__name__)
        self.model = model
        self.sc = Scenario()
        self.counters = {p: _Counters() for p in LEGACY}
        self.buf = {p: [] for p in POLICIES}  # current step's lines
        self.handles = []
        self.graph_count = 0
        self.bwd_epoch = 0
        self.ctx = []  # "F"/"B"
        self.stack = []  # structure: open calls of the pass being recorded
        self.cur = None  # Pass being recorded
        self.events = []  # this step: ("F", pass) / ("B", pass, retain) / ("O",)
        self.pending_ckpt = []  # checkpoint kinds entered, not yet matched to a call
        self.recompute = 0  # depth of checkpoint recomputes (no structure recorded)
        self.pending_inner = []
        self.raise_open = None  # raising call whose catcher is not known yet
        self.abort_line = None
        self.nodes_keep = []
        self.module_path = {}
        self.pgrad_seen = {}
        self.saves = False
        self.last_raised = None
        self.rerec = None  # calls of a reentrant region re-recorded in its recompute (grad on)
        self.ckpt_outer_grad = []
        self.last_ckpt_call = None
        # (id(grad_fn), output_nr) of each recorded call's outputs as its op
        # made them (before hook C) -> (call, j): a tensor the module cached
        # on self and the caller reads afterwards (.scn outK.J.raw)
        self.raw_nodes = {}
        self.build_tree()

    # -- tree -------------------------------------------------------------

    def build_tree(self):
        mods = list(self.model.named_modules())
        if len(mods) > MAX_MODULES:
            self.limit("%d modules, the scenario model holds %d (ZS_MAX_MODULES)" % (len(mods), MAX_MODULES))
        self.mid = {}
        names = _short_names([p or type(m).__name__ for p, m in mods])
        for i, (path, m) in enumerate(mods):
            self.mid[id(m)] = i
            self.module_path[i] = path
        self.mods = [m for _, m in mods]
        for i, (path, m) in enumerate(mods):
            parent = None
            if i > 0:
                parent = self.mid[id(self._parent_of(path, mods))]
            self.sc.modules.append((names[i], parent, path, type(m).__name__))
        # parameters: owner = the module that named_parameters() reaches
        # first; every other module holding the same tensor uses it
        pid = {}
        ppaths = []
        for path, p in self.model.named_parameters():
            if id(p) in pid:
                continue
            owner_path, _, local = path.rpartition(".")
            owner = self.mid[id(self.model.get_submodule(owner_path))]
            pid[id(p)] = len(self.sc.params)
            if p.numel() > MAX_NUMEL:
                raise CaptureError("capture: parameter %s has %d elements, over the model's %d"
                                   % (path, p.numel(), MAX_NUMEL))
            if p.numel() == 0:
                raise CaptureError("capture: parameter %s is empty (numel 0)" % path)
            self.sc.params.append(dict(owner=owner, numel=p.numel(), elem_size=p.element_size(),
                                       frozen=not p.requires_grad, path=path))
            ppaths.append(path)
        if not self.sc.params:
            raise CaptureError("capture: the model (%s) has no parameters: ZeRO-3 has nothing to "
                               "partition" % type(self.model).__name__)
        if len(self.sc.params) > MAX_PARAMS:
            self.limit("%d parameters, the scenario model holds %d (ZS_MAX_PARAMS)"
                       % (len(self.sc.params), MAX_PARAMS))
        for i, n in enumerate(_short_names(ppaths)):
            self.sc.params[i]["name"] = n
        for i, m in enumerate(self.mods):
            for local, p in m.named_parameters(recurse=False, remove_duplicate=False):
                j = pid[id(p)]
                if self.sc.params[j]["owner"] != i and (i, j) not in self.sc.uses:
                    self.sc.uses.append((i, j))
        if len(self.sc.uses) > MAX_USES:
            self.limit("%d tied/external uses, the model holds %d (ZS_MAX_USES)" % (len(self.sc.uses), MAX_USES))
        self.pid = pid
        self.params = [None] * len(pid)
        for path, p in self.model.named_parameters():
            self.params[pid[id(p)]] = p
        # the parameter set each module's op reads (own + tied uses)
        self.pset = [set() for _ in self.mods]
        for j, p in enumerate(self.sc.params):
            self.pset[p["owner"]].add(j)
        for m, j in self.sc.uses:
            self.pset[m].add(j)

    def _parent_of(self, path, mods):
        parent_path = path.rpartition(".")[0]
        # named_modules dedups shared modules: walk up to a listed one
        while True:
            try:
                m = self.model.get_submodule(parent_path)
            except AttributeError:
                m = None
            if m is not None and id(m) in self.mid:
                return m
            if not parent_path:
                return self.model
            parent_path = parent_path.rpartition(".")[0]

    # -- output -----------------------------------------------------------

    def emit(self, s):
        for p in POLICIES:
            self.buf[p].append(s)

    def emit_per(self, lines):
        for p in POLICIES:
            self.buf[p].append(lines[p])

    def limit(self, what):
        """A bound of the scenario model the capture exceeds: recorded, the
        run goes on (its trace and timing are still measured), and capture()
        refuses at the end."""
        if what not in self.sc.limits and len(self.sc.limits) < 20:
            self.sc.limits.append(what)

    def note(self, path, what):
        s = "%s: %s" % (path or "(root)", what)
        if s not in self.sc.notes:
            self.sc.notes.append(s)

    # -- hooks --------------------------------------------------------------

    def install(self):
        for i, m in enumerate(self.mods):
            self.handles.append(m.register_forward_pre_hook(self.hook_a, with_kwargs=True))
            self.handles.append(m.register_forward_hook(self.hook_b))
            self.handles.append(m.register_forward_hook(self.hook_c))
            self.handles.append(m.register_forward_pre_hook(self.hook_d))
            self.handles.append(m.register_forward_hook(self.hook_x, always_call=True))
        for j, p in enumerate(self.params):
            if p.requires_grad:
                self.handles.append(p.register_post_accumulate_grad_hook(
                    lambda t, j=j: self.pgrad(j)))
        for i in range(len(self.mods)):
            self.counters["init-at-register"].grads[i] = 0  # 0 once at registration

    def pgrad(self, j):
        if j not in self.pgrad_seen:
            self.pgrad_seen[j] = len(self.pgrad_seen)
        self.emit("PGRAD p=%d" % j)

    def renumber_params(self):
        """Parameter ids in the order their gradients first became ready in
        the real run (the rest after, in named_parameters() order).  Within
        one op the simulator readies AccumulateGrad nodes in parameter order,
        as torch readies them in the op's edge order (nn.Linear: bias before
        weight); ds_id order changes no other trace line."""
        n = len(self.sc.params)
        order = sorted(range(n), key=lambda j: (self.pgrad_seen.get(j, n), j))
        new = {old: k for k, old in enumerate(order)}
        self.sc.params = [self.sc.params[o] for o in order]
        self.sc.uses = sorted((m, new[p]) for m, p in self.sc.uses)
        pterm = re.compile(r"param\(#(\d+)\)")
        for kind, passes in self.sc.steps:
            for ps in passes:
                for c in ps.calls:
                    c.inputs = [pterm.sub(lambda m: "param(@%d)" % new[int(m.group(1))], t) for t in c.inputs]
                    c.kw = [pterm.sub(lambda m: "param(@%d)" % new[int(m.group(1))], t) for t in c.kw]
        pat = re.compile(r"^PGRAD p=(\d+)$")
        for pol in POLICIES:
            self.sc.traces[pol] = [("PGRAD p=%d" % new[int(m.group(1))]) if m else ln
                                   for ln in self.sc.traces[pol] for m in [pat.match(ln)]]

    def remove(self):
        for h in self.handles:
            h.remove()
        self.handles = []

    def in_recompute(self):
        """A checkpoint recompute: reentrant (counted by the wrapper) or
        non-reentrant (module calls inside a backward)."""
        return self.recompute > 0 or (bool(self.ctx) and self.ctx[-1] == "B")

    def recording(self):
        return (not self.in_recompute() and self.cur is not None) or self.rerec is not None

    def hook_a(self, module, args, kwargs):
        mid = self.mid.get(id(module))
        if mid is None:
            return None
        path = self.module_path[mid]
        if not self.in_recompute() and not self.stack:
            # a call made by the step's code: it must be the root module
            if mid != 0:
                raise CaptureError("capture: the step calls module %s (%s) directly; only the model "
                                   "itself may be called by the step" % (path, type(module).__name__))
            self.begin_pass()
        if self.raise_open is not None and self.recording():
            self.close_raise(self.stack[-1] if self.stack else None)
        self.emit("A m=%d" % mid)
        if self.rerec is not None:
            # a reentrant recompute: the same calls in the same order, now
            # with grad - their tensors' structure is taken from here
            if not self.rerec or self.rerec[0].module != mid:
                raise CaptureError("capture: the recompute of a reentrant checkpoint calls %s, not "
                                   "what its forward called (data-dependent control flow)" % path)
            c = self.rerec.pop(0)
            c.rerecorded = True
            c.grad = torch.is_grad_enabled()
            if self.stack:  # below the checkpointed call: grad mode as the recompute runs it
                c.no_grad = not c.grad and self.stack[-1].grad
            c.norg = []
            if self.stack and self.stack[0].ckpt_body:
                # a checkpointed body's recompute: its calls' keyword tensors
                # require grad now (the forward ran them under no_grad)
                c.kw, c.kw_nodes = [], {}
                self.record_kw(c, self.stack[-1], kwargs, path)
            self.stack.append(c)
            return None
        if self.recording():
            ps = self.cur
            parent = self.stack[-1] if self.stack else None
            if parent is not None and not self.is_ancestor(parent.module, mid):
                raise CaptureError("capture: module %s is called from the forward of %s, which is not "
                                   "an ancestor of it (a call across the module tree)" % (
                                       path, parent.path or "(root)"))
            c = Call(len(ps.calls), mid, parent, path)
            c.pass_ = ps
            if len(ps.calls) == MAX_CALLS:
                self.limit("more than %d module calls in one forward pass (ZS_MAX_CALLS; from %s on)"
                           % (MAX_CALLS, path))
            ps.calls.append(c)
            if parent is not None:
                parent.children.append(c)
                if len(parent.children) == MAX_CHILD_CALLS + 1:
                    self.limit("%s makes more than %d child calls in one call (ZS_MAX_CHILD_CALLS)"
                               % (parent.path or "(root)", MAX_CHILD_CALLS))
                c.no_grad = not torch.is_grad_enabled() and self.grad_of(parent)
            else:
                ps.grad = torch.is_grad_enabled()
            c.grad = torch.is_grad_enabled()
            c.rerecorded = False
            if parent is not None and any(q.ckpt == "reentrant" for q in [parent] + list(self._ancestors(parent))):
                # a reentrant region's first pass runs under no_grad; what
                # its calls do with grad is recorded in the recompute
                c.grad = parent.grad
                c.no_grad = False
            if self.pending_ckpt:
                c.ckpt = self.pending_ckpt.pop()
                if c.ckpt and (parent is None):
                    raise CaptureError("capture: checkpoint around the root module call is unsupported")
                if c.ckpt == "reentrant":
                    # CheckpointFunction.forward runs the region under no_grad;
                    # the call itself is made in the caller's grad mode
                    # (Function.forward runs with grad off: the caller's mode is its call's)
                    c.grad = self.grad_of(parent)
                    c.no_grad = not c.grad and self.grad_of(parent)
                    self.last_ckpt_call = c
            self.record_kw(c, parent, kwargs, path)
            self.stack.append(c)
        return None

    def record_kw(self, c, parent, kwargs, path):
        """Keyword tensors that require grad: DeepSpeed's hook D does not
        see them, they reach the forward unwrapped (.scn kw=...)."""
        for k, v in (kwargs or {}).items():
            for t in _tensors(v, []):
                if not t.requires_grad:
                    continue
                if parent is None:
                    raise CaptureError("capture: the model is called with keyword tensor %r that "
                                       "requires grad (pass it positionally)" % k)
                if c.ckpt:
                    raise CaptureError("capture: %s is checkpointed and takes keyword tensor %r that "
                                       "requires grad (unsupported)" % (path, k))
                if len(c.kw) >= MAX_KW:
                    raise CaptureError("capture: %s takes more than %d keyword tensors that require "
                                       "grad" % (path, MAX_KW))
                if t.grad_fn is None:
                    raise CaptureError("capture: %s takes keyword leaf tensor %r that requires grad "
                                       "(unsupported)" % (path, k))
                c.kw_nodes[id(t.grad_fn)] = len(c.kw)
                self.nodes_keep.append(t.grad_fn)
                c.kw.append(self.src_ref(c, t, "keyword input %r" % k))

    def is_ancestor(self, a, m):
        m = self.sc.modules[m][1]
        while m is not None:
            if m == a:
                return True
            m = self.sc.modules[m][1]
        return False

    def reparent(self):
        """The scenario's tree: each module hangs under its nearest ancestor
        that the step calls (containers that are never called, such as an
        nn.ModuleList of layers, keep their place in named_modules() order
        but lose their children).  Module ids and hooks are unchanged, and
        the order stays DFS pre-order (an ancestor of the parent is an
        ancestor of the previous module too)."""
        called = {0}
        for kind, passes in self.sc.steps:
            for ps in passes:
                for c in ps.calls:
                    called.add(c.module)
        mods = self.sc.modules
        moved = []
        for i in range(1, len(mods)):
            name, parent, path, cls = mods[i]
            p = parent
            while p not in called:
                p = mods[p][1]
            if p != parent:
                moved.append(path)
            mods[i] = (name, p, path, cls)
        for kind, passes in self.sc.steps:
            for ps in passes:
                for c in ps.calls:
                    if c.parent is not None and mods[c.module][1] != c.parent.module:
                        raise CaptureError("capture: %s calls %s, whose nearest called ancestor is %s "
                                           "(the scenario model's calls go from a module to its child)"
                                           % (c.parent.path or "(root)", c.path,
                                              mods[mods[c.module][1]][2] or "(root)"))
        if moved:
            self.sc.info.append("tree: %d module(s) hang under their nearest called ancestor "
                                "(uncalled containers skipped), e.g. %s" % (len(moved), moved[0]))

    def grad_of(self, c):
        return c.grad

    def module_parent(self, mid):
        return self.sc.modules[mid][1]

    def hook_d(self, module, inputs):
        mid = self.mid.get(id(module))
        if mid is None:
            return None
        tensors = _tensors(inputs, [])
        k = sum(1 for x in tensors if x.requires_grad)
        window = None
        if torch.is_grad_enabled() and k > 0 and self.ctx and self.ctx[-1] == "F":
            window = {"count": k, "k": k, "epoch": self.bwd_epoch}
        befores = {}
        for pol in LEGACY:
            st = self.counters[pol]
            if pol == "reset-on-forward":
                befores[pol] = str(st.grads[mid]) if mid in st.grads else "?"
                st.grads[mid] = 0
            else:
                befores[pol] = str(st.grads[mid]) if mid in st.grads else "?"
        call = self.stack[-1] if self.recording() and self.stack else None
        if call is not None and self.rerec is not None and len(self.stack) == 1:
            call.inputs_saved = call.inputs
        if call is not None:
            if len(tensors) > MAX_IN:
                self.limit("%s takes %d positional tensors, the model holds %d (ZS_MAX_IN)"
                           % (call.path or "(root)", len(tensors), MAX_IN))
            if self.rerec is not None and len(self.stack) == 1:
                pass  # the checkpointed call's inputs were recorded in the forward
            else:
                call.inputs = [self.in_ref(call, x, j) for j, x in enumerate(tensors)]
        idx = [0]

        def wrap(x):
            j = idx[0]
            idx[0] += 1
            return _PostBackward.apply(self, mid, window, ("D", call, j), x)

        wrapped = _apply_tensors(wrap, inputs)
        rg = ",".join("1" if x.requires_grad else "0" for x in tensors)
        lines = {}
        for pol in LEGACY:
            st = self.counters[pol]
            after = str(st.grads[mid]) if mid in st.grads else "?"
            lines[pol] = "D m=%d n=%d rg=%s c=%s->%s" % (mid, len(tensors), rg, befores[pol], after)
        lines["per-call"] = "D m=%d n=%d rg=%s c=0->%s" % (mid, len(tensors), rg,
                                                          str(window["count"]) if window else "0")
        self.emit_per(lines)
        return wrapped

    def hook_b(self, module, inputs, outputs):
        mid = self.mid.get(id(module))
        if mid is None:
            return None
        self.emit("B m=%d" % mid)
        return None

    def hook_c(self, module, inputs, outputs):
        mid = self.mid.get(id(module))
        if mid is None:
            return None
        tensors = _tensors(outputs, [])
        call = self.stack[-1] if self.recording() and self.stack else None
        if call is not None:
            if len(tensors) > MAX_OUT:
                self.limit("%s returns %d tensors, the model holds %d (ZS_MAX_OUT)"
                           % (call.path or "(root)", len(tensors), MAX_OUT))
            call.n_out = len(tensors)
            if torch.is_grad_enabled():
                call.norg = [j for j, y in enumerate(tensors) if not y.requires_grad]
            if self.raise_open is not None:
                self.close_raise(call)
            if call.ckpt_body and call.ckpt == "reentrant" and self.rerec is None:
                # CheckpointFunction's outputs: the body's op is recorded in
                # its recompute (_ckpt_fwd), where it runs with grad
                pass
            else:
                self.record_op(call, tensors)
                for j, y in enumerate(tensors):
                    if y.requires_grad and y.grad_fn is not None and j not in call.alias:
                        self.raw_nodes[(id(y.grad_fn), y.output_nr)] = (call, j)
                        self.nodes_keep.append(y.grad_fn)
        befores = {p: str(self.counters[p].refs.get(mid, 0)) for p in LEGACY}
        idx = [0]

        def wrap(y):
            j = idx[0]
            idx[0] += 1
            return _PreBackward.apply(self, mid, ("C", call, j), y)

        wrapped = _apply_tensors(wrap, outputs)
        wt = _tensors(wrapped, [])
        rg = ",".join("1" if y.requires_grad else "0" for y in wt)
        lines = {"per-call": "C m=%d n=%d rg=%s r=?->?" % (mid, len(wt), rg)}
        for p in LEGACY:
            lines[p] = "C m=%d n=%d rg=%s r=%s->%d" % (mid, len(wt), rg, befores[p],
                                                       self.counters[p].refs.get(mid, 0))
        self.emit_per(lines)
        if call is not None:
            call.done = True
        return wrapped

    def hook_x(self, module, inputs, outputs):
        """always_call forward hook registered last: closes the call in the
        structure; without hook C having run, the forward raised."""
        mid = self.mid.get(id(module))
        if mid is None or not self.recording() or not self.stack:
            if mid == 0 and self.recompute == 0 and self.cur is not None and not self.stack:
                pass
            return None
        call = self.stack[-1]
        if call.module != mid:
            return None
        self.stack.pop()
        if self.rerec is not None:
            if not call.done:
                raise CaptureError("capture: %s raised in a checkpoint recompute" % call.path)
            if not self.stack:
                if self.rerec:
                    raise CaptureError("capture: the recompute of a reentrant checkpoint at %s made "
                                       "fewer calls than its forward" % call.path)
                self.rerec = None
            return None
        if not call.done:
            if call.ckpt or any(q.ckpt for q in self._ancestors(call)):
                raise CaptureError("capture: %s raised inside a checkpointed region (unsupported)"
                                   % (call.path or "(root)"))
            call.unwound = True
            call.n_out = 0
            call.uses = []
            call.alias = {}
            call.norg = []
            if self.raise_open is None:
                # the innermost unwound call is the one that raised
                call.raised = True
                self.raise_open = call
                self.last_raised = call
                self.abort_line = len(self.buf["per-call"])
        elif self.raise_open is not None:
            self.close_raise(call)
        if not self.stack:
            self.end_pass()
        return None

    def _ancestors(self, c):
        q = c.parent
        while q is not None:
            yield q
            q = q.parent

    def close_raise(self, catcher):
        c = self.raise_open
        self.raise_open = None
        c.catcher = catcher if catcher is not None else "outside"
        cm = catcher.module if catcher is not None else -1
        for p in POLICIES:
            self.buf[p].insert(self.abort_line, "ABORT catcher=%d" % cm)

    # -- structure --------------------------------------------------------

    def walk(self, roots, scope):
        """Sources of the tensors whose grad_fn nodes are `roots`, in the
        scope of call `scope`: its wrapped inputs (argI), its children's
        outputs (outK.J); parameters reached; foreign hook nodes; whether
        parameter-free nodes lie in between."""
        refs, params, foreign, leaves = set(), set(), [], []
        inner = 0
        seen = set()
        stack = [(n, 0) for n in roots if n is not None]
        while stack:
            n, nr = stack.pop()
            tag = getattr(n, "zo_tag", None)
            if tag is not None and tag[0] == "K":
                # a reentrant checkpoint's outputs: the checkpointed call's
                # output nr (several edges may reach it, one per output)
                call = tag[1]
                if call is not None and call.parent is scope and scope is not None:
                    refs.add((1, call.parent.children.index(call), nr))
                else:
                    foreign.append(tag)
                continue
            rk = self.raw_nodes.get((id(n), nr))
            if rk is not None and scope is not None and rk[0].parent is scope:
                # a child's output as its op made it (cached on the module):
                # this path bypasses the child's hook C
                refs.add((2, scope.children.index(rk[0]), rk[1]))
                continue
            if id(n) in seen:
                continue
            seen.add(id(n))
            self.nodes_keep.append(n)
            if scope is not None and id(n) in scope.kw_nodes:
                refs.add((0, 0, len(scope.inputs) + scope.kw_nodes[id(n)]))
                continue
            tag = getattr(n, "zo_tag", None)
            if tag is not None:
                kind, call, j = tag
                if kind == "D" and call is scope and call is not None:
                    refs.add((0, 0, j))
                elif kind == "C" and call is not None and call.parent is scope and scope is not None:
                    refs.add((1, call.parent.children.index(call), j))
                else:
                    foreign.append(tag)
                continue
            if type(n).__name__ == "AccumulateGrad":
                v = n.variable
                if id(v) in self.pid:
                    params.add(self.pid[id(v)])
                elif scope is not None and id(v) in scope.rec_args:
                    # a checkpointed body's recompute: its detached input
                    refs.add((0, 0, scope.rec_args[id(v)]))
                else:
                    leaves.append(v)
                continue
            inner += 1
            if not self.saves and _saves_tensor(n):
                self.saves = True
            for nf, k in n.next_functions:
                if nf is not None:
                    stack.append((nf, k))
        return refs, params, foreign, leaves, inner

    def walk_tensor(self, x, scope):
        """walk() from tensor x (its output number counts at a checkpoint's node)."""
        tag = getattr(x.grad_fn, "zo_tag", None)
        if tag is not None and tag[0] == "K":
            call = tag[1]
            if call is not None and call.parent is scope and scope is not None:
                return {(1, call.parent.children.index(call), x.output_nr)}, set(), [], [], 0
        rk = self.raw_nodes.get((id(x.grad_fn), x.output_nr))
        if rk is not None and scope is not None and rk[0].parent is scope:
            return {(2, scope.children.index(rk[0]), rk[1])}, set(), [], [], 0
        return self.walk([x.grad_fn], scope)

    @staticmethod
    def ref_text(r):
        kind, k, j = r
        return ("arg%d" % j) if kind == 0 else ("out%d.%d" % (k, j)) if kind == 1 else ("out%d.%d.raw" % (k, j))

    def in_ref(self, call, x, j):
        """The .scn reference of positional input j of `call` (caller scope)."""
        path = call.path or "(root)"
        parent = call.parent
        if not x.requires_grad:
            return "batch" if parent is None else "arg0.detach" if False else self.norg_ref(call)
        if parent is None:
            if x.grad_fn is None and id(x) not in self.pid:
                if self.cur.batch_rg is not None and self.cur.batch_rg is not x:
                    raise CaptureError("capture: the root call takes two leaf tensors that require grad; "
                                       "the model has one per pass")
                self.cur.batch_rg = x
                return "batch_rg"
            raise CaptureError("capture: the model's input %d requires grad and is computed by the step's "
                               "code (not a leaf): unsupported" % j)
        if x.grad_fn is None and id(x) in parent.rec_args:
            return "arg%d" % parent.rec_args[id(x)]  # a checkpointed body's recompute input
        if x.grad_fn is None:
            if id(x) in self.pid:
                raise CaptureError("capture: %s receives a parameter as input %d (unsupported)" % (path, j))
            raise CaptureError("capture: %s receives a leaf tensor that requires grad from inside the "
                               "forward of %s (unsupported)" % (path, parent.path or "(root)"))
        return self.src_ref(call, x, "input %d" % j)

    def src_ref(self, call, x, what):
        """The .scn reference (caller's scope) of tensor x passed to `call`:
        one source, or a mixed input "a + b" (a parameter-free op of the
        caller over several of its tensors, such as a residual sum)."""
        path = call.path or "(root)"
        parent = call.parent
        refs, params, foreign, leaves, inner = self.walk_tensor(x, parent)
        if foreign or leaves:
            self.note(path, "%s reaches tensors from outside its caller's scope (cached tensors)" % what)
        own = sorted(params & self.pset[parent.module]) if parent is not None else []
        if params - set(own):
            self.note(path, "%s is computed with parameter(s) %s read directly by the caller "
                      "%s between child calls" % (what, ",".join(self.sc.params[p]["path"]
                                                           for p in sorted(params - set(own))),
                                                  parent.path or "(root)"))
        if not refs and own:
            # only the caller's own parameters: an op over a tensor without
            # grad (the batch stands for it) and them
            if call.n_mix + len(own) > MAX_MIX:
                raise CaptureError("capture: %s: its inputs mix more than %d extra tensors" % (path, MAX_MIX))
            call.n_mix += len(own)
            return " + ".join([self.norg_ref(call)] + ["param(#%d)" % j for j in own])
        if not refs:
            self.note(path, "%s requires grad but reaches nothing in its caller's scope" % what)
            return self.norg_ref(call)
        rs = sorted(refs)
        if inner > len(rs) - 1 + (1 if len(rs) > 1 else 0):
            self.note(path, "%s is %s through %d parameter-free op node(s) in the caller's body "
                      "(modelled as %s)" % (what, "+".join(self.ref_text(r) for r in rs), inner,
                                            "one op" if len(rs) > 1 else "a direct reference"))
        # the caller's own parameters read by the op computing the input
        # (fused MoE experts: gate_up_proj before act_fn): .scn param(...)
        # terms, "#J" the capture-time id (renumber_params writes the final one)
        terms = [self.ref_text(r) for r in rs] + ["param(#%d)" % j for j in own]
        if len(terms) > 1:
            if call.n_mix + len(terms) - 1 > MAX_MIX:
                raise CaptureError("capture: %s: its inputs mix more than %d extra tensors" % (path, MAX_MIX))
            call.n_mix += len(terms) - 1
        return " + ".join(terms)

    def norg_ref(self, call):
        """A reference that does not require grad in the caller's scope."""
        if call.parent is None:
            return "batch"
        # every arg/out has a .detach form: use the caller's first input, or
        # the batch when it has none
        return "batch"

    def direct_ref(self, call, y):
        """ref text if y is a tensor of call's scope itself (its wrapped
        input, a keyword input, a child's output), else None."""
        if not y.requires_grad or y.grad_fn is None:
            return None
        n = y.grad_fn
        if id(n) in call.kw_nodes:
            return "arg%d" % (len(call.inputs) + call.kw_nodes[id(n)])
        tag = getattr(n, "zo_tag", None)
        if tag is None:
            return None
        kind, c, j = tag
        if kind == "K":
            j = y.output_nr
            kind = "C"
        if kind == "D" and c is call:
            return "arg%d" % j
        if kind == "C" and c is not None and c.parent is call:
            return "out%d.%d" % (call.children.index(c), j)
        return None

    def record_op(self, call, tensors):
        """The op of `call` that produced its outputs `tensors`: aliased
        outputs, the tensors it consumes, whether it saves any."""
        call.alias = {}
        for j, y in enumerate(tensors):
            r = self.direct_ref(call, y)
            if r is not None:
                call.alias[j] = r
        call.uses = self.op_uses(call, [y for j, y in enumerate(tensors) if j not in call.alias])

    def op_uses(self, call, outs):
        roots = [y.grad_fn for y in outs if y.requires_grad]
        self.saves = False
        refs, params, foreign, leaves, inner = self.walk(roots, call)
        call.nosave = bool(roots) and not self.saves and not params
        path = call.path or "(root)"
        if foreign:
            self.note(path, "its outputs depend on tensors from outside its scope (keyword or cached "
                      "tensors): not representable, left out")
        if leaves and call.parent is not None:
            self.note(path, "its outputs depend on a leaf tensor that is not a parameter")
        mine = self.pset[call.module]
        other = params - mine
        if other:
            self.note(path, "its op reads parameter(s) %s owned by other modules"
                      % ",".join(self.sc.params[p]["path"] for p in sorted(other)))
        if roots and mine - params and any(not self.sc.params[p]["frozen"] for p in mine - params):
            self.note(path, "its op does not read its parameter(s) %s"
                      % ",".join(self.sc.params[p]["path"] for p in sorted(mine - params)))
        rs = sorted(refs)
        if len(rs) > MAX_USE:
            self.note(path, "its op consumes %d tensors; the model holds %d (kept the last %d)"
                      % (len(rs), MAX_USE, MAX_USE))
            rs = rs[-MAX_USE:]
        if call.parent is None:
            rs = [r for r in rs]
        return [self.ref_text(r) for r in rs]

    # -- passes, backward, steps -----------------------------------------

    def begin_pass(self):
        ps = Pass(self.graph_count)
        self.graph_count += 1
        self.cur = ps
        self.emit("FWD g=%d" % ps.num)
        self.ctx.append("F")
        self.events.append(("F", ps))

    def end_pass(self):
        ps = self.cur
        self.ctx.pop()
        root = ps.calls[0]
        if root.unwound:
            if self.raise_open is not None:
                self.close_raise(None)
            ps.aborted = True
        else:
            self.emit("ENDFWD g=%d" % ps.num)
            if not ps.grad:
                self.emit("DISCARD g=%d" % ps.num)
        self.cur = None

    def pass_of_loss(self, t):
        roots = [t.grad_fn] if t.grad_fn is not None else []
        refs, params, foreign, leaves, inner = self.walk(roots, None)
        found = {}
        for tag in foreign:
            kind, call, j = tag
            if kind == "C" and call is not None and call.parent is None:
                found.setdefault(call.pass_, set()).add(j)
            else:
                raise CaptureError("capture: the loss depends on a tensor of module %s that is not "
                                   "one of the model's outputs (an intermediate read by the step: "
                                   "the scenario model's losses are sums of root outputs)" % (
                                       call.path if call is not None else "?"))
        if params:
            raise CaptureError("capture: the loss reads parameters directly (%s): unsupported"
                               % ",".join(self.sc.params[p]["path"] for p in sorted(params)))
        if len(found) != 1:
            raise CaptureError("capture: the loss depends on %d forward passes' outputs; one expected"
                               % len(found))
        return found.popitem()

    def traced_backward(self, tensors, grad_tensors=None, retain_graph=None, create_graph=False,
                        grad_variables=None, inputs=None):
        if self.ctx and self.ctx[-1] == "F" and self.recompute == 0:
            raise CaptureError("capture: backward called during a forward (unsupported)")
        if self.pending_inner and self.recompute_inner:
            num = self.pending_inner.pop()
            self.recompute_inner = False
            self.emit("BWD g=%d retain=%d" % (num, 1 if retain_graph else 0))
            self.ctx.append("B")
            try:
                _orig_backward(tensors, grad_tensors, retain_graph, create_graph, inputs=inputs)
            finally:
                self.ctx.pop()
            self.emit("ENDBWD g=%d" % num)
            return
        ts = [tensors] if isinstance(tensors, torch.Tensor) else list(tensors)
        if len(ts) != 1:
            raise CaptureError("capture: backward over %d tensors at once (unsupported; sum them)" % len(ts))
        ps, mask = self.pass_of_loss(ts[0])
        retain = bool(retain_graph)
        if ps.backwards == 0:
            ps.loss = sorted(mask)
        elif sorted(mask) != ps.loss:
            raise CaptureError("capture: a second backward of pass %d uses other outputs" % ps.num)
        ps.backwards += 1
        self.events.append(("B", ps, retain))
        self.bwd_epoch += 1
        self.emit("BWD g=%d retain=%d" % (ps.num, 1 if retain else 0))
        self.ctx.append("B")
        try:
            _orig_backward(tensors, grad_tensors, retain_graph, create_graph, inputs=inputs)
        finally:
            self.ctx.pop()
        self.emit("ENDBWD g=%d" % ps.num)

    def end_step(self, i):
        ev = self.events
        self.events = []
        fw = [e for e in ev if e[0] == "F"]
        if not fw:
            raise CaptureError("capture: step %d runs no forward of the model" % i)
        if self.cur is not None:
            raise CaptureError("capture: step %d ended inside a forward" % i)
        seq = "".join(e[0] if e[0] != "B" else ("R" if e[2] else "B") for e in ev if e[0] != "O")
        n = len(fw)
        passes = [e[1] for e in fw]
        if n == 1 and not passes[0].grad:
            if seq != "F":
                raise CaptureError("capture: step %d backpropagates through a no_grad forward" % i)
            kind = "eval"
        elif any(not p.grad for p in passes):
            raise CaptureError("capture: step %d mixes a no_grad forward of the model with training "
                               "passes (put it in a step of its own)" % i)
        elif seq == "F" and passes[0].aborted:
            kind = "train"
        elif seq == "FB":
            kind = "train"
        elif seq == "FRB":
            kind = "retain"
        elif 2 <= n <= MAX_PASSES and seq == "FB" * n:
            kind = "accum"
        elif 2 <= n <= MAX_PASSES and seq == "F" * n + "B" * n and \
                [e[1] for e in ev if e[0] == "B"] == passes:
            kind = "interleave"
        elif "B" not in seq and "R" not in seq:
            raise CaptureError("capture: step %d runs a forward with grad but no backward (no loss.backward())" % i)
        else:
            raise CaptureError("capture: step %d's order of forwards and backwards (%s) is none of "
                               "train, retain, accum (up to %d), interleave (up to %d), eval"
                               % (i, seq, MAX_PASSES, MAX_PASSES))
        for p in passes:
            if p.aborted and p.backwards:
                raise CaptureError("capture: backward of an aborted forward")
        if kind != "eval":
            self.emit("SWEEP")
        self.sc.steps.append((kind, passes))
        for p in POLICIES:
            self.sc.traces[p].append("STEP %d %s" % (i, kind))
            self.sc.traces[p].extend(self.buf[p])
            self.buf[p] = []


# ----------------------------------------------------------------------
# checkpoint: the kind of the next call, and the recompute's trace lines
# ----------------------------------------------------------------------

_orig_backward = torch.autograd.backward
_current = threading.local()


def _dispatch_backward(*a, **kw):
    r = getattr(_current, "rec", None)
    if r is None:
        return _orig_backward(*a, **kw)
    return r.traced_backward(*a, **kw)


_orig_ckpt_fwd = tcheckpoint.CheckpointFunction.forward
# torch 2.15 calls the _impl generator; older releases the plain one
_NRE_GEN = ("_checkpoint_without_reentrant_generator_impl"
            if hasattr(tcheckpoint, "_checkpoint_without_reentrant_generator_impl")
            else "_checkpoint_without_reentrant_generator")
_orig_nre_gen = getattr(tcheckpoint, _NRE_GEN)


def _check_region(r, fn, kind):
    """What a checkpoint region covers: one module call made from a forward
    body (checkpoint(module, *inputs): None), or the body of the open call
    (returned): transformers 5.24.0's GradientCheckpointingLayer after
    gradient_checkpointing_enable() runs
    checkpoint(partial(forward, self, **kwargs), *args, use_reentrant=...)
    inside the layer's __call__, so the layer's own hooks fire outside the
    region and the recompute reruns its body alone (.scn ckpt=body-...)."""
    if r.in_recompute():
        return None
    inner = fn
    while hasattr(inner, "func"):
        inner = inner.func
    top = r.stack[-1] if r.stack else None
    args = getattr(fn, "args", ())
    if top is not None and args and args[0] is r.mods[top.module] and not isinstance(inner, torch.nn.Module):
        path = top.path or "(root)"
        if top.ckpt or any(q.ckpt for q in r._ancestors(top)):
            raise CaptureError("capture: %s's forward body runs in a %s checkpoint inside another "
                               "checkpointed region (nested checkpoints: unsupported)" % (path, kind))
        if top.parent is None:
            raise CaptureError("capture: the root module's forward body runs in a %s checkpoint "
                               "(unsupported: checkpoint a child module)" % kind)
        if top.kw:
            raise CaptureError("capture: %s's forward body is checkpointed (%s) and the call takes "
                               "keyword tensor(s) that require grad (unsupported)" % (path, kind))
        top.ckpt = kind
        top.ckpt_body = True
        return top
    return None


def _ckpt_fwd(ctx, run_function, preserve_rng_state, *args):
    r = getattr(_current, "rec", None)
    if r is None:
        return _orig_ckpt_fwd(ctx, run_function, preserve_rng_state, *args)
    body = _check_region(r, run_function, "reentrant")
    state = {"n": 0}

    def wrapped(*a, **kw):
        state["n"] += 1
        if state["n"] == 1 and body is not None:
            state["call"] = body  # CheckpointFunction's outputs: the body's
            return run_function(*a, **kw)
        if state["n"] == 1:
            r.pending_ckpt.append("reentrant")
            r.last_ckpt_call = None
            try:
                return run_function(*a, **kw)
            finally:
                if r.pending_ckpt:
                    r.pending_ckpt.pop()
                state["call"] = r.last_ckpt_call
        num = r.graph_count
        r.graph_count += 1
        r.emit("FWD g=%d" % num)
        r.ctx.append("F")
        r.recompute += 1
        top = state.get("call")
        if body is not None:
            return _body_recompute(r, body, run_function, a, kw, num)
        if top is not None:
            ps = top.pass_
            i0 = ps.calls.index(top)
            sub = [top]
            for c in ps.calls[i0 + 1:]:
                q = c.parent
                while q is not None and q is not top:
                    q = q.parent
                if q is None:
                    break
                sub.append(c)
            r.rerec = sub
        try:
            out = run_function(*a, **kw)
        finally:
            r.recompute -= 1
            r.ctx.pop()
        r.emit("ENDFWD g=%d" % num)
        r.pending_inner.append(num)
        r.recompute_inner = True
        return out

    r.ckpt_outer_grad.append(torch.is_grad_enabled())
    try:
        out = _orig_ckpt_fwd(ctx, wrapped, preserve_rng_state, *args)
    finally:
        r.ckpt_outer_grad.pop()
    # the region's outputs come from this node: the checkpointed call's outputs
    ctx.zo_tag = ("K", state.get("call"), 0)
    return out


def _nre_gen(fn, *a, **kw):
    r = getattr(_current, "rec", None)
    gen = _orig_nre_gen(fn, *a, **kw)
    if r is None:
        yield from gen
        return
    body = _check_region(r, fn, "non-reentrant")
    # the generator wraps the original forward between its two next() calls
    next(gen)
    if body is not None:
        # the open call's body: the layer's hooks are outside the region;
        # the recompute (inside backward) records nothing
        yield
    else:
        r.pending_ckpt.append("non-reentrant")
        try:
            yield
        finally:
            if r.pending_ckpt and r.pending_ckpt[-1] == "non-reentrant":
                r.pending_ckpt.pop()
    try:
        next(gen)
    except StopIteration:
        pass


def _body_recompute(r, top, run_function, a, kw, num):
    """CheckpointFunction.backward's recompute of the checkpointed body of
    call `top` (reentrant, grad on, on detached inputs): the calls of its
    body are re-recorded with grad (their forward ran under no_grad), with
    `top` as their open caller; its op is recorded from what the body
    returns.  The FWD line is emitted by the caller."""
    ps = top.pass_
    i0 = ps.calls.index(top)
    sub = []
    for c in ps.calls[i0 + 1:]:
        q = c.parent
        while q is not None and q is not top:
            q = q.parent
        if q is None:
            break
        sub.append(c)
    top.rec_args = {}
    for j, t in enumerate(_tensors(a, [])):
        if t.requires_grad:
            top.rec_args[id(t)] = j
            r.nodes_keep.append(t)
    saved_stack = r.stack
    r.stack = [top]
    r.rerec = sub
    try:
        out = run_function(*a, **kw)
        if r.rerec:
            raise CaptureError("capture: the recompute of %s's checkpointed body made fewer calls than "
                               "its forward (data-dependent control flow)" % (top.path or "(root)"))
        r.record_op(top, _tensors(out, []))
    finally:
        r.recompute -= 1
        r.ctx.pop()
        r.rerec = None
        r.stack = saved_stack
        top.rec_args = {}
    r.emit("ENDFWD g=%d" % num)
    r.pending_inner.append(num)
    r.recompute_inner = True
    return out


class _RecomputeMarker:
    """Non-reentrant recomputes run inside backward (ctx "B"): no structure."""


def _patch():
    torch.autograd.backward = _dispatch_backward
    tcheckpoint.CheckpointFunction.forward = staticmethod(_ckpt_fwd)
    setattr(tcheckpoint, _NRE_GEN, _nre_gen)


def _unpatch():
    torch.autograd.backward = _orig_backward
    tcheckpoint.CheckpointFunction.forward = staticmethod(_orig_ckpt_fwd)
    setattr(tcheckpoint, _NRE_GEN, _orig_nre_gen)


_running = threading.Lock()  # held by the capture in progress (it patches torch for the process)


def capture(model, step_fn, steps=1):
    """Runs step_fn(model, i) for i in range(steps) with DeepSpeed-shaped
    hooks and returns the Scenario.  Raises CaptureError (a clear message
    naming the construct and the module path) on bad input, and when
    another capture is running (a step calling capture(), or two threads):
    a capture patches torch for the whole process."""
    if not _running.acquire(blocking=False):
        raise CaptureError("capture: capture() called while another capture runs (from a captured step, or "
                           "another thread): captures do not nest")
    try:
        return _capture(model, step_fn, steps)
    finally:
        _running.release()


def _capture(model, step_fn, steps):
    if not isinstance(model, torch.nn.Module):
        raise CaptureError("capture: the model is a %s, not a torch.nn.Module" % type(model).__name__)
    if not callable(step_fn):
        raise CaptureError("capture: the step function is not callable")
    steps = steps_arg(steps, "steps")
    rec = _Recorder(model)
    rec.recompute_inner = False
    rec.sc.info.append("model %s, %d modules, %d parameters (%s elements), %d tied/external uses, "
                       "torch %s" % (type(model).__name__, len(rec.sc.modules), len(rec.sc.params),
                                     "{:,}".format(sum(p["numel"] for p in rec.sc.params)),
                                     len(rec.sc.uses), torch.__version__))
    rec.install()
    err = []

    def work():
        _current.rec = rec
        _patch()
        try:
            for i in range(steps):
                try:
                    step_fn(model, i)
                except CaptureError:
                    raise
                except SystemExit as e:
                    raise CaptureError("capture: step %d called sys.exit(%r): nothing captured" % (i, e.code)) from e
                except Exception as e:
                    where = rec.stack[-1] if rec.stack else rec.last_raised
                    raise CaptureError("capture: step %d raised %s: %s%s" % (
                        i, type(e).__name__, str(e).strip().splitlines()[0] if str(e).strip() else "",
                        " (in the forward of %s)" % (where.path or "the model") if where is not None else "")) from e
                rec.end_step(i)
        except BaseException as e:
            # A step that failed inside a checkpointed region leaves torch's
            # checkpoint generators suspended, held by the traceback's frames.
            # Their saved-tensor hooks are this thread's: clear the frames and
            # collect here, so the regions close on this thread now rather than
            # on the main thread at interpreter exit (where torch 2.15 aborts
            # with "terminate called without an active exception").
            x, seen = e, set()
            while x is not None and id(x) not in seen:
                seen.add(id(x))
                traceback.clear_frames(x.__traceback__)
                x = x.__cause__ or x.__context__
            err.append(e)
        finally:
            _unpatch()
            _current.rec = None
            rec.remove()
            gc.collect()

    t = threading.Thread(target=work)
    t.start()
    t.join()
    if err:
        raise err[0]
    rec.nodes_keep = []
    if rec.sc.limits:
        ncalls = sum(len(p.calls) for _, ps in rec.sc.steps for p in ps)
        raise CaptureError("capture: %s does not fit the scenario model (no .scn written; the real run "
                           "was recorded: %d module calls, %d trace lines):\n  %s" % (
                               type(model).__name__, ncalls, len(rec.sc.traces["reset-on-forward"]),
                               "\n  ".join(rec.sc.limits)))
    rec.renumber_params()
    rec.reparent()
    return rec.sc


def check_output(path):
    """Raises CaptureError unless path can take the .scn: not empty, not a
    directory, in a directory that exists."""
    if not path:
        raise CaptureError("capture: the output path is empty")
    real = os.path.realpath(path)
    if os.path.isdir(real):
        raise CaptureError("capture: %s is a directory (give the .scn file to write)" % path)
    d = os.path.dirname(real)
    if not os.path.isdir(d):
        raise CaptureError("capture: %s: directory %s does not exist" % (path, d))


def steps_arg(v, where):
    """v (--steps, or the script's STEPS) as a step count in 1..MAX_STEPS,
    else CaptureError naming where it came from."""
    if isinstance(v, bool) or not isinstance(v, int):
        raise CaptureError("capture: %s = %r is not a number of steps" % (where, v))
    if not 1 <= v <= MAX_STEPS:
        raise CaptureError("capture: %s = %d; the scenario model holds 1..%d steps" % (where, v, MAX_STEPS))
    return v


def zofuzz_ok(sim):
    """Raises CaptureError unless sim is an executable file."""
    if not (os.path.isfile(sim) and os.access(sim, os.X_OK)):
        raise CaptureError("capture: zofuzz %s: not an executable file (--zofuzz or $ZOFFLOAD_ZOFUZZ)" % sim)


def find_zofuzz(explicit=None):
    """The zofuzz binary: explicit, $ZOFFLOAD_ZOFUZZ, build/ or build-test/
    of the current directory or of this checkout, or zofuzz on PATH."""
    if explicit:
        return explicit
    env = os.environ.get("ZOFFLOAD_ZOFUZZ")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    for root in (os.getcwd(), os.path.join(here, "..", "..")):
        for b in ("build", "build-test"):
            p = os.path.join(root, b, "fuzz", "zofuzz")
            if os.access(p, os.X_OK):
                return os.path.abspath(p)
    return shutil.which("zofuzz")


def build_model(build, name):
    """build() of the user's script; CaptureError if it is not callable or raises."""
    if not callable(build):
        raise CaptureError("capture: %s in the script is not a function (the model builder)" % name)
    try:
        return build()
    except Exception as e:  # noqa: BLE001 - the user's code: any exception is its error
        raise CaptureError("capture: %s() raised %s: %s" % (name, type(e).__name__, e)) from e


def load_script(spec, build_name):
    if ":" not in spec:
        raise CaptureError("capture: expected SCRIPT.py:FUNCTION, got %r" % spec)
    path, fn = spec.rsplit(":", 1)
    if os.path.isdir(path):
        raise CaptureError("capture: %s is a directory, not a script" % path)
    if not os.path.isfile(path):
        raise CaptureError("capture: no such script %s" % path)
    s = importlib.util.spec_from_file_location("zo_capture_user", path)
    if s is None or s.loader is None:
        raise CaptureError("capture: %s is not a Python script (name it SCRIPT.py)" % path)
    mod = importlib.util.module_from_spec(s)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        s.loader.exec_module(mod)
    except SyntaxError as e:
        raise CaptureError("capture: %s is not valid Python: %s" % (path, e))
    if not hasattr(mod, fn):
        raise CaptureError("capture: %s defines no %s" % (path, fn))
    if not hasattr(mod, build_name):
        raise CaptureError("capture: %s defines no %s() (the model builder; --build NAME)" % (path, build_name))
    if not callable(getattr(mod, fn)):
        raise CaptureError("capture: %s in %s is not a function (the step: STEP(model, i))" % (fn, path))
    return getattr(mod, build_name), getattr(mod, fn), mod


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m zoffload.capture",
                                 description="Capture a model's training step as a .scn (zoffload).")
    ap.add_argument("target", help="SCRIPT.py:STEP; the script also defines the model builder")
    ap.add_argument("-o", "--output", required=True, help="the .scn to write (traces go to OUTPUT.trace.<policy>)")
    ap.add_argument("--build", default="build", help="the model builder in the script (default: build)")
    ap.add_argument("--steps", type=int, default=None, help="steps to run (default: the script's STEPS or 1)")
    ap.add_argument("--zofuzz", help="the zofuzz binary of a zoffload build (default: $ZOFFLOAD_ZOFUZZ, "
                    "./build/fuzz/zofuzz)")
    ap.add_argument("--allow-approx", action="store_true",
                    help="write the file even when the simulator's trace differs (marked APPROXIMATE)")
    ap.add_argument("--no-check", action="store_true", help="do not run the simulator")
    ap.add_argument("--expect", action="store_true",
                    help="measure the expect line with zofuzz and write it")
    ap.add_argument("--comment", action="append", default=[], help="a header comment line")
    ap.add_argument("--no-traces", action="store_true", help="do not write OUTPUT.trace.<policy>")
    a = ap.parse_args(argv)
    t0 = time.time()
    try:
        sim = None
        if not a.no_check:  # before the model is built: a bad path costs nothing
            sim = find_zofuzz(a.zofuzz)
            if not sim:
                raise CaptureError("capture: no zofuzz binary for the exactness check (build zoffload, "
                                   "pass --zofuzz, or --no-check)")
            zofuzz_ok(sim)
        check_output(a.output)
        build, step, mod = load_script(a.target, a.build)
        steps = steps_arg(a.steps, "--steps") if a.steps is not None else steps_arg(getattr(mod, "STEPS", 1),
                                                                                       "the script's STEPS")
        model = build_model(build, a.build)
        sc = capture(model, step, steps=steps)
        sc.info.extend(a.comment)
        sc.info.append("source: %s (%d step%s)" % (os.path.basename(a.target), steps, "s" if steps > 1 else ""))
        if not a.no_check:
            ok, msg = sc.check(sim)
            if ok is None:
                raise CaptureError("capture: the simulator could not check the scenario: %s" % msg)
            if ok:
                sc.checked = msg
            elif a.allow_approx:
                sc.checked = "APPROXIMATE: " + msg.replace("\n", "; ")
                sys.stderr.write("capture: WARNING: the simulator's trace differs from the real one:\n%s\n" % msg)
            else:
                notes = "\n".join("  " + n for n in sc.notes) or "  (none recorded)"
                raise CaptureError("capture: the scenario does not reproduce the real hook trace:\n%s\n"
                                   "constructs approximated:\n%s" % (msg, notes))
            if a.expect:
                sc.expect = measure_expect(sc, sim)
        else:
            sc.checked = "not checked (--no-check)"
        sc.write_scn(a.output, traces=not a.no_traces)
    except CaptureError as e:
        sys.stderr.write("%s\n" % e)
        return 2
    el = time.time() - t0
    print("capture: wrote %s (%d modules, %d parameters, %d steps; %.1f s)%s" % (
        a.output, len(sc.modules), len(sc.params), len(sc.steps), el,
        "; " + sc.checked if sc.checked else ""))
    return 0


def measure_expect(sc, zofuzz):
    """The expect line: zofuzz repro's verdict under each policy (the
    scenario's profiles)."""
    work = tempfile.mkdtemp(prefix="zo-expect-")
    try:
        f = os.path.join(work, "x.scn")
        with open(f, "w") as fh:
            fh.write(sc.scn_text())
        items = []
        for pol in POLICIES:
            r = subprocess.run([zofuzz, "repro", f, "--policy", pol], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            m = re.search(r"invariant (I\d) violated", r.stdout)
            if r.returncode == 0:
                v = "ok"
            elif m:
                v = m.group(1)
            else:
                raise CaptureError("capture: zofuzz repro --policy %s: no verdict (%d): %s"
                                   % (pol, r.returncode, r.stdout[-400:]))
            items.append("%s=%s" % (pol, v))
        return "expect torch=2.x deepspeed=0.19 " + " ".join(items)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
