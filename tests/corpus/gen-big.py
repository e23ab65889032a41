#!/usr/bin/env python3
"""Generates big-reuse.scn and big-unused.scn, the large inputs that
test_minimize.c shrinks (kept in the tree; not run at build time)."""


def layer_calls(ind, name, arg, use="out1.0"):
    return [f"{ind}call {name}({arg}) -> 1 use({use})",
            f"{ind}  call {name}_attn(arg0) -> 1 use(arg0)",
            f"{ind}  call {name}_mlp(out0.0) -> 1 use(arg0)"]


def tree(shared):
    m = ["module net", "  module embed", "  module enc"]
    for g in range(2):
        m.append(f"    module grp{g}")
        for l in range(2):
            n = f"l{g}{l}"
            m += [f"      module {n}", f"        module {n}_attn", f"        module {n}_mlp"]
    if shared:
        m += ["    module shared", "      module shared_attn", "      module shared_mlp"]
    m += ["  module head"]
    return m


def params(names):
    return [f"param {n}.w owner={n} numel={(i * 977) % 5000 + 1}" for i, n in enumerate(names)]


def forward(shared_calls, root_use="out2.0"):
    """One pass: net(embed, enc(grp0(l00, l01), grp1(l10, l11)[, shared x N]), head)."""
    enc_use = f"out{1 + shared_calls}.0"
    c = [f"  call net(batch_rg) -> 1 use({root_use})",
         "    call embed(arg0) -> 1 use(arg0)",
         f"    call enc(out0.0) -> 1 use({enc_use})"]
    for g in range(2):
        c.append(f"      call grp{g}({'arg0' if g == 0 else 'out0.0'}) -> 1 use(out1.0)")
        for l in range(2):
            c += layer_calls("        ", f"l{g}{l}", "arg0" if l == 0 else "out0.0")
    for k in range(shared_calls):
        c += layer_calls("      ", "shared", f"out{1 + k}.0")
    c.append("    call head(out1.0) -> 1 use(arg0)")
    return c


NAMES = ["embed"] + [f"l{g}{l}_{k}" for g in range(2) for l in range(2) for k in ("attn", "mlp")] + ["head"]

prog = []
for s in range(3):
    prog += ["step train loss=0"] + forward(2)
with open("big-reuse.scn", "w") as f:
    f.write("# big model with one ALBERT-style shared layer called twice per forward;\n"
            "# zofuzz minimize --policy reset-on-forward must reduce it to root + one\n"
            "# child, one step, the child called twice (test_minimize.c)\n")
    f.write("\n".join(tree(True) + params(NAMES + ["shared_attn", "shared_mlp"]) + prog) + "\n")

prog = ["step train loss=0"] + forward(0, root_use="out1.0")
for s in range(2):
    prog += ["step train loss=0"] + forward(0)
prog += ["step eval", "  call net(batch) -> 1 use(out0.0)", "    call embed(arg0) -> 1 use(arg0)"]
with open("big-unused.scn", "w") as f:
    f.write("# big model whose head output does not reach the loss in step 1 (an\n"
            "# unused branch), then does; zofuzz minimize --same-verdicts --policy\n"
            "# init-at-register must reach the 1-module, 2-step unused repro\n")
    f.write("\n".join(tree(False) + params(NAMES) + prog) + "\n")
