"""torch.utils.hooks against torch: ``hasattr`` on torch.utils answers False for an unknown name,
RemovableHandle (with extra_dict) as code with hook tables of its own uses it,
unserializable_hook / warn_if_has_hooks, and the warning that saving a tensor with hooks gives."""
import io
import warnings
from collections import OrderedDict

import pytest

from oracle import torch
import leafgrad as lg


def test_unknown_utils_attribute_is_an_attribute_error():
    assert hasattr(lg.utils, 'no_such_thing') is hasattr(torch.utils, 'no_such_thing') is False
    import leafgrad.utils.hooks  # noqa: F401  (a module, as torch.utils.hooks)
    assert lg.utils.hooks.RemovableHandle is lg.utils.hooks.RemovableHandle


def _handles(m):
    H = m.utils.hooks
    hooks, extra, more = OrderedDict(), OrderedDict(), OrderedDict()
    a = H.RemovableHandle(hooks, extra_dict=[extra, more])
    b = H.RemovableHandle(hooks, extra_dict=extra)
    for h in (a, b):
        hooks[h.id] = 'hook'
        extra[h.id] = more[h.id] = 'flag'
    out = [b.id - a.id]
    a.remove()
    out.append((len(hooks), len(extra), len(more)))
    with b:
        pass
    out.append((len(hooks), len(extra), len(more)))
    a.remove()  # a second remove changes nothing
    out.append((len(hooks), len(extra), len(more)))
    return out


def test_removable_handle():
    assert _handles(lg) == _handles(torch)


def _warnings(m, program):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        program(m)
    return [(w.category.__name__, str(w.message).split(' at 0x')[0]) for w in caught]


def _hooked(m, unserializable=False):
    t = m.ones(2, requires_grad=True)
    hook = (lambda g: g)
    t.register_hook(m.utils.hooks.unserializable_hook(hook) if unserializable else hook)
    return t


PROGRAMS = {
    'warn_if_has_hooks': lambda m: m.utils.hooks.warn_if_has_hooks(_hooked(m)),
    'unserializable': lambda m: m.utils.hooks.warn_if_has_hooks(_hooked(m, True)),
    'no hooks': lambda m: m.utils.hooks.warn_if_has_hooks(m.ones(2, requires_grad=True)),
    'removed hook': lambda m: _removed(m),
    'non-leaf': lambda m: m.utils.hooks.warn_if_has_hooks(_nonleaf(m)),
    'save': lambda m: m.save(_hooked(m), io.BytesIO()),
    'save twice in one object': lambda m: _save_shared(m),
    'save a parameter': lambda m: m.save(_hooked_parameter(m), io.BytesIO()),
}


def _removed(m):
    t = m.ones(2, requires_grad=True)
    t.register_hook(lambda g: g).remove()
    m.utils.hooks.warn_if_has_hooks(t)


def _nonleaf(m):
    y = m.ones(2, requires_grad=True) * 2
    y.register_hook(lambda g: g)
    return y


def _save_shared(m):
    t = _hooked(m)
    m.save({'a': t, 'b': t}, io.BytesIO())


def _hooked_parameter(m):
    p = m.nn.Parameter(m.ones(2))
    p.register_hook(lambda g: g)
    return p


@pytest.mark.parametrize('name', PROGRAMS)
def test_hook_warnings(name):
    assert _warnings(lg, PROGRAMS[name]) == _warnings(torch, PROGRAMS[name])


def test_save_in_torch_format_warns(tmp_path):
    got = _warnings(lg, lambda m: m.save(_hooked(m), str(tmp_path / 'x.pt')))
    assert got == _warnings(torch, lambda m: m.save(_hooked(m), str(tmp_path / 'y.pt')))
