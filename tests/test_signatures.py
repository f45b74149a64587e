"""Signatures as PyTorch's: every public function of torch.nn.functional, torch.nn.init, linalg,
special, fft and torch, the constructors and forwards of torch.nn's modules, the optimizers and
schedulers, and Tensor's methods, wherever both libraries' signatures can be read, take the same
parameters (names, kinds, defaults), so that every call PyTorch accepts is accepted, and no
other. The differences listed in DIFFERENT are deliberate, each with its reason."""
import inspect
import re

import pytest

from oracle import lg, torch

# name -> why leafgrad's signature differs
DIFFERENT = {
    'F.embedding': "leafgrad's private _backward switch (a keyword no program passes)",
    'torch.save': 'leafgrad.save also takes format= (PyTorch zip or safetensors; docs/differences)',
    'torch.norm': 'out= of norm is not implemented yet',
    'torch.eig': 'removed from PyTorch; both raise its removal message',
    'Tensor.norm': "the first parameter is named 'input' (Tensor.norm is torch.norm)",
    'Tensor.unflatten': "the first parameter is named 'input' (Tensor.unflatten is torch.unflatten)",
}
# where PyTorch's signature is only (*args, **kwargs) (a wrapper, a deprecation shim, a C++
# binding) or leafgrad's is, nothing is compared: the parameters are not readable on one side
UNREADABLE = inspect.Parameter.VAR_POSITIONAL


def _parameters(fn):
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params = [(p.name, p.kind, p.default) for p in sig.parameters.values()]
    if any(kind == UNREADABLE for _, kind, _ in params) and len(params) <= 3:
        return None
    return params


def _same_default(a, b):
    if a is inspect.Parameter.empty or b is inspect.Parameter.empty:
        return a is b
    if callable(a) and callable(b):
        return getattr(a, '__name__', None) == getattr(b, '__name__', None)
    return type(a) is type(b) and a == b or repr(a) == repr(b)


def _pairs():
    if torch is None:
        return []
    pairs = []
    spaces = [('F', torch.nn.functional, lg.nn.functional), ('init', torch.nn.init, lg.nn.init),
              ('linalg', torch.linalg, lg.linalg), ('special', torch.special, lg.special), ('fft', torch.fft, lg.fft),
              ('torch', torch, lg)]
    for label, theirs, ours in spaces:
        for name in dir(theirs):
            t = getattr(theirs, name, None)
            if name.startswith('_') or not callable(t) or isinstance(t, type) or inspect.ismodule(t):
                continue  # (asking leafgrad for a module name would import it: leafgrad.fx switches on overrides)
            o = getattr(ours, name, None)
            if o is not None:
                pairs.append((f'{label}.{name}', t, o))
    for label, theirs, ours in (('nn', torch.nn, lg.nn), ('optim', torch.optim, lg.optim),
                                ('lr_scheduler', torch.optim.lr_scheduler, lg.optim.lr_scheduler)):
        for name in dir(theirs):
            t, o = getattr(theirs, name, None), getattr(ours, name, None)
            if isinstance(t, type) and isinstance(o, type) and not name.startswith('_'):
                for method in ('__init__', 'forward'):
                    if hasattr(t, method) and hasattr(o, method):
                        pairs.append((f'{label}.{name}.{method}', getattr(t, method), getattr(o, method)))
    for name in dir(torch.Tensor):
        t, o = getattr(torch.Tensor, name, None), getattr(lg.Tensor, name, None)
        if not name.startswith('_') and o is not None and callable(t):
            pairs.append((f'Tensor.{name}', t, o))
    return [(name, t, o) for name, t, o in pairs if _parameters(t) is not None and _parameters(o) is not None]


PAIRS = _pairs()


@pytest.mark.parametrize('name,theirs,ours', PAIRS, ids=[name for name, _, _ in PAIRS])
def test_signature_as_pytorch(name, theirs, ours):
    t, o = _parameters(theirs), _parameters(ours)
    same = len(t) == len(o) and all(tn == on and tk == ok and _same_default(td, od)
                                    for (tn, tk, td), (on, ok, od) in zip(t, o))
    if name in DIFFERENT:
        assert not same, f'{name} now takes what PyTorch takes: remove it from DIFFERENT'
        return
    assert same, f'{name}\n  torch:    {inspect.signature(theirs)}\n  leafgrad: {inspect.signature(ours)}'


def test_many_signatures_are_compared():
    if torch is None:
        pytest.skip('needs PyTorch, the oracle')
    assert len(PAIRS) > 400


def test_keywords_taken_do_what_pytorch_does():
    if torch is None:
        pytest.skip('needs PyTorch, the oracle')
    import numpy as np
    x = np.random.default_rng(0).standard_normal((2, 3, 5)).astype(np.float32)
    for lib in (lg, torch):  # InstanceNorm's bias=False: a weight and no bias
        m = lib.nn.InstanceNorm1d(3, affine=True, bias=False)
        assert [n for n, _ in m.named_parameters()] == ['weight'] and m.bias is None
    out = [lib.nn.InstanceNorm1d(3, affine=True, bias=False)(lib.tensor(x)).detach().numpy() for lib in (lg, torch)]
    np.testing.assert_allclose(out[0], out[1], rtol=1e-5, atol=1e-6)
    assert lg.nn.HingeEmbeddingLoss().margin == torch.nn.HingeEmbeddingLoss().margin == 1.0
    # positional options of a lazy convolution land where PyTorch's do
    ours, theirs = lg.nn.LazyConv1d(4, 3, 1, 0, 2, 1, False), torch.nn.LazyConv1d(4, 3, 1, 0, 2, 1, False)
    assert (ours.dilation, ours.groups, ours.bias) == (theirs.dilation, theirs.groups, None)
    ours, theirs = lg.nn.LazyConvTranspose1d(4, 3, 1, 0, 1, 1, True, 2), torch.nn.LazyConvTranspose1d(4, 3, 1, 0, 1, 1, True, 2)
    assert (ours.output_padding, ours.dilation) == (theirs.output_padding, theirs.dilation)


def test_method_docstrings_list_no_out():
    """A method takes no out= (PyTorch's signatures in its method docs have none): the method's
    docstring, made from its op's declaration, lists none either (it listed the function's)."""
    listing = re.compile(r'\bout=(None|\()')  # (not layout=None: to_sparse's)
    wrong = []
    for name in dir(torch.Tensor):
        theirs, ours = getattr(torch.Tensor, name, None), getattr(lg.Tensor, name, None)
        if not callable(theirs) or not callable(ours) or isinstance(ours, type):
            continue
        assert not listing.search(theirs.__doc__ or ''), name
        if listing.search(ours.__doc__ or ''):
            wrong.append(name)
    assert not wrong, wrong


@pytest.mark.parametrize('call', ['x.gather(0, i, out=x)', 'x.matmul(x, out=x)', 'x.inner(x, out=x)'])
def test_methods_whose_forward_writes_out_take_none(call):
    """gather, matmul and inner write out= in their forward, which was their method too."""
    messages = []
    for T in (lg, torch):
        x, i = T.ones(2, 2), T.zeros(2, 2, dtype=T.int64)
        with pytest.raises(TypeError) as info:
            eval(call, {'x': x, 'i': i})
        messages.append(str(info.value))
    assert messages[0] == messages[1]
