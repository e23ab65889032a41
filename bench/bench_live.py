"""bench_live.py - per-step cost of live mode (zoffload.torch) against plain
torch and against DeepSpeed 0.19.8's own stage-3 hooks, on CPU, side by
side in one process.

    ZOFFLOAD_LIB=build/libzoffload.so .venv-current/bin/python bench/bench_live.py \
        [--models torch,gpt2] [--steps 20] [--rounds 5] [--json out.json]

Variants, each its own model instance built with the same seed, one
training step = forward, loss.backward(), optimizer step (SGD), zero_grad:
  plain       the model alone, torch.optim.SGD
  zo-tensor   zoffload.torch.wrap(model) (per-call, tensor gradient hooks:
              bit-exact), LiveOptimizer(SGD)
  zo-function the same with DeepSpeed's autograd Functions as gradient hooks
  zo-check    zo-tensor with the live invariant checker on (the others run
              without it)
  deepspeed   deepspeed.initialize(model, optimizer=SGD, stage 3) on CPU,
              gloo, world size 1 (tools/deepspeed_oracle.py's set-up):
              engine(x), engine.backward(loss), engine.step()
All with parameter persistence threshold 0 (every parameter partitioned
and gathered per module, DeepSpeed's default would keep these tiny
parameters whole) and DeepSpeed's prefetch defaults.  Rounds interleave
the variants (each round times --steps steps of every variant), so load
drift hits them alike; the figure is the median over rounds of the mean
step time, and the ratio is against plain.  Machine noise: other jobs share
the 2 cores of the reference machine; compare ratios within one run.
"""
import argparse
import contextlib
import io
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.join(ROOT, "tests", "live"))

import torch  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="torch,gpt2")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--no-deepspeed", action="store_true")
    ap.add_argument("--json")
    a = ap.parse_args()
    torch.set_num_threads(1)
    import zoffload.torch as zt
    from test_live import HF, TC
    ds = None
    if not a.no_deepspeed:
        try:
            import deepspeed_oracle as dso  # sets DS_ACCELERATOR=cpu, gloo rendezvous env
            dso.init_dist()
            ds = dso.deepspeed
        except Exception as e:  # noqa: BLE001
            print("bench_live: DeepSpeed unavailable (%s: %s): its column is left out" % (type(e).__name__, e))

    def hf_fwd(m, i):
        ids = HF._ids(seed=i)
        return m(input_ids=ids, labels=ids).loss

    def tc_fwd(m, i):
        return m(TC._x(i)).pow(2).mean()

    models = {"torch": (TC.build, tc_fwd), "gpt2": (HF.build_gpt2, hf_fwd),
              "llama": (HF.build_llama, hf_fwd)}
    results = {}
    for name in a.models.split(","):
        build, fwd = models[name]
        variants = {}

        m = build()
        opt = torch.optim.SGD(m.parameters(), lr=1e-3)

        def plain(i, m=m, opt=opt):
            loss = fwd(m, i)
            loss.backward()
            opt.step()
            opt.zero_grad()
        variants["plain"] = plain

        for vname, kw in (("zo-tensor", dict(grad_hooks="tensor", check=False)),
                          ("zo-function", dict(grad_hooks="function", check=False)),
                          ("zo-check", dict(grad_hooks="tensor", check=True))):
            mz = build()
            live = zt.wrap(mz, **kw)
            lopt = live.optimizer(torch.optim.SGD, lr=1e-3)

            def zstep(i, mz=mz, lopt=lopt):
                loss = fwd(mz, i)
                loss.backward()
                lopt.step()
                lopt.zero_grad()
            variants[vname] = zstep
            variants[vname].live = live

        if ds is not None:
            md = build()
            cfg = {"train_batch_size": 1, "zero_allow_untested_optimizer": True, "steps_per_print": 1 << 30,
                   "wall_clock_breakdown": False,
                   "zero_optimization": {"stage": 3, "stage3_param_persistence_threshold": 0}}
            dopt = torch.optim.SGD(md.parameters(), lr=1e-3)
            with contextlib.redirect_stdout(io.StringIO()):
                engine, _, _, _ = ds.initialize(model=md, optimizer=dopt, config=cfg)

            def dstep(i, engine=engine):
                loss = fwd(engine, i)
                engine.backward(loss)
                engine.step()
            variants["deepspeed"] = dstep

        times = {v: [] for v in variants}
        for v, fn in variants.items():  # warm-up (the trace is recorded in step 0)
            for i in range(3):
                fn(i)
        for r in range(a.rounds):
            for v, fn in variants.items():
                t0 = time.perf_counter()
                for i in range(a.steps):
                    fn(i)
                times[v].append((time.perf_counter() - t0) / a.steps)
        med = {v: statistics.median(t) for v, t in times.items()}
        base = med["plain"]
        n_mod = len(list(build().modules()))
        print("%s (%d modules): median of %d rounds x %d steps" % (name, n_mod, a.rounds, a.steps))
        print("  %-12s %10s %8s %10s" % ("variant", "ms/step", "x plain", "x deepspeed"))
        for v in variants:
            print("  %-12s %10.3f %8.2f %10s" % (v, med[v] * 1e3, med[v] / base,
                                                 "%.2f" % (med[v] / med["deepspeed"]) if "deepspeed" in med else "-"))
        results[name] = {"modules": n_mod, "ms_per_step": {v: med[v] * 1e3 for v in med},
                         "rounds": times}
        for v, fn in variants.items():
            live = getattr(fn, "live", None)
            if live is not None:
                live.close()
    meta = {"torch": torch.__version__, "load": os.getloadavg(), "nproc": os.cpu_count(),
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    try:
        import deepspeed
        meta["deepspeed"] = deepspeed.__version__
    except Exception:  # noqa: BLE001
        pass
    print("torch %s, deepspeed %s, load %s" % (meta["torch"], meta.get("deepspeed", "-"),
                                              " ".join("%.2f" % x for x in meta["load"])))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"meta": meta, "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
