"""The error for a saved tensor changed in place: PyTorch's message as its first line, then
the user's line that changed it ("It was modified in place at FILE:LINE (in FUNC)"), recorded
when the version was bumped, without anomaly mode."""
import os
import sys

import pytest

torch = pytest.importorskip('torch')

import leafgrad as lg  # noqa: E402
from oracle import torch_part  # noqa: E402

HERE = os.path.abspath(__file__)


def here():
    """The caller's line number."""
    return sys._getframe(1).f_lineno


def _error(fn):
    with pytest.raises(RuntimeError) as info:
        fn()
    return str(info.value)


def check(program, lines, func):
    """``program(m)`` raises the version error in both libraries: the same first line, and
    leafgrad's second names ``lines[0]`` (or ``lines``) of this file in ``func``."""
    lg_msg, torch_msg = _error(lambda: program(lg)), _error(lambda: program(torch))
    assert torch_part(lg_msg).replace('leafgrad', 'torch') == torch_msg
    expected_line = lines if isinstance(lines, int) else lines[0]
    assert lg_msg.split('\n')[1] == f'It was modified in place at {HERE}:{expected_line} (in {func})'


def test_output_changed_in_place():
    lines = []

    def program(m):
        x = m.ones(3, requires_grad=True)
        y = x.exp()
        y.add_(1); lines.append(here())  # noqa: E702
        y.sum().backward()

    check(program, lines, 'program')
    lg_msg = _error(lambda: program(lg))
    assert lg_msg.startswith('one of the variables needed for gradient computation has been modified by an '
                             'inplace operation: [leafgrad.FloatTensor [3]], which is output 0 of Exp, is at '
                             'version 1; expected version 0 instead. Hint: ')


class _Lazy:
    """lines[key], read when indexed (after the program ran)."""
    def __init__(self, lines, key):
        self.lines, self.key = lines, key

    def __getitem__(self, i):
        return self.lines[self.key]


def test_changed_through_a_view_an_operator_and_setitem():
    lines = {}

    def program(m, how):
        x = m.ones(2, 3, requires_grad=True)
        y = x * 1
        z = y * y
        if how == 'view':
            y[1].mul_(2); lines[how] = here()  # noqa: E702
        elif how == 'operator':
            y += 1; lines[how] = here()  # noqa: E702
        else:
            y[0, 1] = 5.; lines[how] = here()  # noqa: E702
        z.sum().backward()

    for how in ('view', 'operator', 'setitem'):
        check(lambda m: program(m, how), _Lazy(lines, how), 'program')


def test_optimizer_step_between_forward_and_backward():
    # The classic mistake (a GAN's discriminator stepped before the generator's backward):
    # the line named is the user's opt.step(), not the optimizer's own code.
    lines = []

    def program(m):
        w = m.nn.Parameter(m.ones(3))
        opt = m.optim.SGD([w], lr=0.1)
        loss = (w * w).sum()
        loss.backward(retain_graph=True)
        opt.step(); lines.append(here())  # noqa: E702
        loss.backward()

    check(program, lines, 'program')


def _helper_that_scales(t):
    t.mul_(3)
    return t


HELPER_LINE = _helper_that_scales.__code__.co_firstlineno + 1


def test_names_the_innermost_user_frame():
    def program(m):
        y = m.ones(3, requires_grad=True) * 1
        z = y.sin()
        _helper_that_scales(y)
        z.sum().backward()

    check(program, HELPER_LINE, '_helper_that_scales')


def test_names_the_first_change_after_the_save():
    lines = []

    def program(m):
        y = m.ones(3, requires_grad=True) * 1
        y.add_(1)                       # before the save: not the culprit
        z = y.sin()
        y.mul_(2); lines.append(here())  # noqa: E702
        y.sub_(1)
        z.sum().backward()

    check(program, lines, 'program')
    assert ', is at version 3; expected version 1 instead.' in _error(lambda: program(lg))


def test_a_later_change_only_when_the_first_was_not_kept():
    # The latest few changes are kept: after many, the message names the latest, saying so.
    lines = []

    def program(m):
        y = m.ones(3, requires_grad=True) * 1
        z = y.sin()
        for _ in range(10):
            y.add_(1); lines.append(here())  # noqa: E702
        z.sum().backward()

    msg = _error(lambda: program(lg))
    assert msg.split('\n')[1] == f'It was last modified in place at {HERE}:{lines[0]} (in program)'


def test_custom_function_changing_its_input():
    # Both the forward's x.mul_ and mark_dirty bump the version, in PyTorch too: the first
    # change after the save is the forward's own line.
    def program(m):
        class Double(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_dirty(x)
                return x.mul_(2)

            @staticmethod
            def backward(ctx, g):
                return g * 2

        y = m.ones(3, requires_grad=True) * 1
        z = y.sin()
        Double.apply(y)
        z.sum().backward()

    mul_line = program.__code__.co_firstlineno + 5
    check(program, mul_line, 'forward')


def test_plain_tensor_changed_under_no_grad_has_torchs_message_alone():
    # A tensor that needs no grad, changed under no_grad, is not followed (no frame walk for
    # the in-place ops of data preparation): the message is PyTorch's, word for word.
    def program(m):
        w = m.ones(3, requires_grad=True)
        x = m.ones(3)
        y = x * w                       # saves x
        with m.no_grad():
            x.add_(1)
        y.sum().backward()

    lg_msg, torch_msg = _error(lambda: program(lg)), _error(lambda: program(torch))
    assert lg_msg.replace('leafgrad', 'torch') == torch_msg


def test_named_line_is_never_leafgrads_own():
    import leafgrad
    package = os.path.dirname(os.path.abspath(leafgrad.__file__))

    def program(how):
        x = lg.ones(2, 2, requires_grad=True)
        y = x * 1
        z = y.sin()
        {'zero': lambda: y.zero_(), 'fill': lambda: y.fill_(2.), 'copy': lambda: y.copy_(x.detach()),
         'clamp': lambda: y.clamp_(0, 1), 'relu': lambda: lg.nn.functional.relu(y, inplace=True),
         'unsqueeze': lambda: y.unsqueeze_(0), 't': lambda: y.t_(),
         'index_put': lambda: y.index_put_((lg.tensor([0]),), lg.tensor(1.)),
         'masked_fill': lambda: y.masked_fill_(y > 0, 0.)}[how]()
        z.sum().backward()

    for how in ('zero', 'fill', 'copy', 'clamp', 'relu', 'unsqueeze', 't', 'index_put', 'masked_fill'):
        where = _error(lambda: program(how)).split('\n')[1]
        assert where.startswith(f'It was modified in place at {HERE}:'), (how, where)
        assert package not in where
