"""Small torch models, one per construct the capture records: module
reuse, checkpoint (both kinds), eval / retain_graph / accumulation /
interleaved steps, an exception caught inside the forward, keyword inputs,
frozen and tied parameters, a module reading its own weights around a
child call (fused MoE experts).  tools/capture_models.py captures each and
checks the simulator against the real trace; tests/capture/ holds the bad
inputs."""
import torch
import torch.utils.checkpoint as cp

STEPS = 1


class Block(torch.nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)
        self.norm = torch.nn.LayerNorm(d)

    def forward(self, x, scale=None):
        h = self.fc(self.norm(x))
        if scale is not None:
            h = h * scale
        return x + h


class Net(torch.nn.Module):
    def __init__(self, ckpt=None, raise_at=None, tie=False, frozen=False):
        super().__init__()
        self.emb = torch.nn.Linear(4, 8)
        self.blocks = torch.nn.ModuleList([Block(), Block()])
        self.head = torch.nn.Linear(8, 4, bias=False)
        self.ckpt = ckpt
        self.raise_at = raise_at
        if tie:
            self.tail = torch.nn.Linear(4, 8, bias=False)
            self.tail.weight = self.emb.weight  # tied: same Parameter on two modules
        if frozen:
            self.emb.bias.requires_grad_(False)

    def forward(self, x):
        h = self.emb(x)
        for i, b in enumerate(self.blocks):
            if self.ckpt and self.training and torch.is_grad_enabled():
                h = cp.checkpoint(b, h, use_reentrant=(self.ckpt == "reentrant"))
            else:
                h = b(h, scale=h.sigmoid()) if i == 1 and not self.ckpt else b(h)
            if self.raise_at == i:
                try:
                    self.blocks[0](None)  # raises in norm's forward, unwinds blocks.0, caught here
                except TypeError:
                    pass
        out = self.head(h)
        if hasattr(self, "tail"):
            out = out + self.tail(out).sum()
        return out


class Experts(torch.nn.Module):
    """Reads its own weights around a child call, as transformers 5.24.0's
    fused MixtralExperts does (gate_up_proj before act_fn, down_proj after)."""

    def __init__(self, d=8):
        super().__init__()
        self.w_in = torch.nn.Parameter(torch.randn(d, d) / d)
        self.w_out = torch.nn.Parameter(torch.randn(d, d) / d)
        self.act = torch.nn.Linear(d, d)

    def forward(self, x):
        return self.act(x @ self.w_in) @ self.w_out


class SplitNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Linear(4, 8)
        self.experts = Experts()
        self.head = torch.nn.Linear(8, 4, bias=False)

    def forward(self, x):
        h = self.emb(x)
        h = h + self.experts(h)
        # a second use with an input that needs no grad: the weight-only term
        h = h + self.experts(x.new_ones(x.shape[0], 8))
        return self.head(h)


class Cached(torch.nn.Module):
    """Keeps its output on self (self.cached) besides returning it: the
    attribute is the tensor its op made, the return value is what hook C
    wrapped."""

    def __init__(self, d=8):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)
        self.scale = torch.nn.Parameter(torch.ones(d))

    def forward(self, x):
        y = torch.tanh(self.fc(x)) * self.scale
        self.cached = y
        return y


class CacheNet(torch.nn.Module):
    """Reads a block's cached output after the call: a loss path that never
    passes the block's output hook (the aux head reads only the cache)."""

    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Linear(4, 8)
        self.blk = Cached()
        self.aux = Cached()
        self.head = torch.nn.Linear(8, 4, bias=False)

    def forward(self, x):
        h = self.emb(x)
        y = self.head(self.blk(h))
        self.aux(h)
        return y + self.blk.cached.sum() + self.aux.cached.mean()


def _x(i):
    return torch.randn(2, 4, generator=torch.Generator().manual_seed(i))


def _opt(model):
    if not hasattr(model, "zo_opt"):
        model.zo_opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.01)
    return model.zo_opt


def build():
    torch.manual_seed(0)
    return Net()


def build_reuse():
    torch.manual_seed(0)
    m = Net()
    m.blocks[1] = m.blocks[0]  # ALBERT-style sharing: one block called twice
    return m


def build_ckpt():
    torch.manual_seed(0)
    return Net(ckpt="non-reentrant")


def build_ckpt_reentrant():
    torch.manual_seed(0)
    return Net(ckpt="reentrant")


def build_raise():
    torch.manual_seed(0)
    return Net(raise_at=0)


def build_tied():
    torch.manual_seed(0)
    return Net(tie=True, frozen=True)


def build_cache():
    torch.manual_seed(0)
    return CacheNet()


def build_split():
    torch.manual_seed(0)
    return SplitNet()


def step(model, i):
    """train step"""
    loss = model(_x(i)).pow(2).mean()
    loss.backward()
    _opt(model).step()
    _opt(model).zero_grad()


def step_mixed(model, i):
    """step 0 train, 1 eval, 2 retain_graph, 3 accumulation, 4 interleave"""
    opt = _opt(model)
    if i == 1:
        model.eval()
        with torch.no_grad():
            model(_x(i))
        model.train()
        return
    if i == 0:
        model(_x(i)).sum().backward()
    elif i == 2:
        loss = model(_x(i)).sum()
        loss.backward(retain_graph=True)
        loss.backward()
    elif i == 3:
        for k in range(2):
            model(_x(10 * i + k)).sum().backward()
    else:
        losses = [model(_x(10 * i + k)).sum() for k in range(2)]
        for l in losses:
            l.backward()
    opt.step()
    opt.zero_grad()


STEPS_MIXED = 5
