"""A tensor learning rate (PyTorch's optimizers take ``lr=torch.tensor(0.1)``): the parameters
after three steps equal torch's and stay plain tensors (the update used to turn a parameter's
array into a tensor, silently, for Adam and the others)."""
import numpy as np
import pytest

from oracle import torch
import leafgrad as lg

W0 = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]
OPTIMIZERS = ['SGD', 'Adam', 'AdamW', 'RMSprop', 'Adagrad', 'Adamax', 'NAdam', 'RAdam', 'Rprop', 'ASGD', 'Adadelta']


def _run(m, name):
    p = m.tensor(W0, requires_grad=True)
    options = {'momentum': 0.9} if name == 'SGD' else {}
    opt = getattr(m.optim, name)([p], lr=m.tensor(0.1), **options)
    for i in range(3):
        opt.zero_grad()
        ((p ** 2).sum() + (p * (i + 1)).sum()).backward()
        opt.step()
    return p, opt


@pytest.mark.parametrize('name', OPTIMIZERS)
def test_tensor_lr_as_torch(name):
    p, opt = _run(lg, name)
    tp, topt = _run(torch, name)
    assert type(p._data) is np.ndarray and isinstance(opt.param_groups[0]['lr'], lg.Tensor)
    np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), rtol=1e-6, atol=1e-7)
    assert (p ** 2).sum().item() == pytest.approx((tp ** 2).sum().item(), rel=1e-6)
