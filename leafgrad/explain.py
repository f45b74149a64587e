"""``leafgrad.explain(t)`` / ``t.explain()``: a few plain sentences about a tensor's gradient.

It answers the questions behind most "why is my .grad None?" posts: is the tensor a leaf (and
if not, which op produced it), does it require grad and why (which input made it so), and will
its ``.grad`` be kept, is it kept, or is it None -- and exactly why, with what to do about it.

Design note. Most of the answer is read off the tensor and its graph (``grad_fn``,
``next_functions``, the leaf's AccumulateGrad). What the graph cannot tell -- that a tensor
was made by ``detach()``, ``.data``, ``leafgrad.tensor(t)``, frozen by ``requires_grad_(False)``
or computed under ``no_grad`` -- is recorded at that moment by ``leafgrad.autograd.origins``
(the last one only after ``watch_no_grad()``, because it would cost every no-grad op).

This module is callable: ``leafgrad.explain(t)`` works whether ``leafgrad.explain`` was
reached as the function or imported as this module.
"""
import sys
import types

from .autograd import origins
from .autograd.graph import AccumulateGrad
from .tensor import Tensor

watch_no_grad = origins.watch_no_grad

_FIX_UPDATE = ('update parameters in place under no_grad: `with leafgrad.no_grad(): w -= lr * w.grad`, '
               'then `w.grad = None` (or use an optimizer)')


class Explanation(str):
    """The explanation text (a str that prints as itself). ``reason`` is a short code for why
    ``.grad`` is what it is (for tests and tools): 'kept', 'will_be_kept', 'no_backward_yet',
    'never_used', 'not_reached', 'non_leaf', 'retained', 'retain_pending', 'replaced',
    'detach', 'detach_', 'data', 'tensor', 'frozen', 'no_grad', 'inference_mode',
    'not_float', 'no_grad_asked'."""
    reason = None

    def __repr__(self):
        return str(self)


def explain(t, params=None):
    """Explain in plain sentences ``t``'s autograd status; ``params`` (e.g.
    ``dict(model.named_parameters())``) names the tensors mentioned."""
    if not isinstance(t, Tensor):
        raise TypeError(f'explain() expects a leafgrad Tensor, got {type(t).__name__}')
    names = {id(v): k for k, v in (params or {}).items() if isinstance(v, Tensor)}
    this = f'`{names[id(t)]}` is' if id(t) in names else 'This is'
    lines = []
    fn = t._grad_fn
    shape = list(t._data.shape)
    kind = 'an nn.Parameter' if type(t).__name__ == 'Parameter' else 'a tensor'
    lines.append(f'{this} {kind} of shape {shape} ({t.dtype}): is_leaf={fn is None}, '
                 f'requires_grad={t._requires_grad}.')
    if fn is None:
        reason = _explain_leaf(t, lines, names)
    else:
        reason = _explain_non_leaf(t, fn, lines, names)
    out = Explanation('\n'.join(lines))
    out.reason = reason
    return out


# ---- leaves --------------------------------------------------------------------------------

def _explain_leaf(t, lines, names):
    meta = t._meta
    origin = origins.origin_of(t)
    if t._requires_grad:
        if type(t).__name__ == 'Parameter':
            lines.append('It is a leaf: no recorded op produced it. It requires grad because it is an '
                         'nn.Parameter (parameters require grad unless frozen), so backward() keeps its '
                         'gradient in .grad.')
        else:
            lines.append('It is a leaf: no recorded op produced it (you created it). It requires grad '
                         'because it was created with requires_grad=True (or requires_grad_() was called), '
                         'so backward() keeps its gradient in .grad.')
        if t._grad is not None:
            lines.append(f'Its .grad is kept: a leaf that requires grad stores its gradient '
                         f'({list(t._grad._data.shape)}, {t._grad.dtype}). backward() adds (+=) into it, '
                         'so zero it between steps (optimizer.zero_grad() or `t.grad = None`).')
            reason = 'kept'
        else:
            reason = _leaf_grad_none(t, lines, names)
        lines.append('Change it only under leafgrad.no_grad() and in place (`w -= lr * w.grad`): an '
                     'in-place op on it with grad mode on raises, and `w = w - lr * w.grad` would make '
                     'a new non-leaf whose .grad stays None.')
        if meta is not None and meta.hooks:
            lines.append(f'{len(meta.hooks)} hook(s) registered with register_hook() see its gradient '
                         'before it is accumulated.')
        return reason

    # A leaf that does not require grad: backward ignores it. Say why it does not.
    stale = ' (its .grad still holds a gradient from before)' if t._grad is not None else ''
    if origin is not None:
        where = f' at {origin.where}' if origin.where else ''
        src = origin.source_desc
        k = origin.kind
        if k == 'detach':
            lines.append(f'It was made by detach(){where} from {src}: it shares the data but has no '
                         'history, so the gradient stops here and backward() ignores it; its .grad is None'
                         f'{stale}. Use the original tensor where you need a gradient; for a new trainable '
                         'copy use `t.detach().clone().requires_grad_(True)`.')
        elif k == 'detach_':
            lines.append(f'detach_(){where} cut it in place from its graph (it was {src}): it is now a leaf '
                         f'that does not require grad, so backward() ignores it; its .grad is None{stale}. '
                         'Use detach() (a new tensor) if the original graph is still needed.')
        elif k == 'data':
            lines.append(f'It was made by .data{where} from {src}: no history, no gradient; its .grad is '
                         f'None{stale}. Prefer detach() (which also guards against in-place changes), and '
                         'use the original tensor where you need a gradient.')
        elif k == 'tensor':
            lines.append(f'It was re-wrapped with leafgrad.tensor(...){where} from {src}: that makes a new '
                         'leaf that remembers nothing of the original, so the gradient stops here; its .grad '
                         f'is None{stale}. Use the original tensor; to copy on purpose use '
                         '`x.detach().clone()` (add .requires_grad_(True) for a new trainable leaf).')
        elif k == 'frozen':
            lines.append(f'It is frozen: requires_grad_(False) was called on it{where}, so backward() skips '
                         f'it and its .grad is None{stale}. Call `t.requires_grad_(True)` to train it again.')
        elif k in ('no_grad', 'inference_mode'):
            ctx = 'no_grad()' if k == 'no_grad' else 'inference_mode()'
            lines.append(f'It was computed under {ctx}{where} from {src}: ops there record nothing, so it '
                         f'is a new leaf without history and its .grad is None{stale}. Compute it outside '
                         f'{ctx} if it needs a gradient; to change a parameter there, change it in place '
                         '(`w -= lr * w.grad`) so that it stays the same leaf.')
        return k
    if t.is_inference():
        lines.append('It was created under inference_mode(): an inference tensor never requires grad and '
                     'its .grad is None. Create it outside inference_mode() if it needs a gradient.')
        return 'inference_mode'
    if t._data.dtype.kind not in 'fV':
        lines.append(f'It holds {t.dtype} values: only floating point tensors can require grad, so its '
                     '.grad is None. Convert it with .float() first if it should get a gradient.')
        return 'not_float'
    if type(t).__name__ == 'Parameter':
        lines.append(f'It is a frozen nn.Parameter (requires_grad=False): backward() skips it and its '
                     f'.grad is None{stale}. Call `p.requires_grad_(True)` to train it.')
        return 'frozen'
    lines.append('It is a leaf that did not ask for a gradient, so backward() ignores it and its .grad is '
                 f'None{stale}. That is right for data and labels. If it should get a gradient, create it '
                 'with requires_grad=True or call `t.requires_grad_()`.')
    lines.append('If it was computed from tensors you expected to require grad, the graph was cut upstream: '
                 'a detach(), .data, a leafgrad.tensor(...) re-wrap, frozen parameters, or a no_grad() block '
                 '(turn on `leafgrad.explain.watch_no_grad()` before the computation to have no_grad() '
                 'recorded); backward() on it raises "element 0 of tensors does not require grad and does '
                 'not have a grad_fn". Explain its inputs to find where.')
    return 'no_grad_asked'


def _leaf_grad_none(t, lines, names):
    if origins.walks == 0:
        lines.append('Its .grad is None because no backward() has run yet. That is healthy: .grad starts '
                     'as None and fills during the first backward() through a graph that uses it.')
        reason = 'no_backward_yet'
    elif t._accumulator is None:
        lines.append('Its .grad is None and no op recorded with grad mode on has used it, so no graph leads '
                     'to it. Before its first forward pass that is expected (.grad starts as None); if a '
                     'forward and backward() have run, the computation did not use this tensor: check that '
                     'it uses this very tensor (not a copy, a detach() or a tensor re-created with '
                     'leafgrad.tensor(...)) and does not run under no_grad().')
        reason = 'never_used'
    else:
        lines.append(f'Its .grad is None although backward() has run ({origins.walks} walk(s) so far) and a '
                     'recorded op used it: either no backward() has run yet through the graph that uses it, '
                     'or the loss you called backward() on is not connected to it (look for detach(), .data, '
                     'leafgrad.tensor(...) or a no_grad() block between it and the loss), or '
                     'backward(inputs=...) left it out, or .grad was reset to None after the last backward() '
                     '(optimizer.zero_grad() does that).')
        reason = 'not_reached'
    hows = {'detach': 'detach()', 'data': '.data', 'tensor': 'leafgrad.tensor(...)',
            'no_grad': 'an op under no_grad()', 'inference_mode': 'an op under inference_mode()'}
    for _, o in [(c, o) for c, o in origins.copies_of(t) if o.kind in hows][:3]:
        where = f' at {o.where}' if o.where else ''
        lines.append(f'A copy of it was made by {hows[o.kind]}{where}: the gradient of anything computed '
                     'from that copy stops at the copy. Use this tensor itself in the computation.')
    return reason


# ---- non-leaves ------------------------------------------------------------------------------

def _explain_non_leaf(t, fn, lines, names):
    lines.append(f'It is not a leaf: {fn.name()} produced it (grad_fn=<{fn.name()}>).')
    inputs = []
    for nxt, _ in fn.next_functions:
        if nxt is None:
            continue
        if type(nxt) is AccumulateGrad:
            v = nxt.variable
            inputs.append(f'`{names[id(v)]}`' if id(v) in names else
                          f'a leaf of shape {list(v._data.shape)} that requires grad')
        else:
            inputs.append(f'the output of {nxt.name()}')
    leaves = _leaves(fn)
    because = ', '.join(_dedupe(inputs)) or 'an input'
    sentence = f'It requires grad because an input of {fn.name()} does: {because}.'
    if leaves:
        named = [f'`{names[id(v)]}`' if id(v) in names else f'one of shape {list(v._data.shape)}'
                 for v in leaves[:5]]
        more = f' and {len(leaves) - 5} more' if len(leaves) > 5 else ''
        sentence += f' It depends on {len(leaves)} leaf tensor(s) that require grad: {", ".join(named)}{more}.'
    lines.append(sentence)

    retained = t._meta is not None and t._meta.retains_grad
    replaced = _replaced_leaf(t, fn)
    if retained:
        if t._grad is not None:
            lines.append('Its .grad is kept because retain_grad() was called on it; backward() adds into it.')
            reason = 'retained'
        else:
            lines.append('retain_grad() was called on it, so its .grad will be kept at the next backward() '
                         'through it (None until then).')
            reason = 'retain_pending'
    elif t._grad is not None:
        lines.append('Its .grad holds a gradient although it is not a leaf: a backward(inputs=[...]) that '
                     'named it (or an assignment to .grad) put it there; backward() adds into it.')
        reason = 'kept'
    elif replaced is not None:
        name = f'`{names[id(replaced)]}`' if id(replaced) in names else 'a leaf of the same shape'
        lines.append(f'It was computed from {name}, which has a .grad, by {fn.name()} with grad mode on: '
                     'this looks like a parameter update written as `w = w - lr * w.grad`. The new `w` '
                     'is an op result, a non-leaf whose .grad will stay None forever (and the next '
                     f'`lr * w.grad` fails). Instead {_FIX_UPDATE}.')
        reason = 'replaced'
    else:
        lines.append('Its .grad is None and stays None: it is not a leaf, so during backward() its gradient '
                     'passes through it to the leaves and is then freed (requires_grad=True on a non-leaf '
                     'means "gradient flows through me", not "keep my gradient"). To see it, call '
                     '`t.retain_grad()` before backward(), or `t.register_hook(fn)` to watch it in flight.')
        reason = 'non_leaf'
    hooks = (fn._tensor_pre_hooks or {}).get(t._output_nr)
    if hooks:
        lines.append(f'{len(hooks)} hook(s) registered with register_hook() see (and may replace) its '
                     'gradient in flight.')
    if _graph_freed(fn):
        lines.append('A backward() has already run through its graph without retain_graph=True, so the '
                     'tensors the graph saved are freed: another backward() through it raises "Trying to '
                     'backward through the graph a second time". Recompute the forward pass, or pass '
                     'retain_graph=True to the first backward().')
    if t._data.size != 1:
        lines.append(f'It has {t._data.size} elements, so `t.backward()` needs a gradient argument of shape '
                     f'{list(t._data.shape)}; usually reduce it to a scalar loss first (e.g. `t.sum()`).')
    return reason


def _replaced_leaf(t, fn):
    """The leaf ``t`` was computed from by ``w - lr * w.grad`` (or +), if that is the pattern."""
    if fn.name() not in ('SubBackward0', 'AddBackward0'):
        return None
    found = None
    for nxt, _ in fn.next_functions:
        if nxt is None:
            continue
        if type(nxt) is not AccumulateGrad or found is not None:
            return None
        found = nxt.variable
    if found is None or found._grad is None or found._data.shape != t._data.shape:
        return None
    return found


def _graph_freed(fn, limit=10000):
    """Whether a backward without retain_graph released what the graph below ``fn`` saved."""
    seen = {fn}
    stack = [fn]
    while stack and len(seen) < limit:
        node = stack.pop()
        if node._saved is None:
            return True
        for nxt, _ in node.next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return False


def _leaves(fn):
    """Leaves that require grad reachable from ``fn`` (iterative, first-seen order)."""
    seen = {fn}
    stack = [fn]
    out = []
    while stack:
        node = stack.pop()
        if type(node) is AccumulateGrad:
            out.append(node.variable)
            continue
        for nxt, _ in reversed(node.next_functions):
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return out


def _dedupe(items):
    seen = []
    for x in items:
        if x not in seen:
            seen.append(x)
    return seen


class _CallableModule(types.ModuleType):
    """``leafgrad.explain`` is this module once imported; calling it calls ``explain``."""

    def __call__(self, t, params=None):
        return explain(t, params)


sys.modules[__name__].__class__ = _CallableModule

__all__ = ['explain', 'Explanation', 'watch_no_grad']
