"""ctc_loss: the connectionist temporal classification loss, as PyTorch computes it.

For each sequence the target l is extended with blanks (l' = blank, l1, blank, l2, ..., blank) and
the forward variables alpha[t, s] (log-probability of emitting l'[:s+1] in t+1 steps) are summed
over the allowed transitions (stay, advance one, or skip a blank between two different labels);
the loss is -log(alpha[T-1, end] + alpha[T-1, end-1]). The derivative is PyTorch's: with beta the
backward variables, d loss / d log_probs[t, c] = exp(log_probs[t, c]) - exp(logsumexp over s with
l'[s] = c of (alpha + beta)[t, s] + loss - log_probs[t, c]), zero past each input length; like
PyTorch's it is the gradient through a log_softmax taken as given (the two agree once the
log-probabilities come from log_softmax). All time steps of a batch run together, one Python
step per time step.
"""
import numpy as np

from ...ops._util import Node, record, wrap
from ...tensor import Tensor
from ... import backend, creation

_NEG_INF = -np.inf


def _logsumexp(*arrays):
    stacked = np.stack(arrays)
    m = stacked.max(axis=0)
    m_safe = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide='ignore'):
        return np.where(np.isfinite(m), np.log(np.exp(stacked - m_safe).sum(axis=0)) + m_safe, m)


class CtcLossBackward0(Node):
    __slots__ = ('grad_lp', 'batched')

    def apply(self, grad):
        g = grad._data  # (N,) per-sequence losses' gradient
        scale = g if self.batched else g.reshape(1)
        out = self.grad_lp * scale[None, :, None].astype(self.grad_lp.dtype)
        return (wrap(out if self.batched else out[:, 0]),)


def _lengths(value, name):
    if isinstance(value, Tensor):
        return backend.to_numpy(value._data).astype(np.int64).reshape(-1)
    return np.asarray(list(value) if not isinstance(value, int) else [value], dtype=np.int64)


def _ctc(lp, targets, input_lengths, target_lengths, blank, zero_infinity):
    """Per-sequence negative log-likelihoods and d nll / d log_probs (lp: (T, N, C) float64)."""
    T, N, C = lp.shape
    L = int(target_lengths.max()) if N else 0
    S = 2 * L + 1
    ext = np.full((N, S), blank, dtype=np.int64)
    ext[:, 1::2] = targets
    valid_s = np.arange(S)[None, :] < (2 * target_lengths + 1)[:, None]
    # a skip from s-2 is allowed onto a label that differs from the label two back
    skip = np.zeros((N, S), dtype=bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    batch = np.arange(N)[:, None]
    emit = lp[:, batch, ext]  # (T, N, S): log-probability of emitting l'[s] at t
    alpha = np.full((T, N, S), _NEG_INF)
    alpha[0, :, 0] = emit[0, :, 0]
    if S > 1:
        alpha[0, :, 1] = np.where(target_lengths > 0, emit[0, :, 1], _NEG_INF)
    for t in range(1, T):
        prev = alpha[t - 1]
        one = np.concatenate([np.full((N, 1), _NEG_INF), prev[:, :-1]], axis=1)
        two = np.concatenate([np.full((N, 2), _NEG_INF), prev[:, :-2]], axis=1)[:, :S]
        alpha[t] = _logsumexp(prev, one, np.where(skip, two, _NEG_INF)) + emit[t]
    alpha = np.where(valid_s[None], alpha, _NEG_INF)
    last = input_lengths - 1
    end = 2 * target_lengths
    a_end = alpha[last, np.arange(N), end]
    a_before = np.where(target_lengths > 0, alpha[last, np.arange(N), np.maximum(end - 1, 0)], _NEG_INF)
    nll = -_logsumexp(a_end, a_before)

    beta = np.full((T, N, S), _NEG_INF)
    n_idx = np.arange(N)
    beta[last, n_idx, end] = emit[last, n_idx, end]
    has = target_lengths > 0
    beta[last[has], n_idx[has], end[has] - 1] = emit[last[has], n_idx[has], end[has] - 1]
    skip_next = np.zeros((N, S), dtype=bool)  # from s+2 onto s: l'[s+2] differs from l'[s] and is a label
    skip_next[:, :-2] = skip[:, 2:]
    for t in range(T - 2, -1, -1):
        nxt = beta[t + 1]
        one = np.concatenate([nxt[:, 1:], np.full((N, 1), _NEG_INF)], axis=1)
        two = np.concatenate([nxt[:, 2:], np.full((N, 2), _NEG_INF)], axis=1)
        b = _logsumexp(nxt, one, np.where(skip_next, two, _NEG_INF)) + emit[t]
        active = (t < last)[:, None]  # at t = last the values were set above
        beta[t] = np.where(active, b, beta[t])
    beta = np.where(valid_s[None], beta, _NEG_INF)

    ab = alpha + beta  # (T, N, S)
    lcab = np.full((T, N, C), _NEG_INF)
    for s in range(S):
        c = ext[:, s]
        cur = lcab[:, n_idx, c]
        lcab[:, n_idx, c] = _logsumexp(cur, ab[:, :, s])
    with np.errstate(over='ignore', invalid='ignore'):
        grad = np.exp(lp) - np.exp(lcab + nll[None, :, None] - lp)
    inside = np.arange(T)[:, None] < input_lengths[None, :]
    grad = np.where(inside[:, :, None], grad, 0.0)
    if zero_infinity:
        bad = np.isinf(nll)
        nll = np.where(bad, 0.0, nll)
        grad[:, bad, :] = 0.0
    return nll, grad


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction='mean', zero_infinity=False):
    """The CTC loss of log_probs (T, N, C) (or (T, C)) against targets, padded (N, S) or concatenated."""
    if reduction not in ('none', 'mean', 'sum'):
        raise ValueError(f'{reduction} is not a valid value for reduction')
    x = log_probs._data
    device = None
    if type(x) is not np.ndarray and backend.device_of(x).type == 'cuda':
        # On a GPU the dynamic programme (a step per time step and per extended label, each a few
        # small array ops) runs on the host, as PyTorch's CPU kernel: the log-probabilities are
        # copied over once, the losses and their gradient copied back once.
        device = backend.device_of(x)
        x = backend.to_numpy(x)
    batched = x.ndim == 3
    lp = x if batched else x[:, None, :]
    T, N, C = lp.shape
    in_len = _lengths(input_lengths, 'input_lengths')
    tg_len = _lengths(target_lengths, 'target_lengths')
    if in_len.size != N:
        raise RuntimeError('input_lengths must be of size batch_size')
    if tg_len.size != N:
        raise RuntimeError('target_lengths must be of size batch_size')
    if not 0 <= blank < C:
        raise RuntimeError('blank must be in label range')
    where = '(while checking arguments for ctc_loss_allocate_outputs)'
    tg = backend.to_numpy(targets._data).astype(np.int64)
    if not batched:
        tg = tg.reshape(1, -1)  # one sequence's (padded) targets
    if tg.ndim == 1:  # concatenated targets
        if tg.shape[0] != tg_len.sum():
            raise RuntimeError(f'Expected tensor to have size {int(tg_len.sum())} at dimension 0, but got size '
                               f"{tg.shape[0]} for argument #2 'targets' {where}")
        padded = np.full((N, max(int(tg_len.max()) if N else 0, 0)), blank, dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(tg_len)[:-1]])
        for n in range(N):
            padded[n, :tg_len[n]] = tg[offsets[n]:offsets[n] + tg_len[n]]
        tg = padded
    else:
        tg = tg.reshape(N, -1)
        need = int(tg_len.max()) if N else 0
        if tg.shape[1] < need:
            raise RuntimeError(f'Expected tensor to have size at least {need} at dimension 1, but got size '
                               f"{tg.shape[1]} for argument #2 'targets' {where}")
        tg = tg[:, :need]
    if in_len.size and in_len.max() > T:
        raise RuntimeError(f'Expected input_lengths to have value at most {T}, but got value {int(in_len.max())} '
                           f'{where}')
    nll, grad = _ctc(lp.astype(np.float64), tg, in_len, tg_len, blank, zero_infinity)
    dtype = x.dtype
    nll, grad = nll.astype(dtype), grad.astype(dtype)
    if device is not None:
        nll, grad = backend.to_device(nll, device), backend.to_device(grad, device)
    losses, node = record(nll, CtcLossBackward0, (log_probs,))
    if node is not None:
        node.grad_lp = grad
        node.batched = batched
    if not batched:
        losses = losses.reshape(())
    if reduction == 'none':
        return losses
    if reduction == 'sum':
        return losses.sum()
    divisor = creation.tensor(np.maximum(tg_len, 1).astype(dtype) if batched else
                              np.asarray(max(int(tg_len[0]), 1), dtype=dtype), device=device)
    return (losses / divisor).mean()
