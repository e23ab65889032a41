"""Live mode equality: N training steps of a real model under
zoffload.torch (libzoffload the ZeRO-3 coordinator, world size 1) give
bit for bit the losses and parameters of the same steps without it, with
SGD and with Adam; under the per-call policy the live invariant checker
sees no violation.  Models: the tiny transformers configs of
tools/capture/hf_models.py and the small torch models of
tools/capture/constructs.py (module reuse, checkpoint, an exception
caught in the forward, tied and frozen parameters, eval /
retain_graph / accumulation / interleaved steps, several passes in one
step, inputs that require grad, a parameter under two names of one
module).

    test_live.py [--models a,b,...] [--steps N] [--list]

Exit 0 all equal, 1 a difference or a violation, 77 when torch or
transformers/peft are missing (skip).  Run with the current-stack venv
(torch 2.15.0, transformers 5.24.0, peft); tests/live/CMakeLists.txt does.
"""
import argparse
import importlib.util
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))

try:
    import torch
except ImportError:
    print("test_live: torch not importable: skip")
    sys.exit(77)


def _load(rel):
    spec = importlib.util.spec_from_file_location(rel.replace("/", "_")[:-3], os.path.join(ROOT, rel))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


HF = _load("tools/capture/hf_models.py")
TC = _load("tools/capture/constructs.py")


def hf_loss(model, i):
    ids = HF._ids(seed=i)
    if model.config.is_encoder_decoder:
        return model(input_ids=ids, labels=HF._ids(seed=100 + i)).loss
    return model(input_ids=ids, labels=ids).loss


def tc_loss(model, i):
    return model(TC._x(i)).pow(2).mean()


def step_plain(loss_fn):
    def step(model, opt, i):
        loss = loss_fn(model, i)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return [loss.item()]
    return step


def step_mixed(model, opt, i):
    """constructs.step_mixed with the optimizer passed in: 0 train,
    1 eval, 2 retain_graph, 3 accumulation, 4 interleave (then repeats)"""
    k = i % 5
    out = []
    if k == 1:
        model.eval()
        with torch.no_grad():
            out.append(model(TC._x(i)).sum().item())
        model.train()
        return out
    if k == 0:
        loss = model(TC._x(i)).sum()
        loss.backward()
        out.append(loss.item())
    elif k == 2:
        loss = model(TC._x(i)).sum()
        loss.backward(retain_graph=True)
        loss.backward()
        out.append(loss.item())
    elif k == 3:
        for j in range(2):
            loss = model(TC._x(10 * i + j)).sum()
            loss.backward()
            out.append(loss.item())
    else:
        losses = [model(TC._x(10 * i + j)).sum() for j in range(2)]
        for loss in losses:
            loss.backward()
            out.append(loss.item())
    opt.step()
    opt.zero_grad()
    return out


def step_passes(model, opt, i):
    """Several forward passes per step, as contrastive losses and input
    gradients make them: 0 two passes summed into one loss; 1 an input
    that requires grad (a leaf); 2 that leaf through two passes, only the
    first backpropagated; 3 one pass fed another's output (then repeats)"""
    k = i % 4
    if k == 0:
        loss = (model(TC._x(i)) + model(TC._x(100 + i))).pow(2).mean()
    elif k == 1:
        x = TC._x(i).requires_grad_(True)
        loss = model(x).pow(2).mean()
    elif k == 2:
        x = TC._x(i).requires_grad_(True)
        loss = model(x).pow(2).mean()
        model(x)  # a second pass on the same leaf that no backward reaches
    else:
        loss = model(model(TC._x(i))).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    return [loss.item()]


class TwoNames(torch.nn.Module):
    """One parameter under two names of one module (register_parameter
    of a parameter the module already has: torch allows it)."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 4))
        self.register_parameter("w2", self.w)

    def forward(self, x):
        return self.fc(x) @ self.w @ self.w2


def build_two_names():
    torch.manual_seed(0)
    return TwoNames()


# name -> (builder, step function, steps)
CASES = {
    "gpt2": (HF.build_gpt2, step_plain(hf_loss), 3),
    "bert": (HF.build_bert, step_plain(hf_loss), 3),
    "albert": (HF.build_albert, step_plain(hf_loss), 3),
    "t5": (HF.build_t5, step_plain(hf_loss), 3),
    "llama": (HF.build_llama, step_plain(hf_loss), 3),
    "llama_ckpt": (HF.build_llama_ckpt, step_plain(hf_loss), 3),
    "lora": (HF.build_lora, step_plain(hf_loss), 3),
    "mixtral": (HF.build_mixtral, step_plain(hf_loss), 3),
    "torch_mixed": (TC.build, step_mixed, 5),
    "torch_reuse": (TC.build_reuse, step_plain(tc_loss), 3),
    "torch_ckpt": (TC.build_ckpt, step_mixed, 5),
    "torch_ckpt_reentrant": (TC.build_ckpt_reentrant, step_mixed, 5),
    "torch_raise": (TC.build_raise, step_plain(tc_loss), 3),
    "torch_tied": (TC.build_tied, step_plain(tc_loss), 3),
    "torch_passes": (TC.build_reuse, step_passes, 4),
    "torch_two_names": (build_two_names, step_plain(tc_loss), 3),
}
DEFAULT = ["gpt2", "bert", "llama", "llama_ckpt", "lora", "mixtral", "torch_mixed", "torch_reuse", "torch_ckpt",
           "torch_ckpt_reentrant",
           "torch_raise", "torch_tied", "torch_passes", "torch_two_names"]
OPTS = {"sgd": (torch.optim.SGD, dict(lr=0.05, momentum=0.9)),
        "adam": (torch.optim.Adam, dict(lr=1e-2))}


def run_case(name, optname, steps, policy, zt, persist=0, grad_hooks="tensor"):
    build, step, default_steps = CASES[name]
    steps = steps or default_steps
    cls, kw = OPTS[optname]
    plain = build()
    ref_opt = cls([p for p in plain.parameters() if p.requires_grad], **kw)
    model = build()
    live = zt.wrap(model, policy=policy, param_persistence_threshold=persist, grad_hooks=grad_hooks)
    opt = live.optimizer(cls, **kw)
    problems = []
    try:
        for i in range(steps):
            torch.manual_seed(1000 + i)  # dropout (none in these configs) draws the same
            a = step(plain, ref_opt, i)
            torch.manual_seed(1000 + i)
            b = step(model, opt, i)
            if a != b:
                problems.append("step %d: losses %r plain, %r live" % (i, a, b))
        state = live.full_state()
        n_eq = 0
        for pname, p in plain.named_parameters():
            q = state.get(pname)
            if q is None:
                problems.append("parameter %s missing from the live state" % pname)
            elif not torch.equal(p.detach(), q):
                d = (p.detach() - q).abs().max().item()
                problems.append("parameter %s differs (max |diff| %g)" % (pname, d))
            else:
                n_eq += 1
        stats = live.stats()
        if stats["live_numel"] != stats["persistent_live_numel"]:
            problems.append("after the last step %d elements are still gathered" % stats["live_numel"])
    finally:
        live.close()
    return problems, n_eq, stats


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=",".join(DEFAULT))
    ap.add_argument("--models-more", default="", help="more models, after --models (keeps command lines short)")
    ap.add_argument("--opts", default="sgd,adam")
    ap.add_argument("--steps", type=int, default=0)
    ap.add_argument("--policy", default="per-call")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--persist", default="0",
                    help="param_persistence_threshold values to run, comma separated (elements; 0: every "
                         "parameter is released; DeepSpeed's default is 100000: small ones stay gathered "
                         "and are refreshed after the optimizer step)")
    ap.add_argument("--grad-hooks", default="tensor", choices=("tensor", "function"))
    a = ap.parse_args()
    if a.list:
        print(" ".join(CASES))
        return 0
    try:
        import transformers  # noqa: F401
        import peft  # noqa: F401
    except ImportError as e:
        print("test_live: %s: skip (run with the current-stack venv)" % e)
        return 77
    import zoffload.torch as zt
    fails = 0
    models = a.models.split(",") + [n for n in a.models_more.split(",") if n]
    for name, persist in [(n, int(t)) for t in a.persist.split(",") for n in models]:
        for optname in a.opts.split(","):
            t0 = time.time()
            try:
                problems, n_eq, st = run_case(name, optname, a.steps, a.policy, zt, persist, a.grad_hooks)
            except zt.ZoffloadError as e:
                problems, n_eq, st = ["%s: %s" % (type(e).__name__, e)], 0, {}
            verdict = "ok" if not problems else "FAIL"
            print("%-12s %-4s persist %-6d %s: %d parameters equal, %s gathers, peak %s elements (%.1f s)"
                  % (name, optname, persist, verdict, n_eq, st.get("gathers"), st.get("peak_live_numel"),
                     time.time() - t0))
            for p in problems[:5]:
                print("    " + p)
            fails += bool(problems)
    print("test_live: %d case(s) failed" % fails if fails else "test_live: all equal")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
