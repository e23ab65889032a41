"""Live mode misuse raises a Python exception (zoffload's ZoffloadError,
with the runtime's message where the runtime is the one refusing), and
never crashes the interpreter: a second wrap of the same model, a model
changed after wrapping (a parameter replaced, a module added), a backward
after the runtime was destroyed, a parameter read while released where
the policy does not gather on access (reset-on-forward, outside a
forward: ZO_ERR_NOT_AVAILABLE), and an unknown policy.  Under per-call the
same read gathers the parameter (an unplanned fetch) with the shard's
values.  Both gradient hook kinds.  Exit 0 all as expected, 1 otherwise,
77 without torch."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "python"))
try:
    import torch
except ImportError:
    print("test_misuse: torch not importable: skip")
    sys.exit(77)
import zoffload.torch as zt

FAILS = []


def build():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))


def x():
    return torch.randn(3, 4, generator=torch.Generator().manual_seed(1))


def expect_raise(what, fn, *needles):
    try:
        fn()
    except zt.ZoffloadError as e:
        msg = str(e)
        missing = [n for n in needles if n not in msg]
        if missing:
            FAILS.append("%s: message %r lacks %r" % (what, msg, missing))
            print("FAIL %s: %s" % (what, msg))
        else:
            print("ok   %s: %s: %s" % (what, type(e).__name__, msg))
        return e
    except Exception as e:  # noqa: BLE001 - any other type is a failure
        FAILS.append("%s: %s: %s (expected ZoffloadError)" % (what, type(e).__name__, e))
        print("FAIL %s: %s: %s" % (what, type(e).__name__, e))
        return None
    FAILS.append("%s: no exception" % what)
    print("FAIL %s: no exception" % what)
    return None


def check(what, cond, detail=""):
    print("%s %s %s" % ("ok  " if cond else "FAIL", what, detail))
    if not cond:
        FAILS.append(what)


def run(grad_hooks):
    print("-- grad_hooks=%s" % grad_hooks)
    kw = dict(grad_hooks=grad_hooks)
    # a second wrap of the same model, and of a submodule of a wrapped model
    m = build()
    live = zt.wrap(m, **kw)
    expect_raise("second wrap", lambda: zt.wrap(m, **kw), "already wrapped")
    expect_raise("wrap of a wrapped model's submodule", lambda: zt.wrap(m[0], **kw), "already wrapped")
    expect_raise("unknown policy", lambda: zt.wrap(build(), policy="sometimes", **kw),
                 "zo_policy_from_name", "ZO_ERR_INVALID_ARG")
    # a parameter replaced after wrapping: the runtime refuses the name (ZO_ERR_EXISTS)
    expect_raise("parameter replaced after wrapping",
                 lambda: setattr(m[0], "weight", torch.nn.Parameter(torch.zeros(8, 4))),
                 "ZO_ERR_EXISTS", "0.weight" if False else "weight")
    expect_raise("parameter added after wrapping",
                 lambda: m[2].register_parameter("extra", torch.nn.Parameter(torch.zeros(2))),
                 "extra", "changed")
    expect_raise("module added after wrapping", lambda: m.add_module("extra", torch.nn.Linear(2, 2)),
                 "extra", "changed")
    # still usable after the refused changes: one step trains
    opt = live.optimizer(torch.optim.SGD, lr=0.1)
    loss = m(x()).pow(2).sum()
    loss.backward()
    opt.step()
    check("training after refused changes", live.stats()["steps"] == 1)
    # a parameter read while released, per-call: gathered on access, shard values
    before = live.stats()["unplanned_fetches"]
    w = m[0].weight
    check("per-call read after release gathers",
          w.numel() == 32 and torch.equal(w.detach().reshape(-1), live.full_state()["0.weight"].reshape(-1))
          and live.stats()["unplanned_fetches"] == before + 1,
          "(unplanned fetches %d -> %d)" % (before, live.stats()["unplanned_fetches"]))
    # a backward after the runtime was destroyed
    loss = m(x()).pow(2).sum()
    live.close()
    expect_raise("backward after close", lambda: loss.backward(), "runtime was destroyed")
    expect_raise("full_state after close", live.full_state, "full_state", "runtime was destroyed")
    expect_raise("optimizer after close", lambda: live.optimizer(torch.optim.SGD, lr=0.1), "optimizer",
                 "runtime was destroyed")
    check("closed parameters are empty", m[0].weight.numel() == 0)

    # numbers out of their range are refused, never stored modulo 2^32 or 2^64;
    # the binding's world-size bound is the header's
    import re
    with open(os.path.join(os.path.dirname(os.path.dirname(HERE)), "include", "zoffload.h")) as f:
        hdr = int(re.search(r"#define ZO_MAX_WORLD_SIZE (\d+)", f.read()).group(1))
    check("binding's world-size bound is ZO_MAX_WORLD_SIZE", zt._MAX_WORLD_SIZE == hdr,
          "(%d against %d)" % (zt._MAX_WORLD_SIZE, hdr))
    for arg, val, needle in (("world_size", 2**32 + 1, "world_size = 4294967297 is not in 1..65536"),
                             ("rank", 2**32 + 1, "rank = 4294967297 is not in 0..1"),
                             ("param_persistence_threshold", -1, "param_persistence_threshold = -1 is not in 0.."),
                             ("param_persistence_threshold", 2**64, "is not in 0..18446744073709551615"),
                             ("prefetch_bucket_size", -1, "prefetch_bucket_size = -1"),
                             ("max_live_parameters", -1, "max_live_parameters = -1"),
                             ("max_reuse_distance", -5, "max_reuse_distance = -5"),
                             ("world_size", True, "world_size must be an integer")):
        args = dict(kw, world_size=2) if arg == "rank" else dict(kw)
        args[arg] = val
        expect_raise("wrap(%s=%r)" % (arg, val), lambda: zt.wrap(build(), **args), needle)
    for arg, val, needle in (("policy", None, "policy is a name"), ("policy", 1, "policy is a name"),
                             ("on_violation", "ignore", "on_violation is 'raise' or 'record', not 'ignore'"),
                             ("check", "no", "check is True or False, not 'no'")):
        args = dict(kw)
        args[arg] = val
        expect_raise("wrap(%s=%r)" % (arg, val), lambda: zt.wrap(build(), **args), needle)

    # reset-on-forward: a released parameter read outside a forward raises
    m2 = build()
    live2 = zt.wrap(m2, policy="reset-on-forward", **kw)
    opt2 = live2.optimizer(torch.optim.SGD, lr=0.1)
    m2(x()).pow(2).sum().backward()
    opt2.step()
    expect_raise("parameter read after release (reset-on-forward)", lambda: m2[2].weight,
                 "zo_param_access", "ZO_ERR_NOT_AVAILABLE")
    check("released parameter .data is empty", m2[2]._parameters.get("weight").numel() == 0)
    # unwrap gives the trained values back
    state = live2.full_state()
    live2.unwrap()
    check("unwrap restores the values", torch.equal(m2[2].weight.detach(), state["2.weight"]))
    check("wrap again after unwrap", zt.wrap(m2, **kw).close() is None)

    # a second backward through a freed graph is refused once: the refusal
    # is the exception, not also a violation at the next call
    m3 = build()
    live3 = zt.wrap(m3, **kw)
    opt3 = live3.optimizer(torch.optim.SGD, lr=0.1)
    loss = m3(x()).sum()  # (with an op that saves tensors torch refuses the second backward itself)
    loss.backward()
    expect_raise("second backward of one graph", lambda: loss.backward(), "zo_backward_begin", "stale")
    try:
        opt3.step()
        m3(x()).pow(2).sum().backward()
        opt3.step()
        check("a step after the refused backward", live3.stats()["steps"] == 2)
    except zt.ZoffloadError as e:
        check("a step after the refused backward", False, "%s: %s" % (type(e).__name__, e))
    live3.close()


def binding():
    """zoffload._lib directly: a hook out of protocol order raises with the
    runtime's own message, and the runtime stays usable."""
    from zoffload import _lib
    print("-- zoffload._lib")
    cfg = _lib.config_init()
    cfg.param_persistence_threshold = 0  # the default 1e5 would keep the 16 elements gathered
    rt = _lib.Runtime(cfg)
    root = rt.module_register(_lib.NO_MODULE, "root")
    fc = rt.module_register(root, "fc")
    w = rt.param_register(fc, "weight", 16, 4)
    expect_raise("zo_pre_forward without a forward pass", lambda: rt.pre_forward(fc, _lib.CALL_GRAD),
                 "zo_pre_forward", "ZO_ERR_PROTOCOL")
    expect_raise("zo_module_register with an unknown parent", lambda: rt.module_register(77, "x"),
                 "zo_module_register", "ZO_ERR_BAD_HANDLE")
    expect_raise("zo_param_register numel 0", lambda: rt.param_register(fc, "b", 0, 4),
                 "zo_param_register", "ZO_ERR_INVALID_ARG")
    g = rt.forward_begin(_lib.FWD_ROOT)
    rt.pre_forward(root, _lib.CALL_GRAD)
    rt.pre_forward(fc, _lib.CALL_GRAD)
    addr, nbytes = rt.param_access(fc, w)
    check("zo_param_access gives the full tensor", addr is not None and nbytes == 64, "(%d bytes)" % nbytes)
    expect_raise("zo_post_forward of the caller first", lambda: rt.post_forward(root),
                 "zo_post_forward", "ZO_ERR_PROTOCOL")
    rt.post_forward(fc)
    rt.post_forward(root)
    rt.forward_end(g)
    rt.release_all()
    info = rt.param_info(w)
    check("released after the step", info.status == _lib.NOT_AVAILABLE and info.gathers == 1,
          "(%s, %d gathers)" % (_lib.param_status_name(info.status), info.gathers))
    rt.destroy()
    expect_raise("a call after zo_runtime_destroy", lambda: rt.stats(), "destroyed")
    # the binding's names are checked against the library's own lists
    L = _lib.lib()
    saved = _lib.POLICIES
    _lib.POLICIES = saved + ("fifth",)
    try:
        expect_raise("a library whose policy list differs", lambda: _lib._check_names(L),
                     "does not match this binding", "fifth")
    finally:
        _lib.POLICIES = saved
    _lib._check_names(L)  # and the real lists agree


binding()
for gh in ("tensor", "function"):
    run(gh)
print("test_misuse: %s" % ("%d failure(s)" % len(FAILS) if FAILS else "all raised as expected"))
sys.exit(1 if FAILS else 0)
