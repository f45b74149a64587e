"""``torch.utils.swap_tensors``: two tensor objects exchange everything but their identity."""
import copyreg
import weakref

_POISONED = ('Trying to execute AccumulateGrad node that was poisoned by swap_tensors this can happen when you try to '
             'run backward on a tensor that was swapped. For a module m with '
             '`torch.__future__.set_swap_module_params_on_conversion(True)` you should not change the device or dtype '
             'of the module (e.g. `m.cpu()` or `m.half()`) between running forward and backward. To resolve this, '
             'please only change the device/dtype before running forward (or after both forward and backward).')


def swap_tensors(t1, t2):
    """Swap the contents of the tensor objects ``t1`` and ``t2``: afterwards ``t1`` has ``t2``'s
    class, data, attributes and autograd state (a view stays a view of its base, now through the
    other object) and ``t2`` has ``t1``'s. As PyTorch: a tensor with a weak reference to it, or
    tensors of classes with different ``__slots__``, are refused; a leaf whose AccumulateGrad a
    recorded graph holds has that node poisoned, so that a backward through it raises.
    (PyTorch also refuses a tensor referenced from elsewhere inside it, such as one saved for
    backward; leafgrad has no such count to read.)"""
    _check_no_weakref(t1, 't1')
    _check_no_weakref(t2, 't2')
    t1_slots = set(copyreg._slotnames(t1.__class__))
    t2_slots = set(copyreg._slotnames(t2.__class__))
    if t1_slots != t2_slots:
        raise RuntimeError('Cannot swap t1 and t2 if they have different slots')
    for t in (t1, t2):
        _poison_accumulator(t)
    bases = [t._base for t in (t1, t2) if t._base is not None]
    t1.__class__, t2.__class__ = t2.__class__, t1.__class__
    t1.__dict__, t2.__dict__ = t2.__dict__, t1.__dict__
    for slot in t1_slots:
        has1, has2 = hasattr(t1, slot), hasattr(t2, slot)
        v1, v2 = getattr(t1, slot, None), getattr(t2, slot, None)
        for t, has, v in ((t1, has2, v2), (t2, has1, v1)):
            if has:
                setattr(t, slot, v)
            elif hasattr(t, slot):
                delattr(t, slot)
    for base in bases:  # its list of live views names the objects that are its views now
        refs = base._views.refs if base._views is not None else []
        for i, r in enumerate(refs):
            view = r()
            if view is t1 or view is t2:
                refs[i] = weakref.ref(t2 if view is t1 else t1)


def _own_view_refs(t):
    """The weak references leafgrad itself holds to a view (its base's list of live views)."""
    base = t._base
    if base is None or base._views is None:
        return 0
    return sum(1 for r in base._views.refs if r() is t)


def _check_no_weakref(t, name):
    if not hasattr(t, '_data'):
        raise AttributeError(f"'{type(t).__name__}' object has no attribute '_use_count'")
    if len(weakref.getweakrefs(t)) > _own_view_refs(t):
        raise RuntimeError(f'Cannot swap {name} because it has weakref associated with it')


def _poison_accumulator(t):
    ref = t._accumulator
    node = ref() if ref is not None else None
    if node is not None:
        def error_pre_hook(grad_outputs):
            raise RuntimeError(_POISONED)
        node.register_prehook(error_pre_hook)
