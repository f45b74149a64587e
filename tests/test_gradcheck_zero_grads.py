"""gradcheck's checks after the Jacobians, against torch's: a backward seeded with zeros gives zero
input gradients ('backward not multiplied by grad_output'; ``masked=True`` asks close to zero),
and ``check_undefined_grad``: a backward whose output gradients are undefined runs and gives zero
or None, a forward with a zero tangent gives what one without a tangent gives. Each Function
below fails exactly one of them; the verdict, the error's type and message, its cause and the
warnings are compared with torch's."""
import warnings

import pytest

from oracle import torch
import leafgrad as lg


def _function(T, kind):
    """x * 2 whose backward (or jvp) goes wrong in one way named by ``kind``."""
    class Double(T.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            if kind != 'right, materialized':
                ctx.set_materialize_grads(False)  # undefined gradients reach backward as None
            return x * 2 + y

        @staticmethod
        def backward(ctx, g):
            if kind == 'raises on None' and g is None:
                raise RuntimeError('no gradient')
            if kind == 'gives ones for None' and g is None:
                return T.ones(2, dtype=T.float64), None
            if kind == 'cannot take None':
                return g * 2, g
            if kind == 'ignores a zero gradient':
                return (T.full((2,), 2.0, dtype=T.float64) if g.abs().sum() == 0 else g * 2), g
            if kind == 'adds a tiny constant':
                return g * 2 + 1e-12, g
            return (g * 2, g) if g is not None else (None, None)

        @staticmethod
        def jvp(ctx, tx, ty):
            if kind == 'jvp of a missing tangent':
                return (tx * 2 if tx is not None else T.ones(2, dtype=T.float64)) + (ty if ty is not None else 0)
            return (tx * 2 if tx is not None else 0) + (ty if ty is not None else 0)
    return Double


KINDS = ['right', 'right, materialized', 'raises on None', 'gives ones for None', 'cannot take None',
         'ignores a zero gradient', 'adds a tiny constant', 'jvp of a missing tangent']
OPTIONS = [{}, {'check_undefined_grad': False}, {'masked': True}, {'masked': False}, {'fast_mode': True},
           {'raise_exception': False}, {'check_forward_ad': True}]


def _verdict(T, kind, options):
    x = T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=True)
    y = T.tensor([0.5, -1.0], dtype=T.float64, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        try:
            result = T.autograd.gradcheck(_function(T, kind).apply, (x, y), **options)
        except Exception as e:  # noqa: BLE001 (the type is compared)
            cause = e.__cause__
            result = (type(e).__name__, str(e).replace('leafgrad', 'torch') if len(e.args) < 2 else e.args[0],
                      None if cause is None else (type(cause).__name__, str(cause)))
    # (torch's forward AD warns its own DeprecationWarnings on first use)
    return result, [str(w.message) for w in caught if w.category is UserWarning]


@pytest.mark.parametrize('options', OPTIONS, ids=lambda o: ','.join(f'{k}={v}' for k, v in o.items()) or 'default')
@pytest.mark.parametrize('kind', KINDS)
def test_zero_and_undefined_gradient_checks_like_torch(kind, options):
    assert _verdict(lg, kind, options) == _verdict(torch, kind, options)


def test_each_check_fails_its_function():
    """Without the oracle: which check each Function fails."""
    def message(kind, **options):
        (result, warned) = _verdict(lg, kind, options)
        return result if result is True else result[1]
    assert message('right') is True and message('right, materialized') is True
    assert message('raises on None').startswith('Expected backward function to handle undefined output grads')
    assert message('raises on None', check_undefined_grad=False) is True
    assert message('gives ones for None').startswith('Expected all input grads to be undefined or zero')
    assert message('cannot take None') == "unsupported operand type(s) for *: 'NoneType' and 'int'"
    assert message('ignores a zero gradient') == 'backward not multiplied by grad_output'
    assert message('adds a tiny constant') == 'backward not multiplied by grad_output'
    # masked: close to zero is zero, so the tiny constant passes, then the None is not taken
    assert message('adds a tiny constant', masked=True) == "unsupported operand type(s) for *: 'NoneType' and 'int'"
    assert message('jvp of a missing tangent', check_forward_ad=True).startswith('Mismatch in tangent values')
    assert message('jvp of a missing tangent', check_forward_ad=True, check_undefined_grad=False) is True


def test_gradgradcheck_undefined_grad_needs_reverse_over_reverse():
    x = lg.tensor([1.0, 2.0], dtype=lg.float64, requires_grad=True)
    for T, t in ((lg, x), (torch, torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True))):
        with pytest.raises(AssertionError, match='Setting check_undefined_grad=True requires check_rev_over_rev'):
            T.autograd.gradgradcheck(lambda a: a * a, (t,), check_rev_over_rev=False, check_fwd_over_rev=True)
        with pytest.raises(AssertionError, match='Expected at least one of check_forward_ad or check_backward_ad'):
            T.autograd.gradcheck(lambda a: a * a, (t,), check_backward_ad=False)
        assert T.autograd.gradgradcheck(lambda a: a * a * a, (t,), check_rev_over_rev=False, check_fwd_over_rev=True,
                                        check_undefined_grad=False)


def _calls(T, materialize):
    """A custom Function's backward runs even when no gradient reaches it (after a Function
    whose backward gives None), with zeros or None: what it was called with, and x.grad."""
    calls = []

    class Scale(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            calls.append(None if g is None else g.tolist())
            return None if g is None else g * 2

    class Drop(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            calls.append('Drop')
            return None
    x = T.ones(2, requires_grad=True)
    (Drop.apply(Drop.apply(Scale.apply(x))) + x).sum().backward()
    return calls, x.grad.tolist()


@pytest.mark.parametrize('materialize', [True, False])
def test_function_backward_runs_without_gradients_like_torch(materialize):
    assert _calls(lg, materialize) == _calls(torch, materialize)
    assert _calls(lg, materialize)[0][-1] == ([0.0, 0.0] if materialize else None)
