"""F.ctc_loss and nn.CTCLoss against torch: losses and gradients for padded and concatenated
targets, repeated labels, reductions, zero_infinity, unbatched input, errors; float64 gradcheck
through log_softmax."""
import numpy as np
import pytest

from oracle import assert_same, raises_like, same_message, torch
import leafgrad as lg


def _case(T=6, N=3, C=5, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((T, N, C)).astype(dtype)
    targets = np.array([[1, 2, 2], [3, 1, 0], [4, 4, 4]])[:N]
    return logits, targets, [6, 5, 6][:N], [3, 2, 3][:N]


@pytest.mark.parametrize('reduction', ['mean', 'sum', 'none'])
@pytest.mark.parametrize('concat', [False, True])
@pytest.mark.parametrize('dtype', [np.float64, np.float32])
def test_ctc_loss_values_and_grads(reduction, concat, dtype):
    logits, targets, in_len, tg_len = _case(dtype=dtype)
    if concat:
        targets = np.concatenate([t[:n] for t, n in zip(targets, tg_len)])
    out = []
    for lib in (torch, lg):
        x = lib.tensor(logits, requires_grad=True)
        lp = x.log_softmax(2)
        lp.retain_grad()
        loss = lib.nn.functional.ctc_loss(lp, lib.tensor(targets), lib.tensor(in_len), lib.tensor(tg_len),
                                          reduction=reduction)
        w = lib.tensor(np.arange(1, 4, dtype=dtype)) if reduction == 'none' else 1.0
        (loss * w).sum().backward()
        out.append((loss, x.grad, lp.grad))
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-10)
    for a, b in zip(out[1], out[0]):
        assert_same(a, b, **tol)


def test_ctc_module_blank_zero_infinity_and_unbatched():
    logits, _, _, _ = _case(T=4, N=2)
    targets = np.array([[1, 1, 1], [2, 3, 0]])
    out = []
    for lib in (torch, lg):
        x = lib.tensor(logits, requires_grad=True)
        lp = x.log_softmax(2)
        crit = lib.nn.CTCLoss(blank=4, zero_infinity=True)
        # [1, 1, 1] needs 5 steps: infinite loss, zeroed
        loss = crit(lp, lib.tensor(targets), (2, 4), (3, 2))
        loss.backward()
        raw = lib.nn.CTCLoss(reduction='none')(lp.detach(), lib.tensor(targets), [2, 4], [3, 2])
        un = lib.nn.functional.ctc_loss(lp.detach()[:, 0], lib.tensor([1, 2]), [4], [2])
        out.append((loss, x.grad, raw, un, repr(crit)))
    for a, b in zip(out[1][:4], out[0][:4]):
        assert_same(a, b, rtol=1e-9, atol=1e-10)
    assert out[1][4] == out[0][4]


def test_ctc_gradcheck():
    logits, targets, in_len, tg_len = _case(T=5, N=2, C=4)
    x = lg.tensor(logits[:, :2, :4], requires_grad=True)
    tg = lg.tensor(np.array([[1, 2], [3, 3]]))
    assert lg.autograd.gradcheck(lambda x: lg.nn.functional.ctc_loss(x.log_softmax(2), tg, [5, 4], [2, 2]), (x,))


@pytest.mark.parametrize('case', ['in_len', 'tg_size', 'batch', 'blank', 'reduction', 'concat_size'])
def test_errors(case):
    def run(lib):
        lp = lib.zeros(5, 2, 4)
        tg = lib.tensor([[1, 2], [1, 1]])
        args = {'in_len': (tg, [6, 5], [2, 2]), 'tg_size': (tg, [5, 5], [3, 2]), 'batch': (tg, [5], [2, 2]),
                'blank': (tg, [5, 5], [2, 2]), 'reduction': (tg, [5, 5], [2, 2]),
                'concat_size': (lib.tensor([1, 2, 1]), [5, 5], [2, 2])}[case]
        kw = {'blank': dict(blank=4), 'reduction': dict(reduction='x')}.get(case, {})
        return lib.nn.functional.ctc_loss(lp, *args, **kw)
    a, b = raises_like(lambda: run(lg), lambda: run(torch))
    assert same_message(a, b), (a, b)
