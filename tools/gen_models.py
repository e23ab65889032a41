#!/usr/bin/python3
"""gen_models.py - writes the hand-modelled corpus/models/*.scn from architecture configs.

Most of corpus/models/ is now captured from the real models
(tools/capture_models.py, python/zoffload/capture.py: GPT-2, BERT, ALBERT,
T5, LLaMA, LLaMA/GPT-2/BERT with gradient_checkpointing_enable() (a
checkpointed layer body, ckpt=body-...), a peft LoRA model and small torch
models, each checked line for line against the real hook trace).  This
generator keeps only what the capture cannot write yet:

  * mixtral_moe*.scn - Mixtral-8x7B-shaped MoE with per-expert modules and
    per-rank routing programs (config ranks=all, rank edits): hand-made, a
    capture records one rank's run.  (transformers 5.24.0's own Mixtral, a
    fused experts module reading its weights around its act_fn call, is
    captured: corpus/models/mixtral.scn, with param(...) terms.)

The gpt2/bert/albert/t5/lora/llama_ckpt generators below are kept for
reference (approximations of the full-size configs: llama_ckpt models
transformers' layer-body checkpoint as checkpoint(layer, x), and LLaMA-7B's
32 layers exceed the 254-module bound); they are not written any more
(MODELS): corpus/models/llama_ckpt.scn is captured.

The .scn files this script writes are committed; edit the script (not the
files) and rerun it:

    python3 tools/gen_models.py            # rewrite corpus/models/*.scn
    python3 tools/gen_models.py --check    # exit 1 if a file differs from what it would write
    python3 tools/gen_models.py --list     # models, module/param/call counts, totals

Standard library only.  Format: docs/scenario-format.md; semantics:
docs/scenario-model.md.

Each model is described the way its PyTorch implementation is written:
the module tree in registration order (= named_modules() order = the ids
zoffload registers), the parameters with their real shapes (numel = the
real tensor's element count, in named_parameters() order), tied weights
as `use` lines, and one forward function per module class that says which
child is called with which tensor, what the module's own op consumes and
how many tensors it returns.  The step programs are built by running
those forward functions, so every pass follows the real forward.

Modelling rules (the same in every file; each header repeats the ones it
uses):

  * Parameter-free modules (Dropout, activation modules, Tanh, rotary
    embeddings, the lora_dropout Identity/Dropout) are left out: each is
    called once per forward with the tensor of the surrounding call, it
    fetches nothing, and it does not change which hook of any other module
    fires.  Never-called containers (nn.ModuleList / nn.ModuleDict such as
    GPT-2's `h`, PEFT's `lora_A`) are left out too: DeepSpeed registers
    hooks on them but they never fire; their children hang from the
    container's parent.
  * Parameter-free tensor math between child calls (attention softmax,
    activations, residual adds, slicing) cannot run between two child calls
    in the scenario model (a call's own op runs after its children).  A
    child whose real input is such a combination gets the main-path tensor
    (the branch it continues: the value projection for an output
    projection, the sublayer output for a LayerNorm after a residual add),
    and the other operands (queries/keys, the residual stream) are consumed
    by the caller's own op (`use`).  Every tensor that reaches the loss in
    the real model still reaches it, and every module sees the same number
    of inputs that require grad (hook D counts) as in the real model.
  * Side inputs without grad (attention masks, position ids, labels,
    relative position buckets) are not passed unless the call takes a
    tensor input only from them (an Embedding's ids are `batch`): they do
    not require grad, so hook D never counts them.
  * Keyword-argument tensors: PyTorch 1.13 forward pre-hooks (and so
    DeepSpeed's hook D) see positional arguments only; a tensor passed as a
    keyword is neither wrapped nor counted.  The scenario model has no such
    unhooked input, so these tensors are passed as inputs here and hook D
    counts them; the headers list where HF does this (only modules without
    parameters of their own are affected: T5 blocks/sublayers/attention,
    T5's decoder stack, LLaMA/Mixtral self_attn).
  * A module's op returns the tensors the real forward returns (tuples
    count: T5 blocks return hidden states and position biases).  The loss
    is the root call's output 0 (cross-entropy of the LM/MLM head computed
    inside the root's forward, as HF does when labels are given).

If a real forward makes more child calls than the scenario model allows in
one call body (ZS_MAX_CHILD_CALLS, read from fuzz/scenario.h), the script
groups consecutive child calls under parameter-free stand-in modules
named `<module>.grpN` and says so in the file header (see chunk_overfull).
With a large enough limit no stand-in is generated.
"""

import argparse
import math
import os
import re
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(ROOT, "corpus", "models")

# ----------------------------------------------------------------------
# Limits of the scenario model (fuzz/scenario.h)
# ----------------------------------------------------------------------

LIMIT_DEFAULTS = {
    "ZS_MAX_MODULES": 254, "ZS_MAX_PARAMS": 254, "ZS_MAX_USES": 64, "ZS_MAX_STEPS": 8,
    "ZS_MAX_PASSES": 4, "ZS_MAX_CALLS": 254, "ZS_MAX_CHILD_CALLS": 4, "ZS_MAX_IN": 4,
    "ZS_MAX_OUT": 4, "ZS_MAX_USE": 8, "ZS_MAX_NUMEL": 0x7FFFFFFF, "ZS_NAME_LEN": 24,
}


def read_limits():
    """The ZS_MAX_* limits as fuzz/scenario.h defines them (defaults if absent)."""
    lim = dict(LIMIT_DEFAULTS)
    path = os.path.join(ROOT, "fuzz", "scenario.h")
    try:
        text = open(path).read()
    except OSError:
        return lim
    for name in lim:
        m = re.search(r"#define\s+%s\s+(0x[0-9A-Fa-f]+|\d+)" % name, text)
        if m:
            lim[name] = int(m.group(1), 0)
    return lim


class GenError(Exception):
    pass


# ----------------------------------------------------------------------
# Model description: modules, parameters, tied uses
# ----------------------------------------------------------------------

class Mod:
    def __init__(self, name, parent, cls, fwd):
        self.name = name
        self.parent = parent
        self.cls = cls          # the PyTorch class, for the comment
        self.fwd = fwd          # forward function: fwd(call)
        self.children = []
        self.params = []
        self.id = None
        self.standin = None     # text if this module is a generated stand-in
        self.z3_leaf = False    # deepspeed.utils.set_z3_leaf_modules
        self.gather_always = False  # ZO_MODULE_GATHER_ALWAYS


class Par:
    def __init__(self, name, owner, shape, frozen):
        self.name = name
        self.owner = owner
        self.shape = tuple(shape)
        self.numel = math.prod(shape)
        self.frozen = frozen
        self.id = None


def leaf_fwd(c):
    """nn.Linear / Conv1D / nn.Embedding / LayerNorm / RMSNorm: the op
    consumes the input and returns one tensor."""
    c.ret([c.arg(i) for i in range(len(c.ins))], 1)


class Model:
    def __init__(self, fname, title):
        self.fname = fname
        self.title = title
        self.header = []        # comment lines (source config etc.)
        self.config = []        # "key=value" strings
        self.root = None
        self.uses = []          # (Mod, Par)
        self.steps = []         # (kind, [(loss list, root Call, comment)], comment)
        self.expect = None
        self.notes = []         # generated notes (stand-ins)

    def mod(self, name, parent, cls, fwd=leaf_fwd):
        m = Mod(name, parent, cls, fwd)
        if parent is None:
            if self.root is not None:
                raise GenError("two roots")
            self.root = m
        else:
            parent.children.append(m)
        return m

    def par(self, owner, name, shape, frozen=False):
        p = Par(name, owner, shape, frozen)
        owner.params.append(p)
        return p

    def use(self, mod, par):
        self.uses.append((mod, par))

    def modules(self):
        out = []

        def walk(m):
            out.append(m)
            for ch in m.children:
                walk(ch)
        walk(self.root)
        return out

    def params(self):
        return [p for m in self.modules() for p in m.params]

    def total_numel(self):
        return sum(p.numel for p in self.params())

    # -- steps ---------------------------------------------------------
    def run_pass(self, root_inputs, setup=None):
        """Builds one forward pass by calling the root module's forward."""
        if setup:
            setup()
        c = Call(self.root, list(root_inputs), None)
        self.root.fwd(c)
        return c

    def step(self, kind, passes, comment=""):
        """passes: list of (loss_indices, root Call, comment)."""
        self.steps.append((kind, passes, comment))


# ----------------------------------------------------------------------
# Forward programs
# ----------------------------------------------------------------------

class Ref:
    """A tensor reference: batch / batch_rg / arg (input idx of `call`) /
    out (output idx of `call`)."""

    def __init__(self, kind, call=None, idx=0, detach=False):
        self.kind = kind
        self.call = call
        self.idx = idx
        self.is_detached = detach

    def detach(self):
        return Ref(self.kind, self.call, self.idx, True)


BATCH = Ref("batch")
BATCH_RG = Ref("batch_rg")


class Call:
    def __init__(self, mod, ins, caller, no_grad=False, ckpt=None):
        self.mod = mod
        self.ins = ins
        self.caller = caller
        self.children = []
        self.use = []
        self.nout = 0
        self.no_grad = no_grad
        self.ckpt = ckpt
        self.returned = False

    def arg(self, i):
        if i >= len(self.ins):
            raise GenError("%s has no input %d" % (self.mod.name, i))
        return Ref("arg", self, i)

    def out(self, j):
        if j >= self.nout:
            raise GenError("%s has no output %d" % (self.mod.name, j))
        return Ref("out", self, j)

    def call(self, mod, *ins, no_grad=False, ckpt=None):
        """The body of this call calls child module `mod` with `ins`."""
        if mod.parent is not self.mod:
            raise GenError("%s calls %s, which is not its child" % (self.mod.name, mod.name))
        ch = Call(mod, list(ins), self, no_grad, ckpt)
        self.children.append(ch)
        mod.fwd(ch)
        if not ch.returned:
            raise GenError("forward of %s did not return" % mod.name)
        return ch

    def ret(self, uses, nout=1):
        """The module's own op consumes `uses` and returns `nout` tensors."""
        self.use = list(uses)
        self.nout = nout
        self.returned = True


def walk_calls(c):
    yield c
    for ch in c.children:
        yield from walk_calls(ch)


def all_root_calls(model):
    for kind, passes, _ in model.steps:
        for loss, root, _ in passes:
            yield root


# ----------------------------------------------------------------------
# Over-full call bodies -> stand-in grouping modules
# ----------------------------------------------------------------------

def chunk_overfull(model, limit):
    """Groups the child calls of every call body with more than `limit`
    child calls under parameter-free stand-in modules.

    For a module M whose first over-full call makes k calls, as many calls
    as the limit allows stay direct (split between the start and the end:
    embeddings before a layer loop, a final norm after it) and the others
    are cut into consecutive chunks of balanced size (at most `limit`
    each); chunks that call a common module (ALBERT's shared layer) are
    merged into one stand-in module, which is then called several times,
    as that module is.  The stand-in (named `<M>.grpN`) becomes the parent of the modules
    its chunks call.  Every call of M is then regrouped by runs of
    consecutive calls whose modules share a stand-in (at most `limit` per
    stand-in call).  Data flow is kept: a stand-in call takes as inputs the
    tensors its chunk reads from outside (at most ZS_MAX_IN) and returns,
    through its op, the chunk's outputs that are read after it."""
    plans = {}
    originals = [c for root in all_root_calls(model) for c in walk_calls(root)]
    for call in originals:
        if len(call.children) <= limit:
            continue
        m = call.mod
        if m not in plans:
            plans[m] = make_plan(model, m, call, limit)
        regroup(call, plans[m], limit)
        if len(call.children) > limit:
            raise GenError("%s: %d child calls even after grouping" % (m.name, len(call.children)))


def make_plan(model, m, call, limit):
    k = len(call.children)
    # keep as many calls direct as possible (d), half at each end (embeddings
    # before a layer loop, a final norm after it), the rest in balanced chunks
    d = min(k, limit)
    while d > 0 and d + -(-(k - d) // limit) > limit:
        d -= 1
    head, tail = (d + 1) // 2, d // 2
    middle = call.children[head:k - tail]
    n = -(-len(middle) // limit)
    sizes = [len(middle) // n + (1 if i < len(middle) % n else 0) for i in range(n)]
    chunks, pos = [], 0
    for s in sizes:
        chunks.append(middle[pos:pos + s])
        pos += s
    # union chunks that call a common module
    comp = list(range(n))

    def find(i):
        while comp[i] != i:
            i = comp[i]
        return i
    owner = {}
    for i, ch in enumerate(chunks):
        for c in ch:
            if c.mod in owner:
                comp[find(i)] = find(owner[c.mod])
            else:
                owner[c.mod] = i
    groups = {}
    for i in range(n):
        groups.setdefault(find(i), []).append(i)
    mapping = {}
    for gi, (_, idxs) in enumerate(sorted(groups.items())):
        members = []
        for i in idxs:
            for c in chunks[i]:
                if c.mod not in members:
                    members.append(c.mod)
        if len(members) == 1 and sum(len(chunks[i]) for i in idxs) == 1:
            continue  # a lone call stays a direct child
        name = "%s.grp%d" % (m.name, gi)
        w = Mod(name, m, "(stand-in)", None)
        # keep registration order: the stand-in takes the place of its first member
        members.sort(key=m.children.index)
        at = m.children.index(members[0])
        for mm in members:
            m.children.remove(mm)
            mm.parent = w
            w.children.append(mm)
            mapping[mm] = w
        m.children.insert(at, w)
        w.standin = ", ".join(x.name for x in members)
        model.notes.append("%s: calls of %s made by %s" % (name, w.standin, m.name))
    return mapping


def regroup(call, mapping, limit):
    runs = []
    for ch in call.children:
        w = mapping.get(ch.mod)
        if w is not None and runs and runs[-1][0] is w and len(runs[-1][1]) < limit:
            runs[-1][1].append(ch)
        else:
            runs.append((w, [ch]))
    run_of = {}
    for r, (_, members) in enumerate(runs):
        for x in members:
            run_of[x] = r
    needed = set()
    for r, (_, members) in enumerate(runs):
        for x in members:
            for ref in x.ins:
                if ref.kind == "out" and run_of[ref.call] != r:
                    needed.add((ref.call, ref.idx))
    for ref in call.use:
        if ref.kind == "out":
            needed.add((ref.call, ref.idx))
    remap = {}

    def translate(ref):
        if ref.kind == "out" and (ref.call, ref.idx) in remap:
            c, j = remap[(ref.call, ref.idx)]
            return Ref("out", c, j, ref.is_detached)
        return ref

    new_children = []
    for w, members in runs:
        if w is None:
            x = members[0]
            x.ins = [translate(r) for r in x.ins]
            new_children.append(x)
            continue
        wc = Call(w, [], call)
        keys = {}
        for x in members:
            new_ins = []
            for ref in x.ins:
                if ref.kind in ("batch", "batch_rg") or (ref.kind == "out" and ref.call in members):
                    new_ins.append(ref)
                    continue
                outer = translate(Ref(ref.kind, ref.call, ref.idx))
                key = (outer.kind, id(outer.call), outer.idx)
                if key not in keys:
                    keys[key] = len(wc.ins)
                    wc.ins.append(outer)
                new_ins.append(Ref("arg", wc, keys[key], ref.is_detached))
            x.ins = new_ins
            x.caller = wc
        wc.children = list(members)
        exports = [(x, j) for x in members for j in range(x.nout) if (x, j) in needed]
        wc.ret([Ref("out", x, j) for x, j in exports], len(exports))
        for k, (x, j) in enumerate(exports):
            remap[(x, j)] = (wc, k)
        new_children.append(wc)
    call.use = [translate(r) for r in call.use]
    call.children = new_children


# ----------------------------------------------------------------------
# Checks and printing
# ----------------------------------------------------------------------

def assign_ids(model):
    for i, m in enumerate(model.modules()):
        m.id = i
    for i, p in enumerate(model.params()):
        p.id = i


def count_calls(root):
    return sum(1 for _ in walk_calls(root))


def check_model(model, lim):
    mods = model.modules()
    pars = model.params()
    maxname = lim["ZS_NAME_LEN"] - 1
    if len(mods) > lim["ZS_MAX_MODULES"]:
        raise GenError("%d modules > %d" % (len(mods), lim["ZS_MAX_MODULES"]))
    if len(pars) > lim["ZS_MAX_PARAMS"]:
        raise GenError("%d params > %d" % (len(pars), lim["ZS_MAX_PARAMS"]))
    if len(model.uses) > lim["ZS_MAX_USES"]:
        raise GenError("%d uses > %d" % (len(model.uses), lim["ZS_MAX_USES"]))
    if len(model.steps) > lim["ZS_MAX_STEPS"]:
        raise GenError("too many steps")
    for x in mods + pars:
        if len(x.name) > maxname or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", x.name):
            raise GenError("bad name %r (at most %d bytes)" % (x.name, maxname))
    for p in pars:
        if not 1 <= p.numel <= lim["ZS_MAX_NUMEL"]:
            raise GenError("%s: numel %d out of range" % (p.name, p.numel))
    for kind, passes, _ in model.steps:
        if len(passes) > lim["ZS_MAX_PASSES"]:
            raise GenError("too many passes")
        for loss, root, _ in passes:
            n = count_calls(root)
            if n > lim["ZS_MAX_CALLS"]:
                raise GenError("%d calls in a pass > %d" % (n, lim["ZS_MAX_CALLS"]))
            for c in walk_calls(root):
                where = "call of %s" % c.mod.name
                if len(c.children) > lim["ZS_MAX_CHILD_CALLS"]:
                    raise GenError("%s: %d child calls" % (where, len(c.children)))
                if len(c.ins) > lim["ZS_MAX_IN"] or c.nout > lim["ZS_MAX_OUT"] \
                        or len(c.use) > lim["ZS_MAX_USE"]:
                    raise GenError("%s: %d inputs, %d outputs, %d uses"
                                   % (where, len(c.ins), c.nout, len(c.use)))


def fmt_int(n):
    return "{:,}".format(n)


class Printer:
    def __init__(self, model):
        self.model = model
        mods = model.modules()
        pars = model.params()
        mc, pc = {}, {}
        for m in mods:
            mc[m.name] = mc.get(m.name, 0) + 1
        for p in pars:
            pc[p.name] = pc.get(p.name, 0) + 1
        self.mref = {m: (m.name if mc[m.name] == 1 else "@%d" % m.id) for m in mods}
        self.pref = {p: (p.name if pc[p.name] == 1 else "@%d" % p.id) for p in pars}

    def ref(self, r, scope, before=None):
        s = None
        if r.kind in ("batch", "batch_rg"):
            s = r.kind
        elif r.kind == "arg":
            if r.call is not scope:
                raise GenError("arg reference out of scope in %s" % scope.mod.name)
            s = "arg%d" % r.idx
        else:
            if scope is None or r.call not in scope.children:
                raise GenError("out reference out of scope in %s" % (scope.mod.name if scope else "root"))
            k = scope.children.index(r.call)
            if before is not None and k >= before:
                raise GenError("%s reads a later sibling's output" % scope.mod.name)
            s = "out%d.%d" % (k, r.idx)
        return s + (".detach" if r.is_detached else "")

    def call_lines(self, c, depth, lines):
        idx = c.caller.children.index(c) if c.caller else None
        ins = ", ".join(self.ref(r, c.caller, idx) for r in c.ins)
        s = "%scall %s(%s)" % ("  " * depth, self.mref[c.mod], ins)
        if c.nout:
            s += " -> %d" % c.nout
        if c.use:
            s += " use(%s)" % ", ".join(self.ref(r, c) for r in c.use)
        if c.no_grad:
            s += " no_grad"
        if c.ckpt:
            s += " ckpt=%s" % c.ckpt
        lines.append(s)
        for ch in c.children:
            self.call_lines(ch, depth + 1, lines)

    def text(self):
        m = self.model
        L = []
        L.append("# %s" % m.title)
        L.append("#")
        L.append("# GENERATED by tools/gen_models.py from the architecture config below;")
        L.append("# do not edit by hand: change the generator and rerun it.")
        L.append("#")
        for h in m.header:
            # long lines wrap, continuation lines indented like the others
            for i, part in enumerate(textwrap.wrap(h, 92) or [""]):
                L.append(("# " + ("  " if i else "") + part).rstrip())
        L.append("#")
        L.append("# modules %d, parameters %d (%s elements in this file), tied/external uses %d"
                 % (len(m.modules()), len(m.params()), fmt_int(m.total_numel()), len(m.uses)))
        if m.notes:
            L.append("#")
            L.append("# Stand-in modules (fuzz/scenario.h limits a call body to %d child calls;"
                     % read_limits()["ZS_MAX_CHILD_CALLS"])
            L.append("# the real forward makes more, so consecutive calls are grouped under")
            L.append("# parameter-free modules that the real model does not have):")
            for n in m.notes:
                L.append("#   " + n)
        L.append("")
        if m.expect:
            L.append("expect " + m.expect)
        if m.config:
            L.append("config " + " ".join(m.config))
        L.append("")

        def mod_lines(x, depth):
            L.append("%smodule %s%s%s  # %s" % ("  " * depth, x.name, " z3_leaf" if x.z3_leaf else "",
                                                " gather_always" if x.gather_always else "", x.cls))
            for ch in x.children:
                mod_lines(ch, depth + 1)
        mod_lines(m.root, 0)
        L.append("")
        for p in m.params():
            s = "param %s owner=%s numel=%d%s" % (p.name, self.mref[p.owner], p.numel,
                                                 " frozen" if p.frozen else "")
            L.append("%-72s # %s" % (s, " x ".join(str(d) for d in p.shape)))
        if m.uses:
            L.append("")
            for mod, par in m.uses:
                L.append("use %s %s" % (self.mref[mod], self.pref[par]))
        for kind, passes, comment in m.steps:
            L.append("")
            if comment:
                for cl in comment.split("\n"):
                    L.append("# " + cl)
            if len(passes) == 1 and kind != "accum" and kind != "interleave":
                loss, root, _ = passes[0]
                L.append("step %s%s" % (kind, (" loss=" + ",".join(map(str, loss))) if loss else ""))
                self.call_lines(root, 1, L)
            else:
                L.append("step %s" % kind)
                for loss, root, pcomment in passes:
                    if pcomment:
                        L.append("  # " + pcomment)
                    L.append("  pass%s" % ((" loss=" + ",".join(map(str, loss))) if loss else ""))
                    self.call_lines(root, 2, L)
        if getattr(m, "rank_edits", None):
            L.append("")
            L.append("# per-rank programs: each line changes one rank's copy of the steps above")
            for comment, lines in m.rank_edits:
                L.append("# " + comment)
                L.extend(lines)
        return "\n".join(L) + "\n"


# ----------------------------------------------------------------------
# Shared building blocks
# ----------------------------------------------------------------------

def linear(M, parent, name, n_in, n_out, bias=True, frozen=False, cls="nn.Linear"):
    """nn.Linear(n_in, n_out): weight [n_out, n_in], bias [n_out]."""
    m = M.mod(name, parent, "%s(%d, %d%s)" % (cls, n_in, n_out, "" if bias else ", bias=False"))
    M.par(m, name + ".w", (n_out, n_in), frozen)
    if bias:
        M.par(m, name + ".b", (n_out,), frozen)
    return m


def layernorm(M, parent, name, dim, bias=True, frozen=False, cls="nn.LayerNorm"):
    m = M.mod(name, parent, "%s(%d)" % (cls, dim))
    M.par(m, name + ".w", (dim,), frozen)
    if bias:
        M.par(m, name + ".b", (dim,), frozen)
    return m


def embedding(M, parent, name, num, dim, frozen=False):
    m = M.mod(name, parent, "nn.Embedding(%d, %d)" % (num, dim))
    M.par(m, name + ".w", (num, dim), frozen)
    return m


DEEPSPEED_CONFIG = ["world_size=8", "rank=1", "param_persistence_threshold=1e5"]
CONFIG_NOTE = ("config: 8 data-parallel ranks (this is rank 1), DeepSpeed's default ZeRO-3 "
               "thresholds (stage3_param_persistence_threshold=1e5, so biases and norms "
               "persist; prefetch bucket 5e7, max live 1e9, max reuse distance 1e9)")

OMIT_NOTE = ("omitted (no parameters, called once per forward, no effect on any other "
             "module's hooks): ")


def std_steps(M, build, desc):
    """train, train again (trace replay), eval, gradient accumulation."""
    M.step("train", [([0], build(), "")],
           "train step: %s; the coordinator records the trace" % desc)
    M.step("train", [([0], build(), "")],
           "second train step, same program: the recorded trace is replayed (prefetch)")
    M.step("eval", [([], build(), "")], "eval step (model.eval(), torch.no_grad())")
    M.step("accum", [([0], build(), "micro-batch 1"), ([0], build(), "micro-batch 2")],
           "gradient accumulation: 2 micro-batches, one optimizer step")


# ----------------------------------------------------------------------
# GPT-2 small
# ----------------------------------------------------------------------

def gpt2():
    cfg = dict(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=12, n_head=12,
               n_inner=3072, activation_function="gelu_new", tie_word_embeddings=True)
    V, P, D, NL, FF = cfg["vocab_size"], cfg["n_positions"], cfg["n_embd"], cfg["n_layer"], cfg["n_inner"]
    M = Model("gpt2.scn", "GPT-2 small (HF transformers GPT2LMHeadModel), training with ZeRO-3")
    M.header = [
        "source: HF `gpt2` config.json: " + ", ".join("%s=%s" % kv for kv in cfg.items()),
        "tree: GPT2LMHeadModel{transformer: GPT2Model{wte, wpe, h.0..h.11: GPT2Block{ln_1,",
        "  attn: GPT2Attention{c_attn, c_proj}, ln_2, mlp: GPT2MLP{c_fc, c_proj}}, ln_f}, lm_head}",
        "lm_head.weight IS transformer.wte.weight (tie_word_embeddings): owned by wte,",
        "  used by lm_head (`use lm_head wte.w`); lm_head has no bias.",
        "names: HF names without the `transformer.` prefix; .w/.b = .weight/.bias;",
        "  Conv1D weights are [in, out] as in HF.",
        OMIT_NOTE + "transformer.drop, attn.attn_dropout, attn.resid_dropout, mlp.act,",
        "  mlp.dropout; the ModuleList `h` (never called).",
        "forward: wte(input_ids) + wpe(position_ids) -> blocks -> ln_f -> lm_head -> CE loss.",
        "  The position embedding is a summand of the first block's input: consumed by",
        "  transformer's own op (rule: other operands of a sum go to the caller's op).",
        "  Block: x + attn(ln_1(x)) -> y; y + mlp(ln_2(y)): ln_2 gets attn's output, the",
        "  block's op consumes mlp out, attn out and the block input (residuals).",
        "expected total (HF, tied weight counted once): 124,439,808",
        CONFIG_NOTE,
    ]
    M.config = list(DEEPSPEED_CONFIG)
    root = M.mod("lm", None, "GPT2LMHeadModel", None)
    tr = M.mod("transformer", root, "GPT2Model", None)
    wte = M.mod("wte", tr, "nn.Embedding(%d, %d)" % (V, D))
    wte_w = M.par(wte, "wte.w", (V, D))
    wpe = M.mod("wpe", tr, "nn.Embedding(%d, %d)" % (P, D))
    M.par(wpe, "wpe.w", (P, D))

    def block_fwd(c):
        b = c.mod
        ln1, attn, ln2, mlp = b.children
        a = c.call(ln1, c.arg(0))
        at = c.call(attn, a.out(0))
        l2 = c.call(ln2, at.out(0))
        ml = c.call(mlp, l2.out(0))
        c.ret([ml.out(0), at.out(0), c.arg(0)])

    def seq2_fwd(c):  # GPT2Attention / GPT2MLP: first(x) -> second -> return
        f, s = c.mod.children
        a = c.call(f, c.arg(0))
        b = c.call(s, a.out(0))
        c.ret([b.out(0)])

    def conv1d(parent, name, nx, nf):
        m = M.mod(name, parent, "Conv1D(nf=%d, nx=%d)" % (nf, nx))
        M.par(m, name + ".w", (nx, nf))
        M.par(m, name + ".b", (nf,))
        return m

    blocks = []
    for i in range(NL):
        h = M.mod("h.%d" % i, tr, "GPT2Block", block_fwd)
        layernorm(M, h, "h.%d.ln_1" % i, D)
        at = M.mod("h.%d.attn" % i, h, "GPT2Attention", seq2_fwd)
        conv1d(at, "h.%d.attn.c_attn" % i, D, 3 * D)
        conv1d(at, "h.%d.attn.c_proj" % i, D, D)
        layernorm(M, h, "h.%d.ln_2" % i, D)
        ml = M.mod("h.%d.mlp" % i, h, "GPT2MLP", seq2_fwd)
        conv1d(ml, "h.%d.mlp.c_fc" % i, D, FF)
        conv1d(ml, "h.%d.mlp.c_proj" % i, FF, D)
        blocks.append(h)
    ln_f = layernorm(M, tr, "ln_f", D)
    lm_head = M.mod("lm_head", root, "nn.Linear(%d, %d, bias=False), weight tied to wte" % (D, V))
    M.use(lm_head, wte_w)

    def tr_fwd(c):
        e = c.call(wte, c.arg(0))         # input_ids
        p = c.call(wpe, BATCH)            # position_ids
        x = e.out(0)
        for h in blocks:
            x = c.call(h, x).out(0)
        f = c.call(ln_f, x)
        c.ret([f.out(0), p.out(0)])

    def root_fwd(c):
        t = c.call(tr, c.arg(0))
        lg = c.call(lm_head, t.out(0))
        c.ret([lg.out(0)])               # loss = CE(shifted logits, labels)
    tr.fwd = tr_fwd
    root.fwd = root_fwd
    assert M.total_numel() == 124439808, M.total_numel()
    std_steps(M, lambda: M.run_pass([BATCH]), "input_ids (no grad) -> LM loss")
    return M


# ----------------------------------------------------------------------
# BERT-base
# ----------------------------------------------------------------------

def bert_embeddings(M, parent, name, V, P, T, E):
    """BertEmbeddings / AlbertEmbeddings: word, position, token_type, LayerNorm.
    forward: word(ids) + token_type(tt) + position(pos) -> LayerNorm."""
    emb = M.mod(name, parent, parent.cls.replace("Model", "Embeddings"), None)
    w = embedding(M, emb, name + ".word", V, E)
    p = embedding(M, emb, name + ".position", P, E)
    t = embedding(M, emb, name + ".token_type", T, E)
    ln = layernorm(M, emb, name + ".LN", E)

    def fwd(c):
        a = c.call(w, c.arg(0))       # input_ids
        b = c.call(t, BATCH)          # token_type_ids
        d = c.call(p, BATCH)          # position_ids
        n = c.call(ln, a.out(0))      # LayerNorm(word + token_type + position)
        c.ret([n.out(0), b.out(0), d.out(0)])
    emb.fwd = fwd
    return emb, w


def add_out_ln_fwd(c):
    """BertSelfOutput / BertOutput (hidden_states, input_tensor):
    LayerNorm(dense(hidden_states) + input_tensor)."""
    dense, ln = c.mod.children
    d = c.call(dense, c.arg(0))
    n = c.call(ln, d.out(0))
    c.ret([n.out(0), c.arg(1)])


def bert():
    cfg = dict(vocab_size=30522, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
               intermediate_size=3072, max_position_embeddings=512, type_vocab_size=2,
               hidden_act="gelu")
    V, H, NL, FF, P, T = (cfg["vocab_size"], cfg["hidden_size"], cfg["num_hidden_layers"],
                          cfg["intermediate_size"], cfg["max_position_embeddings"],
                          cfg["type_vocab_size"])
    M = Model("bert.scn", "BERT-base (HF transformers BertForPreTraining), training with ZeRO-3")
    M.header = [
        "source: HF `bert-base-uncased` config.json: " + ", ".join("%s=%s" % kv for kv in list(cfg.items())[:4]) + ",",
        "  " + ", ".join("%s=%s" % kv for kv in list(cfg.items())[4:]),
        "BertForPreTraining = BertModel (with pooler) + MLM head + next-sentence head, so the",
        "  pooler is used by the loss (BertForMaskedLM drops the pooler).",
        "tree: BertForPreTraining{bert: BertModel{emb: BertEmbeddings{word, position, token_type,",
        "  LN}, encoder{l0..l11: BertLayer{attn: BertAttention{self: BertSelfAttention{query, key,",
        "  value}, output: BertSelfOutput{dense, LN}}, inter: BertIntermediate{dense},",
        "  output: BertOutput{dense, LN}}}, pooler{dense}}, cls: BertPreTrainingHeads{predictions:",
        "  BertLMPredictionHead{transform{dense, LN}, decoder}, seq_relationship}}",
        "names: emb = bert.embeddings, lN = bert.encoder.layer.N, attn = attention,",
        "  inter = intermediate, LN = LayerNorm, cls.transform / cls.decoder =",
        "  cls.predictions.transform / .decoder; .w/.b = .weight/.bias.",
        "tied: cls.predictions.decoder.weight IS word_embeddings.weight and decoder.bias IS",
        "  cls.predictions.bias (owned by cls.predictions): the decoder uses both.",
        OMIT_NOTE + "embeddings.dropout, self.dropout, output.dropout, the",
        "  intermediate/transform activation modules, pooler.activation (Tanh); the",
        "  ModuleList encoder.layer (never called).  Attention masks / token-type ids /",
        "  position ids are `batch` (no grad) where an Embedding consumes them, else omitted.",
        "forward per layer: attn(x) -> a; intermediate(a) -> i; output(i, a) -> LN(dense(i) + a);",
        "  self-attention: query/key/value(x), softmax(QK^T)V in the op; BertSelfOutput's op",
        "  consumes the LayerNorm output and the residual input_tensor.",
        "loss: masked-LM CE over cls.decoder + next-sentence CE over seq_relationship(pooled).",
        "expected total: BertModel 109,482,240 + heads 624,188 = 110,106,428 (HF)",
        CONFIG_NOTE,
    ]
    M.config = list(DEEPSPEED_CONFIG)
    root = M.mod("pretrain", None, "BertForPreTraining", None)
    bm = M.mod("bert", root, "BertModel", None)
    emb, word = bert_embeddings(M, bm, "emb", V, P, T, H)
    word_w = word.params[0]
    enc = M.mod("encoder", bm, "BertEncoder", None)

    def layer_fwd(c):
        attn, inter, output = c.mod.children
        a = c.call(attn, c.arg(0))
        i = c.call(inter, a.out(0))
        o = c.call(output, i.out(0), a.out(0))
        c.ret([o.out(0)])

    def attn_fwd(c):
        sa, so = c.mod.children
        s = c.call(sa, c.arg(0))
        o = c.call(so, s.out(0), c.arg(0))
        c.ret([o.out(0)])

    def self_fwd(c):
        q, k, v = c.mod.children
        outs = [c.call(x, c.arg(0)).out(0) for x in (q, k, v)]
        c.ret(outs)                     # softmax(QK^T/sqrt(d) + mask) V

    def inter_fwd(c):
        d = c.call(c.mod.children[0], c.arg(0))
        c.ret([d.out(0)])               # gelu(dense(x))

    layers = []
    for i in range(NL):
        n = "l%d" % i
        l = M.mod(n, enc, "BertLayer", layer_fwd)
        at = M.mod(n + ".attn", l, "BertAttention", attn_fwd)
        sa = M.mod(n + ".attn.self", at, "BertSelfAttention", self_fwd)
        for x in ("query", "key", "value"):
            linear(M, sa, "%s.attn.self.%s" % (n, x), H, H)
        so = M.mod(n + ".attn.output", at, "BertSelfOutput", add_out_ln_fwd)
        linear(M, so, n + ".attn.output.dense", H, H)
        layernorm(M, so, n + ".attn.output.LN", H)
        it = M.mod(n + ".inter", l, "BertIntermediate", inter_fwd)
        linear(M, it, n + ".inter.dense", H, FF)
        ot = M.mod(n + ".output", l, "BertOutput", add_out_ln_fwd)
        linear(M, ot, n + ".output.dense", FF, H)
        layernorm(M, ot, n + ".output.LN", H)
        layers.append(l)

    def enc_fwd(c):
        x = c.arg(0)
        for l in layers:
            x = c.call(l, x).out(0)
        c.ret([x])
    enc.fwd = enc_fwd
    pooler = M.mod("pooler", bm, "BertPooler", inter_fwd)   # tanh(dense(x[:, 0]))
    linear(M, pooler, "pooler.dense", H, H)
    bert_model_numel = M.total_numel()
    assert bert_model_numel == 109482240, bert_model_numel

    def bm_fwd(c):
        e = c.call(emb, c.arg(0))
        x = c.call(enc, e.out(0))
        p = c.call(pooler, x.out(0))
        c.ret([x.out(0), p.out(0)], 2)   # (sequence_output, pooled_output)
    bm.fwd = bm_fwd

    cls = M.mod("cls", root, "BertPreTrainingHeads", None)
    pred = M.mod("cls.predictions", cls, "BertLMPredictionHead", None)
    pred_b = M.par(pred, "cls.predictions.bias", (V,))
    tf = M.mod("cls.transform", pred, "BertPredictionHeadTransform", None)
    tfd = linear(M, tf, "cls.transform.dense", H, H)
    tfl = layernorm(M, tf, "cls.transform.LN", H)

    def tf_fwd(c):
        d = c.call(tfd, c.arg(0))
        n = c.call(tfl, d.out(0))
        c.ret([n.out(0)])
    tf.fwd = tf_fwd
    dec = M.mod("cls.decoder", pred, "nn.Linear(%d, %d), weight and bias tied" % (H, V))
    M.use(dec, word_w)
    M.use(dec, pred_b)

    def pred_fwd(c):
        t = c.call(tf, c.arg(0))
        d = c.call(dec, t.out(0))
        c.ret([d.out(0)])
    pred.fwd = pred_fwd
    sr = linear(M, cls, "cls.seq_relationship", H, 2)

    def cls_fwd(c):
        p = c.call(pred, c.arg(0))
        s = c.call(sr, c.arg(1))
        c.ret([p.out(0), s.out(0)], 2)   # (prediction_scores, seq_relationship_score)
    cls.fwd = cls_fwd

    def root_fwd(c):
        b = c.call(bm, c.arg(0))
        h = c.call(cls, b.out(0), b.out(1))
        c.ret([h.out(0), h.out(1)])      # masked_lm_loss + next_sentence_loss
    root.fwd = root_fwd
    assert M.total_numel() == 110106428, M.total_numel()
    std_steps(M, lambda: M.run_pass([BATCH]),
              "input_ids (no grad) -> MLM + NSP loss")
    return M


# ----------------------------------------------------------------------
# ALBERT-base
# ----------------------------------------------------------------------

def albert():
    cfg = dict(vocab_size=30000, embedding_size=128, hidden_size=768, num_hidden_layers=12,
               num_hidden_groups=1, inner_group_num=1, num_attention_heads=12,
               intermediate_size=3072, max_position_embeddings=512, type_vocab_size=2,
               hidden_act="gelu_new")
    V, E, H, NL, FF, P, T = (cfg["vocab_size"], cfg["embedding_size"], cfg["hidden_size"],
                             cfg["num_hidden_layers"], cfg["intermediate_size"],
                             cfg["max_position_embeddings"], cfg["type_vocab_size"])
    M = Model("albert.scn", "ALBERT-base (HF transformers AlbertForPreTraining), training with ZeRO-3")
    items = list(cfg.items())
    M.header = [
        "source: HF `albert-base-v2` config.json: " + ", ".join("%s=%s" % kv for kv in items[:4]) + ",",
        "  " + ", ".join("%s=%s" % kv for kv in items[4:8]) + ",",
        "  " + ", ".join("%s=%s" % kv for kv in items[8:]),
        "THE MODULE-REUSE CASE: num_hidden_groups=1, inner_group_num=1, so AlbertTransformer",
        "  calls the ONE shared AlbertLayerGroup (group0, holding the one AlbertLayer layer0)",
        "  12 times per forward.  Under DeepSpeed's reset-on-forward counter every call",
        "  resets ds_grads_remaining to 0, so backward drives it negative (-1 at the second",
        "  post-backward) and the layer's parameters stay gathered.",
        "tree: AlbertForPreTraining{albert: AlbertModel{emb: AlbertEmbeddings{word, position,",
        "  token_type, LN}, encoder: AlbertTransformer{mapping_in, group0{layer0{full_LN,",
        "  attn: AlbertAttention{query, key, value, dense, LN}, ffn, ffn_output}}}, pooler},",
        "  predictions: AlbertMLMHead{LN, dense, decoder}, sop_classifier: AlbertSOPHead{classifier}}",
        "names: emb = albert.embeddings, mapping_in = encoder.embedding_hidden_mapping_in,",
        "  group0 = encoder.albert_layer_groups.0, layer0 = group0.albert_layers.0,",
        "  full_LN = full_layer_layer_norm, attn = attention, LN = LayerNorm, .w/.b.",
        "tied: predictions.decoder.weight IS word_embeddings.weight, decoder.bias IS",
        "  predictions.bias (owned by predictions): the decoder uses both.",
        OMIT_NOTE + "dropouts, the activation modules, pooler_activation (Tanh);",
        "  the ModuleLists albert_layer_groups and albert_layers (never called).",
        "forward: embeddings (128) -> mapping_in (128->768) -> group0 x 12 -> pooler(x[:, 0]);",
        "  AlbertLayer: attn(x) -> a; ffn_output(gelu(ffn(a))) -> f; full_LN(f + a);",
        "  AlbertAttention: query/key/value(x), dense(context), LN(x + dense) (x consumed",
        "  by the op as residual).  loss: MLM CE + sentence-order CE.",
        "expected total: AlbertModel 11,683,584 (HF) + MLM head 128,688 + SOP head 1,538",
        CONFIG_NOTE,
    ]
    M.config = list(DEEPSPEED_CONFIG)
    root = M.mod("pretrain", None, "AlbertForPreTraining", None)
    am = M.mod("albert", root, "AlbertModel", None)
    emb, word = bert_embeddings(M, am, "emb", V, P, T, E)
    enc = M.mod("encoder", am, "AlbertTransformer", None)
    mi = linear(M, enc, "mapping_in", E, H)
    group = M.mod("group0", enc, "AlbertLayerGroup", None)
    layer = M.mod("layer0", group, "AlbertLayer", None)
    full_ln = layernorm(M, layer, "layer0.full_LN", H)
    attn = M.mod("layer0.attn", layer, "AlbertAttention", None)
    q = linear(M, attn, "layer0.attn.query", H, H)
    k = linear(M, attn, "layer0.attn.key", H, H)
    v = linear(M, attn, "layer0.attn.value", H, H)
    d = linear(M, attn, "layer0.attn.dense", H, H)
    aln = layernorm(M, attn, "layer0.attn.LN", H)
    ffn = linear(M, layer, "layer0.ffn", H, FF)
    ffo = linear(M, layer, "layer0.ffn_output", FF, H)
    pooler = linear(M, am, "pooler", H, H)
    assert M.total_numel() == 11683584, M.total_numel()

    def attn_fwd(c):
        qo = c.call(q, c.arg(0))
        ko = c.call(k, c.arg(0))
        vo = c.call(v, c.arg(0))
        do = c.call(d, vo.out(0))         # dense(softmax(QK^T)V)
        lo = c.call(aln, do.out(0))       # LayerNorm(x + projected)
        c.ret([lo.out(0), qo.out(0), ko.out(0), c.arg(0)])
    attn.fwd = attn_fwd

    def layer_fwd(c):
        a = c.call(attn, c.arg(0))
        f = c.call(ffn, a.out(0))
        fo = c.call(ffo, f.out(0))
        n = c.call(full_ln, fo.out(0))    # full_layer_layer_norm(ffn_output + attention_output)
        c.ret([n.out(0), a.out(0)])
    layer.fwd = layer_fwd

    def group_fwd(c):
        l = c.call(layer, c.arg(0))
        c.ret([l.out(0)])
    group.fwd = group_fwd

    def enc_fwd(c):
        x = c.call(mi, c.arg(0)).out(0)
        for _ in range(NL):               # the same group module, 12 calls
            x = c.call(group, x).out(0)
        c.ret([x])
    enc.fwd = enc_fwd

    def am_fwd(c):
        e = c.call(emb, c.arg(0))
        x = c.call(enc, e.out(0))
        p = c.call(pooler, x.out(0))
        c.ret([x.out(0), p.out(0)], 2)
    am.fwd = am_fwd

    pred = M.mod("predictions", root, "AlbertMLMHead", None)
    pred_b = M.par(pred, "predictions.bias", (V,))
    pln = layernorm(M, pred, "predictions.LN", E)
    pd = linear(M, pred, "predictions.dense", H, E)
    dec = M.mod("predictions.decoder", pred, "nn.Linear(%d, %d), weight and bias tied" % (E, V))
    M.use(dec, word.params[0])
    M.use(dec, pred_b)

    def pred_fwd(c):
        x = c.call(pd, c.arg(0))
        n = c.call(pln, x.out(0))         # LayerNorm(gelu_new(dense(x)))
        o = c.call(dec, n.out(0))
        c.ret([o.out(0)])
    pred.fwd = pred_fwd
    sop = M.mod("sop_classifier", root, "AlbertSOPHead", None)
    cl = linear(M, sop, "sop.classifier", H, 2)

    def sop_fwd(c):
        o = c.call(cl, c.arg(0))
        c.ret([o.out(0)])
    sop.fwd = sop_fwd

    def root_fwd(c):
        a = c.call(am, c.arg(0))
        p = c.call(pred, a.out(0))
        s = c.call(sop, a.out(1))
        c.ret([p.out(0), s.out(0)])      # masked_lm_loss + sentence_order_loss
    root.fwd = root_fwd
    assert M.total_numel() == 11683584 + 128688 + 1538, M.total_numel()
    std_steps(M, lambda: M.run_pass([BATCH]), "input_ids (no grad) -> MLM + SOP loss")
    return M


# ----------------------------------------------------------------------
# T5-small
# ----------------------------------------------------------------------

def t5():
    cfg = dict(vocab_size=32128, d_model=512, d_kv=64, d_ff=2048, num_layers=6,
               num_decoder_layers=6, num_heads=8, relative_attention_num_buckets=32,
               feed_forward_proj="relu", tie_word_embeddings=True)
    V, D, DKV, FF, NL, ND, NH, NB = (cfg["vocab_size"], cfg["d_model"], cfg["d_kv"], cfg["d_ff"],
                                     cfg["num_layers"], cfg["num_decoder_layers"],
                                     cfg["num_heads"], cfg["relative_attention_num_buckets"])
    INNER = NH * DKV
    M = Model("t5.scn", "T5-small (HF transformers T5ForConditionalGeneration), training with ZeRO-3")
    items = list(cfg.items())
    M.header = [
        "source: HF `t5-small` config.json: " + ", ".join("%s=%s" % kv for kv in items[:5]) + ",",
        "  " + ", ".join("%s=%s" % kv for kv in items[5:]),
        "tree: T5ForConditionalGeneration{shared, encoder: T5Stack{embed_tokens*, e0..e5: T5Block{",
        "  sa: T5LayerSelfAttention{attn: T5Attention{q, k, v, o, [rel_bias in e0 only]}, ln},",
        "  ff: T5LayerFF{dense: T5DenseActDense{wi, wo}, ln}}, final_ln}, decoder: T5Stack{",
        "  embed_tokens*, d0..d5: T5Block{sa, ca: T5LayerCrossAttention{attn{q, k, v, o}, ln},",
        "  ff}, final_ln}, lm_head}",
        "names: eN/dN = encoder/decoder.block.N, sa/ca/ff = layer.0/layer.1/layer.-1,",
        "  attn = SelfAttention / EncDecAttention, rel_bias = relative_attention_bias,",
        "  ln = layer_norm, dense = DenseReluDense, final_ln = final_layer_norm, .w = .weight",
        "  (T5 linears and norms have no bias).",
        "tied (tie_word_embeddings=True, T5 v1.0): encoder.embed_tokens, decoder.embed_tokens and",
        "  `shared` are ONE nn.Embedding object, and lm_head.weight IS shared.weight.",
        "  *The real stacks call the root's `shared` module itself; the scenario format only",
        "  lets a body call its own child modules, so each stack calls a parameter-free",
        "  stand-in `<stack>.embed_tokens` that uses shared.w (`use`).  Their input is token",
        "  ids (no grad), so hook D counts nothing, as for the real shared module; `shared`",
        "  itself is never called here.  lm_head uses shared.w as well.",
        "relative attention bias: only e0/d0 self-attention own rel_bias; the position bias",
        "  it computes is returned by every block and passed to the next (T5Stack rebinds",
        "  position_bias = layer_outputs[2]), so later blocks read the previous block's output.",
        "  The decoder's encoder_decoder_position_bias is a zeros tensor without grad: later",
        "  blocks read the previous block's third output detached (`.detach`).",
        OMIT_NOTE + "dropouts, the ReLU act module (T5DenseActDense.act); the",
        "  ModuleLists block and layer (never called).  Masks are not passed (no grad).",
        "keyword tensors (see tools/gen_models.py: DeepSpeed's hook D does not see them, here",
        "  they are inputs and counted): decoder(encoder_hidden_states=h); blocks'",
        "  position_bias, encoder_hidden_states, encoder_decoder_position_bias; sublayers'",
        "  position_bias / key_value_states; attention's position_bias / key_value_states.",
        "  DeepSpeed counts 0 for the decoder stack and 1 (hidden_states) for the others.",
        "forward: encoder(input_ids) -> h; decoder(shift_right(labels), h) -> lm_head(x * d_model^-0.5)",
        "  -> CE loss.  T5LayerSelfAttention: ln(x) -> attn -> x + out (x consumed by the op).",
        "expected total (HF, tied weight counted once): 60,506,624",
        CONFIG_NOTE,
    ]
    M.config = list(DEEPSPEED_CONFIG)
    root = M.mod("t5", None, "T5ForConditionalGeneration", None)
    shared = embedding(M, root, "shared", V, D)
    shared_w = shared.params[0]

    def rmsnorm(parent, name):
        return layernorm(M, parent, name, D, bias=False, cls="T5LayerNorm")

    def attention(parent, name, rel_bias, cross):
        at = M.mod(name, parent, "T5Attention(has_relative_attention_bias=%s)" % rel_bias, None)
        q = linear(M, at, name + ".q", D, INNER, bias=False)
        k = linear(M, at, name + ".k", D, INNER, bias=False)
        v = linear(M, at, name + ".v", D, INNER, bias=False)
        o = linear(M, at, name + ".o", INNER, D, bias=False)
        rb = embedding(M, at, name + ".rel_bias", NB, NH) if rel_bias else None

        def fwd(c):
            # self: (hidden, [position_bias]); cross: (hidden, key_value_states, [position_bias])
            kv = c.arg(1) if cross else c.arg(0)
            qo = c.call(q, c.arg(0))
            ko = c.call(k, kv)
            vo = c.call(v, kv)
            npb = 2 if cross else 1
            if rb is not None:
                pb = c.call(rb, BATCH).out(0)    # compute_bias(relative_position_bucket)
            elif len(c.ins) > npb:
                pb = c.arg(npb)
            else:
                pb = None                        # cross-attention of block 0: zeros, no grad
            oo = c.call(o, vo.out(0))            # o(softmax(QK^T + bias) V)
            c.ret([oo.out(0), qo.out(0), ko.out(0)] + ([pb] if pb is not None else []), 2)
        at.fwd = fwd
        return at

    def sublayer(parent, name, cls, rel_bias, cross):
        sl = M.mod(name, parent, cls, None)
        at = attention(sl, name + ".attn", rel_bias, cross)
        ln = rmsnorm(sl, name + ".ln")

        def fwd(c):
            n = c.call(ln, c.arg(0))
            rest = [c.arg(i) for i in range(1, len(c.ins))]   # [key_value_states], [position_bias]
            a = c.call(at, n.out(0), *rest)
            c.ret([a.out(0), c.arg(0), a.out(1)], 2)   # (x + attn_out, position_bias)
        sl.fwd = fwd
        return sl

    def ff_layer(parent, name):
        fl = M.mod(name, parent, "T5LayerFF", None)
        dd = M.mod(name + ".dense", fl, "T5DenseActDense", None)
        wi = linear(M, dd, name + ".dense.wi", D, FF, bias=False)
        wo = linear(M, dd, name + ".dense.wo", FF, D, bias=False)
        ln = rmsnorm(fl, name + ".ln")

        def dfwd(c):
            a = c.call(wi, c.arg(0))
            b = c.call(wo, a.out(0))                  # wo(relu(wi(x)))
            c.ret([b.out(0)])
        dd.fwd = dfwd

        def ffwd(c):
            n = c.call(ln, c.arg(0))
            h = c.call(dd, n.out(0))
            c.ret([h.out(0), c.arg(0)])               # x + DenseReluDense(ln(x))
        fl.fwd = ffwd
        return fl

    def stack(name, n, decoder):
        st = M.mod(name, root, "T5Stack(is_decoder=%s)" % decoder, None)
        et = M.mod(name + ".embed_tokens", st, "stand-in for the shared nn.Embedding", None)
        et.fwd = leaf_fwd
        M.use(et, shared_w)
        blocks = []
        for i in range(n):
            bn = "%s%d" % ("d" if decoder else "e", i)
            b = M.mod(bn, st, "T5Block", None)
            sa = sublayer(b, bn + ".sa", "T5LayerSelfAttention", i == 0, False)
            ca = sublayer(b, bn + ".ca", "T5LayerCrossAttention", False, True) if decoder else None
            ff = ff_layer(b, bn + ".ff")

            def bfwd(c, sa=sa, ca=ca, ff=ff):
                # encoder block: (hidden, [position_bias])
                # decoder block: (hidden, [position_bias], encoder_hidden_states, [enc_dec_position_bias])
                first = (len(c.ins) == (2 if ca else 1))
                if ca is None:
                    s = c.call(sa, *[c.arg(i) for i in range(len(c.ins))])
                    f = c.call(ff, s.out(0))
                    c.ret([f.out(0), s.out(1)], 2)     # (hidden, position_bias)
                    return
                if first:
                    s = c.call(sa, c.arg(0))
                    x = c.call(ca, s.out(0), c.arg(1))
                else:
                    s = c.call(sa, c.arg(0), c.arg(1))
                    x = c.call(ca, s.out(0), c.arg(2), c.arg(3))
                f = c.call(ff, x.out(0))
                c.ret([f.out(0), s.out(1), x.out(1)], 3)   # (hidden, position_bias, enc_dec_position_bias)
            b.fwd = bfwd
            blocks.append(b)
        fl = rmsnorm(st, name + ".final_ln")

        def sfwd(c):
            x = c.call(et, c.arg(0)).out(0)
            prev = None
            for i, b in enumerate(blocks):
                if not decoder:
                    prev = c.call(b, x) if i == 0 else c.call(b, x, prev.out(1))
                else:
                    enc_h = c.arg(1)
                    prev = c.call(b, x, enc_h) if i == 0 else \
                        c.call(b, x, prev.out(1), enc_h, prev.out(2).detach())
                x = prev.out(0)
            f = c.call(fl, x)
            c.ret([f.out(0)])
        st.fwd = sfwd
        return st

    enc = stack("encoder", NL, False)
    dec = stack("decoder", ND, True)
    lm = M.mod("lm_head", root, "nn.Linear(%d, %d, bias=False), weight tied to shared" % (D, V))
    M.use(lm, shared_w)

    def root_fwd(c):
        e = c.call(enc, c.arg(0))                   # input_ids
        d = c.call(dec, c.arg(0), e.out(0))         # decoder_input_ids = shift_right(labels)
        lg = c.call(lm, d.out(0))
        c.ret([lg.out(0)])                          # CE(lm_logits, labels)
    root.fwd = root_fwd
    assert M.total_numel() == 60506624, M.total_numel()
    std_steps(M, lambda: M.run_pass([BATCH]), "input_ids, labels (no grad) -> LM loss")
    return M


# ----------------------------------------------------------------------
# LLaMA-style decoder stacks (LLaMA checkpointing, Mixtral MoE, LoRA)
# ----------------------------------------------------------------------

def llama_layer_counts(H, I, NH, NKV, n_experts=0):
    """Parameters of one LlamaDecoderLayer / MixtralDecoderLayer."""
    hd = H // NH
    attn = H * H * 2 + 2 * (NKV * hd) * H
    mlp = 3 * H * I * (n_experts or 1) + (n_experts * H if n_experts else 0)
    return attn + mlp + 2 * H


def llama_attention(M, parent, n, H, NH, NKV, frozen=False, lora=None):
    """LlamaAttention / MixtralAttention: q_proj, k_proj, v_proj, o_proj (no bias).
    lora: None or (r, targets) -> PEFT lora.Linear on those projections."""
    hd = H // NH
    at = M.mod(n + ".attn", parent, parent.cls.replace("DecoderLayer", "Attention"), None)
    projs = []
    for pn, i_, o_ in (("q_proj", H, H), ("k_proj", H, NKV * hd), ("v_proj", H, NKV * hd),
                       ("o_proj", H, H)):
        name = "%s.attn.%s" % (n, pn)
        if lora and pn in lora[1]:
            r = lora[0]
            ll = M.mod(name, at, "peft lora.Linear(r=%d)" % r, None)
            base = linear(M, ll, name + ".base", i_, o_, bias=False, frozen=True)
            la = linear(M, ll, name + ".lora_A", i_, r, bias=False)
            lb = linear(M, ll, name + ".lora_B", r, o_, bias=False)

            def lfwd(c, base=base, la=la, lb=lb):
                b = c.call(base, c.arg(0))
                a = c.call(la, c.arg(0))            # lora_A(lora_dropout(x))
                u = c.call(lb, a.out(0))
                c.ret([b.out(0), u.out(0)])         # base(x) + lora_B(...) * scaling
            ll.fwd = lfwd
            projs.append(ll)
        else:
            projs.append(linear(M, at, name, i_, o_, bias=False, frozen=frozen))
    q, k, v, o = projs

    def fwd(c):
        qo = c.call(q, c.arg(0))
        ko = c.call(k, c.arg(0))
        vo = c.call(v, c.arg(0))
        oo = c.call(o, vo.out(0))        # o_proj(softmax(rope(Q) rope(K)^T) V)
        c.ret([oo.out(0), qo.out(0), ko.out(0)])
    at.fwd = fwd
    return at


def llama_mlp(M, parent, name, H, I, frozen=False, names=("gate_proj", "up_proj", "down_proj"),
              cls="LlamaMLP"):
    mlp = M.mod(name, parent, cls, None)
    g = linear(M, mlp, "%s.%s" % (name, names[0]), H, I, bias=False, frozen=frozen)
    if names[1] == "w2":   # Mixtral registers w1 (H->I), w2 (I->H), w3 (H->I)
        dn = linear(M, mlp, "%s.%s" % (name, names[1]), I, H, bias=False, frozen=frozen)
        up = linear(M, mlp, "%s.%s" % (name, names[2]), H, I, bias=False, frozen=frozen)
    else:                  # LLaMA registers gate_proj, up_proj (H->I), down_proj (I->H)
        up = linear(M, mlp, "%s.%s" % (name, names[1]), H, I, bias=False, frozen=frozen)
        dn = linear(M, mlp, "%s.%s" % (name, names[2]), I, H, bias=False, frozen=frozen)

    def fwd(c):
        a = c.call(g, c.arg(0))
        b = c.call(up, c.arg(0))
        d = c.call(dn, a.out(0))         # down(act(gate(x)) * up(x))
        c.ret([d.out(0), b.out(0)])
    mlp.fwd = fwd
    return mlp


def decoder_layer_fwd(attn, mlp, in_ln, post_ln):
    def fwd(c):
        a = c.call(in_ln, c.arg(0))
        at = c.call(attn, a.out(0))
        p = c.call(post_ln, at.out(0))           # post_attention_layernorm(x + attn)
        m = c.call(mlp, p.out(0))
        c.ret([m.out(0), at.out(0), c.arg(0)])   # x + attn + mlp (residuals)
    return fwd


def llama_ckpt():
    cfg = dict(vocab_size=32000, hidden_size=4096, intermediate_size=11008,
               num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=32,
               hidden_act="silu", rms_norm_eps=1e-6, tie_word_embeddings=False)
    V, H, I, NH, NKV = (cfg["vocab_size"], cfg["hidden_size"], cfg["intermediate_size"],
                        cfg["num_attention_heads"], cfg["num_key_value_heads"])
    NL = 2
    full = cfg["num_hidden_layers"] * llama_layer_counts(H, I, NH, NKV) + 2 * V * H + H
    assert full == 6738415616, full
    M = Model("llama_ckpt.scn",
              "LLaMA-7B-style stack (HF LlamaForCausalLM) with activation checkpointing, ZeRO-3")
    items = list(cfg.items())
    M.header = [
        "source: LLaMA-7B (HF `huggyllama/llama-7b`) config.json: "
        + ", ".join("%s=%s" % kv for kv in items[:3]) + ",",
        "  " + ", ".join("%s=%s" % kv for kv in items[3:]),
        "(full model 6,738,415,616 parameters).  This file keeps the real per-layer sizes",
        "but only %d of the 32 decoder layers (num_hidden_layers=%d here)." % (NL, NL),
        "tree: LlamaForCausalLM{model: LlamaModel{embed_tokens, l0..l%d: LlamaDecoderLayer{" % (NL - 1),
        "  attn: LlamaAttention{q_proj, k_proj, v_proj, o_proj}, mlp: LlamaMLP{gate_proj,",
        "  up_proj, down_proj}, in_ln, post_ln}, norm}, lm_head}",
        "names: lN = model.layers.N, attn = self_attn, in_ln / post_ln = input_layernorm /",
        "  post_attention_layernorm (LlamaRMSNorm), .w = .weight (no biases).",
        "keyword tensors: LlamaDecoderLayer calls self_attn(hidden_states=...), which",
        "  DeepSpeed's hook D does not see (count 0, no post-backward for attn); here the",
        "  tensor is attn's input and counted (see tools/gen_models.py).",
        OMIT_NOTE + "rotary_emb, mlp.act_fn (SiLU); the ModuleList layers.",
        "  Masks and position ids are not passed (no grad).",
        "checkpointing: model.gradient_checkpointing_enable(): LlamaModel calls each decoder",
        "  layer through torch.utils.checkpoint.checkpoint(layer, hidden_states, ...) while",
        "  training, use_reentrant=True (the default of transformers < 4.35) or False",
        "  (gradient_checkpointing_kwargs={'use_reentrant': False}); no checkpointing in eval.",
        "forward per layer: in_ln(x) -> attn -> a; post_ln(a) (input x + a) -> mlp -> m;",
        "  the layer's op consumes m, a and x (residuals).  LlamaMLP: down(silu(gate(x)) * up(x)).",
        CONFIG_NOTE,
    ]
    M.config = list(DEEPSPEED_CONFIG)
    root = M.mod("lm", None, "LlamaForCausalLM", None)
    model = M.mod("model", root, "LlamaModel", None)
    emb = embedding(M, model, "model.embed_tokens", V, H)
    layers = []
    for i in range(NL):
        n = "l%d" % i
        l = M.mod(n, model, "LlamaDecoderLayer", None)
        at = llama_attention(M, l, n, H, NH, NKV)
        mlp = llama_mlp(M, l, n + ".mlp", H, I)
        il = layernorm(M, l, n + ".in_ln", H, bias=False, cls="LlamaRMSNorm")
        pl = layernorm(M, l, n + ".post_ln", H, bias=False, cls="LlamaRMSNorm")
        l.fwd = decoder_layer_fwd(at, mlp, il, pl)
        layers.append(l)
    norm = layernorm(M, model, "model.norm", H, bias=False, cls="LlamaRMSNorm")
    lm_head = linear(M, root, "lm_head", H, V, bias=False)
    mode = {"ckpt": None}

    def model_fwd(c):
        x = c.call(emb, c.arg(0)).out(0)
        for l in layers:
            x = c.call(l, x, ckpt=mode["ckpt"]).out(0)
        n = c.call(norm, x)
        c.ret([n.out(0)])
    model.fwd = model_fwd

    def root_fwd(c):
        h = c.call(model, c.arg(0))
        lg = c.call(lm_head, h.out(0))
        c.ret([lg.out(0)])
    root.fwd = root_fwd
    assert M.total_numel() == NL * llama_layer_counts(H, I, NH, NKV) + 2 * V * H + H

    def build(ck):
        def setup():
            mode["ckpt"] = ck
        return M.run_pass([BATCH], setup)
    M.step("train", [([0], build("reentrant"), "")],
           "train step, reentrant checkpointing of every decoder layer (use_reentrant=True):\n"
           "the layers run under no_grad first and are recomputed in backward")
    M.step("train", [([0], build("reentrant"), "")],
           "second train step, reentrant again: the recorded trace is replayed")
    M.step("train", [([0], build("non-reentrant"), "")],
           "train step, non-reentrant checkpointing (use_reentrant=False): forward with grad,\n"
           "saved tensors dropped, recomputed when backward first needs one")
    M.step("eval", [([], build(None), "")],
           "eval step (model.eval(): LlamaModel only checkpoints while training)")
    M.step("accum", [([0], build("reentrant"), "micro-batch 1"),
                     ([0], build("reentrant"), "micro-batch 2")],
           "gradient accumulation, 2 micro-batches, reentrant checkpointing")
    M.step("accum", [([0], build("non-reentrant"), "micro-batch 1"),
                     ([0], build("non-reentrant"), "micro-batch 2")],
           "gradient accumulation, 2 micro-batches, non-reentrant checkpointing")
    return M


def mixtral_moe(leaf=False):
    """leaf: deepspeed.utils.set_z3_leaf_modules(model, [MixtralSparseMoeBlock]), the
    setting DeepSpeed documents for Mixtral under ZeRO-3."""
    cfg = dict(vocab_size=32000, hidden_size=4096, intermediate_size=14336,
               num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8,
               num_local_experts=8, num_experts_per_tok=2, hidden_act="silu",
               tie_word_embeddings=False, output_router_logits=False)
    V, H, I, NH, NKV, NE = (cfg["vocab_size"], cfg["hidden_size"], cfg["intermediate_size"],
                            cfg["num_attention_heads"], cfg["num_key_value_heads"],
                            cfg["num_local_experts"])
    NL = 2
    full = cfg["num_hidden_layers"] * llama_layer_counts(H, I, NH, NKV, NE) + 2 * V * H + H
    assert full == 46702792704, full
    M = Model("mixtral_moe_leaf.scn" if leaf else "mixtral_moe.scn",
              "Mixtral-8x7B-style MoE stack (HF MixtralForCausalLM), top-2 routing, ZeRO-3"
              + (", MoE blocks as z3 leaf modules" if leaf else ""))
    items = list(cfg.items())
    M.header = [
        "source: Mixtral-8x7B (HF `mistralai/Mixtral-8x7B-v0.1`) config.json:",
        "  " + ", ".join("%s=%s" % kv for kv in items[:4]) + ",",
        "  " + ", ".join("%s=%s" % kv for kv in items[4:8]) + ",",
        "  " + ", ".join("%s=%s" % kv for kv in items[8:]),
        "(full model 46,702,792,704 parameters).  This file keeps the real per-layer sizes",
        "but only %d of the 32 decoder layers." % NL,
        "tree: MixtralForCausalLM{model: MixtralModel{embed_tokens, l0..l%d: MixtralDecoderLayer{" % (NL - 1),
        "  attn: MixtralAttention{q_proj, k_proj, v_proj, o_proj}, moe: MixtralSparseMoeBlock{",
        "  gate, e0..e7: MixtralBlockSparseTop2MLP{w1, w2, w3}}, in_ln, post_ln}, norm}, lm_head}",
        "names: lN = model.layers.N, attn = self_attn, moe = block_sparse_moe, eK = experts.K,",
        "  in_ln / post_ln = input_layernorm / post_attention_layernorm, .w = .weight.",
        "keyword tensors: MixtralDecoderLayer calls self_attn(hidden_states=...), which",
        "  DeepSpeed's hook D does not see (count 0, no post-backward for attn); here the",
        "  tensor is attn's input and counted (see tools/gen_models.py).",
        OMIT_NOTE + "rotary_emb, the experts' act_fn (SiLU); the ModuleLists",
        "  layers and experts.  Masks and position ids are not passed (no grad).",
        "MoE forward (MixtralSparseMoeBlock): router_logits = gate(x); top-2 experts per token;",
        "  `for expert_idx in range(8)`: an expert with no routed token is skipped, the others",
        "  are called in index order on their tokens (derived from x) and weighted by the",
        "  routing weights (from gate's output, consumed by the block's op).  Returns",
        "  (hidden, router_logits); router_logits is not used (output_router_logits=False).",
        "  Expert: w2(silu(w1(x)) * w3(x)).",
        "ROUTING CHANGES BETWEEN STEPS: each pass routes 1 or 2 tokens (top-2 each), so the",
        "  set of experts called differs between steps and layers (listed before each step):",
        "  the recorded module order no longer matches, which invalidates the trace.",
        CONFIG_NOTE,
    ]
    if leaf:
        at = [i for i, h in enumerate(M.header) if h.startswith("ROUTING CHANGES")][0]
        M.header[at:at + 3] = [
            "Z3 LEAF: deepspeed.utils.set_z3_leaf_modules(model, [MixtralSparseMoeBlock]) (what",
            "  DeepSpeed documents for Mixtral): each MoE block fetches the gate and all 8",
            "  experts at its pre-forward, its descendants get no hooks and its call makes no",
            "  child calls here, so the routing (the same tables as mixtral_moe.scn, listed",
            "  before each step) no longer changes the module order: the trace stays valid.",
        ]
    M.config = list(DEEPSPEED_CONFIG)
    root = M.mod("lm", None, "MixtralForCausalLM", None)
    model = M.mod("model", root, "MixtralModel", None)
    emb = embedding(M, model, "model.embed_tokens", V, H)
    route = {"table": None}
    layers = []
    for i in range(NL):
        n = "l%d" % i
        l = M.mod(n, model, "MixtralDecoderLayer", None)
        at = llama_attention(M, l, n, H, NH, NKV)
        moe = M.mod(n + ".moe", l, "MixtralSparseMoeBlock(top_k=2)", None)
        moe.z3_leaf = leaf
        gate = linear(M, moe, n + ".moe.gate", H, NE, bias=False)
        experts = [llama_mlp(M, moe, "%s.moe.e%d" % (n, e), H, I, names=("w1", "w2", "w3"),
                             cls="MixtralBlockSparseTop2MLP") for e in range(NE)]
        il = layernorm(M, l, n + ".in_ln", H, bias=False, cls="MixtralRMSNorm")
        pl = layernorm(M, l, n + ".post_ln", H, bias=False, cls="MixtralRMSNorm")

        def moe_fwd(c, i=i, gate=gate, experts=experts):
            if leaf:                            # opaque: gate and experts run inside
                c.ret([c.arg(0)], 2)
                return
            tokens = route["table"][i]          # [(e_a, e_b)] top-2 per token
            hit = sorted({e for pair in tokens for e in pair})
            g = c.call(gate, c.arg(0))
            outs = [c.call(experts[e], c.arg(0)).out(0) for e in hit]
            c.ret(outs + [g.out(0)], 2)          # (final_hidden_states, router_logits)
        moe.fwd = moe_fwd
        l.fwd = decoder_layer_fwd(at, moe, il, pl)
        layers.append(l)
    norm = layernorm(M, model, "model.norm", H, bias=False, cls="MixtralRMSNorm")
    lm_head = linear(M, root, "lm_head", H, V, bias=False)

    def model_fwd(c):
        x = c.call(emb, c.arg(0)).out(0)
        for l in layers:
            x = c.call(l, x).out(0)
        n = c.call(norm, x)
        c.ret([n.out(0)])
    model.fwd = model_fwd

    def root_fwd(c):
        h = c.call(model, c.arg(0))
        lg = c.call(lm_head, h.out(0))
        c.ret([lg.out(0)])
    root.fwd = root_fwd
    assert M.total_numel() == NL * llama_layer_counts(H, I, NH, NKV, NE) + 2 * V * H + H

    def build(table):
        def setup():
            route["table"] = table
        return M.run_pass([BATCH], setup)

    def desc(table):
        return "; ".join("l%d tokens %s -> experts %s" % (
            i, " ".join("(%d,%d)" % p for p in t), ",".join(str(e) for e in sorted({e for p in t for e in p})))
            for i, t in enumerate(table))
    M.build_pass = build
    M.route_desc = desc
    r_a = [[(1, 5)], [(0, 6)]]
    r_b = [[(2, 5)], [(3, 7), (0, 3)]]
    r_c = [[(4, 7)], [(1, 2)]]
    r_d = [[(6, 7), (0, 6)], [(2, 4)]]
    M.step("train", [([0], build(r_a), "")], "train step, routing A: " + desc(r_a))
    M.step("train", [([0], build(r_a), "")],
           "train step, routing A again: the recorded trace is replayed")
    M.step("train", [([0], build(r_b), "")],
           "train step, routing B (different experts): "
           + ("inside the z3 leaf, the trace stays valid\n" if leaf else "the trace is invalidated\n")
           + desc(r_b))
    M.step("eval", [([], build(r_c), "")], "eval step, routing C: " + desc(r_c))
    M.step("accum", [([0], build(r_a), "micro-batch 1, routing A: " + desc(r_a)),
                     ([0], build(r_d), "micro-batch 2, routing D: " + desc(r_d))],
           "gradient accumulation, 2 micro-batches routed differently")
    return M


def mixtral_moe_ranks(gather=False):
    """Per-rank routing: 4 data-parallel ranks whose routers send their own tokens to
    different experts.  gather: ZO_MODULE_GATHER_ALWAYS on every MoE block."""
    M = mixtral_moe()
    M.fname = "mixtral_moe_ranks_gather.scn" if gather else "mixtral_moe_ranks.scn"
    M.title = ("Mixtral-8x7B-style MoE stack, 4 ranks routing their own tokens"
               + (", MoE blocks gather always" if gather else "") + ", ZeRO-3")
    at = [i for i, h in enumerate(M.header) if h.startswith("ROUTING CHANGES")][0]
    M.header[at:] = [
        "PER-RANK ROUTING: ZeRO-3 is SPMD, but each data-parallel rank routes its own tokens, so",
        "  each rank's MixtralSparseMoeBlock calls its own set of experts (an expert with no",
        "  routed token on that rank is skipped).  The steps below are rank 0's program; the",
        "  `rank` lines at the end give ranks 1-3 theirs (route: the k-th expert call goes to",
        "  another expert; skip: that rank has fewer experts hit).  Every expert call all-",
        "  gathers that expert's weights, so the ranks issue different all-gathers: NCCL would",
        "  hang (or mix tensors of equal size).  This is the failure DeepSpeed users report",
        "  with Mixtral/Qwen-MoE under ZeRO-3 when the MoE block is not a z3 leaf module.",
    ]
    if gather:
        M.header += [
            "GATHER ALWAYS: every MoE block is ZO_MODULE_GATHER_ALWAYS (zoffload's per-module",
            "  remedy, docs/protocol.md 'Rank divergence'): its pre-forward and pre-backward",
            "  gather the gate and all 8 experts on every rank, the experts keep their hooks",
            "  but fetch and release nothing, so every rank issues the same all-gathers",
            "  whatever its router picks (cost: all experts' weights gathered per layer).",
        ]
    M.header += [
        "config: 4 data-parallel ranks, all simulated (ranks=all: one runtime per rank in one",
        "  host world, invariant I8 compares their collective sequences), DeepSpeed's default",
        "  ZeRO-3 thresholds (stage3_param_persistence_threshold=1e5)",
    ]
    M.config = ["world_size=4", "ranks=all", "param_persistence_threshold=1e5"]
    for x in M.modules():
        if x.cls.startswith("MixtralSparseMoeBlock"):
            x.gather_always = gather
    # routing tables [step][rank][layer] = top-2 expert pairs of that rank's tokens
    # (rank 0's, the base program, hits at least as many experts per layer as any other)
    tables = [
        [[[(1, 5), (0, 6)], [(0, 6), (2, 3)]],
         [[(2, 5)], [(3, 7)]],
         [[(4, 7)], [(1, 2)]],
         [[(1, 6)], [(0, 6)]]],
        [[[(2, 5), (4, 7)], [(3, 7), (0, 3)]],
         [[(0, 1)], [(5, 6)]],
         [[(2, 5)], [(3, 7)]],
         [[(3, 6)], [(1, 4)]]],
        [[[(4, 7), (0, 2)], [(1, 2)]],
         [[(4, 7)], [(1, 2)]],
         [[(5, 6)], [(3, 4)]],
         [[(0, 7)], [(1, 6)]]],
    ]
    kinds = ["train", "train", "eval"]

    def hits(tab):
        return [sorted({e for pair in layer for e in pair}) for layer in tab]
    M.steps = []
    # re-run the forward functions with the per-rank tables
    build = M.build_pass
    edits = []
    for s, (kind, per_rank) in enumerate(zip(kinds, tables)):
        base = per_rank[0]
        loss = [0] if kind == "train" else []
        M.step(kind, [(loss, build(base), "")],
               "%s step, rank 0's routing: %s" % (kind, M.route_desc(base)))
        for r in range(1, len(per_rank)):
            lines = []
            for i, (b, h) in enumerate(zip(hits(base), hits(per_rank[r]))):
                if len(h) > len(b):
                    raise GenError("mixtral_moe_ranks: rank %d hits more experts than rank 0" % r)
                for k, e in enumerate(b):
                    if k < len(h):
                        if h[k] != e:
                            lines.append("rank %d step %d call l%d.moe.e%d route l%d.moe.e%d" % (r, s, i, e, i, h[k]))
                    else:
                        lines.append("rank %d step %d call l%d.moe.e%d skip" % (r, s, i, e))
            edits.append(("rank %d, step %d: %s" % (r, s, M.route_desc(per_rank[r])), lines))
    M.rank_edits = edits
    return M


def lora():
    cfg = dict(vocab_size=32000, hidden_size=2048, intermediate_size=5632,
               num_hidden_layers=22, num_attention_heads=32, num_key_value_heads=4,
               hidden_act="silu", tie_word_embeddings=False)
    lcfg = dict(r=8, lora_alpha=16, lora_dropout=0.05, target_modules="[q_proj, v_proj]",
                bias="none")
    V, H, I, NH, NKV = (cfg["vocab_size"], cfg["hidden_size"], cfg["intermediate_size"],
                        cfg["num_attention_heads"], cfg["num_key_value_heads"])
    R = lcfg["r"]
    NL = 2
    full = cfg["num_hidden_layers"] * llama_layer_counts(H, I, NH, NKV) + 2 * V * H + H
    assert full == 1100048384, full
    M = Model("lora.scn", "LoRA fine-tune (PEFT) of a TinyLlama-1.1B-style stack, ZeRO-3")
    items = list(cfg.items())
    M.header = [
        "source: base model TinyLlama-1.1B (HF `TinyLlama/TinyLlama-1.1B-intermediate-step-",
        "  1431k-3T`) config.json: " + ", ".join("%s=%s" % kv for kv in items[:3]) + ",",
        "  " + ", ".join("%s=%s" % kv for kv in items[3:]),
        "  (full model 1,100,048,384 parameters; this file keeps the real per-layer sizes",
        "  but only %d of the 22 layers);" % NL,
        "adapter: peft.LoraConfig(" + ", ".join("%s=%s" % kv for kv in lcfg.items()) + ")",
        "  -> get_peft_model(model, config).  Every base parameter is frozen",
        "  (requires_grad=False), only lora_A / lora_B of q_proj and v_proj train.",
        "tree: PeftModelForCausalLM{base_model: LoraModel{model: LlamaModel{embed_tokens,",
        "  l0..l%d: LlamaDecoderLayer{attn{q_proj: lora.Linear{base, lora_A, lora_B}, k_proj," % (NL - 1),
        "  v_proj: lora.Linear{...}, o_proj}, mlp{gate_proj, up_proj, down_proj}, in_ln,",
        "  post_ln}, norm}, lm_head}}",
        "  LoraModel.forward calls self.model.forward(...) directly (BaseTuner.forward), so",
        "  the LlamaForCausalLM module's hooks never fire: it is left out like a never-called",
        "  container, its children (model, lm_head) hang from base_model.",
        "names: lN = model.layers.N, attn = self_attn, base = base_layer, lora_A / lora_B =",
        "  lora_A.default / lora_B.default, in_ln / post_ln = input_layernorm /",
        "  post_attention_layernorm, .w = .weight.",
        "keyword tensors: LlamaDecoderLayer calls self_attn(hidden_states=...), which",
        "  DeepSpeed's hook D does not see (count 0, no post-backward for attn); here the",
        "  tensor is attn's input and counted (see tools/gen_models.py).",
        OMIT_NOTE + "lora_dropout.default, rotary_emb, mlp.act_fn; the",
        "  ModuleLists/ModuleDicts layers, lora_dropout, lora_A, lora_B.",
        "INPUTS WITHOUT GRAD: input_ids are `batch`; the frozen embedding's output does not",
        "  require grad, so the first layer, its in_ln, attention and projections get inputs",
        "  without grad (hook D counts 0, their post-backward never fires); the first tensor",
        "  requiring grad is lora_A's output.  lora.Linear: base(x) + lora_B(lora_A(x)) * scale.",
        CONFIG_NOTE,
    ]
    M.config = list(DEEPSPEED_CONFIG)
    root = M.mod("peft_model", None, "PeftModelForCausalLM", None)
    bm = M.mod("base_model", root, "LoraModel (calls LlamaForCausalLM.forward directly)", None)
    model = M.mod("model", bm, "LlamaModel", None)
    emb = embedding(M, model, "model.embed_tokens", V, H, frozen=True)
    layers = []
    for i in range(NL):
        n = "l%d" % i
        l = M.mod(n, model, "LlamaDecoderLayer", None)
        at = llama_attention(M, l, n, H, NH, NKV, frozen=True, lora=(R, ("q_proj", "v_proj")))
        mlp = llama_mlp(M, l, n + ".mlp", H, I, frozen=True)
        il = layernorm(M, l, n + ".in_ln", H, bias=False, frozen=True, cls="LlamaRMSNorm")
        pl = layernorm(M, l, n + ".post_ln", H, bias=False, frozen=True, cls="LlamaRMSNorm")
        l.fwd = decoder_layer_fwd(at, mlp, il, pl)
        layers.append(l)
    norm = layernorm(M, model, "model.norm", H, bias=False, frozen=True, cls="LlamaRMSNorm")
    lm_head = linear(M, bm, "lm_head", H, V, bias=False, frozen=True)
    mode = {"ckpt": None}

    def model_fwd(c):
        x = c.call(emb, c.arg(0)).out(0)
        for l in layers:
            x = c.call(l, x, ckpt=mode["ckpt"]).out(0)
        n = c.call(norm, x)
        c.ret([n.out(0)])
    model.fwd = model_fwd

    def bm_fwd(c):                      # LlamaForCausalLM.forward, run by LoraModel.forward
        h = c.call(model, c.arg(0))
        lg = c.call(lm_head, h.out(0))
        c.ret([lg.out(0)])              # CE(logits, labels)
    bm.fwd = bm_fwd

    def root_fwd(c):
        o = c.call(bm, c.arg(0))
        c.ret([o.out(0)])
    root.fwd = root_fwd
    lora_numel = NL * (R * H + H * R + R * H + NKV * (H // NH) * R)
    assert sum(p.numel for p in M.params() if not p.frozen) == lora_numel
    assert M.total_numel() == NL * llama_layer_counts(H, I, NH, NKV) + 2 * V * H + H + lora_numel
    M.header.insert(8, "  trainable: %s elements (lora_A/lora_B), frozen: %s"
                    % (fmt_int(lora_numel), fmt_int(M.total_numel() - lora_numel)))
    def build(ck=None):
        def setup():
            mode["ckpt"] = ck
        return M.run_pass([BATCH], setup)
    std_steps(M, build, "input_ids (no grad) -> LM loss")
    M.step("train", [([0], build("non-reentrant"), "")],
           "train step with gradient checkpointing of the decoder layers, use_reentrant=False\n"
           "(model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=\n"
           "{'use_reentrant': False})): works with inputs that do not require grad")
    M.step("train", [([0], build("reentrant"), "")],
           "train step with use_reentrant=True but WITHOUT model.enable_input_require_grads():\n"
           "the checkpointed layers' inputs do not require grad, so their CheckpointFunction\n"
           "outputs do not either and nothing in the loss requires grad; PyTorch raises\n"
           "'element 0 of tensors does not require grad' at backward (the well-known PEFT\n"
           "pitfall), so the step's graph is discarded without a backward")
    return M


# gpt2, bert, albert, t5, lora and llama_ckpt are captured from the real models
# now (tools/capture_models.py); the rest cannot be captured yet (module docstring)
MODELS = [mixtral_moe, lambda: mixtral_moe(leaf=True), mixtral_moe_ranks,
          lambda: mixtral_moe_ranks(gather=True)]

# Verdicts observed with `zofuzz repro FILE --policy P` (engine order), recorded by hand
# so that `zofuzz verify corpus/models` notices when one changes.  per-call is
# zoffload's default and must be ok everywhere.  The legacy DeepSpeed counter policies:
#   I3 on parameter 0 in step 0 (gpt2, bert, t5, mixtral_moe*, llama_ckpt): the token
#     embedding's input (input_ids) does not require grad, so its post-backward hook
#     never fires; its pre-backward hook gathers the weight and no hook releases it
#     (only the optimizer-step sweep does).  albert fails earlier, in backward:
#   I1 (albert, reset-on-forward): the shared layer is called 12 times, every call
#     resets ds_grads_remaining, backward takes it from 0 to -1 (layer0.full_LN first).
#   lora: the embedding is frozen (its output needs no grad, no pre-backward fetch), so
#     reset-on-forward holds; lazy-init / init-at-register fail (I3) in the non-reentrant
#     checkpointing step: the recompute passes the layers' inputs through hook D again
#     and the stale counts keep the frozen base weights gathered after backward.
#   mixtral_moe_ranks: I8 under every policy, at the first expert call whose expert differs
#     between rank 0 and rank 1 (layer 0, step 0): the counter policies do not matter, the
#     ranks all-gather different experts.  mixtral_moe_ranks_gather (the MoE blocks gather
#     always) holds I8 under every policy; the legacy policies fail with the embedding's I3
#     as in mixtral_moe.scn.
EXPECT = {
    "gpt2.scn": "per-call=ok reset-on-forward=I3 lazy-init=I3 init-at-register=I3",
    "bert.scn": "per-call=ok reset-on-forward=I3 lazy-init=I3 init-at-register=I3",
    "albert.scn": "per-call=ok reset-on-forward=I1 lazy-init=I3 init-at-register=I3",
    "t5.scn": "per-call=ok reset-on-forward=I3 lazy-init=I3 init-at-register=I3",
    "mixtral_moe.scn": "per-call=ok reset-on-forward=I3 lazy-init=I3 init-at-register=I3",
    "mixtral_moe_leaf.scn": "per-call=ok reset-on-forward=I3 lazy-init=I3 init-at-register=I3",
    "mixtral_moe_ranks.scn": "per-call=I8 reset-on-forward=I8 lazy-init=I8 init-at-register=I8",
    "mixtral_moe_ranks_gather.scn": "per-call=ok reset-on-forward=I3 lazy-init=I3 init-at-register=I3",
    "llama_ckpt.scn": "per-call=ok reset-on-forward=I3 lazy-init=I3 init-at-register=I3",
    "lora.scn": "per-call=ok reset-on-forward=ok lazy-init=I3 init-at-register=I3",
}


def build_all(lim):
    out = []
    for f in MODELS:
        M = f()
        chunk_overfull(M, lim["ZS_MAX_CHILD_CALLS"])
        assign_ids(M)
        check_model(M, lim)
        M.expect = EXPECT.get(M.fname)
        out.append(M)
    return out


def main():
    ap = argparse.ArgumentParser(description="write corpus/models/*.scn")
    ap.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 on a difference")
    ap.add_argument("--list", action="store_true", help="print counts per model")
    ap.add_argument("--out", default=OUT_DIR, help="output directory (default corpus/models)")
    ap.add_argument("--max-child-calls", type=int, default=None,
                    help="override ZS_MAX_CHILD_CALLS (default: fuzz/scenario.h)")
    a = ap.parse_args()
    lim = read_limits()
    if a.max_child_calls:
        lim["ZS_MAX_CHILD_CALLS"] = a.max_child_calls
    try:
        models = build_all(lim)
    except GenError as e:
        print("gen_models.py: %s" % e, file=sys.stderr)
        return 2
    bad = 0
    for M in models:
        text = Printer(M).text()
        path = os.path.join(a.out, M.fname)
        if a.list:
            calls = max(count_calls(r) for r in all_root_calls(M))
            print("%-16s modules=%3d params=%3d uses=%2d steps=%d max_calls/pass=%3d numel=%s stand-ins=%d"
                  % (M.fname, len(M.modules()), len(M.params()), len(M.uses), len(M.steps), calls,
                     fmt_int(M.total_numel()), len(M.notes)))
            continue
        if a.check:
            try:
                old = open(path).read()
            except OSError:
                old = None
            if old != text:
                print("%s: differs from the generator's output" % path)
                bad = 1
            continue
        os.makedirs(a.out, exist_ok=True)
        with open(path, "w") as fh:
            fh.write(text)
        print("wrote %s" % os.path.relpath(path, ROOT))
    return bad


if __name__ == "__main__":
    sys.exit(main())
