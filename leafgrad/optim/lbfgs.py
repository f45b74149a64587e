"""L-BFGS with an optional strong-Wolfe line search, as PyTorch runs it.

Every parameter is one slice of a flat vector. Each iteration builds the search direction with the
two-loop recursion over the last ``history_size`` pairs (s = step, y = change of gradient, kept
only when y.s > 1e-10) and the initial Hessian guess y.s / y.y, then moves by t * d: a fixed
step ``lr`` (the first ever step scaled by min(1, 1 / |g|_1)), or the step the strong-Wolfe line
search finds (cubic interpolation, bracketing then zooming, c1 = 1e-4, c2 = 0.9). It stops at
``max_iter`` iterations, ``max_eval`` closure calls, a gradient below ``tolerance_grad``, or a
step or loss change below ``tolerance_change``. The scalars follow PyTorch's types (dot products
in the parameters' dtype, the loss a Python float), so trajectories agree with PyTorch's.
"""
import numpy as np

from .. import backend

from .optimizer import Optimizer, _check, _check_lr, _t
from ..autograd.grad_mode import enable_grad, no_grad
from ..tensor import Tensor


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to bounds (the
    interval's middle when the cubic has none)."""
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """A step t along d satisfying the strong Wolfe conditions; returns (loss, flat gradient, t,
    number of evaluations)."""
    d_norm = np.abs(d).max()
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    # bracket an interval containing a point satisfying the conditions
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        # extrapolate
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # zoom: shrink the bracket until a point satisfies the conditions
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        # a point too close to an end of the bracket is moved a tenth of the interval inside
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.copy(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos], bracket_gtd[high_pos] = bracket_g[low_pos], bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.copy(), gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


def _scalar(t):
    """A state value as PyTorch keeps it: NumPy scalars as 0-d tensors, Python numbers as they are."""
    return _t(np.asarray(t)) if isinstance(t, np.generic) else t


def _number(value, like):
    """``value`` (a number, or a 0-dim array of a reduction: on a GPU, CuPy's) as a 0-dim array
    of ``like``'s dtype, where ``like`` lives."""
    return backend.array_module(like).asarray(value, like.dtype)


def _unscalar(t):
    return t._data[()] if isinstance(t, Tensor) and t._data.ndim == 0 else t


class LBFGS(Optimizer):
    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        _check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change, history_size=history_size,
                                      line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]['params']
        self._numel_cache = None

    def _numel(self):
        if self._numel_cache is None:
            self._numel_cache = sum(p.numel() for p in self._params)
        return self._numel_cache

    def _gather_flat_grad(self):
        return np.concatenate([np.zeros_like(p._data, shape=(p.numel(),)) if p._grad is None
                               else p._grad._data.reshape(-1) for p in self._params])

    def _add_grad(self, step_size, update):
        offset = 0
        for p in self._params:
            n = p.numel()
            x = p._data
            # p.add_(update, alpha=step_size): the step rounded to the parameter's type first
            x += backend.array_module(x).asarray(step_size, dtype=x.dtype) * update[offset:offset + n].reshape(x.shape)
            p._version_counter[0] += 1
            offset += n

    def _clone_param(self):
        return [p._data.copy() for p in self._params]

    def _set_param(self, params_data):
        for p, data in zip(self._params, params_data):
            p._data[...] = data
            p._version_counter[0] += 1

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def _step(self, closure=None, *args):
        if closure is None:
            raise TypeError("LBFGS.step() missing 1 required positional argument: 'closure'")
        self._opt_called = True
        with no_grad():
            return self._lbfgs(closure)

    def _lbfgs(self, closure):
        def evaluate():
            with enable_grad():
                return closure()
        group = self.param_groups[0]
        lr = float(group['lr'])
        max_iter, max_eval = group['max_iter'], group['max_eval']
        tolerance_grad, tolerance_change = group['tolerance_grad'], group['tolerance_change']
        line_search_fn, history_size = group['line_search_fn'], group['history_size']

        # the whole state lives with the first parameter, as in PyTorch
        state = self.state[self._params[0]]
        state.setdefault('func_evals', 0)
        state.setdefault('n_iter', 0)
        orig_loss = evaluate()
        loss = float(orig_loss)
        current_evals = 1
        state['func_evals'] += 1
        flat_grad = self._gather_flat_grad()
        if np.abs(flat_grad).max() <= tolerance_grad:
            return orig_loss

        d = _np(state.get('d'))
        t = _unscalar(state.get('t'))
        old_dirs = [_np(v) for v in state.get('old_dirs') or []]
        old_stps = [_np(v) for v in state.get('old_stps') or []]
        ro = [_unscalar(v) for v in state.get('ro') or []]
        H_diag = _unscalar(state.get('H_diag'))
        prev_flat_grad = _np(state.get('prev_flat_grad'))
        prev_loss = state.get('prev_loss')
        al = None
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state['n_iter'] += 1
            if state['n_iter'] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)
                if ys > 1e-10:  # keep the pair only where the curvature condition holds
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)
                num_old = len(old_dirs)
                if al is None:
                    al = [_unscalar(v) for v in state['al']] if 'al' in state else [None] * history_size
                # two-loop recursion: d = -H g
                q = -flat_grad
                for i in range(num_old - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q += _number(-al[i], q) * old_dirs[i]
                d = r = q * _number(H_diag, q)
                for i in range(num_old):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r += _number(al[i] - be_i, r) * old_stps[i]
            prev_flat_grad = flat_grad.copy()
            prev_loss = loss
            if state['n_iter'] == 1:
                t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr
            else:
                t = lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:  # not a descent direction
                break
            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != 'strong_wolfe':
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = self._clone_param()
                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    lambda x, t, d: self._directional_evaluate(evaluate, x, t, d), x_init, t, d, loss, flat_grad,
                    gtd, max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = np.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    loss = float(evaluate())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = np.abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state['func_evals'] += ls_func_evals
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if np.abs(d * _number(t, d)).max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state['d'] = _t(d)
        state['t'] = _scalar(t)
        state['old_dirs'] = [_t(v) for v in old_dirs]
        state['old_stps'] = [_t(v) for v in old_stps]
        state['ro'] = [_scalar(v) for v in ro]
        state['H_diag'] = _scalar(H_diag)
        state['prev_flat_grad'] = _t(prev_flat_grad)
        state['prev_loss'] = prev_loss
        if al is not None:
            state['al'] = [_scalar(v) for v in al]
        return orig_loss


def _np(t):
    return None if t is None else t._data
