#!/usr/bin/env python3
"""deepspeed_oracle.py - run a zoffload scenario under DeepSpeed's own ZeRO
stage-3 hooks (the real thing) and print its hook trace with counters and
every parameter's ds_status.

Runs inside a venv of tools/oracle_venv.sh (.venv-current: torch 2.15 +
DeepSpeed 0.19.8; .venv-oracle: Debian's torch 1.13 + DeepSpeed 0.15.4), on
CPU: DS_ACCELERATOR=cpu, gloo, world size 1.

  deepspeed_oracle.py [--ds-profile 0.19|0.19-hooks|0.15] ...
  ZO_ORACLE_TIME_LIMIT=S   per-scenario time limit (default 120, 0: none)

  deepspeed_oracle.py SCENARIO.json                    trace on stdout
  deepspeed_oracle.py --policies reset-on-forward --out-suffix .oracle A.json ...
        batch mode (as tools/torch_oracle.py): writes A.reset-on-forward.oracle

The same torch.nn model as tools/torch_oracle.py (same module tree, the
parameters with their real numel, the same forward programs, checkpoints,
raises and losses) is wrapped by deepspeed.initialize with
zero_optimization.stage=3 and the scenario's stage3_* thresholds, as the
scenario's DeepSpeed profile says (config.ds_profile; --ds-profile
overrides): 0.19 = with an SGD optimizer (DeepSpeedZeroOptimizer_Stage3:
engine.backward, engine.step); 0.19-hooks and 0.15 = without one
(DeepSpeedZeRoOffload: DeepSpeed's own four hooks per module, its
PreBackwardFunctionForModule / PostBackwardFunctionModule autograd Functions
and its PartitionedParameterCoordinator).  The oracle only wraps those
functions to print a line when each fires:

  A/D/B/C/PRE/POST lines exactly as docs/scenario-model.md §4, with c= and
  r= read from DeepSpeed's module.ds_grads_remaining and
  module.applied_pre_backward_ref_cnt before and after the hook ("?" for a
  missing attribute; r before the first hook C printed 0 as the runtime does);
  FWD/ENDFWD/BWD/ENDBWD/DISCARD/ABORT/SWEEP/STEP/PGRAD as the PyTorch oracle;
  and after every D, C, PRE, POST, ENDBWD and SWEEP line one line
    S <ds_status of parameter 0, 1, ...: N=NOT_AVAILABLE I=INFLIGHT A=AVAILABLE>
  The backward is engine.backward(loss, retain_graph=...) (0.19; the S
  line of ENDBWD follows its epilogue) or loss.backward(...), plus the
  coordinator's reset_step() under 0.15 (a RuntimeError from it prints
  "DSERROR <message>" and ends the run).  SWEEP is engine.step() (0.19) or
  partition_all_parameters() (release_and_reset_all, then "expected to be
  released" if a parameter is still gathered: printed as "SWEEP ERROR
  <message>").  A scenario the profile cannot run prints "SKIP <reason>";
  a scenario over the time limit "ORACLEERROR timeout ...".

tools/difftest.py --deepspeed compares this with the simulator's
reset-on-forward trace plus the ds_status the runtime's PARAM_STATE events
give at the same points.

What had to be adapted to run DeepSpeed here (docs/oracles.md): the
CPU accelerator's device count comes from LOCAL_SIZE=1 (it runs numactl
otherwise); gloo in torch 1.13 has no all_gather_into_tensor /
reduce_scatter_tensor, so DeepSpeed's comm backend gets world-size-1
copies for those two collectives (the data plane; no hook logic changes).
"""

import os
import socket
import sys
import tempfile


def _free_port():
    """A TCP port nobody listens on now (bind port 0): each oracle process gets
    its own MASTER_PORT, so parallel runs never meet in one gloo rendezvous."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])
    finally:
        s.close()


os.environ.setdefault("DS_ACCELERATOR", "cpu")
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ["MASTER_PORT"] = os.environ.get("ZO_ORACLE_MASTER_PORT") or _free_port()
# DeepSpeed JIT-builds ops (the CPU accelerator's deepspeed_shm_comm) under
# TORCH_EXTENSIONS_DIR, default ~/.cache/torch_extensions, behind a file lock
# that a killed build leaves behind: every later run would wait on it
# silently.  A private directory per process (the build itself is avoided,
# see init_dist) keeps one run's debris from blocking another.
_EXT_DIR = tempfile.mkdtemp(prefix="zo-ds-ext-")
os.environ["TORCH_EXTENSIONS_DIR"] = _EXT_DIR
for k, v in (("RANK", "0"), ("WORLD_SIZE", "1"), ("LOCAL_RANK", "0"), ("LOCAL_SIZE", "1")):
    os.environ.setdefault(k, v)

import gc  # noqa: E402
import importlib  # noqa: E402
import io  # noqa: E402
import signal  # noqa: E402
import contextlib  # noqa: E402
import logging  # noqa: E402

import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_oracle  # noqa: E402

with contextlib.redirect_stdout(io.StringIO()):
    import deepspeed  # noqa: E402
    import deepspeed.comm.comm as dscomm  # noqa: E402
    from deepspeed.runtime.zero.partition_parameters import ZeroParamStatus  # noqa: E402

logging.getLogger("DeepSpeed").setLevel(logging.ERROR)

if os.environ.get("DS_ACCELERATOR") == "cpu":
    # DeepSpeed 0.19.8's zero_grad (engine.step -> stage3.py step ->
    # zero_grad(set_to_none=True)) calls p.grad.record_stream(
    # get_accelerator().current_stream()) for every gradient still set; the CPU
    # accelerator's stream is not a torch.Stream, so torch's argument parser
    # raises "unknown parameter type".  On a GPU that call only keeps the
    # memory alive for the stream; on CPU there is nothing to record.
    _record_stream = torch_oracle.torch.Tensor.record_stream

    def _cpu_record_stream(self, stream):
        if self.device.type == "cpu" and not isinstance(stream, torch_oracle.torch.Stream):
            return None
        return _record_stream(self, stream)
    torch_oracle.torch.Tensor.record_stream = _cpu_record_stream
try:
    from deepspeed.utils import logger as _dslogger
    _dslogger.setLevel(logging.ERROR)
except Exception:  # pragma: no cover
    pass

# DeepSpeed profiles (fuzz/scenario.h ZS_DS_*, the scenario's config.ds_profile):
#   0.19        the ZeRO-3 optimizer: deepspeed.initialize(model, optimizer=SGD),
#               engine.backward(loss, retain_graph=...), engine.step()
#   0.19-hooks  DeepSpeedZeRoOffload alone (no optimizer): loss.backward(),
#               partition_all_parameters() at the step
#   0.15        as 0.19-hooks, plus the coordinator's reset_step() after every
#               backward (the reference the simulator was first checked against)
from zo_names import DS_PROFILES  # noqa: E402  (include/zoffload.h)
PROFILE_OVERRIDE = None  # --ds-profile
TIME_LIMIT = int(os.environ.get("ZO_ORACLE_TIME_LIMIT", "120"))  # seconds per scenario
MAX_TOTAL_NUMEL = 1 << 22  # = fuzz/zofuzz.c DS_MAX_TOTAL_NUMEL (`zofuzz traces --ds` scales bigger scenarios down)
STATUS_CHAR = {ZeroParamStatus.NOT_AVAILABLE: "N", ZeroParamStatus.INFLIGHT: "I",
               ZeroParamStatus.AVAILABLE: "A"}
_dist_ready = False


class _Done:
    def wait(self):
        return True

    def is_completed(self):
        return True


def _ag_w1(output_tensor, input_tensor, group=None, async_op=False):
    output_tensor.view(-1).copy_(input_tensor.reshape(-1))
    return _Done() if async_op else None


def _rs_w1(output_tensor, input_tensor, op=None, group=None, async_op=False):
    output_tensor.view(-1).copy_(input_tensor.reshape(-1))
    return _Done() if async_op else None


def init_dist():
    global _dist_ready
    if _dist_ready:
        return
    # The gloo backend's constructor loads DeepSpeed's CPU shared-memory
    # all-reduce (deepspeed_shm_comm), JIT-compiling it with ninja on first
    # use (C++ headers of torch and pybind11 needed, ~60 s).  At world size 1
    # nothing uses it (comm/torch.py only calls it for all_reduce with
    # several local ranks; the two collectives the hooks issue are replaced
    # below), so the build is skipped: deepspeed.comm.torch.build_shm_op
    # returning None is the path DeepSpeed itself takes when the op is not
    # compatible (0.15.4 and 0.19.8).
    # (sys.modules: the attribute deepspeed.comm.torch is the torch package)
    importlib.import_module("deepspeed.comm.torch")
    dstorch = sys.modules["deepspeed.comm.torch"]
    if hasattr(dstorch, "build_shm_op"):
        dstorch.build_shm_op = lambda: None
    with contextlib.redirect_stdout(io.StringIO()):
        deepspeed.init_distributed(dist_backend="gloo", verbose=False)
    # torch 1.13's gloo has neither _allgather_base nor _reduce_scatter_base:
    # world size 1 makes both a copy (the data plane only)
    dscomm.cdb.all_gather_function = _ag_w1
    dscomm.cdb.reduce_scatter_function = _rs_w1
    _dist_ready = True


def _hook_name(fn):
    """Name of a DeepSpeed hook function, looking through decorators such as
    instrument_w_nvtx (whose wrapper is called wrapped_fn)."""
    seen = 0
    while seen < 4:
        name = getattr(fn, "__name__", "")
        if name != "wrapped_fn":
            return name
        inner = [c.cell_contents for c in (fn.__closure__ or ()) if callable(c.cell_contents)]
        if not inner:
            return name
        fn = inner[0]
        seen += 1
    return ""


class DSRun(torch_oracle.Run):
    """torch_oracle.Run with DeepSpeed's hooks instead of the oracle's own."""

    def param_numel(self, p):
        return p["numel"]

    def install_hooks(self):
        init_dist()
        sc = self.sc
        cfg = sc["config"]
        for mid, mod in enumerate(self.mods):
            if self.z3_leaf[mid]:
                mod._z3_leaf = True  # deepspeed.utils.set_z3_leaf_modules
        big = 10 ** 15

        def th(k):
            v = cfg[k]
            return big if v == "inf" else min(int(v), big)

        ds_config = {
            "train_batch_size": 1,
            "zero_allow_untested_optimizer": True,
            "steps_per_print": 1 << 30,
            "wall_clock_breakdown": False,
            "zero_optimization": {
                "stage": 3,
                "stage3_param_persistence_threshold": th("param_persistence_threshold"),
                "stage3_model_persistence_threshold": th("model_persistence_threshold"),
                "stage3_prefetch_bucket_size": th("prefetch_bucket_size"),
                "stage3_max_live_parameters": th("max_live_parameters"),
                "stage3_max_reuse_distance": th("max_reuse_distance"),
            },
        }
        root = self.mods[0]
        if not self.params:
            # DeepSpeedZeRoOffload needs one parameter (it reads the dtype of
            # the first): a frozen one nobody's op reads, not in the S lines
            root.register_parameter("zo_dummy", torch.nn.Parameter(torch.zeros(1), requires_grad=False))
        # PGRAD hooks first, on the full-size parameters: the AccumulateGrad
        # node records the parameter's shape when it is created, and DeepSpeed
        # partitions param.data to an empty tensor
        self.pgrad_hooks()
        # deepspeed.initialize runs gc.collect() (stage3.py
        # _create_fp16_partitions_with_defragmentation -> zero/utils.py
        # defragment): ~2 s per scenario with torch 2 loaded, for memory the
        # oracle's small models never need back
        gc_collect = gc.collect
        gc.collect = lambda *a, **k: 0
        with contextlib.redirect_stdout(io.StringIO()):
            if self.full_engine:
                # the ZeRO-3 optimizer (DeepSpeedZeroOptimizer_Stage3); lr 0:
                # the contents never change (the S lines are about ds_status)
                opt = torch.optim.SGD([p for p in root.parameters() if p.requires_grad], lr=0.0)
                self.engine, _, _, _ = deepspeed.initialize(model=root, optimizer=opt, config=ds_config)
                self.offload = self.engine.optimizer.parameter_offload
            else:
                # no optimizer: the engine builds DeepSpeedZeRoOffload, the stage-3
                # parameter hooks without the gradient partitioning optimizer
                self.engine, _, _, _ = deepspeed.initialize(model=root, config=ds_config)
                self.offload = self.engine.optimizer
        gc.collect = gc_collect
        # tied / external parameters: DeepSpeed's API for a module that uses
        # a parameter it does not own
        for mid, ps in enumerate(self.uses_of):
            for pid in ps:
                deepspeed.zero.register_external_parameter(self.mods[mid], self.params[pid])
        for mid, mod in enumerate(self.mods):
            if self.in_leaf[mid]:
                continue
            self.wrap_hooks(mod)
        if self.full_engine:
            self.wrap_leaf_hooks()

    def wrap_leaf_hooks(self):
        """DeepSpeed 0.19.8's reduce_leaf_module_grads (the full backward hook its ZeRO-3
        optimizer puts on a z3 leaf) sets param.grad = torch.zeros_like(param) for a leaf
        parameter without a gradient.  When the hook runs while that parameter is
        partitioned (no input of the leaf requires grad, so torch calls it from the output
        side before the leaf's pre-backward fetch; or the leaf's parameters were already
        released by an earlier call's post-backward), the gradient has 0 elements and
        DeepSpeed's own gradient handling fails later (AccumulateGrad size mismatch,
        "unknown parameter type" in engine.step).  The simulator does not model that
        defect: the run stops there and the scenario is listed with the reason."""
        from deepspeed.runtime.zero.partition_parameters import ZeroParamStatus
        leaf_params = getattr(self.engine.optimizer, "leaf_parameters", {}) or {}
        for leaf, params in leaf_params.items():
            for k, fn in list(leaf._backward_hooks.items()):
                if _hook_name(fn) != "reduce_leaf_module_grads":
                    continue

                def hook(module, grad_input, grad_output, fn=fn, params=params):
                    bad = [p for p in params if p.grad is None and p.ds_status != ZeroParamStatus.AVAILABLE]
                    if bad:
                        raise LeafZeroGrad(module.zo_id, [p.zo_id for p in bad], len(self.out) + 1)
                    return fn(module, grad_input, grad_output)
                leaf._backward_hooks[k] = hook

    def install_pgrad_hooks(self):
        pass  # in install_hooks, before deepspeed.initialize

    def pgrad_hooks(self):
        for t in self.params:
            if t.requires_grad:
                acc = t.expand_as(t).grad_fn.next_functions[0][0]
                pid = t.zo_id
                acc.register_hook(lambda gi, go, pid=pid: self.pgrad(pid))
                self.keep.append(acc)

    def wrap_hooks(self, mod):
        rt = self
        for d in (mod._forward_pre_hooks, mod._forward_hooks):
            for k, fn in list(d.items()):
                name = _hook_name(fn)
                if name == "_pre_forward_module_hook":
                    d[k] = self.wrap_a(fn)
                elif name == "_post_backward_module_hook":
                    d[k] = self.wrap_d(fn)
                elif name == "_post_forward_module_hook":
                    d[k] = self.wrap_b(fn)
                elif name == "_pre_backward_module_hook":
                    d[k] = self.wrap_c(fn)
        del rt

    # -- the wrappers ------------------------------------------------------

    def status_line(self):
        self.out.append("S " + "".join(STATUS_CHAR.get(p.ds_status, "?") for p in self.params))

    def wrap_a(self, fn):
        def a(module, *args):
            self.line("A m=%d" % module.zo_id)
            return fn(module, *args)
        return a

    def wrap_b(self, fn):
        def b(module, inputs, output):
            self.line("B m=%d" % module.zo_id)
            return fn(module, inputs, output)
        return b

    def wrap_d(self, fn):
        def d(module, inputs):
            before = self.counter(module, "ds_grads_remaining")
            ret = fn(module, inputs)
            after = self.counter(module, "ds_grads_remaining")
            self.patch_post(module)
            self.line("D m=%d n=%d rg=%s c=%s->%s" % (
                module.zo_id, len(inputs), ",".join("1" if x.requires_grad else "0" for x in inputs),
                before, after))
            self.status_line()
            return ret
        return d

    def wrap_c(self, fn):
        def c(module, inputs, output):
            before = self.counter(module, "applied_pre_backward_ref_cnt")
            ret = fn(module, inputs, output)
            after = self.counter(module, "applied_pre_backward_ref_cnt")
            self.patch_pre(module)
            outs = output if isinstance(output, (tuple, list)) else (output,)
            self.line("C m=%d n=%d rg=%s r=%s->%s" % (
                module.zo_id, len(outs), ",".join("1" if y.requires_grad else "0" for y in outs),
                "0" if before == "?" else before, "0" if after == "?" else after))
            self.status_line()
            return ret
        return c

    def patch_post(self, module):
        cls = getattr(module, "post_bwd_fn", None)
        if cls is None or getattr(cls, "_zo_traced", False):
            return
        orig = cls.backward
        rt = self

        def backward(ctx, *args):
            m = ctx.module
            before = rt.counter(m, "ds_grads_remaining")
            r = orig(ctx, *args)
            rt.line("POST m=%d c=%s->%s" % (m.zo_id, before, rt.counter(m, "ds_grads_remaining")))
            rt.status_line()
            return r
        cls.backward = staticmethod(backward)
        cls._zo_traced = True

    def patch_pre(self, module):
        cls = getattr(module, "pre_bwd_fn", None)
        if cls is None or getattr(cls, "_zo_traced", False):
            return
        orig = cls.backward
        rt = self

        def backward(ctx, *args):
            m = ctx.module
            before = rt.counter(m, "applied_pre_backward_ref_cnt")
            r = orig(ctx, *args)
            rt.line("PRE m=%d r=%s->%s" % (m.zo_id, before, rt.counter(m, "applied_pre_backward_ref_cnt")))
            rt.status_line()
            return r
        cls.backward = staticmethod(backward)
        cls._zo_traced = True

    # -- the training loop: DeepSpeed's engine ----------------------------

    def line(self, s):
        self.out.append(s)
        if s.startswith("ENDBWD"):
            if self.full_engine and "B" not in self.ctx:
                # the top-level backward: engine.backward runs its epilogue
                # (release_backward_leftovers) after the autograd call; the
                # state line follows it (run_backward)
                self.endbwd_pending = True
            else:
                self.status_line()

    def run_backward(self, loss, retain):
        if self.full_engine:
            self.endbwd_pending = False
            try:
                self.engine.backward(loss, retain_graph=retain)
            finally:
                if self.endbwd_pending:
                    self.status_line()
                    self.endbwd_pending = False
        else:
            # what DeepSpeedZeroOptimizer_Stage3.backward does around the
            # autograd call: loss.backward(), then the coordinator's reset_step()
            torch.autograd.backward(loss, retain_graph=retain)
            if self.profile != "0.15":
                return
            try:
                self.coordinator().reset_step()
            except RuntimeError as e:  # DeepSpeed's own check, not a PyTorch error
                self.line("DSERROR %s" % str(e).strip().splitlines()[0][:200])
                raise torch_oracle.StopRun()

    def coordinator(self):
        """The training coordinator (0.14: one per mode, get_param_coordinator(training);
        0.15+: a single one, get_param_coordinator())."""
        try:
            return self.offload.get_param_coordinator(training=True)
        except TypeError:
            return self.offload.get_param_coordinator()

    def pgrad(self, pid):
        self.grads_since_step += 1
        self.line("PGRAD p=%d" % pid)

    def sweep(self):
        grads, self.grads_since_step = self.grads_since_step, 0
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                if self.full_engine and not grads:
                    # no parameter produced a gradient in this step (every
                    # backward discarded or abandoned): engine.step() fails
                    # after its _partition_all_parameters() (0.19.8
                    # stage3.py step -> _get_norm_groups: KeyError or
                    # TypeError on the missing averaged_gradients), so a
                    # training loop has nothing to step; the oracle runs
                    # that release part alone, which the runtime models
                    # (zo_release_all without the persistent re-gather)
                    self.offload.partition_all_parameters()
                elif self.full_engine:
                    self.engine.step()
                else:
                    # the optimizer step's _partition_all_parameters():
                    # release_and_reset_all + "expected to be released" check
                    self.offload.partition_all_parameters()
            self.line("SWEEP")
        except RuntimeError as e:
            self.line("SWEEP ERROR %s" % str(e).strip().splitlines()[0])
        self.status_line()

    def set_training(self, training):
        self.engine.train(training)


class OracleTimeout(Exception):
    pass


class LeafZeroGrad(Exception):
    def __init__(self, mid, pids, line):
        super().__init__("leaf %d" % mid)
        self.mid, self.pids, self.at = mid, pids, line


class Skip(Exception):
    """The scenario cannot be expressed under this profile: reported as
    "SKIP <reason>" (tools/difftest.py lists and counts it)."""


def _on_alarm(signum, frame):
    raise OracleTimeout()


def scenario_profile(sc):
    prof = PROFILE_OVERRIDE or sc["config"].get("ds_profile", "0.19")
    if prof not in DS_PROFILES:
        raise ValueError("unknown DeepSpeed profile %r (known: %s)" % (prof, ", ".join(DS_PROFILES)))
    want = "0.15." if prof == "0.15" else "0.19."
    if not deepspeed.__version__.startswith(want):
        raise ValueError("DeepSpeed profile %s needs DeepSpeed %sx; this venv has %s"
                         % (prof, want, deepspeed.__version__))
    return prof


def trace(sc, policy="reset-on-forward"):
    if sc["config"].get("all_ranks") and sc.get("edits"):
        # one program per rank: `zofuzz traces --ds` writes each (NAME#rankR)
        raise ValueError("all-ranks scenario with rank edits: run each rank's program")
    prof = scenario_profile(sc)
    total = sum(p["numel"] for p in sc["params"])
    if total > MAX_TOTAL_NUMEL + 65536:  # (scaling rounds tiny parameters up to 1)
        return ["SKIP total numel %d over %d" % (total, MAX_TOTAL_NUMEL)]
    if prof == "0.19" and not any(not p["frozen"] for p in sc["params"]):
        # DeepSpeedZeroOptimizer_Stage3 needs a trainable parameter (torch's
        # optimizers refuse an empty parameter list)
        return ["SKIP no trainable parameter: the ZeRO-3 optimizer needs one (profile 0.19)"]
    out = []
    r = None
    old = signal.signal(signal.SIGALRM, _on_alarm) if TIME_LIMIT > 0 else None
    if TIME_LIMIT > 0:
        signal.alarm(TIME_LIMIT)
    try:
        r = DSRun.__new__(DSRun)
        r.profile = prof
        r.full_engine = prof == "0.19"
        r.endbwd_pending = False
        r.grads_since_step = 0
        torch_oracle.Run.__init__(r, sc, "reset-on-forward", out)
        torch_oracle._current.run = r
        r.run()
    except torch_oracle.StopRun:
        pass
    except AssertionError as e:
        import traceback
        tb = traceback.extract_tb(e.__traceback__)
        where = tb[-1] if tb else None
        if where is not None and "reduce_and_partition_ipg_grads" in where.name:
            # DeepSpeed's own gradient bucketing refuses a parameter whose
            # gradient hook fires twice in one backward (a reentrant
            # checkpoint region recomputed with a parameter also used
            # outside it): the real run stops there
            return ["SKIP the ZeRO-3 optimizer asserts in __reduce_and_partition_ipg_grads (0.19.8 stage3.py: "
                    "one parameter's gradient reduced twice in one backward), at line %d" % (len(out) + 1)]
        if where is not None and "/deepspeed/" in where.filename:
            # another of DeepSpeed's own assertions (e.g. release_sub_module's
            # "active_backward_submodules is empty during backward pass": a
            # post-backward reaching 0 while no module is in backward): the
            # real run stops there; the simulator does not model it
            return ["SKIP DeepSpeed asserts in %s (%s:%d: %s), at line %d" % (
                where.name, where.filename.split("/deepspeed/", 1)[1], where.lineno,
                str(e).strip().splitlines()[0][:120] if str(e).strip() else "assert", len(out) + 1)]
        raise
    except LeafZeroGrad as e:
        return ["SKIP DeepSpeed 0.19.8's reduce_leaf_module_grads gives a partitioned parameter of a z3 leaf "
                "a 0-element gradient (zeros_like while NOT_AVAILABLE; its gradient handling fails after "
                "that), at line %d" % e.at]
    except OracleTimeout:
        return ["ORACLEERROR timeout after %d s (ZO_ORACLE_TIME_LIMIT) at line %d: %s"
                % (TIME_LIMIT, len(out) + 1, out[-1] if out else "<start>")]
    finally:
        if TIME_LIMIT > 0:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
        torch_oracle._current.run = None
        if r is not None and getattr(r, "engine", None) is not None:
            try:
                r.engine.destroy()
            except Exception:
                pass
    return out


def main(argv):
    global PROFILE_OVERRIDE
    import argparse
    import json
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--policies", default="reset-on-forward")
    ap.add_argument("--out-suffix")
    ap.add_argument("--ds-profile", choices=DS_PROFILES,
                    help="run every scenario under this DeepSpeed profile (default: its config.ds_profile)")
    a = ap.parse_args(argv)
    PROFILE_OVERRIDE = a.ds_profile
    rc = 0
    for f in a.files:
        with open(f) as fh:
            sc = json.load(fh)
        try:
            lines = trace(sc)
            text = "\n".join(lines) + "\n"
        except Exception as e:  # report, go on with the batch
            import traceback
            text = "ORACLEERROR %s: %s\n%s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "",
                                               traceback.format_exc())
            rc = 1
        if a.out_suffix:
            base = f[:-5] if f.endswith(".json") else f
            with open("%s.reset-on-forward%s" % (base, a.out_suffix), "w") as fh:
                fh.write(text)
        else:
            sys.stdout.write(text)
    return rc


if __name__ == "__main__":
    import atexit
    import shutil
    atexit.register(shutil.rmtree, _EXT_DIR, True)
    sys.exit(main(sys.argv[1:]))
