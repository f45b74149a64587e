"""Grad modes nested in each other: every manager inside every other, as context managers and as
decorators, with an exception leaving the inner one, from either starting mode. Each step's
state (is_grad_enabled, is_inference_mode_enabled, whether a product of a leaf records) is
compared with torch's, and, without torch, with the rule torch follows: a manager sets its mode
on entry and puts back, on exit, exactly the mode it found (inference_mode(False), as PyTorch's
InferenceMode(false), turns grad mode on)."""
import itertools

import pytest

import leafgrad as lg

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason='needs the torch oracle')

# name -> (how to make the manager from a library T, its mode on entry: (grad, inference) as a
# function of the mode it finds)
MANAGERS = {
    'no_grad': (lambda T: T.no_grad(), lambda g, i: (False, i)),
    'enable_grad': (lambda T: T.enable_grad(), lambda g, i: (True, i)),
    'set_grad_enabled(True)': (lambda T: T.set_grad_enabled(True), lambda g, i: (True, i)),
    'set_grad_enabled(False)': (lambda T: T.set_grad_enabled(False), lambda g, i: (False, i)),
    'inference_mode()': (lambda T: T.inference_mode(), lambda g, i: (False, True)),
    'inference_mode(False)': (lambda T: T.inference_mode(False), lambda g, i: (True, False)),
}
NAMES = list(MANAGERS)


def _state(T, x):
    return (T.is_grad_enabled(), T.is_inference_mode_enabled(), (x * 2).requires_grad)


def _trace_nested(T, outer, inner, start, how):
    """The states at each step of ``outer`` holding ``inner`` (``how``: 'with', 'decorator', or
    'raise': an exception leaves the inner manager and the outer one)."""
    x = T.ones(2, requires_grad=True)
    make_outer, make_inner = MANAGERS[outer][0], MANAGERS[inner][0]
    trace = []
    prev = T.is_grad_enabled()
    T.set_grad_enabled(start)
    try:
        trace.append(('start', _state(T, x)))
        if how == 'decorator':
            @make_outer(T)
            def outer_fn():
                trace.append(('outer', _state(T, x)))

                @make_inner(T)
                def inner_fn():
                    trace.append(('inner', _state(T, x)))
                    return 1
                inner_fn()
                trace.append(('after inner', _state(T, x)))
                inner_fn()  # a decorated function runs its manager afresh at every call
                trace.append(('after inner again', _state(T, x)))
            trace.append(('decorated', _state(T, x)))  # decorating changes nothing
            outer_fn()
        else:
            with make_outer(T):
                trace.append(('outer', _state(T, x)))
                try:
                    with make_inner(T):
                        trace.append(('inner', _state(T, x)))
                        if how == 'raise':
                            raise KeyError('inside')
                except KeyError:
                    trace.append(('caught', _state(T, x)))
                trace.append(('after inner', _state(T, x)))
                if how == 'raise':
                    try:
                        with make_inner(T):
                            raise ValueError('through both')
                    except ValueError:
                        pass
                    trace.append(('after second inner', _state(T, x)))
        trace.append(('after outer', _state(T, x)))
    finally:
        T.set_grad_enabled(prev)
    return trace


def _expected(outer, inner, start, how):
    """The same trace from the rule: each manager saves the mode it finds and puts it back."""
    def state(g, i):
        return (g, i, g and not i)  # (x * 2 of a leaf that requires grad records iff grad mode is on)
    g, i = start, False
    trace = [('start', state(g, i))]
    og, oi = MANAGERS[outer][1](g, i)
    ig, ii = MANAGERS[inner][1](og, oi)
    if how == 'decorator':
        trace.append(('decorated', state(g, i)))
        trace += [('outer', state(og, oi)), ('inner', state(ig, ii)), ('after inner', state(og, oi)),
                  ('inner', state(ig, ii)), ('after inner again', state(og, oi))]
    else:
        trace += [('outer', state(og, oi)), ('inner', state(ig, ii))]
        if how == 'raise':
            trace.append(('caught', state(og, oi)))
        trace.append(('after inner', state(og, oi)))
        if how == 'raise':
            trace.append(('after second inner', state(og, oi)))
    trace.append(('after outer', state(g, i)))
    return trace


CASES = [pytest.param(o, i, s, h, id=f'{h}-{o}-in-{i}-from-{"on" if s else "off"}')
         for o, i, s, h in itertools.product(NAMES, NAMES, (True, False), ('with', 'raise', 'decorator'))]


@pytest.mark.parametrize('outer,inner,start,how', CASES)
def test_nested_modes_follow_the_rule(outer, inner, start, how):
    assert _trace_nested(lg, outer, inner, start, how) == _expected(outer, inner, start, how)


@needs_torch
@pytest.mark.parametrize('outer,inner,start,how', CASES)
def test_nested_modes_like_torch(outer, inner, start, how):
    assert _trace_nested(lg, outer, inner, start, how) == _trace_nested(torch, outer, inner, start, how)


def _trace_three_deep(T, names, start):
    x = T.ones(1, requires_grad=True)
    prev = T.is_grad_enabled()
    T.set_grad_enabled(start)
    trace = []
    try:
        with MANAGERS[names[0]][0](T):
            trace.append(_state(T, x))
            with MANAGERS[names[1]][0](T):
                trace.append(_state(T, x))
                with MANAGERS[names[2]][0](T):
                    trace.append(_state(T, x))
                trace.append(_state(T, x))
            trace.append(_state(T, x))
        trace.append(_state(T, x))
    finally:
        T.set_grad_enabled(prev)
    return trace


@pytest.mark.parametrize('start', [True, False])
def test_three_deep_restores_each_level(start):
    for names in itertools.product(NAMES, repeat=3):
        g, i = start, False
        levels = [(g, i)]
        for name in names:
            g, i = MANAGERS[name][1](g, i)
            levels.append((g, i))
        expected = [(g, i, g and not i) for g, i in levels[1:] + levels[-2::-1]]
        assert _trace_three_deep(lg, names, start) == expected, names
        if torch is not None:
            assert _trace_three_deep(torch, names, start) == expected, names


@pytest.mark.parametrize('lib', ['leafgrad', pytest.param('torch', marks=needs_torch)])
def test_set_grad_enabled_as_a_call_and_inside_managers(lib):
    """set_grad_enabled(mode) as a plain call sets the mode at once; an enclosing manager still
    restores what it found on entry."""
    T = lg if lib == 'leafgrad' else torch
    assert T.is_grad_enabled()
    try:
        with T.no_grad():
            T.set_grad_enabled(True)
            assert T.is_grad_enabled()
        assert T.is_grad_enabled()
        with T.enable_grad():
            T.set_grad_enabled(False)
            assert not T.is_grad_enabled()
        assert T.is_grad_enabled()
        T.set_grad_enabled(False)
        with T.enable_grad():
            assert T.is_grad_enabled()
        assert not T.is_grad_enabled()
    finally:
        T.set_grad_enabled(True)


@pytest.mark.parametrize('lib', ['leafgrad', pytest.param('torch', marks=needs_torch)])
def test_stacked_decorators_and_an_exception(lib):
    """A decorated function raising leaves the mode as it found it; so does one decorated twice."""
    T = lg if lib == 'leafgrad' else torch

    @T.no_grad()
    @T.enable_grad()
    def twice():
        return T.is_grad_enabled()

    @T.no_grad()
    def failing():
        raise RuntimeError('x')

    assert twice() is True and T.is_grad_enabled()
    with T.no_grad():
        assert twice() is True and not T.is_grad_enabled()
    with pytest.raises(RuntimeError):
        failing()
    assert T.is_grad_enabled()


def _grad_inside_inference(T):
    """What PyTorch's InferenceMode does with grad mode turned back on inside it: grad mode
    reads True, ops record nothing and make inference tensors, a custom Function (which asks
    grad mode alone) records, a backward run there records nothing and makes inference .grads."""
    seen = []

    def look(name, t):
        seen.append((name, t.requires_grad, type(t.grad_fn).__name__, t.is_inference()))

    class Twice(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = T.ones(2, requires_grad=True)
    m = x * 3
    m.retain_grad()
    loss = (m * m).sum()
    with T.inference_mode():
        with T.enable_grad():
            seen.append(('modes', T.is_grad_enabled(), T.is_inference_mode_enabled()))
            look('x * 2', x * 2)
            z = T.ones(2, requires_grad=True)
            look('new leaf', z)
            look('leaf * 3', z * 3)
            y = x * 2
            y.requires_grad_()
            look('requires_grad_', y * x)
            look('Function', Twice.apply(x))
            with T.inference_mode(False):
                look('inference_mode(False)', x * 2)
                seen.append(('modes', T.is_grad_enabled(), T.is_inference_mode_enabled()))
            with T.no_grad():
                seen.append(('modes', T.is_grad_enabled(), T.is_inference_mode_enabled()))
            seen.append(('modes', T.is_grad_enabled(), T.is_inference_mode_enabled()))
            loss.backward(retain_graph=True)
            look('leaf .grad', x.grad)
            look('retained .grad', m.grad)
            g, = T.autograd.grad(loss, x, create_graph=True, retain_graph=True)
            look('autograd.grad', g)
            try:
                (x * 2).sum().backward()
            except RuntimeError as e:
                seen.append(('backward of a result made there', str(e)))
        seen.append(('modes', T.is_grad_enabled(), T.is_inference_mode_enabled()))
    seen.append(('modes', T.is_grad_enabled(), T.is_inference_mode_enabled()))
    with T.inference_mode():
        x.grad.add_(1)  # an inference .grad is changed in place inside inference mode only
    try:
        x.grad.add_(1)
    except RuntimeError as e:
        seen.append(('in place outside', str(e)))
    return seen


def test_grad_inside_inference_mode_records_nothing():
    seen = dict((s[0], s[1:]) for s in _grad_inside_inference(lg))
    assert seen['x * 2'] == (False, 'NoneType', True)
    assert seen['leaf * 3'] == (False, 'NoneType', True)
    assert seen['Function'] == (True, 'TwiceBackward', True)
    assert seen['inference_mode(False)'] == (True, 'MulBackward0', False)
    assert seen['leaf .grad'] == (False, 'NoneType', True)
    assert seen['backward of a result made there'] == (
        'element 0 of tensors does not require grad and does not have a grad_fn',)


@needs_torch
def test_grad_inside_inference_mode_like_torch():
    assert _grad_inside_inference(lg) == _grad_inside_inference(torch)
