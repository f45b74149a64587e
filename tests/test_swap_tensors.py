"""torch.utils.swap_tensors against torch: two tensor objects exchange their contents (class,
data, attributes, autograd state), keeping their identities."""
import weakref

import pytest

from both import lg, outcome, torch


def same(program):
    def as_text(M):
        return str(program(M)).replace('leafgrad', 'torch')
    ours, theirs = outcome(as_text, lg), outcome(as_text, torch)
    assert ours == theirs, f'\nleafgrad: {ours}\ntorch:    {theirs}'


def test_tensors_of_different_sizes_swap():
    def program(M):
        t1, t2 = M.arange(2), M.arange(3)
        ids = id(t1), id(t2)
        M.utils.swap_tensors(t1, t2)
        return repr(t1), repr(t2), (id(t1), id(t2)) == ids
    same(program)


def test_a_view_swaps_its_viewness():
    """The plain tensor becomes the view of the base, and follows the base's in-place changes."""
    def program(M):
        a = M.arange(3.)
        v, b = a[1:], M.zeros(2)
        M.utils.swap_tensors(v, b)
        first = repr(v), repr(b), b._base is a
        a.mul_(10)
        return first, repr(v), repr(b), repr(a)
    same(program)


def test_attributes_and_classes_swap():
    def program(M):
        p, q = M.nn.Parameter(M.ones(2)), M.zeros(3)
        p.note = 'mine'
        M.utils.swap_tensors(p, q)
        return type(p).__name__, repr(p), type(q).__name__, repr(q), getattr(q, 'note', None), hasattr(p, 'note')
    same(program)


def test_history_swaps_and_backward_runs_through_it():
    def program(M):
        x = M.ones(2, requires_grad=True)
        h, k = x * 3, M.zeros(2)
        M.utils.swap_tensors(h, k)
        k.sum().backward()
        return repr(h), repr(k), repr(x.grad)
    same(program)


def test_a_swapped_leaf_poisons_its_accumulator():
    def program(M):
        w, z = M.ones(2, requires_grad=True), M.zeros(2, requires_grad=True)
        y = (w * 2).sum()
        M.utils.swap_tensors(w, z)
        before = repr(w), repr(z)
        y.backward()
        return before
    same(program)


@pytest.mark.parametrize('which', ['t1', 't2'])
def test_a_weakly_referenced_tensor_is_refused(which):
    def program(M):
        r = M.ones(1)
        ref = weakref.ref(r)  # noqa: F841 (alive during the call)
        M.utils.swap_tensors(*((r, M.ones(2)) if which == 't1' else (M.ones(2), r)))
    same(program)


def test_different_slots_are_refused():
    def program(M):
        class Slotted(M.nn.Parameter):
            __slots__ = ('x',)
        M.utils.swap_tensors(M.ones(2), Slotted(M.ones(2)))
    same(program)


def test_a_non_tensor_is_refused():
    same(lambda M: M.utils.swap_tensors(M.ones(2), 3))
