"""The digits demo, in its reduced mode (few epochs), end to end: training, accuracy, checkpoint
round trip with identical predictions, loss-curve PNG."""
import importlib.util
import os

import pytest

pytest.importorskip('sklearn')
pytest.importorskip('tqdm')
pytest.importorskip('matplotlib')

HERE = os.path.dirname(os.path.abspath(__file__))


def _load_demo():
    path = os.path.join(HERE, '..', 'examples', 'train_digits.py')
    spec = importlib.util.spec_from_file_location('train_digits', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_digits_demo_reduced(tmp_path, capsys):
    demo = _load_demo()
    rc = demo.main(['--epochs', '4', '--no-progress', '--out', str(tmp_path), '--min-accuracy', '0.9'])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert 'test accuracy:' in out and 'reloaded predictions identical: True' in out
    accuracy = float(out.split('test accuracy: ')[1].split('%')[0])
    assert accuracy >= 90.0
    png = tmp_path / 'digits_loss.png'
    assert png.exists() and png.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
    assert (tmp_path / 'digits_mlp.lgt').exists()
