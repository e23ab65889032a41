"""A two-layer MLP with a shared layer (ALBERT-style reuse): the smallest
capture example.  python -m zoffload.capture tiny_mlp.py:step -o tiny.scn"""
import torch

STEPS = 2


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 8)
        self.fc2 = torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.fc2(self.fc1(self.fc1(x)))


def build():
    torch.manual_seed(0)
    m = Net()
    m.opt = None
    return m


_opt = {}


def step(model, i):
    opt = _opt.setdefault("o", torch.optim.SGD(model.parameters(), lr=0.1))
    x = torch.randn(2, 8)
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
