"""Real PyTorch programs that print what PyTorch prints keep doing so.

The corpus (``compat/programs.py``: pytorch/examples, pytorch/tutorials, nanoGPT, minGPT at
pinned commits) is other people's code, fetched by ``compat/fetch.py`` and kept outside the
repository, so these tests run only where a copy exists: ``$LEAFGRAD_CORPUS``, else
``compat/corpus`` (where ``compat/fetch.py`` puts it), else ``/work/corpus`` (the project's shared
machine); elsewhere they skip, saying so. The modules a program ``needs`` besides torch come with
pyproject's ``corpus`` extra, which CI installs. Each program whose entry gives no ``why``
(the reason it does not yet agree) runs on PyTorch and under ``python -m leafgrad`` and is
compared as ``compat/run.py`` compares it. PyTorch's runs are kept in the corpus's
``.torch-runs`` folder and reused while a program's commands stay the same.
"""
import importlib.util
import os
import sys

import pytest

pytest.importorskip('torch')

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'compat'))
import run as compat_run  # noqa: E402  compat/run.py
from programs import PROGRAMS  # noqa: E402


def _corpus():
    for path in (os.environ.get('LEAFGRAD_CORPUS'), os.path.join(ROOT, 'compat', 'corpus'), '/work/corpus'):
        if path and os.path.isdir(path):
            return path
    return None


CORPUS = _corpus()
AGREEING = [p for p in PROGRAMS if 'why' not in p]


def test_an_unseeded_program_compares_words_not_values():
    """Numbers, nan and inf (torch.empty's uninitialised memory prints any of them) read alike;
    words do not."""
    program = {'unseeded': True}
    torch_run = 'tensor([[nan, 0.0000e+00, -inf],\n        [1.5, 2, 3]])\nloss 0.25'
    leafgrad_run = 'tensor([[0., 0., 0.],\n        [0., 0., 0.]])\nloss 0.50'
    assert compat_run.normalise(torch_run, program) == compat_run.normalise(leafgrad_run, program)
    assert compat_run.normalise('loss nan', program) != compat_run.normalise('gain 1.0', program)


def test_every_program_that_differs_says_why():
    """The manifest's entries are complete: a program either agrees (no ``why``) or says why not
    and which issue covers it."""
    for program in PROGRAMS:
        if 'why' in program:
            assert program['why'] and program.get('issue'), program['name']


@pytest.mark.slow
@pytest.mark.skipif(CORPUS is None, reason='no corpus of real PyTorch programs here ($LEAFGRAD_CORPUS, compat/corpus '
                    'or /work/corpus; CI has none: it is third-party code that compat/fetch.py fetches)')
@pytest.mark.parametrize('program', AGREEING, ids=[p['name'] for p in AGREEING])
def test_program_prints_what_pytorch_prints(program):
    missing = [name for name in program.get('needs', ()) if importlib.util.find_spec(name) is None]
    assert not missing, f"{program['name']} imports {missing}: pip install -e '.[corpus]'"
    row, torch_out, leafgrad_out = compat_run.run_program(program, CORPUS, os.path.join(CORPUS, '.torch-runs'),
                                                          timeout=900)
    assert row['verdict'] in ('same', 'close'), (
        f"first difference {row['first_difference']}\n---- torch ----\n{torch_out[-3000:]}\n"
        f"---- leafgrad ----\n{leafgrad_out[-3000:]}")
