"""Inputs the capture must refuse with a clear message (and no file):
tests/capture/test_capture_errors.py runs each builder/step pair."""
import torch
import torch.utils.checkpoint as cp


class NoParams(torch.nn.Module):
    def forward(self, x):
        return x * 2


class Small(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)


class Wide(torch.nn.Module):
    """4,100 child calls in one forward (one layer applied again and again):
    over the scenario model's 4,096 (ZS_MAX_CHILD_CALLS)."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        for _ in range(4100):
            x = self.fc(x)
        return x


class Split(torch.nn.Module):
    """A module that reads its CHILD's weight itself before calling the
    child (its own weights read between child calls are param(...) terms;
    another module's are not): the gradient order differs and the capture
    says so."""

    def __init__(self):
        super().__init__()
        self.w_out = torch.nn.Parameter(torch.randn(4, 4))
        self.act = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.act(x @ self.act.weight) @ self.w_out


class Outer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.split = Split()

    def forward(self, x):
        return self.split(x)


class BodyCkptNested(torch.nn.Module):
    """checkpoint(layer, x) around a layer whose own forward body is
    checkpointed again, as transformers >= 5's gradient_checkpointing_enable()
    does: nested checkpoints, which the scenario model does not hold."""

    def __init__(self):
        super().__init__()
        self.layer = Small()

    def forward(self, x):
        return cp.checkpoint(self.layer, x, use_reentrant=False)


def build_noparams():
    return NoParams()


def build_small():
    torch.manual_seed(0)
    return Small()


def build_not_module():
    return object()


def build_wide():
    torch.manual_seed(0)
    return Wide()


def build_split():
    torch.manual_seed(0)
    return Outer()


def build_body_ckpt_nested():
    import functools
    torch.manual_seed(0)
    m = BodyCkptNested()
    inner = m.layer
    fwd = type(inner).forward
    inner.forward = lambda x: cp.checkpoint(functools.partial(fwd, inner), x, use_reentrant=False)
    return m


def build_raises():
    raise RuntimeError("builder failed")


def step(model, i):
    model(torch.randn(2, 4)).sum().backward()


step_not_callable = 3  # named as the step: not a function


def step_exits(model, i):
    raise SystemExit(0)


def step_nested_capture(model, i):
    from zoffload.capture import capture
    capture(build_small(), step)  # a capture inside a captured step
    step(model, i)


def step_raises(model, i):
    model(torch.randn(2, 3))  # wrong width: Linear raises


def step_no_backward(model, i):
    model(torch.randn(2, 4)).sum()
