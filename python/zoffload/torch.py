"""zoffload.torch - train a real torch.nn.Module with libzoffload as its ZeRO-3
coordinator, the way DeepSpeed's stage 3 wraps a model.

    import zoffload.torch as zt
    live = zt.wrap(model, policy="per-call")         # model is now partitioned
    opt = live.optimizer(torch.optim.Adam, lr=1e-3)  # updates the shards
    loss = model(x).sum(); loss.backward(); opt.step(); opt.zero_grad()
    full = live.full_state()                          # name -> full tensor (a copy)
    live.close()                                      # or live.unwrap(): parameters back in the model

What is wired to what (DeepSpeed 0.19.8's deepspeed/runtime/zero/
parameter_offload.py names, checked against deepspeed 0.19.8 on torch 2.15.0):

  every module of model.named_modules()  zo_module_register, DFS pre-order (module.id)
  every parameter (tied ones once)       zo_param_register (frozen: ZO_PARAM_FROZEN);
                                         a second owner: zo_module_use_param
  forward pre-hook A                     zo_forward_begin(ROOT) for the top-level call,
                                         zo_pre_forward, zo_param_access per own parameter
  forward pre-hook D                     zo_track_inputs; for every positional tensor input
                                         that requires grad, zo_input_grad when its gradient
                                         is ready (grad_hooks="function": it passes through a
                                         PostBackwardFunctionModule, whose backward calls it)
  forward hook B                         zo_post_forward
  forward hook C                         zo_track_outputs; for every output tensor that
                                         requires grad, zo_output_grad when its gradient is
                                         ready ("function": a PreBackwardFunctionForModule);
                                         the top-level call's zo_forward_end
  always-call forward hook               an exception unwinding module calls: zo_forward_abort
                                         (a non-reentrant checkpoint's early-stopped recompute too)
  first backward node of a backward      zo_backward_begin (retain_graph from torch.autograd.backward)
  engine final callback                  zo_backward_end (queue_callback, FSDP2-style)
  post-accumulate-grad hook              reduce-scatter of p.grad into this rank's gradient
                                         shard, p.grad = None, zo_param_grad_ready
  LiveOptimizer.step()                   torch.optim on the shards, then zo_release_all

grad_hooks="tensor" (default) uses tensor hooks, which leave the model's
autograd graph as it is: training is bit for bit plain training's.  One
exception: a module input that is a leaf requiring grad (no op made it)
passes through DeepSpeed's identity Function as under "function", since
a hook on a leaf runs before autograd has accumulated the gradients of
the module's own parameters (torch 2.15.0 runs a leaf's AccumulateGrad
first among the nodes ready), and the release would come before them.
grad_hooks="function" inserts DeepSpeed's identity Functions, DeepSpeed's
exact hook timing; their node on a module input sums the gradient of a
tensor used inside and outside the module in another order (float
rounding differences, as under DeepSpeed).

Data plane: a backend (include/zoffload_backend.h vtable) implemented here
over torch CPU tensors: world size W in one process with every rank's
shard (the host backend's single view; W = 1 is real training), or
backend="mpi", one rank per process under mpirun with this rank's shard
only and Open MPI collectives (MpiComm).  The
full buffers it hands the runtime (full_alloc) are torch tensors, so while
a parameter is AVAILABLE its .data is a view of exactly the bytes the
runtime gathered (no copy), and after its release .data is an empty
tensor; autograd's saved tensors keep a released buffer alive by
reference count, as they do under DeepSpeed.  Copies are made where the
protocol has one: the all-gather (shards -> full buffer), the
reduce-scatter (p.grad -> gradient shard) and, for parameters that stay
gathered across the optimizer step (persistent ones), a refresh of the
full buffer from the updated shards after the step (DeepSpeed's post-step
all-gather of persistent parameters).

Misuse raises ZoffloadError, never crashes: a second wrap, a parameter or
module added or replaced after wrapping, a backward after close(), a
parameter read while released where the policy does not gather on access
(DeepSpeed's ZeROOrderedDict; the runtime's ZO_ERR_NOT_AVAILABLE message).
"""

import operator
import threading
import weakref

import torch as _torch

from . import _lib
from ._lib import ZoffloadError
from .capture import _apply_tensors, _tensors

__all__ = ["wrap", "LiveModel", "LiveOptimizer", "LiveViolation", "ZoffloadError"]


class LiveViolation(ZoffloadError):
    """An invariant (fuzz/check.c's I1..I7, ERR) broke on the live event
    stream.  .inv ("I1"...), .module_path, .param_name, .what."""

    def __init__(self, message, inv, module_path=None, param_name=None, what=None, module=None, param=None):
        super().__init__(message)
        self.inv, self.module_path, self.param_name, self.what = inv, module_path, param_name, what
        self.module, self.param = module, param


# ----------------------------------------------------------------------
# Data plane: zo_backend over torch tensors
# ----------------------------------------------------------------------


class MpiComm:
    """MPI_COMM_WORLD of Open MPI through ctypes (libmpi's C API; the
    handles are Open MPI's predefined globals, as its mpi.h defines
    MPI_COMM_WORLD, MPI_BYTE, MPI_FLOAT, MPI_SUM).  MPI_Init on first use
    when not initialised, MPI_Finalize at exit then.  Blocking collectives."""

    _inst = None

    @classmethod
    def get(cls):
        if cls._inst is None:
            cls._inst = cls()
        return cls._inst

    def __init__(self):
        import atexit
        import ctypes
        import ctypes.util
        path = ctypes.util.find_library("mpi")
        if not path:
            raise ZoffloadError("zoffload.torch: backend='mpi' needs Open MPI's libmpi (apt-get install "
                                "libopenmpi-dev openmpi-bin)")
        L = self.L = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        try:
            g = lambda name: ctypes.addressof(ctypes.c_char.in_dll(L, name))  # noqa: E731
            self.world, self.byte, self.float = g("ompi_mpi_comm_world"), g("ompi_mpi_byte"), g("ompi_mpi_float")
            self.sum = g("ompi_mpi_op_sum")
        except ValueError as e:
            raise ZoffloadError("zoffload.torch: backend='mpi' supports Open MPI only (%s: %s)" % (path, e))
        vp, ci = ctypes.c_void_p, ctypes.c_int
        L.MPI_Allgather.argtypes = [vp, ci, vp, vp, ci, vp, vp]
        L.MPI_Reduce_scatter_block.argtypes = [vp, vp, ci, vp, vp, vp]
        L.MPI_Comm_rank.argtypes = L.MPI_Comm_size.argtypes = [vp, ctypes.POINTER(ci)]
        flag = ci()
        L.MPI_Initialized(ctypes.byref(flag))
        if not flag.value:
            if L.MPI_Init(None, None) != 0:
                raise ZoffloadError("zoffload.torch: MPI_Init failed")
            atexit.register(self._finalize)
        r, n = ci(), ci()
        L.MPI_Comm_rank(self.world, ctypes.byref(r))
        L.MPI_Comm_size(self.world, ctypes.byref(n))
        self.rank, self.size = r.value, n.value

    def _finalize(self):
        flag = _lib.ctypes.c_int()
        self.L.MPI_Finalized(_lib.ctypes.byref(flag))
        if not flag.value:
            self.L.MPI_Finalize()

    def _ok(self, rc, what):
        if rc != 0:
            raise RuntimeError("%s failed: MPI error %d" % (what, rc))

    def allgather(self, send, nbytes, recv):
        self._ok(self.L.MPI_Allgather(send, nbytes, self.byte, recv, nbytes, self.byte, self.world), "MPI_Allgather")

    def reduce_scatter_sum(self, send, recv, count):
        self._ok(self.L.MPI_Reduce_scatter_block(send, recv, count, self.float, self.sum, self.world),
                 "MPI_Reduce_scatter_block")


class TorchBackend:
    """A zo_backend whose shards and full buffers are torch CPU tensors.
    Single view of a world of W ranks (as zo_backend_host_create without a
    world): it stores all W shards of each parameter, so an all-gather is
    one copy of the padded image into the full buffer.  Works complete at
    once.  reduce_scatter() (Python) takes rank `rank`'s slice of the
    gradient: every rank of a single view has the same gradient, so the
    average is the gradient itself (no arithmetic, bit exact)."""

    def __init__(self, world_size=1, rank=0, comm=None):
        self.comm = comm  # MpiComm: one rank per process, this rank's shard only
        if comm is not None:
            world_size, rank = comm.size, comm.rank
        self.W, self.rank = world_size, rank
        self.shards = {}    # pid -> uint8 tensor of W * part * elem_size bytes
        self.meta = {}      # pid -> (numel, elem_size, part)
        self.full = {}      # address -> (pid, uint8 tensor)
        self.full_of = {}   # pid -> uint8 tensor (the live full buffer)
        self.works = {}
        self._next_work = 1
        self._err = _lib.ctypes.create_string_buffer(512)
        self.on_full_free = None
        L = _lib
        cb = self._cb = {}
        cb["world_size"] = L._F_INT(lambda ctx: self.W)
        cb["rank"] = L._F_INT(lambda ctx: self.rank)
        cb["param_add"] = L._F_PARAM_ADD(self._guard(self._param_add))
        cb["param_remove"] = L._F_PARAM_REMOVE(self._void(self._param_remove))
        cb["full_alloc"] = L._F_FULL_ALLOC(self._guard(self._full_alloc))
        cb["full_free"] = L._F_FULL_FREE(self._void(self._full_free))
        cb["all_gather_start"] = L._F_GATHER(self._guard(self._gather))
        cb["wait"] = L._F_WAIT(self._guard(lambda ctx, w: self._work(w)))
        cb["query"] = L._F_QUERY(self._guard(self._query))
        cb["work_free"] = L._F_WORK_FREE(self._void(lambda ctx, w: self.works.pop(w, None)))
        cb["last_error"] = L._F_LAST_ERROR(lambda ctx: _lib.ctypes.addressof(self._err))
        cb["destroy"] = L._F_DESTROY(lambda ctx: None)
        cb["exchange"] = L._F_EXCHANGE(self._guard(self._exchange))
        ops = self.ops = L.BackendOps()
        ops.version, ops.name = 2, b"torch"
        for k, f in cb.items():
            setattr(ops, k, f)
        self.struct = L.Backend(_lib.ctypes.pointer(ops), None)

    @property
    def address(self):
        return _lib.ctypes.addressof(self.struct)

    def _fail(self, e):
        msg = ("torch backend: %s: %s" % (type(e).__name__, e)).encode()[:511]
        _lib.ctypes.memmove(self._err, msg + b"\0", len(msg) + 1)

    def _guard(self, fn):
        def run(*a):
            try:
                r = fn(*a)
                return _lib.OK if r is None else r
            except Exception as e:  # never unwind through C
                self._fail(e)
                return _lib.ERR_BACKEND
        return run

    def _void(self, fn):
        def run(*a):
            try:
                fn(*a)
            except Exception as e:
                self._fail(e)
        return run

    def _param_add(self, ctx, pid, numel, elem_size, part):
        n = part if self.comm is not None else self.W * part
        self.shards[pid] = _torch.zeros(n * elem_size, dtype=_torch.uint8)
        self.meta[pid] = (numel, elem_size, part)

    def _param_remove(self, ctx, pid):
        self.shards.pop(pid, None)
        self.meta.pop(pid, None)

    def _full_alloc(self, ctx, pid, nbytes, out):
        t = _torch.empty(nbytes, dtype=_torch.uint8)
        addr = t.data_ptr()
        self.full[addr] = (pid, t)
        self.full_of[pid] = t
        out[0] = addr

    def _full_free(self, ctx, pid, addr):
        ent = self.full.pop(addr, None)
        if ent is not None and self.full_of.get(pid) is ent[1]:
            del self.full_of[pid]
        if self.on_full_free is not None:
            self.on_full_free(pid)

    def _gather(self, ctx, items, n, out):
        for i in range(n):
            it = items[i]
            _, buf = self.full[it.full]
            src = self.shards[it.param]
            if self.comm is not None:
                self.comm.allgather(src.data_ptr(), src.numel(), buf.data_ptr())
            else:
                buf[:src.numel()].copy_(src)
        w = self._next_work
        self._next_work += 1
        self.works[w] = True
        out[0] = w

    def _work(self, w):
        if w not in self.works:
            raise ValueError("unknown work %r" % w)

    def _query(self, ctx, w, done):
        self._work(w)
        done[0] = 1

    def _exchange(self, ctx, send, nbytes, recv):
        if self.comm is not None:
            self.comm.allgather(send, nbytes, recv)
            return
        for r in range(self.W):
            _lib.ctypes.memmove(recv + r * nbytes, send, nbytes)

    # -- framework side --------------------------------------------------

    def shard_view(self, pid, dtype, rank=None):
        """Rank `rank`'s (default this rank's) shard of pid as a flat tensor
        of dtype sharing the backend's storage (the optimizer updates it in place)."""
        numel, es, part = self.meta[pid]
        if self.comm is not None:
            return self.shards[pid].view(dtype)
        r = self.rank if rank is None else rank
        return self.shards[pid].view(dtype)[r * part:(r + 1) * part]

    def set_initial(self, pid, flat):
        """Stores the initial full value (flat tensor of numel elements):
        this rank's slice (MPI), or every rank's (single view)."""
        numel, es, part = self.meta[pid]
        if self.comm is not None:
            lo, hi = self.rank * part, min((self.rank + 1) * part, numel)
            if hi > lo:
                self.shards[pid].view(flat.dtype)[:hi - lo].copy_(flat[lo:hi])
        else:
            self.shards[pid].view(flat.dtype)[:numel].copy_(flat)

    def full_value(self, pid, dtype, out=None):
        """The full padded image (W * part elements of dtype) of every rank's
        shard: a view (single view) or a new gathered tensor (MPI:
        collective, every rank calls it for the same pid), or copied into
        out (a uint8 tensor of the full buffer)."""
        numel, es, part = self.meta[pid]
        src = self.shards[pid]
        if self.comm is None:
            if out is not None:
                out[:src.numel()].copy_(src)
            return src.view(dtype)
        if out is None:
            out = _torch.empty(self.W * src.numel(), dtype=_torch.uint8)
        self.comm.allgather(src.data_ptr(), src.numel(), out.data_ptr())
        return out.view(dtype)

    def reduce_scatter(self, pid, grad_flat):
        numel, es, part = self.meta[pid]
        if self.comm is not None:
            if grad_flat.dtype != _torch.float32:
                raise ZoffloadError("zoffload.torch: the MPI reduce-scatter is float32 only (%s)" % grad_flat.dtype)
            full = _torch.zeros(self.W * part, dtype=_torch.float32)
            full[:numel].copy_(grad_flat)
            out = _torch.empty(part, dtype=_torch.float32)
            self.comm.reduce_scatter_sum(full.data_ptr(), out.data_ptr(), part)
            return out.div_(self.W)  # ZO_REDUCE_AVG
        lo = self.rank * part
        hi = min(lo + part, numel)
        out = _torch.zeros(part, dtype=grad_flat.dtype)
        if hi > lo:
            out[:hi - lo].copy_(grad_flat[lo:hi])
        return out


# ----------------------------------------------------------------------
# Autograd functions (parameter_offload.py's PreBackwardFunctionForModule,
# PostBackwardFunctionModule)
# ----------------------------------------------------------------------


class _PreBackward(_torch.autograd.Function):
    @staticmethod
    def forward(ctx, live, handle, graph, x):
        ctx.live, ctx.handle, ctx.graph = live, handle, graph
        return x.detach()

    @staticmethod
    def backward(ctx, g):
        ctx.live._output_grad(ctx.handle, ctx.graph)
        return None, None, None, g


class _PostBackward(_torch.autograd.Function):
    @staticmethod
    def forward(ctx, live, handle, graph, x):
        ctx.live, ctx.handle, ctx.graph = live, handle, graph
        return x.detach()

    @staticmethod
    def backward(ctx, g):
        ctx.live._input_grad(ctx.handle, ctx.graph)
        return None, None, None, g


# retain_graph of the running torch.autograd.backward (the engine does not
# tell a node); torch.Tensor.backward calls torch.autograd.backward.
_tls = threading.local()
_orig_backward = None
_patch_users = 0
_live_models = weakref.WeakSet()
_global_hooks = []


def _patched_backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, *a, **kw):
    stack = getattr(_tls, "retain", None)
    if stack is None:
        stack = _tls.retain = []
    stack.append(bool(create_graph if retain_graph is None else retain_graph))
    try:
        return _orig_backward(tensors, grad_tensors, retain_graph, create_graph, *a, **kw)
    finally:
        stack.pop()


def _retain_hint():
    stack = getattr(_tls, "retain", None)
    return bool(stack and stack[-1])


def _patch(on):
    global _orig_backward, _patch_users
    if on:
        _patch_users += 1
        if _patch_users == 1:
            _orig_backward = _torch.autograd.backward
            _torch.autograd.backward = _patched_backward
            mm = _torch.nn.modules.module
            _global_hooks.append(mm.register_module_parameter_registration_hook(_on_param_registration))
            _global_hooks.append(mm.register_module_module_registration_hook(_on_module_registration))
    else:
        _patch_users -= 1
        if _patch_users == 0:
            _torch.autograd.backward = _orig_backward
            while _global_hooks:
                _global_hooks.pop().remove()


def _owner_live(module):
    for live in list(_live_models):
        if live.alive and id(module) in live._mid:
            return live
    return None


def _on_param_registration(module, name, param):
    live = _owner_live(module)
    if live is None:
        return None
    mid = live._mid[id(module)]
    path = live.paths[mid]
    if param is not None and name in module._parameters and id(param) not in live._pid:
        # what the runtime says about registering it where it is now
        live._probing = True
        try:
            live.rt.param_register(mid, name, max(param.numel(), 1), param.element_size(),
                                   0 if param.requires_grad else _lib.PARAM_FROZEN)
        except ZoffloadError as e:
            raise ZoffloadError("zoffload.torch: parameter %r of %s set after wrapping (the model "
                                "changed; unwrap() and wrap again): %s" % (name, path or "(root)", e),
                                e.status, e.call) from None
        finally:
            live._probing = False
    raise ZoffloadError("zoffload.torch: parameter %r of %s set after wrapping: the model changed; "
                        "unwrap() and wrap again" % (name, path or "(root)"))


def _on_module_registration(module, name, submodule):
    live = _owner_live(module)
    if live is None:
        return None
    raise ZoffloadError("zoffload.torch: module %r of %s set after wrapping: the model changed; "
                        "unwrap() and wrap again" % (name, live.paths[live._mid[id(module)]] or "(root)"))


class _ParamDict(dict):
    """module._parameters while wrapped (DeepSpeed's ZeROOrderedDict): a
    parameter read through its module while released goes through
    zo_param_access - the per-call policy gathers it, the DeepSpeed-shaped
    ones outside a forward call raise (ZO_ERR_NOT_AVAILABLE)."""

    __slots__ = ("live", "mid")

    def __getitem__(self, key):
        p = dict.__getitem__(self, key)
        live = self.live
        if p is not None and live is not None:
            pid = live._pid.get(id(p))
            if pid is not None and live._status[pid] != _lib.AVAILABLE:
                live._access(self.mid, pid)
        return p


class _Call:
    __slots__ = ("mid", "done", "root_graph")

    def __init__(self, mid, root_graph):
        self.mid, self.done, self.root_graph = mid, False, root_graph


_U64_MAX = (1 << 64) - 1
_MAX_WORLD_SIZE = 65536  # ZO_MAX_WORLD_SIZE of include/zoffload.h


def _int_arg(name, v, lo, hi):
    """v as an int in lo..hi (a Python, NumPy or torch integer), else
    ZoffloadError naming the argument: ctypes would store it modulo 2^32
    or 2^64 and the runtime would run with another value."""
    if isinstance(v, bool):
        raise ZoffloadError("zoffload.torch.wrap: %s must be an integer, not %r" % (name, v))
    try:
        n = operator.index(v)
    except TypeError:
        raise ZoffloadError("zoffload.torch.wrap: %s must be an integer, not %r" % (name, v)) from None
    if not lo <= n <= hi:
        raise ZoffloadError("zoffload.torch.wrap: %s = %d is not in %d..%d" % (name, n, lo, hi))
    return n


class LiveModel:
    """A model partitioned by libzoffload.  Made by wrap()."""

    def __init__(self, model, policy="per-call", ds_profile="0.19", world_size=1, rank=0,
                 param_persistence_threshold=0, prefetch_bucket_size=50000000,
                 max_live_parameters=1000000000, max_reuse_distance=1000000000,
                 check=True, on_violation="raise", grad_hooks="tensor", backend="torch"):
        if not isinstance(model, _torch.nn.Module):
            raise ZoffloadError("zoffload.torch.wrap: %s is not a torch.nn.Module" % type(model).__name__)
        for path, m in model.named_modules():
            other = getattr(m, "_zoffload_live", None)
            if other is not None and other.alive:
                raise ZoffloadError("zoffload.torch.wrap: module %s is already wrapped by zoffload (a "
                                    "second wrap of the same model; unwrap() the first)" % (path or "(root)"))
        for p in model.parameters():
            if p.device.type != "cpu":
                raise ZoffloadError("zoffload.torch.wrap: parameter on %s; the torch backend is CPU only"
                                    % p.device)
        world_size = _int_arg("world_size", world_size, 1, _MAX_WORLD_SIZE)
        rank = _int_arg("rank", rank, 0, world_size - 1)
        param_persistence_threshold = _int_arg("param_persistence_threshold", param_persistence_threshold, 0,
                                               _U64_MAX)
        prefetch_bucket_size = _int_arg("prefetch_bucket_size", prefetch_bucket_size, 0, _U64_MAX)
        max_live_parameters = _int_arg("max_live_parameters", max_live_parameters, 0, _U64_MAX)
        max_reuse_distance = _int_arg("max_reuse_distance", max_reuse_distance, 0, _U64_MAX)
        if not isinstance(policy, str):
            raise ZoffloadError("zoffload.torch.wrap: policy is a name (per-call, reset-on-forward, lazy-init, "
                                "init-at-register), not %r" % (policy,))
        if on_violation not in ("raise", "record"):
            raise ZoffloadError("zoffload.torch.wrap: on_violation is 'raise' or 'record', not %r" % (on_violation,))
        if not isinstance(check, bool):
            raise ZoffloadError("zoffload.torch.wrap: check is True or False, not %r" % (check,))
        if grad_hooks not in ("tensor", "function"):
            raise ZoffloadError("zoffload.torch.wrap: grad_hooks is 'tensor' or 'function', not %r" % (grad_hooks,))
        self.grad_hooks = grad_hooks
        self.model = model
        self.policy = policy
        self.world_size, self.rank = world_size, rank
        if backend not in ("torch", "mpi"):
            raise ZoffloadError("zoffload.torch.wrap: backend is 'torch' or 'mpi', not %r" % (backend,))
        self.backend = TorchBackend(world_size, rank, MpiComm.get() if backend == "mpi" else None)
        world_size, rank = self.backend.W, self.backend.rank
        self.backend.on_full_free = self._on_full_free
        cfg = _lib.config_init()
        cfg.world_size, cfg.rank = world_size, rank
        cfg.grads_policy = _lib.policy_from_name(policy)
        cfg.ds_profile = _lib.ds_profile_from_name(ds_profile)
        cfg.param_persistence_threshold = param_persistence_threshold
        cfg.prefetch_bucket_size = prefetch_bucket_size
        cfg.max_live_parameters = max_live_parameters
        cfg.max_reuse_distance = max_reuse_distance
        cfg.backend = self.backend.address
        self._event_cb = _lib.EVENT_FN(self._on_event)
        cfg.on_event = _lib.ctypes.cast(self._event_cb, _lib.c_vp)
        self.checker = LiveChecker(self, policy, max_live_parameters) if check else None
        self.on_violation = on_violation
        self._cb_error = None  # an exception in the event handler, raised by _after_call
        self.step_index = 0  # optimizer steps (end_step calls) so far: the step of the checker's messages
        self._probing = False  # a refused registration asked of the runtime: its error event is expected
        self.events = None  # a list to record (kind, module, param, before, after) into, if set
        self.rt = _lib.Runtime(cfg, keep=[self._event_cb, self.backend])
        self.rt.after_call = self._after_call
        self.rt.after_error = self._after_error
        # state
        self.stack = []          # open module calls (_Call)
        self.pass_graph = None   # graph of the pass being built
        self.bwd = []            # running backwards: graphs
        self.bwd_seen = set()    # graphs whose outputs the running backward has reached
        self.last_graph = None
        self.pending_abort = False
        self._handles = []
        self._mid, self.paths, self.modules, self._path_mid = {}, [], [], {}
        self._shapes = []
        self._pid, self.params, self.pnames, self._status = {}, [], [], []
        self._grad_shard = {}
        self._mod_params = []    # mid -> [pid] of its own and used parameters
        self._tied = []
        try:
            self._register()
        except BaseException:
            self.rt.destroy()
            raise
        self._install()
        for m in self.modules:
            object.__setattr__(m, "_zoffload_live", self)
        _live_models.add(self)
        _patch(True)
        self._patched = True

    # -- registration ------------------------------------------------------

    def _register(self):
        rt = self.rt
        for path, m in self.model.named_modules():
            parent = _lib.NO_MODULE
            name = path.rsplit(".", 1)[-1] if path else type(m).__name__
            if path:
                ppath = path.rsplit(".", 1)[0] if "." in path else ""
                parent = self._path_mid[ppath]
            mid = rt.module_register(parent, name)
            self._mid[id(m)] = mid
            self.paths.append(path)
            self.modules.append(m)
            self._mod_params.append([])
            self._path_mid[path] = mid
        for mid, m in enumerate(self.modules):
            for name, p in m._parameters.items():
                if p is None:
                    continue
                if id(p) in self._pid:
                    pid = self._pid[id(p)]
                    if pid in self._mod_params[mid]:
                        continue  # one parameter under two names of one module: already its own
                    rt.module_use_param(mid, pid)
                    self._mod_params[mid].append(pid)
                    continue
                if p.numel() == 0:
                    raise ZoffloadError("zoffload.torch.wrap: parameter %s.%s has no elements (the runtime "
                                        "registers numel >= 1)" % (self.paths[mid] or "(root)", name))
                pid = rt.param_register(mid, name, p.numel(), p.element_size(),
                                        0 if p.requires_grad else _lib.PARAM_FROZEN)
                assert pid == len(self.params)
                self._pid[id(p)] = pid
                self.params.append(p)
                self.pnames.append((self.paths[mid] + "." if self.paths[mid] else "") + name)
                self._status.append(_lib.NOT_AVAILABLE)
                self._shapes.append(p.shape)
                self._mod_params[mid].append(pid)
                self.backend.set_initial(pid, p.detach().reshape(-1))
        # partitioned: only the shards hold the values now (ZeRO-3)
        for p in self.params:
            p.data = _torch.empty(0, dtype=p.dtype)
        for mid, m in enumerate(self.modules):
            d = _ParamDict(m._parameters)
            d.live, d.mid = self, mid
            m._parameters = d

    def _install(self):
        h = self._handles
        for mid, m in enumerate(self.modules):
            h.append(m.register_forward_pre_hook(self._make(self._hook_a, mid)))
            h.append(m.register_forward_pre_hook(self._make(self._hook_d, mid)))
            h.append(m.register_forward_hook(self._make(self._hook_b, mid)))
            h.append(m.register_forward_hook(self._make(self._hook_c, mid)))
            h.append(m.register_forward_hook(self._make(self._hook_x, mid), always_call=True))
        for pid, p in enumerate(self.params):
            if p.requires_grad:
                h.append(p.register_post_accumulate_grad_hook(self._make_pgrad(pid)))

    @staticmethod
    def _make(fn, mid):
        return lambda module, *a: fn(mid, *a)

    def _make_pgrad(self, pid):
        return lambda p: self._param_grad(pid, p)

    @property
    def alive(self):
        return self.rt.alive

    # -- events and the checker -------------------------------------------

    def _on_event(self, user, evp):
        try:
            ev = evp.contents
            if ev.kind == _lib.EV["PARAM_STATE"]:
                p = ev.param
                if p < len(self._status):
                    self._status[p] = ev.to
                    if ev.to == _lib.AVAILABLE:
                        self._bind(p)
                    elif ev.to == _lib.NOT_AVAILABLE:
                        self._unbind(p)
            if self.events is not None:
                self.events.append((_lib.EVENT_KINDS_LIVE[ev.kind], ev.module, ev.param, ev.counter_before,
                                    ev.counter_after))
            if self.checker is not None and not self._probing:
                self.checker.event(ev)
        except Exception as e:  # never unwind through C; raised after the call returns
            if self._cb_error is None:
                self._cb_error = e

    def _bind(self, pid):
        p = self.params[pid]
        buf = self.backend.full_of.get(pid)
        if buf is None:
            return
        p.data = buf.view(p.dtype)[:self._numel(pid)].view(self._shape[pid])

    def _unbind(self, pid):
        p = self.params[pid]
        p.data = _torch.empty(0, dtype=p.dtype)

    def _on_full_free(self, pid):
        if pid < len(self.params) and self._status[pid] == _lib.NOT_AVAILABLE:
            self._unbind(pid)

    def _numel(self, pid):
        return self.backend.meta[pid][0]

    @property
    def _shape(self):
        return self._shapes

    def _after_call(self, name):
        if self._cb_error is not None:
            e, self._cb_error = self._cb_error, None
            raise ZoffloadError("zoffload.torch: the event handler failed in %s: %s: %s"
                                % (name, type(e).__name__, e)) from e
        c = self.checker
        if c is None:
            return
        if c.violation is not None and not c.reported:
            c.reported = True
            if self.on_violation == "raise":
                raise c.violation

    def _after_error(self, name, status):
        """A runtime call refused (it raises ZoffloadError now): the ERROR
        event it emitted is that refusal, which the caller gets as the
        exception; the checker does not also report it at the next call."""
        c = self.checker
        if (c is not None and c.violation is not None and not c.reported and c.violation.inv == "ERR"
                and c.violation_status == status):
            c.violation = None

    # -- hooks ---------------------------------------------------------------

    def _flush_abort(self):
        if self.pending_abort:
            self.pending_abort = False
            catcher = self.stack[-1].mid if self.stack else _lib.NO_MODULE
            self.rt.forward_abort(catcher)

    def _hook_a(self, mid, args):
        self._flush_abort()
        rt = self.rt
        root_graph = None
        if not self.stack and not self.bwd:
            flags = _lib.FWD_ROOT if mid == 0 else 0
            if not self.modules[mid].training:
                flags |= _lib.FWD_EVAL
            root_graph = rt.forward_begin(flags)
            self.pass_graph = root_graph
        rt.pre_forward(mid, _lib.CALL_GRAD if _torch.is_grad_enabled() else 0)
        self.stack.append(_Call(mid, root_graph))
        for pid in self._mod_params[mid]:
            self._access(mid, pid)
        return None

    def _access(self, mid, pid):
        self.rt.param_access(mid, pid)
        if self._status[pid] != _lib.AVAILABLE:
            raise ZoffloadError("zo_param_access returned ZO_OK but parameter %s is %s"
                                % (self.pnames[pid], _lib.param_status_name(self._status[pid])))
        if self.checker is not None:
            self.checker.access(mid, pid)

    def _graph_now(self):
        if self.bwd:
            return self.bwd[-1]
        return self.pass_graph

    def _hook_d(self, mid, args):
        tensors = _tensors(args, [])
        rg = [1 if t.requires_grad else 0 for t in tensors]
        handles = self.rt.track_inputs(mid, rg)
        if not any(handles):
            return None
        g = self._graph_now()
        tensor = self.grad_hooks == "tensor"
        if tensor:
            leaves = False
            for h, x in zip(handles, tensors):
                if h and x.requires_grad:
                    if x.grad_fn is None:
                        leaves = True  # through the Function below (module docstring)
                    else:
                        self._on_grad(x, self._input_grad, h, g)
            if not leaves:
                return None
        it = iter(handles)

        def wrap_t(x):
            h = next(it)
            if h and x.requires_grad and not (tensor and x.grad_fn is not None):
                return _PostBackward.apply(self, h, g, x)
            return x

        return _apply_tensors(wrap_t, args)

    def _hook_b(self, mid, args, out):
        self._flush_abort()
        self.rt.post_forward(mid)
        if self.stack and self.stack[-1].mid == mid:
            self.stack[-1].done = True
        return None

    def _hook_c(self, mid, args, out):
        tensors = _tensors(out, [])
        rg = [1 if t.requires_grad else 0 for t in tensors]
        handles = self.rt.track_outputs(mid, rg)
        g = self._graph_now()
        result = None
        if any(handles) and self.grad_hooks == "tensor":
            for h, y in zip(handles, tensors):
                if h and y.requires_grad:
                    self._on_grad(y, self._output_grad, h, g)
        elif any(handles):
            it = iter(handles)

            def wrap_t(y):
                h = next(it)
                if h and y.requires_grad:
                    return _PreBackward.apply(self, h, g, y)
                return y

            result = _apply_tensors(wrap_t, out)
        return result

    def _hook_x(self, mid, args, out):
        if not self.stack or self.stack[-1].mid != mid:
            return None
        call = self.stack.pop()
        if not call.done:
            # an exception unwinds this call
            if not self.stack:
                self.pending_abort = False
                self.rt.forward_abort(_lib.NO_MODULE)
                if call.root_graph is not None:
                    self.pass_graph = None
            else:
                self.pending_abort = True
            return None
        if call.root_graph is not None:
            self.pass_graph = None
            self.rt.forward_end(call.root_graph)
            self.last_graph = call.root_graph
            if self.checker is not None and not _torch.is_grad_enabled():
                self.checker.released("eval forward end")
        return None

    # -- backward --------------------------------------------------------

    def _on_grad(self, t, fn, h, g):
        """grad_hooks="tensor": fn(h, g) when t's gradient is complete.  One
        tensor hook per tensor runs every callback registered on it, the
        last registered first: the order DeepSpeed's Functions, each
        wrapping the tensor the previous one returned, fire in."""
        cbs = t.__dict__.get("_zo_grad_cbs")
        if cbs is None:
            cbs = t.__dict__["_zo_grad_cbs"] = []
            t.register_hook(self._make_grad_hook(cbs))
        cbs.append((fn, h, g))

    def _make_grad_hook(self, cbs):
        def hook(grad):
            for fn, h, g in reversed(list(cbs)):
                live = fn.__self__
                if (fn.__func__ is LiveModel._input_grad and live.rt.alive and live.bwd
                        and g not in live.bwd_seen):
                    # an input shared with a pass this backward does not go
                    # through (a leaf used by two forwards, one of them not
                    # backpropagated): that pass's module never sees its
                    # gradient, as no identity Function of it would run.
                    # Passes summed into one loss are all reached: their
                    # outputs' hooks run before any input's.
                    continue
                fn(h, g)
            return None
        return hook

    def _ensure_backward(self, g):
        if self.bwd:
            return
        if g is None:
            g = self.last_graph
        if g is None:
            raise ZoffloadError("zoffload.torch: a backward reached the model's hooks without a forward pass")
        self.rt.backward_begin(g, _retain_hint())
        self.bwd.append(g)
        self.bwd_seen = {g}
        _torch.autograd.Variable._execution_engine.queue_callback(self._end_backward)

    def _end_backward(self):
        if not self.bwd:
            return
        g = self.bwd[-1]
        if self.stack:
            # recompute calls left open (should have been unwound)
            self.stack.clear()
            self.pending_abort = False
            self.rt.forward_abort(_lib.NO_MODULE)
        self.bwd.pop()
        if not self.bwd:
            self.bwd_seen = set()
        self.rt.backward_end(g)
        if self.checker is not None and not self.bwd:
            self.checker.released("end of backward")

    def _output_grad(self, h, g):
        self.rt._rt("zo_output_grad")
        self._ensure_backward(g)
        self.bwd_seen.add(g)
        self.rt.output_grad(h)

    def _input_grad(self, h, g):
        self.rt._rt("zo_input_grad")
        self._ensure_backward(g)
        self.rt.input_grad(h)

    def _param_grad(self, pid, p):
        self.rt._rt("zo_param_grad_ready")
        self._ensure_backward(None)
        grad = p.grad
        if grad is not None:
            shard = self.backend.reduce_scatter(pid, grad.detach().reshape(-1))
            prev = self._grad_shard.get(pid)
            self._grad_shard[pid] = shard if prev is None else prev.add_(shard)
            p.grad = None
        self.rt.param_grad_ready(pid)

    # -- step, state, lifetime -----------------------------------------------

    def optimizer(self, cls, **kw):
        """A LiveOptimizer: cls (torch.optim.SGD, Adam, ...) over this rank's
        shards of the trainable parameters, kw its arguments."""
        self.rt._rt("zoffload.torch: optimizer")  # ZoffloadError once the runtime is destroyed
        return LiveOptimizer(self, cls, **kw)

    def end_step(self):
        """The optimizer-step boundary without an optimizer: zo_release_all
        (gradient shards are kept)."""
        self.rt.release_all()
        self.step_index += 1
        self._refresh_gathered()
        if self.checker is not None:
            self.checker.released("optimizer step")

    def _refresh_gathered(self):
        for pid in sorted(self.backend.full_of):  # MPI: every rank the same collectives, same order
            p = self.params[pid]
            self.backend.full_value(pid, p.dtype, out=self.backend.full_of[pid])

    def full_state(self):
        """{parameter name: full tensor} from the shards (copies; tied
        parameters under their first name)."""
        self.rt._rt("zoffload.torch: full_state")
        out = {}
        for pid, p in enumerate(self.params):
            img = self.backend.full_value(pid, p.dtype)
            out[self.pnames[pid]] = img[:self._numel(pid)].clone().view(self._shape[pid])
        return out

    def stats(self):
        return self.rt.stats().as_dict()

    def close(self, restore=False):
        """Removes every hook and destroys the runtime.  restore=True puts
        each parameter's full value (from the shards) back into its .data.
        Idempotent.  A backward through a graph built while wrapped raises
        ZoffloadError afterwards."""
        if not self.rt.alive:
            return
        state = self.full_state() if restore else None
        for h in self._handles:
            h.remove()
        self._handles = []
        for m in self.modules:
            if isinstance(m._parameters, _ParamDict):
                m._parameters.live = None
                m._parameters = dict(m._parameters)
        for pid, p in enumerate(self.params):
            p.data = state[self.pnames[pid]] if restore else _torch.empty(0, dtype=p.dtype)
        try:
            self.rt.destroy()
        finally:
            _live_models.discard(self)
            if self._patched:
                self._patched = False
                _patch(False)
            for m in self.modules:
                try:
                    object.__delattr__(m, "_zoffload_live")
                except AttributeError:
                    pass

    def unwrap(self):
        """close(restore=True): the model is a plain model again, with the trained values."""
        self.close(restore=True)

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class LiveOptimizer:
    """torch.optim over this rank's shards: step() gives each shard its
    reduce-scattered gradient, runs the torch optimizer on the shards (in
    place in the backend's storage), then zo_release_all (DeepSpeed's
    release_and_reset_all at the optimizer step).  The update is
    elementwise on the same values as on the full tensors, so at W = 1 it
    is bit for bit torch.optim's."""

    def __init__(self, live, cls, **kw):
        self.live = live
        self.shards = {}
        for pid, p in enumerate(live.params):
            if p.requires_grad:
                self.shards[pid] = live.backend.shard_view(pid, p.dtype)
        self.opt = cls(list(self.shards.values()), **kw)

    def step(self):
        live = self.live
        live.rt._rt("zo_release_all")
        for pid, s in self.shards.items():
            g = live._grad_shard.get(pid)
            s.grad = g
        self.opt.step()
        live.end_step()

    def zero_grad(self):
        self.live._grad_shard.clear()
        for s in self.shards.values():
            s.grad = None


class LiveChecker:
    """fuzz/check.c's invariants on the live event stream (reimplemented:
    the runtime never includes fuzz/): I1 (a counter or window count went
    negative), I2 (counter used before initialisation), I3 (not released
    after an eval forward, the end of a top-level backward, the optimizer
    step), I4 (a parameter access did not leave the parameter AVAILABLE with
    the shards' bytes), I5 (prefetch past max_live_parameters + its numel),
    I6 (zo_check_consistency at the I3 points), I7 (illegal or unexpected
    ds_status transition), ERR (the runtime reported an error event).
    The first violation is kept as .violation (a LiveViolation)."""

    def __init__(self, live, policy, max_live):
        self.live, self.policy, self.max_live = live, policy, max_live
        self.violation = None
        self.violation_status = None  # the zo_status of an ERR violation's event
        self.reported = False
        self.n_events = 0
        self.step = 0
        self.live_numel = 0

    def _path(self, mid):
        if mid is None or mid == _lib.NO_MODULE or mid >= len(self.live.paths):
            return None
        return self.live.paths[mid] or "(root)"

    def fail(self, inv, what, mid, pid, msg):
        if self.violation is not None:
            return
        path = self._path(mid)
        pname = self.live.pnames[pid] if pid is not None and pid < len(self.live.pnames) else None
        text = ("invariant %s violated: step %d, event %d, at %s, module %s, param %s, policy %s: %s"
                % (inv, self.step, self.n_events, what, path or "-", pname or "-", self.policy, msg))
        self.violation = LiveViolation(text, inv, path, pname, what, mid, pid)

    def event(self, ev):
        self.n_events += 1
        k = _lib.EVENT_KINDS_LIVE[ev.kind]
        self.step = self.live.step_index
        mid = ev.module if ev.module != _lib.NO_MODULE else None
        what = "%s m=%s" % (k, mid if mid is not None else "-")
        if k in ("TRACK_INPUTS", "INPUT_GRAD") and ev.counter_valid and ev.counter_after < 0:
            self.fail("I1", what, mid, None, "ds_grads_remaining went %d -> %d"
                      % (ev.counter_before, ev.counter_after))
        elif k in ("WINDOW_OPEN", "WINDOW_CLOSE") and ev.counter_valid and ev.counter_after < 0:
            self.fail("I1", what, mid, None, "window count %d" % ev.counter_after)
        elif k == "COUNTER_UNINIT":
            self.fail("I2", what, mid, None, "counter used before initialisation: %s"
                      % (ev.detail or b"").decode())
        elif k == "PARAM_STATE":
            p = ev.param
            if not _lib.lib().zo_transition_legal(ev.from_, ev.to):
                self.fail("I7", what, None, p, "illegal ds_status transition %s -> %s"
                          % (_lib.param_status_name(ev.from_), _lib.param_status_name(ev.to)))
            numel = self.live._numel(p) if p in self.live.backend.meta else 0
            if ev.from_ == _lib.NOT_AVAILABLE and ev.to != _lib.NOT_AVAILABLE:
                self.live_numel += numel
            elif ev.to == _lib.NOT_AVAILABLE and ev.from_ != _lib.NOT_AVAILABLE:
                self.live_numel -= numel
        elif k == "PREFETCH":
            p = ev.param
            numel = self.live._numel(p) if p in self.live.backend.meta else 0
            if self.live_numel > self.max_live + numel:
                self.fail("I5", what, None, p, "prefetch issued with live numel %d > max_live_parameters "
                          "%d + its numel %d" % (self.live_numel, self.max_live, numel))
        elif k == "ERROR":
            first = self.violation is None
            self.fail("ERR", what, mid, ev.param if ev.param != _lib.NO_PARAM else None,
                      "runtime reported an error event: %s (%s)"
                      % (_lib.strerror(ev.status), (ev.detail or b"").decode()))
            if first:
                self.violation_status = ev.status

    def access(self, mid, pid):
        live = self.live
        p = live.params[pid]
        buf = live.backend.full_of.get(pid)
        img = live.backend.shards[pid]
        lo = live.backend.rank * img.numel() if live.backend.comm is not None else 0
        if buf is None or not _torch.equal(buf[lo:lo + img.numel()], img):
            self.fail("I4", "PARAM_ACCESS m=%d" % mid, mid, pid,
                      "the gathered bytes differ from the shards" if buf is not None else
                      "no full buffer after a successful access")
        elif p.data.data_ptr() != buf.data_ptr():
            self.fail("I4", "PARAM_ACCESS m=%d" % mid, mid, pid, "the parameter's .data is not the gathered buffer")
        live._after_call("zo_param_access")

    def released(self, where):
        live = self.live
        if self.violation is None:
            try:
                live.rt.check_consistency()
            except ZoffloadError as e:
                self.fail("I6", where, None, None, str(e))
        if self.violation is None:
            for pid in range(len(live.params)):
                info = live.rt.param_info(pid)
                if info.inflight:
                    self.fail("I3", where, None, pid, "not released: parameter still in flight")
                    break
                if not info.persistent and info.status != _lib.NOT_AVAILABLE:
                    self.fail("I3", where, None, pid, "not released: non-persistent parameter still %s "
                              "(%d active modules)" % (_lib.param_status_name(info.status), info.n_active))
                    break
        live._after_call(where)


def wrap(model, **kw):
    """Partitions model with libzoffload (LiveModel's keyword arguments:
    policy ("per-call", "reset-on-forward", "lazy-init", "init-at-register"),
    ds_profile ("0.19", "0.19-hooks", "0.15"), world_size, rank,
    param_persistence_threshold (elements, default 0: every parameter is
    released; DeepSpeed's default is 1e5), prefetch_bucket_size (elements),
    max_live_parameters (elements), max_reuse_distance (elements), check
    (True/False: the live invariant checker, default on), on_violation
    ("raise" or "record"), grad_hooks ("tensor" or "function"), backend
    ("torch" or "mpi")).  The model's parameters are owned by the
    LiveModel until close()/unwrap().
    Raises ZoffloadError for a second wrap, a non-CPU parameter, an empty
    parameter, a number that is not an integer in its range (world_size
    1..65536, rank 0..world_size-1, the four thresholds 0..2^64-1), a
    setting of the wrong kind, or the runtime's refusal (its message)."""
    return LiveModel(model, **kw)
