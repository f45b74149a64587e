"""Memory formats (contiguous_format, channels_last, channels_last_3d, preserve_format) against
torch: strides, is_contiguous, which calls copy and which return the tensor itself, the node,
errors; *_like, empty, to, clone, Module.to; random draws in channels_last memory order."""
import numpy as np
import pytest

torch = pytest.importorskip('torch')
import leafgrad as lg  # noqa: E402


def run(lib, f):
    """What f gives: a tensor's layout facts, a module's parameter strides, or the error."""
    try:
        r = f(lib)
        if isinstance(r, lib.Tensor):
            return ('T', r.stride(), tuple(r.shape), r.is_contiguous(), type(r.grad_fn).__name__ if r.grad_fn else None,
                    r.requires_grad)
        if isinstance(r, lib.nn.Module):
            return [p.stride() for p in r.parameters()]
        return repr(r).replace('leafgrad', 'torch')  # (names print as leafgrad's: README)
    except Exception as e:
        return (type(e).__name__, str(e).replace('leafgrad', 'torch')[:120])


def x4(lib):
    return lib.tensor(np.arange(120.).reshape(2, 3, 4, 5), requires_grad=True)


CASES = {  # noqa: E731  (each: what both libraries are asked)
 'repr': lambda l: (l.channels_last, l.preserve_format, l.contiguous_format, l.channels_last_3d),
 'cl': lambda l: x4(l).contiguous(memory_format=l.channels_last),
 'cl_is': lambda l: x4(l).contiguous(memory_format=l.channels_last).is_contiguous(memory_format=l.channels_last),
 'cl_same': lambda l: (lambda y: y.contiguous(memory_format=l.channels_last) is y)(
     x4(l).contiguous(memory_format=l.channels_last)),
 'cl_back': lambda l: x4(l).contiguous(memory_format=l.channels_last).contiguous(),
 'rank': lambda l: l.ones(2,3).contiguous(memory_format=l.channels_last),
 'rank3d': lambda l: x4(l).contiguous(memory_format=l.channels_last_3d),
 'is2d': lambda l: l.ones(2,3).is_contiguous(memory_format=l.channels_last),
 'isNone': lambda l: l.ones(2,3).is_contiguous(memory_format=None),
 'contNone': lambda l: l.ones(2,3).contiguous(memory_format=None),
 'preserve_cont': lambda l: l.ones(2,3).t().contiguous(memory_format=l.preserve_format),
 'preserve_cont_ok': lambda l: l.ones(2,3).contiguous(memory_format=l.preserve_format),
 'clone_t': lambda l: l.ones(3,4).t().clone(),
 'clone_t_c': lambda l: l.ones(3,4).t().clone(memory_format=l.contiguous_format),
 'clone_cl': lambda l: x4(l).clone(memory_format=l.channels_last),
 'clone_str': lambda l: x4(l).clone(memory_format='channels_last'),
 'to_cl': lambda l: x4(l).to(memory_format=l.channels_last),
 'to_cl_dtype': lambda l: x4(l).to(l.float32, memory_format=l.channels_last),
 'to_t_dtype': lambda l: l.ones(3,4).t().to(l.float64),
 'double_t': lambda l: l.ones(3,4).t().double(),
 'float_cl': lambda l: x4(l).float(memory_format=l.channels_last),
 'to_bad': lambda l: l.ones(2).to(foo=1),
 'zeros_like_cl': lambda l: l.zeros_like(x4(l).contiguous(memory_format=l.channels_last)),
 'zeros_like_cf': lambda l: l.zeros_like(x4(l).contiguous(memory_format=l.channels_last),
                                          memory_format=l.contiguous_format),
 'zeros_like_t': lambda l: l.zeros_like(l.ones(3,4).t()),
 'ones_like_mk': lambda l: l.ones_like(x4(l), memory_format=l.channels_last),
 'full_like_t': lambda l: l.full_like(l.ones(3,4).t(), 2.0),
 'empty_cl': lambda l: l.empty(2,3,4,5, memory_format=l.channels_last),
 'empty_pr': lambda l: l.empty(2,3,4,5, memory_format=l.preserve_format),
 'empty_like_bad': lambda l: l.empty_like(x4(l), memory_format=3),
 'module': lambda l: (l.manual_seed(0), l.nn.Conv2d(3, 4, 3).to(memory_format=l.channels_last))[1],
 'module3d': lambda l: (l.manual_seed(0), l.nn.Conv3d(3, 4, 3).to(memory_format=l.channels_last))[1],
 'add_keeps': lambda l: x4(l).contiguous(memory_format=l.channels_last) + 1,
 'relu_keeps': lambda l: l.relu(x4(l).contiguous(memory_format=l.channels_last)),
 'randn_like_cl': lambda l: (l.manual_seed(0), l.randn_like(x4(l), memory_format=l.channels_last))[1],
}


@pytest.mark.parametrize('name', list(CASES))
def test_memory_format_as_torch(name):
    assert run(lg, CASES[name]) == run(torch, CASES[name])


def test_channels_last_draws_fill_memory_order_as_torch():
    lg.manual_seed(0)
    torch.manual_seed(0)
    a = lg.randn_like(lg.zeros(1, 3, 2, 2), memory_format=lg.channels_last)
    b = torch.randn_like(torch.zeros(1, 3, 2, 2), memory_format=torch.channels_last)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_gradient_through_a_relayout():
    for lib in (lg, torch):
        x = lib.tensor(np.arange(24.).reshape(1, 2, 3, 4), requires_grad=True)
        (x.contiguous(memory_format=lib.channels_last) * 2).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), np.full((1, 2, 3, 4), 2.0))
