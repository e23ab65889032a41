"""The live run and the simulator agree on real models: each model of
tools/capture_models.py run live (zoffload.torch, DeepSpeed's autograd
Functions as the gradient hooks, the live invariant checker) under each
counter policy gives the verdict - no violation, or the first invariant
broken - that zofuzz repro gives for its captured corpus/models/<name>.scn
(the file's `expect` line, measured by zofuzz).  Under per-call no
invariant fires.

    test_verdicts.py [--models a,b] [--policies p,q]

Exit 0 all agree, 1 a difference, 77 without the current-stack venv."""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, HERE)
try:
    import torch  # noqa: F401
    import transformers  # noqa: F401
    import peft  # noqa: F401
except ImportError as e:
    print("test_verdicts: %s: skip" % e)
    sys.exit(77)
from test_live import HF, TC  # noqa: E402
from zoffload import check  # noqa: E402

# corpus name -> (builder, step, steps): tools/capture_models.py's MODELS
MODELS = {
    "gpt2": (HF.build_gpt2, HF.step, 1),
    "bert": (HF.build_bert, HF.step, 1),
    "albert": (HF.build_albert, HF.step, 1),
    "t5": (HF.build_t5, HF.step, 1),
    "llama": (HF.build_llama, HF.step, 1),
    "lora": (HF.build_lora, HF.step, 1),
    "torch_mixed": (TC.build, TC.step_mixed, 5),
    "torch_reuse": (TC.build_reuse, TC.step, 1),
    "torch_ckpt": (TC.build_ckpt, TC.step_mixed, 5),
    "torch_ckpt_reentrant": (TC.build_ckpt_reentrant, TC.step_mixed, 5),
    "torch_raise": (TC.build_raise, TC.step, 1),
    "torch_tied": (TC.build_tied, TC.step, 1),
}


def expected(name):
    with open(os.path.join(ROOT, "corpus", "models", name + ".scn")) as f:
        for ln in f:
            if ln.startswith("expect "):
                return dict(kv.split("=", 1) for kv in ln.split()[1:])
    raise SystemExit("no expect line in corpus/models/%s.scn" % name)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--policies", default="per-call,reset-on-forward,lazy-init,init-at-register")
    a = ap.parse_args()
    bad = 0
    for name in a.models.split(","):
        build, step, steps = MODELS[name]
        exp = expected(name)
        for pol in a.policies.split(","):
            t0 = time.time()
            v, st, done = check.run_live(build, step, steps, pol, "0.19")
            got = v.inv if v else "ok"
            ok = got == exp[pol]
            bad += not ok
            print("%-12s %-17s live %-4s simulator %-4s %s (%.1f s)%s" % (
                name, pol, got, exp[pol], "agree" if ok else "DIFFER", time.time() - t0,
                ("\n    " + str(v)) if v is not None else ""))
    print("test_verdicts: %s" % ("%d difference(s)" % bad if bad else "the live run and the simulator agree"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
