"""SparseAdam against PyTorch's: an nn.Embedding(sparse=True) trained beside a dense layer
(Adam), with repeated indices in a batch, maximize, its state dict and its refusals; and the
argument checks every optimizer shares with PyTorch's: a tensor learning rate of more than
one element, Adam's tensor lr with foreach, fused with foreach or differentiable (after the
parameters are checked), Conv's padding_mode message."""
import json
import subprocess
import sys
import os

import pytest

from torch_facts import ask_torch

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_PROGRAM = r"""
import json
seen = []
def catch(f):
    try:
        f()
        return 'ran'
    except Exception as e:
        return [type(e).__name__, str(e)]
torch.manual_seed(0)
emb = torch.nn.Embedding(10, 4, sparse=True)
lin = torch.nn.Linear(4, 1)
opt = torch.optim.SparseAdam(list(emb.parameters()), lr=0.05)
opt2 = torch.optim.Adam(lin.parameters(), lr=0.05)
for step in range(5):
    idx = torch.tensor([[1, 2, 2, 5], [5, 7, 1, 1]][step % 2])
    loss = (lin(emb(idx)) ** 2).sum()
    opt.zero_grad(); opt2.zero_grad(); loss.backward(); opt.step(); opt2.step()
    seen.append(round(loss.item(), 6))
seen.append([round(v, 6) for v in emb.weight.detach().flatten().tolist()])
state = opt.state_dict()['state'][0]
seen.append([sorted(state), state['step'], [round(v, 6) for v in state['exp_avg_sq'].flatten().tolist()]])
up = torch.optim.SparseAdam(list(emb.parameters()), lr=0.1, maximize=True)
emb.weight.grad = torch.sparse_coo_tensor(torch.tensor([[3, 3]]), torch.ones(2, 4), (10, 4))
up.step()
seen.append([round(v, 6) for v in emb.weight[3].tolist()])
P = lambda: [torch.nn.Parameter(torch.ones(2))]
seen += [catch(lambda: torch.optim.SparseAdam(P(), lr=0)), catch(lambda: torch.optim.SparseAdam(P(), eps=0)),
         catch(lambda: torch.optim.SparseAdam(P(), betas=(1.0, 0.5))),
         catch(lambda: torch.optim.SparseAdam([torch.nn.Parameter(torch.ones(2, dtype=torch.complex64))])),
         catch(lambda: torch.optim.SparseAdam(P(), lr=torch.tensor([0.1, 0.2])))]
p = torch.nn.Parameter(torch.ones(2))
dense = torch.optim.SparseAdam([p])
p.grad = torch.ones(2)
seen.append(catch(dense.step))
seen.append(repr(torch.optim.SparseAdam(P())).splitlines())
O = torch.optim
for make in (lambda: O.Adam(P(), lr=torch.tensor([0.1, 0.2])), lambda: O.SGD(P(), lr=torch.tensor([0.1, 0.2])),
             lambda: O.RMSprop(P(), lr=torch.tensor([0.1, 0.2])), lambda: O.Adam(P(), lr=torch.tensor(0.1), foreach=True),
             lambda: O.AdamW(P(), lr=torch.tensor(0.1), foreach=True), lambda: O.Adam(P(), lr=torch.tensor(0.1), foreach=True, capturable=True),
             lambda: O.Adam(P(), foreach=True, fused=True), lambda: O.SGD(P(), lr=0.1, foreach=True, fused=True),
             lambda: O.AdamW(P(), foreach=True, fused=True), lambda: O.Adagrad(P(), foreach=True, fused=True),
             lambda: O.Adam([], fused=True, foreach=True), lambda: O.Adam(P(), lr=-1, fused=True, foreach=True),
             lambda: torch.nn.Conv2d(3, 3, 3, padding_mode='bad')):
    seen.append(catch(make))
print(json.dumps(seen))
"""


def _ask_leafgrad(tmp_path):
    path = tmp_path / 'program.py'
    path.write_text('import torch\n' + _PROGRAM)
    environ = dict(os.environ, PYTHONPATH=_ROOT + os.pathsep + os.environ.get('PYTHONPATH', ''), PYTHONHASHSEED='0')
    out = subprocess.run([sys.executable, '-m', 'leafgrad', str(path)], capture_output=True, text=True, timeout=600,
                         env=environ)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_sparse_adam_and_the_optimizers_checks_as_pytorch(tmp_path):
    """(One process each, of the same hash seed: a set in a message prints in its process's hash
    order, the same for PyTorch's and leafgrad's sets of the same strings.)"""
    saved = os.environ.get('PYTHONHASHSEED')
    os.environ['PYTHONHASHSEED'] = '0'
    try:
        expected = ask_torch('import torch\n' + _PROGRAM)
    finally:
        if saved is None:
            del os.environ['PYTHONHASHSEED']
        else:
            os.environ['PYTHONHASHSEED'] = saved
    assert _ask_leafgrad(tmp_path) == expected
