"""torch._dynamo.config and torch._inductor.config as leafgrad keeps them: PyTorch's names and
defaults, its errors for a name it does not have, ``patch``, and a warning (once) for a
setting leafgrad.compile does not read."""
import inspect
import subprocess
import sys
import warnings

import pytest

import leafgrad as lg
from leafgrad._dynamo import config as dynamo_config
from leafgrad._dynamo._torch_configs import Alias
from leafgrad._inductor import config as inductor_config
from torch_facts import ask_torch


def plain(v):
    """A setting's value as JSON holds it (in torch's process, which runs this source, and here)."""
    if v is None or type(v) in (bool, int, float, str):
        return v
    if type(v) in (list, tuple, set, frozenset):
        return [type(v).__name__, sorted(map(repr, v))]
    if type(v) is dict:
        return ['dict', sorted([k, repr(x)] for k, x in v.items())]
    return ['other', type(v).__name__]


_TORCH_FACTS = inspect.getsource(plain) + r"""
import json, torch
import torch._dynamo.config as dc, torch._inductor.config as ic
facts = {}
for name, mod in (('dynamo', dc), ('inductor', ic)):
    facts[name] = {k: plain(getattr(mod, k)) for k in mod._config}
errors = []
for attempt in (lambda: setattr(dc, 'nope', 1), lambda: getattr(dc, 'nope'), lambda: getattr(ic.triton, 'nope'),
                lambda: dc.patch(nope=1).__enter__()):
    try:
        attempt()
    except Exception as e:
        errors.append([type(e).__name__, str(e)])
facts['errors'] = errors
dc.cache_size_limit = 3
facts['alias'] = [dc.recompile_limit, dc.cache_size_limit]
print(json.dumps(facts))
"""


@pytest.fixture(scope='module')
def torch_facts():
    return ask_torch(_TORCH_FACTS)




def test_the_names_and_defaults_are_torchs(torch_facts):
    for mine, name in ((dynamo_config, 'dynamo'), (inductor_config, 'inductor')):
        theirs = torch_facts[name]
        assert list(mine._defaults) == list(theirs)
        for key, value in theirs.items():
            if key == 'compile_threads' or type(value) is str and value.startswith('/'):
                continue  # (read from the machine: its CPU count, the folder it runs in)
            assert plain(mine._get(key)) == value, key


def test_a_name_torch_does_not_have_raises_its_error(torch_facts):
    got = []
    for attempt in (lambda: setattr(dynamo_config, 'nope', 1), lambda: getattr(dynamo_config, 'nope'),
                    lambda: getattr(inductor_config.triton, 'nope'), lambda: dynamo_config.patch(nope=1).__enter__()):
        with pytest.raises(Exception) as caught:
            attempt()
        got.append([type(caught.value).__name__, str(caught.value).replace('leafgrad.', 'torch.')])
    assert got == torch_facts['errors']


def test_the_old_name_of_the_recompile_limit_is_the_same_setting(torch_facts, capsys):
    with dynamo_config.patch(cache_size_limit=3):
        assert [dynamo_config.recompile_limit, dynamo_config.cache_size_limit] == torch_facts['alias']
        f = lg.compile(lambda x: x * 2, dynamic=False)
        for n in range(1, 6):
            f(lg.ones(n))
        assert len(f._leafgrad_compiled.cache) == 3 and 'recompile_limit (3)' in capsys.readouterr().err
    assert dynamo_config.recompile_limit == 8 and type(dynamo_config._defaults['cache_size_limit']) is Alias


def test_a_setting_leafgrad_does_not_read_warns_once_and_is_kept():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        with inductor_config.patch({'coordinate_descent_tuning': True}):
            inductor_config.triton.unique_kernel_names = True
            inductor_config.triton.unique_kernel_names = False
            assert inductor_config.coordinate_descent_tuning is True
            assert inductor_config.triton.unique_kernel_names is False
        assert inductor_config.coordinate_descent_tuning is False
        dynamo_config.recompile_limit = 8  # (read by leafgrad.compile: no warning)
    del inductor_config.triton.unique_kernel_names  # (back to the default)
    messages = [str(w.message) for w in caught]
    assert messages == [
        'leafgrad._inductor.config.coordinate_descent_tuning is not read by leafgrad.compile: setting it has no effect',
        'leafgrad._inductor.config.triton.unique_kernel_names is not read by leafgrad.compile: setting it has no effect']
    assert all(w.filename == __file__ for w in caught)


def test_the_modules_import_under_torchs_names():
    program = ('import torch, torch._dynamo.config, torch._inductor.config\n'
               'torch._dynamo.config.recompile_limit = 4\n'
               'print(torch._dynamo.config.cache_size_limit, torch._inductor.config.triton.cudagraphs)\n')
    out = subprocess.run([sys.executable, '-m', 'leafgrad', '-c', program], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout == '4 False\n', out.stderr
