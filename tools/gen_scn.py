#!/usr/bin/env python3
"""gen_scn.py - seeded random scenarios as .scn text (docs/scenario-format.md)
for the differential tests.

  gen_scn.py --seed S [-o FILE]            one scenario
  gen_scn.py --seeds FIRST LAST --dir DIR  DIR/gen-S.scn for every S

`zofuzz gen` decodes uniform random bytes: most of them are spent on the
config, the module tree and the parameters, so most of its scenarios have
a single root call (4 of 200 with more than one call at the time of
writing).  This generator builds the *program* on purpose: nested calls,
module reuse, unused branches, detach, no_grad, both checkpoint kinds,
raises caught at every level or outside, and every step kind, so that the
oracles see the hard cases.  Only valid scenarios are produced (the .scn
parser, zs_scn_parse, rejects anything else and the tests fail loudly).
Pure standard library, deterministic for a seed on any Python 3.

  gen_scn.py --ranks ...                   all-ranks scenarios (W >= 2,
                                           config ranks=all) with per-rank
                                           edits (route, skip, exit, raise,
                                           skip-step); the base program is the
                                           one the seed gives without --ranks
"""

import argparse
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from zo_names import POLICIES  # noqa: E402  (include/zoffload.h)


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.seed = seed

    def chance(self, p):
        return self.r.random() < p

    # -- model ----------------------------------------------------------

    def modules(self):
        r = self.r
        n = r.randint(1, 10)
        parent = [-1]
        leaf = [False]
        for i in range(1, n):
            # parent: i-1 or one of its ancestors (DFS pre-order)
            chain = [i - 1]
            while parent[chain[-1]] >= 0:
                chain.append(parent[chain[-1]])
            p = chain[min(int(r.expovariate(1.0)), len(chain) - 1)]
            parent.append(p)
            leaf.append(False)
        for i in range(n):
            if self.chance(0.08):
                leaf[i] = True
        self.parent, self.leaf, self.nm = parent, leaf, n
        self.children = [[c for c in range(n) if parent[c] == m] for m in range(n)]
        self.in_leaf = []
        for m in range(n):
            a, inside = parent[m], False
            while a >= 0:
                inside |= leaf[a]
                a = parent[a]
            self.in_leaf.append(inside)

    def params(self):
        r = self.r
        self.np = r.randint(0, 12)
        self.pars = []
        for _ in range(self.np):
            owner = r.randrange(self.nm)
            numel = r.choice([1, 3, 7, 16, 100, 4096, 100001])
            frozen = self.chance(0.25)
            self.pars.append((owner, numel, frozen))
        self.uses = []
        if self.np:
            for _ in range(r.randint(0, 4)):
                m, p = r.randrange(self.nm), r.randrange(self.np)
                if self.pars[p][0] != m and (m, p) not in self.uses:
                    self.uses.append((m, p))

    # -- programs ---------------------------------------------------------

    def ref(self, cands, allow_detach=True):
        s = self.r.choice(cands)
        if allow_detach and self.chance(0.1):
            s += ".detach"
        return s

    def call(self, module, in_refs, depth, in_ckpt, budget, is_root):
        """Returns (node, unwind) with unwind None, 'outside' or the number
        of further levels the exception still has to climb (1: caught by
        this call's caller's body... counted from the raising call)."""
        r = self.r
        node = {"m": module, "in": in_refs, "kids": [], "flags": []}
        budget[0] -= 1
        ckpt = None
        if not is_root and not in_ckpt and self.chance(0.18):
            ckpt = r.choice(["reentrant", "non-reentrant"])
            node["flags"].append("ckpt=" + ckpt)
        sub_ckpt = in_ckpt or ckpt is not None
        if not is_root and self.chance(0.08):
            node["flags"].insert(0, "no_grad")
        scope_args = ["arg%d" % i for i in range(len(in_refs))]
        outs = []  # (child index, n_out) of children that are not unwound
        unwind = None
        kids = [] if self.leaf[module] else self.children[module]
        if kids and depth < 5:
            n_kids = r.choice([0, 1, 1, 2, 2, 3, 4])
            for k in range(n_kids):
                if budget[0] <= 0:
                    break
                callee = r.choice(kids)
                cands = scope_args + ["out%d.%d" % (kk, j) for kk, no in outs for j in range(no)]
                cands += ["batch", "batch_rg"]
                n_in = r.choice([0, 1, 1, 1, 2, 2, 3, 4])
                cin = [self.ref(cands) for _ in range(n_in)]
                child, cu = self.call(callee, cin, depth + 1, sub_ckpt, budget, False)
                node["kids"].append(child)
                if cu is None:
                    outs.append((k, child["n_out"]))
                    continue
                if cu == "outside":
                    unwind = "outside"
                    break
                if cu == 1:
                    continue  # caught by this call's body: go on with the next child
                unwind = cu - 1
                break
        if unwind is None and not sub_ckpt and not is_root and self.chance(0.07):
            # raise after the child calls: caught by the K-th ancestor or outside
            if self.chance(0.3):
                node["flags"].append("raise=outside")
                unwind = "outside"
            else:
                k = r.randint(1, depth)
                node["flags"].append("raise=up%d" % k)
                unwind = k
            node["n_out"] = 0
            node["use"] = []
            return node, unwind
        if unwind is not None:
            node["n_out"] = 0
            node["use"] = []
            return node, unwind
        node["n_out"] = r.choice([0, 1, 1, 1, 2, 2, 3, 4])
        ucands = scope_args + ["out%d.%d" % (kk, j) for kk, no in outs for j in range(no)]
        if ucands and self.chance(0.85):
            if self.chance(0.4):
                use = list(ucands[:8])
            else:
                use = [self.ref(ucands) for _ in range(r.randint(1, min(8, len(ucands) + 1)))]
        else:
            use = []
        node["use"] = use
        return node, None

    # -- per-rank programs (--ranks) ------------------------------------

    def shape(self, m):
        """Structural class of module m: the z3_leaf flag and the children's
        classes (a ROUTE target must have the callee's shape)."""
        return (self.leaf[m], tuple(self.shape(c) for c in self.children[m]))

    def edits(self, passes, n_steps, w):
        """Rank edit lines for the generated passes: passes is a list of
        (step, pass, root node).  One edit per (rank, step, pass) at most, so
        edits never interact; every kind only where it is valid."""
        r = random.Random(self.seed * 7919 + 17)  # independent of the base program's stream
        out = []
        used = set()
        skipped = {}
        for _ in range(r.randint(1, 4)):
            rank = r.randrange(w)
            kind = r.choice(["route", "route", "skip", "exit", "raise", "skip-step"])
            if kind == "skip-step":
                st = r.randrange(n_steps)
                if skipped.get(rank, 0) + 1 >= n_steps or any(k[:2] == (rank, st) for k in used):
                    continue
                used.add((rank, st, -1))
                skipped[rank] = skipped.get(rank, 0) + 1
                out.append((rank, st, -1, 0, "rank %d step %d skip-step" % (rank, st)))
                continue
            st, pi, root = r.choice(passes)
            if (rank, st, pi) in used or (rank, st, -1) in used:
                continue
            # the pass's calls in pre-order with their occurrence number,
            # depth, checkpoint scope and whether they complete
            calls = []
            count = {}

            def walk(node, parent_ck, depth):
                ck = parent_ck or any(f.startswith("ckpt=") for f in node["flags"])
                occ = count.get(node["m"], 0)
                count[node["m"]] = occ + 1
                raises = any(f.startswith("raise=") for f in node["flags"])
                calls.append((node, occ, depth, ck, raises))
                for k in node["kids"]:
                    walk(k, ck, depth + 1)

            walk(root, False, 0)
            unwound = set(id(n) for n, _, _, _, _ in calls if n["n_out"] == 0 and not n["use"]
                          and (any(f.startswith("raise=") for f in n["flags"]) or any(
                              k.get("n_out", 1) == 0 and any(f.startswith("raise=") for f in k["flags"])
                              for k in n["kids"])))
            n_steps_pass = "" if len(self.step_passes[st]) == 1 else " pass %d" % pi
            name = lambda n, occ: "@%d%s" % (n["m"], (":%d" % occ) if count[n["m"]] > 1 else "")
            if kind == "route":
                cands = []
                for n, occ, depth, ck, raises in calls[1:]:
                    m = n["m"]
                    for sib in self.children[self.parent[m]]:
                        if sib != m and self.shape(sib) == self.shape(m):
                            cands.append((n, occ, sib))
                if not cands:
                    continue
                n, occ, sib = r.choice(cands)
                line = "route @%d" % sib
            elif kind in ("skip", "exit"):
                if len(calls) < 2:
                    continue
                n, occ, _, _, _ = r.choice(calls[1:])
                line = kind
            else:  # raise: not in/on a checkpoint, not raising, not unwound by the base pass
                cands = [(n, occ) for n, occ, depth, ck, raises in calls
                         if not ck and not raises and id(n) not in unwound and not self.any_raise(n)]
                if not cands:
                    continue
                n, occ = r.choice(cands)
                line = "raise"
            used.add((rank, st, pi))
            out.append((rank, st, pi, 0, "rank %d step %d%s call %s %s" % (rank, st, n_steps_pass,
                                                                           name(n, occ), line)))
        return [x[-1] for x in out]

    def any_raise(self, node):
        """1 if a raise happens in node's subtree (its completion is then not
        certain: the base pass may unwind it)."""
        return any(f.startswith("raise=") for f in node["flags"]) or any(
            self.any_raise(k) for k in node["kids"])

    def emit_call(self, node, indent, lines):
        s = "%scall @%d(%s)" % (" " * indent, node["m"], ", ".join(node["in"]))
        if node["n_out"]:
            s += " -> %d" % node["n_out"]
        if node["use"]:
            s += " use(%s)" % ", ".join(node["use"])
        for f in node["flags"]:
            s += " " + f
        lines.append(s)
        for k in node["kids"]:
            self.emit_call(k, indent + 2, lines)

    def pass_(self, train):
        r = self.r
        n_in = r.choice([0, 1, 1, 2])
        cin = [self.ref(["batch", "batch_rg", "batch_rg"]) for _ in range(n_in)]
        root, unwind = self.call(0, cin, 0, False, [40], True)
        loss = []
        if train and unwind is None and root["n_out"]:
            loss = sorted(set(r.randrange(root["n_out"]) for _ in range(r.randint(0, 2))))
            if not loss and self.chance(0.8):
                loss = [0]
        return root, loss

    def text(self, ranks=False):
        r = self.r
        self.modules()
        self.params()
        lines = ["# gen_scn.py --seed %d" % self.seed]
        cfg = ["policy=%s" % r.choice(POLICIES)]
        w = r.choice([1, 1, 2, 3, 8])
        cfg.append("world_size=%d rank=%d" % (w, r.randrange(w)))
        if self.chance(0.3):
            cfg.append("deferred=1 progress_every=%d" % r.randint(0, 7))
        cfg.append("param_persistence_threshold=%s" % r.choice(["0", "16", "1e5", "inf"]))
        cfg.append("prefetch_bucket_size=%s" % r.choice(["5e7", "0", "1", "1000"]))
        cfg.append("max_live_parameters=%s" % r.choice(["1e9", "0", "1000"]))
        cfg.append("max_reuse_distance=%s" % r.choice(["1e9", "0", "1000"]))
        if ranks:  # the base program's random stream is left as it is
            w = max(w, 2 + self.seed % 3)
            cfg[1] = "world_size=%d rank=%d ranks=all" % (w, self.seed % w)
            if self.seed % 2:
                cfg.append("verify_collectives=1")
        lines.append("config " + " ".join(cfg))
        depth = [0] * self.nm
        for m in range(self.nm):
            if m:
                depth[m] = depth[self.parent[m]] + 1
            ga = ranks and not self.leaf[m] and len(self.children[m]) >= 2 and self.seed % 3 == 0
            lines.append("%smodule _%s%s" % ("  " * depth[m], " z3_leaf" if self.leaf[m] else "",
                                             " gather_always" if ga else ""))
        for (owner, numel, frozen) in self.pars:
            lines.append("param _ owner=@%d numel=%d%s" % (owner, numel, " frozen" if frozen else ""))
        for (m, p) in self.uses:
            lines.append("use @%d @%d" % (m, p))
        passes = []
        self.step_passes = []
        for si in range(r.randint(1, 4)):
            kind = r.choice(["train", "train", "eval", "retain", "accum", "interleave"])
            if kind in ("train", "eval", "retain"):
                root, loss = self.pass_(kind != "eval")
                lines.append("step %s%s" % (kind, (" loss=" + ",".join(map(str, loss))) if loss else ""))
                self.emit_call(root, 2, lines)
                passes.append((si, 0, root))
                self.step_passes.append([root])
            else:
                lines.append("step %s" % kind)
                self.step_passes.append([])
                for pi in range(r.randint(2, 4)):
                    root, loss = self.pass_(True)
                    lines.append("  pass%s" % ((" loss=" + ",".join(map(str, loss))) if loss else ""))
                    self.emit_call(root, 4, lines)
                    passes.append((si, pi, root))
                    self.step_passes[-1].append(root)
        if ranks:
            lines += sorted(self.edits(passes, len(self.step_passes), w))
        return "\n".join(lines) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int)
    ap.add_argument("--seeds", nargs=2, type=int)
    ap.add_argument("--dir")
    ap.add_argument("-o")
    ap.add_argument("--ranks", action="store_true", help="all-ranks scenarios with per-rank edits")
    a = ap.parse_args(argv)
    if a.seeds:
        os.makedirs(a.dir, exist_ok=True)
        for s in range(a.seeds[0], a.seeds[1] + 1):
            with open(os.path.join(a.dir, "gen-%d.scn" % s), "w") as f:
                f.write(Gen(s).text(a.ranks))
        return 0
    if a.seed is None:
        ap.error("--seed or --seeds")
    t = Gen(a.seed).text(a.ranks)
    if a.o:
        with open(a.o, "w") as f:
            f.write(t)
    else:
        sys.stdout.write(t)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
