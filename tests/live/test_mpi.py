"""Live mode at world size W under MPI (mpirun -np 4 python test_mpi.py):
every rank wraps the same model with zoffload.torch(backend="mpi") - its
own libzoffload runtime, this rank's shard of every parameter, all-gathers
and the gradient reduce-scatter (AVG) as Open MPI collectives between the
processes - and trains on its quarter of each global batch.  Rank 0 also
trains the plain model on the whole global batch in one process; after N
steps (SGD and Adam) every loss (the mean of the ranks' losses) and every
parameter must agree within float tolerance (rtol 1e-5, atol 1e-6: the
gradient is summed in another order).  Exit 0 on every rank when they
agree, 1 otherwise; 77 (skip) without Open MPI's libmpi."""
import ctypes
import ctypes.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
import torch  # noqa: E402
import zoffload.torch as zt  # noqa: E402

sys.path.insert(0, HERE)
from test_live import TC  # noqa: E402

GLOBAL_BATCH, STEPS = 8, 3


def batch(i):
    g = torch.Generator().manual_seed(100 + i)
    return torch.randn(GLOBAL_BATCH, 4, generator=g)


def main():
    comm = zt.MpiComm.get()
    W, r = comm.size, comm.rank
    if GLOBAL_BATCH % W:
        print("test_mpi: world size %d does not divide the global batch %d" % (W, GLOBAL_BATCH))
        return 1
    fails = 0
    for optname, (cls, kw) in (("sgd", (torch.optim.SGD, dict(lr=0.05, momentum=0.9))),
                               ("adam", (torch.optim.Adam, dict(lr=1e-2)))):
        model = TC.build()
        live = zt.wrap(model, backend="mpi")
        opt = live.optimizer(cls, **kw)
        ref = TC.build() if r == 0 else None
        ref_opt = cls([p for p in ref.parameters() if p.requires_grad], **kw) if ref is not None else None
        per = GLOBAL_BATCH // W
        for i in range(STEPS):
            x = batch(i)
            loss = model(x[r * per:(r + 1) * per]).pow(2).mean()
            loss.backward()
            opt.step()
            opt.zero_grad()
            mine = torch.tensor([loss.item()] * W, dtype=torch.float32)
            got = torch.empty(W, dtype=torch.float32)
            comm.allgather(mine.data_ptr(), 4, got.data_ptr())  # every rank's loss
            if ref is not None:
                lr_ = ref(x).pow(2).mean()
                lr_.backward()
                ref_opt.step()
                ref_opt.zero_grad()
                if not torch.allclose(got.mean(), lr_.detach(), rtol=1e-5, atol=1e-6):
                    print("FAIL %s step %d: mean loss of the ranks %r, single process %r"
                          % (optname, i, got.mean().item(), lr_.item()))
                    fails += 1
        state = live.full_state()  # collective
        st = live.stats()
        live.close()
        if ref is not None:
            worst = 0.0
            for name, p in ref.named_parameters():
                q = state[name]
                if not torch.allclose(p.detach(), q, rtol=1e-5, atol=1e-6):
                    print("FAIL %s parameter %s: max |diff| %g" % (optname, name, (p.detach() - q).abs().max()))
                    fails += 1
                worst = max(worst, (p.detach() - q).abs().max().item())
            print("test_mpi: %s, %d ranks, %d steps: %d parameters within tolerance (max |diff| %.3g), "
                  "%d gathers on rank 0" % (optname, W, STEPS, len(state), worst, st["gathers"]))
    flag = torch.tensor([fails] * W, dtype=torch.int32)
    allf = torch.empty(W, dtype=torch.int32)
    comm.allgather(flag.data_ptr(), 4, allf.data_ptr())
    total = int(allf.sum())
    if r == 0:
        print("test_mpi: %s" % ("%d failure(s)" % total if total else "the ranks agree with the single process"))
    return 1 if total else 0


if __name__ == "__main__":
    if not ctypes.util.find_library("mpi"):
        print("test_mpi: no libmpi: skip")
        sys.exit(77)
    sys.exit(main())
