"""The lesson examples run (at small sizes), print what the lessons print, and write pictures."""
import contextlib
import io
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip('torch')

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LESSONS = os.path.join(ROOT, 'examples', 'lessons')
HAS_DOT = shutil.which('dot') is not None
try:
    import matplotlib  # noqa: F401  (the examples skip their pictures without it)
    HAS_MPL = True
except ImportError:
    HAS_MPL = False


def run(script, *args):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get('PYTHONPATH', ''))
    proc = subprocess.run([sys.executable, os.path.join(LESSONS, script), *args], capture_output=True,
                          text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.fixture
def lessons_path():
    sys.path.insert(0, LESSONS)
    yield
    sys.path.remove(LESSONS)


def _torch_prints(code):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            exec(code, {'torch': torch})
    return buf.getvalue().splitlines()


LESSON_LEAVES = '''
w = torch.tensor([1., 2., 3.], requires_grad=True)
data = torch.tensor([10., 10., 10.])
h = w * 2
loss = (h * data).sum()
print(w.is_leaf, data.is_leaf, h.is_leaf)
print(w.requires_grad, data.requires_grad, h.requires_grad)
loss.backward()
print(w.grad)
print(h.grad)
'''


def test_leaf_tensors(tmp_path):
    out = run('leaf_tensors.py', '--out', str(tmp_path)).splitlines()
    assert out[:4] == _torch_prints(LESSON_LEAVES) == [
        'True True False', 'True False True', 'tensor([20., 20., 20.])', 'None']
    assert '--- explain(h)' in out
    dot = (tmp_path / 'leaf_tensors.dot').read_text()
    assert 'label="w\\n[3] float32\\n.grad: None"' in dot and 'MulBackward0' in dot
    after = (tmp_path / 'leaf_tensors_after_backward.dot').read_text()
    assert 'saved tensors freed' in after and '.grad: kept [3]' in after
    if HAS_DOT:
        assert (tmp_path / 'leaf_tensors.svg').read_text().lstrip().startswith('<?xml')
    else:  # without Graphviz the lesson says so, and writes the DOT files all the same
        assert any(line.startswith('(no SVG: ') for line in out) and not (tmp_path / 'leaf_tensors.svg').exists()


LESSON_RETAIN = '''
a = torch.tensor(2.0, requires_grad=True)
b = a * 3
c = b + 1
c.backward()
print(a.is_leaf, a.grad)
print(b.is_leaf, b.grad)
print(c.is_leaf, c.grad)
a = torch.tensor(2.0, requires_grad=True)
b = a * 3
b.retain_grad()
c = b + 1
c.backward()
print(b.grad)
'''


def test_retain_grad_and_hooks(tmp_path):
    out = run('retain_grad_and_hooks.py', '--out', str(tmp_path), '--batch', '4').splitlines()
    assert out[:4] == _torch_prints(LESSON_RETAIN)
    assert sorted(line.split(':')[0] for line in out[4:8]) == ['0.bias', '0.weight', '2.bias', '2.weight']
    assert out[8] == 'hidden.grad is kept: (4, 8)'
    dot = (tmp_path / 'retain_grad_and_hooks.dot').read_text()
    assert dot.count('shape="cds"') == 4 and 'record_stats[0.weight]' in dot
    assert 'hidden\\n[4, 8] float32\\n.grad: None (kept at backward)' in dot


def test_linear_regression(tmp_path):
    out = run('linear_regression.py', '--out', str(tmp_path), '--epochs', '600')
    first = next(line for line in out.splitlines() if line.startswith('Learned'))  # a note on a missing `dot` may come first
    w, b = (float(part.split(':')[1]) for part in first.split(',')[:2])
    assert abs(w - 3) < 0.1 and abs(b - 2) < 0.5, first
    assert 'w.is_leaf = False' in out and 'w = w - lr * w.grad' in out
    assert 'MseLoss' not in (tmp_path / 'linear_regression.dot').read_text()  # written with basic ops
    assert 'PowBackward0' in (tmp_path / 'linear_regression.dot').read_text()


def test_vanishing_gradient_stats_match_torch(lessons_path):
    import leafgrad as lg
    import vanishing_gradients as vg
    for act, tact in ((lg.nn.ReLU, torch.nn.ReLU), (lg.nn.Sigmoid, torch.nn.Sigmoid)):
        model = vg.build(act, [6, 5, 4, 1])
        tmodel = torch.nn.Sequential(*[
            torch.nn.Linear(m.in_features, m.out_features) if isinstance(m, lg.nn.Linear) else tact()
            for m in model])
        with torch.no_grad():
            for (_, p), (_, tp) in zip(model.named_parameters(), tmodel.named_parameters()):
                tp.copy_(torch.tensor(p.detach().numpy()))
        x, y = np.random.randn(8, 6).astype(np.float32), np.random.randn(8, 1).astype(np.float32)
        ours = vg.gradient_stats(model, lg.tensor(x), lg.tensor(y))
        theirs = vg.gradient_stats(tmodel, torch.tensor(x), torch.tensor(y), lib=torch)
        assert list(ours) == list(theirs) == [1, 2, 3]
        np.testing.assert_allclose(np.array(list(ours.values())), np.array(list(theirs.values())), rtol=1e-4)


def test_vanishing_gradients_picture(tmp_path):
    out = run('vanishing_gradients.py', '--out', str(tmp_path), '--batch', '16')
    ratios = [float(line.split(':')[1]) for line in out.splitlines() if 'ratio' in line]
    relu, sigmoid = ratios
    assert sigmoid < relu and sigmoid < 0.05        # earlier layers' gradients vanish under Sigmoid
    if HAS_MPL:
        png = tmp_path / 'vanishing_gradients.png'
        assert png.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'


def test_fgsm_and_saliency(tmp_path):
    out = run('fgsm_saliency.py', '--out', str(tmp_path), '--n', '300', '--epochs', '8')
    lines = dict(line.split(': ', 1) for line in out.splitlines() if ': ' in line)
    clean = float(lines['accuracy on clean inputs'])
    adv = float(lines['accuracy after FGSM (eps=0.1)'])
    if lines['data'].startswith('digits'):    # random stand-in data learns too slowly to test
        assert clean > 0.7 and adv < clean
    assert lines['saliency map shape'] == '(8, 64)'
    if HAS_MPL:
        assert (tmp_path / 'saliency.png').read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'


def test_input_gradients_match_torch(lessons_path):
    import leafgrad as lg
    import fgsm_saliency as fs
    xs, ys, _ = fs.load_data(50)
    model = fs.train(lg.tensor(xs), lg.tensor(ys), 10, epochs=1)
    tmodel = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10))
    with torch.no_grad():
        for (_, p), (_, tp) in zip(model.named_parameters(), tmodel.named_parameters()):
            tp.copy_(torch.tensor(p.detach().numpy()))
    sal, pred = fs.saliency(model, lg.tensor(xs[:5]))
    tx = torch.tensor(xs[:5], requires_grad=True)
    scores = tmodel(tx)
    scores.gather(1, scores.argmax(1, keepdim=True)).sum().backward()
    np.testing.assert_allclose(sal, tx.grad.abs().numpy(), rtol=1e-4, atol=1e-7)
    assert (pred == scores.argmax(1).numpy()).all()
    adv, grad = fs.fgsm(model, lg.tensor(xs[:20]), lg.tensor(ys[:20]), 0.1)
    tx = torch.tensor(xs[:20], requires_grad=True)
    torch.nn.functional.cross_entropy(tmodel(tx), torch.tensor(ys[:20])).backward()
    np.testing.assert_allclose(grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-7)
    assert all(p.requires_grad for p in model.parameters())   # unfrozen again after FGSM


def test_saliency_matches_float64_finite_differences(lessons_path):
    import leafgrad as lg
    import fgsm_saliency as fs
    lg.manual_seed(1)
    model = lg.nn.Sequential(lg.nn.Linear(5, 4, dtype=lg.float64), lg.nn.Tanh(),
                             lg.nn.Linear(4, 3, dtype=lg.float64))
    x = np.random.randn(2, 5)
    sal, pred = fs.saliency(model, lg.tensor(x))

    def score(xs):
        with lg.no_grad():
            out = model(lg.tensor(xs)).numpy()
        return out[np.arange(len(xs)), pred]

    h = 1e-6
    numeric = np.zeros_like(x)
    for j in range(x.shape[1]):
        e = np.zeros_like(x)
        e[:, j] = h
        numeric[:, j] = (score(x + e) - score(x - e)) / (2 * h)
    np.testing.assert_allclose(sal, np.abs(numeric), rtol=1e-6, atol=1e-9)
