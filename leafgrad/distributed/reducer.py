"""DistributedDataParallel's reducer: gradients averaged in buckets while backward still runs.

Design note. The parameters that require grad are split into buckets (one dtype each) of at
most ``bucket_cap_mb``, in reverse registration order: the last layers' gradients are
computed first, so their bucket fills first. PyTorch's first-bucket rule applies: before the
first iteration the bucket of the *first* registered parameters is capped at 1 MiB (it is
reduced last, so a small one shortens the tail after backward); after the first iteration
the buckets are rebuilt in the order the gradients actually arrived (rank 0's order,
broadcast), with the 1 MiB cap on the first, unless unused parameters are searched for.

Each parameter has a post-accumulate-grad hook. When it fires, the gradient is copied into its
bucket (times 1/world size: the sum all-reduced is then the mean), and once every gradient of
a bucket is in, a non-blocking all-reduce of the bucket starts. Buckets start in order on
every rank, whatever order the gradients arrive in, so that the collectives match across
ranks. When the last bucket has started, a callback is queued to run when the backward walk
ends: it waits for the reductions and copies each bucket back into the ``.grad``s (with
``gradient_as_bucket_view`` the ``.grad``s *are* views into the buckets, no copy).

Parameters that get no gradient: with ``find_unused_parameters`` the graph behind the forward
outputs is searched for the parameters it reaches, the others count as ready (zero) at the
first hook, and a parameter unused on every rank keeps its ``.grad`` untouched; without it,
the reduction cannot finish, and the next forward raises PyTorch's error naming them.
``static_graph``: the first iteration reduces everything at the end of backward and records
which parameters were unused; later iterations treat those as ready.
"""
import warnings
import weakref

import numpy as np

from .. import backend
from . import collectives
from .collectives import RedOpType
from ..autograd.graph import AccumulateGrad
from ..tensor import Tensor
from ..autograd.engine import queue_callback

MB = 1024 * 1024
DEFAULT_FIRST_BUCKET_BYTES = 1 * MB


def bucket_assignment(params, limits, order):
    """Indices of ``params`` in buckets: ``order`` walked, one open bucket per dtype, closed
    once it holds ``limits[k]`` bytes (k: how many buckets of that dtype were closed before,
    the last limit repeating). PyTorch's compute_bucket_assignment_by_size."""
    open_buckets = {}
    closed = []
    for i in order:
        p = params[i]
        key = p._data.dtype
        bucket = open_buckets.setdefault(key, [[], 0, 0])  # indices, bytes, buckets closed
        bucket[0].append(i)
        bucket[1] += p._data.nbytes
        if bucket[1] >= limits[min(bucket[2], len(limits) - 1)]:
            closed.append(bucket[0])
            open_buckets[key] = [[], 0, bucket[2] + 1]
    closed.extend(b[0] for b in open_buckets.values() if b[0])
    return closed


class _Bucket:
    __slots__ = ('indices', 'flat', 'views', 'pending', 'work')

    def __init__(self, indices, params):
        self.indices = indices
        dtype = params[indices[0]]._data.dtype
        first = params[indices[0]]._data  # (the bucket lives where its parameters live: a GPU's is staged by MPI's calls)
        self.flat = backend.array_module(first).empty(sum(params[i]._data.size for i in indices), dtype)
        self.views = []
        offset = 0
        for i in indices:
            shape = params[i]._data.shape
            n = params[i]._data.size
            self.views.append(self.flat[offset:offset + n].reshape(shape))
            offset += n
        self.pending = len(indices)
        self.work = None


class Reducer:
    def __init__(self, params, names, group, bucket_limits, first_bucket_bytes, find_unused_parameters,
                 gradient_as_bucket_view, rebuild_limits):
        self.params = params
        self.names = names  # index -> PyTorch's name for the parameter (module path . name)
        self.group = group
        self.world_size = group.size()
        self.find_unused = find_unused_parameters
        self.as_bucket_view = gradient_as_bucket_view
        self.rebuild_limits = rebuild_limits
        self.static_graph = False
        self.iterations = 0
        self.expect_hooks = False
        self.require_finalize = False
        self.has_rebuilt = False
        self.arrival = []
        self.unused = []
        self.static_counts = None   # static graph: hooks per parameter in the first iteration
        self.per_iteration = None
        self.local_used = np.zeros(len(params), np.int32)
        self.local_used_work = None
        self.global_used = None
        self.next_bucket = 0
        self.ready = set()
        self.has_marked_unused = False
        self._initialize_buckets(list(reversed(bucket_assignment(params, bucket_limits, range(len(params))))))
        self.hooks = [p.register_post_accumulate_grad_hook(self._hook(i)) for i, p in enumerate(params)]
        weakref.finalize(self, _remove_hooks, self.hooks)  # a dropped DDP stops hooking the model

    def _initialize_buckets(self, assignment):
        self.buckets = [_Bucket(indices, self.params) for indices in assignment]
        self.locate = {}
        for b, bucket in enumerate(self.buckets):
            for k, i in enumerate(bucket.indices):
                self.locate[i] = (bucket, k)
        if self.as_bucket_view:
            for bucket in self.buckets:
                for k, i in enumerate(bucket.indices):
                    grad = self.params[i]._grad
                    if grad is not None and grad._data is not bucket.views[k]:
                        bucket.views[k][...] = grad._data
                        self._alias(i, bucket.views[k])

    def _alias(self, i, view):
        self.params[i]._grad = Tensor._wrap(view)


    # ---- per iteration -----------------------------------------------------------------------
    def dynamic_find_unused(self):
        return self.find_unused and not self.static_graph

    def static_first_iteration(self):
        return self.static_graph and self.iterations == 1

    def should_rebuild(self):
        return (self.static_graph or not self.find_unused) and not self.has_rebuilt

    def set_static_graph(self):
        self.static_graph = True
        self.static_counts = {}

    def rebuild_buckets(self):
        """Before every forward with grad enabled (PyTorch's _rebuild_buckets)."""
        self.ensure_prior_reduction_finished()
        if self.should_rebuild() and self.arrival:
            self._rebuild()

    def prepare_for_forward(self):
        """Before a forward that will be followed by a synchronised backward."""
        self.iterations += 1

    def prepare_for_backward(self, outputs):
        self.ensure_prior_reduction_finished()
        self.expect_hooks = True
        self.next_bucket = 0
        for bucket in self.buckets:
            bucket.pending = len(bucket.indices)
            bucket.work = None
        self.has_marked_unused = False
        self.ready = set()
        if self.static_graph and self.iterations > 1:
            self.per_iteration = dict(self.static_counts)
        if self.dynamic_find_unused():
            reached = _reachable_leaves(outputs)
            self.unused = [i for i, p in enumerate(self.params) if id(p) not in reached]
            if not self.unused:
                _warn_once(self, 'find_unused_parameters=True was specified in DDP constructor, but did not find any '
                           'unused parameters in the forward pass. This flag results in an extra traversal of the '
                           'autograd graph every iteration,  which can adversely affect performance. If your model '
                           'indeed never has any unused parameters in the forward pass, consider turning this flag '
                           'off. Note that this warning may be a false positive if your model has flow control '
                           'causing later iterations to have unused parameters.')

    def ensure_prior_reduction_finished(self):
        if not self.require_finalize:
            return
        missing = [i for i in range(len(self.params)) if i not in self.ready]
        names = ', '.join(self.names[i] for i in reversed(missing))
        rank = self.group.rank()
        message = (
            'Expected to have finished reduction in the prior iteration before starting a new one. This error '
            'indicates that your module has parameters that were not used in producing loss. ')
        if self.find_unused:
            message += ('Since `find_unused_parameters=True` is enabled, this likely  means that not all `forward` '
                        'outputs participate in computing loss. You can fix this by making sure all `forward` '
                        'function outputs participate in calculating loss. ')
        else:
            message += ('You can enable unused parameter detection by passing the keyword argument '
                        '`find_unused_parameters=True` to `leafgrad.nn.parallel.DistributedDataParallel`, and by \n'
                        'making sure all `forward` function outputs participate in calculating loss. ')
        message += (
            "\nIf you already have done the above, then the distributed data parallel module wasn't able to locate "
            "the output tensors in the return value of your module's `forward` function. Please include the loss "
            'function and the structure of the return value of `forward` of your module when reporting this issue '
            '(e.g. list, dict, iterable).\n'
            f'Parameters which did not receive grad for rank {rank}: {names}\n'
            f'Parameter indices which did not receive grad for rank {rank}: {" ".join(map(str, missing))}')
        raise RuntimeError(message)

    def _hook(self, index):
        reducer = weakref.ref(self)  # (the model must not keep its DDP alive)

        def hook(param):
            alive = reducer()
            if alive is not None:
                alive.autograd_hook(index)
        return hook

    def autograd_hook(self, i):
        if not self.expect_hooks:
            return  # no_sync(), or a backward after this iteration's reduction
        if self.dynamic_find_unused() or self.static_first_iteration():
            self.local_used[i] = 1
        if self.static_first_iteration():
            if not self.require_finalize:
                self.require_finalize = True
                queue_callback(self.delay_all_reduce)
            if i not in self.static_counts and self.should_rebuild():
                self.arrival.append(i)
            self.static_counts[i] = self.static_counts.get(i, 0) + 1
            return
        if not self.has_marked_unused:
            self.has_marked_unused = True
            for u in self.unused:
                self.mark_ready(u)
        if self.per_iteration is not None:
            if self.per_iteration.get(i, 0) <= 0:
                raise RuntimeError('Your training graph has changed in this iteration, e.g., one parameter is unused '
                                   'in first iteration, but then got used in the second iteration. this is not '
                                   'compatible with static_graph set to True.')
            self.per_iteration[i] -= 1
            if self.per_iteration[i]:
                return
        if self.should_rebuild():
            self.arrival.append(i)
        self.mark_ready(i)

    def mark_ready(self, i):
        if i in self.ready:
            self._marked_twice(i)
        self.ready.add(i)
        self.require_finalize = True
        bucket, k = self.locate[i]
        self._copy_in(i, bucket.views[k])
        bucket.pending -= 1
        if bucket.pending == 0:
            while self.next_bucket < len(self.buckets) and self.buckets[self.next_bucket].pending == 0:
                b = self.buckets[self.next_bucket]
                b.work = collectives.allreduce_array(self.group, b.flat, RedOpType.SUM)
                self.next_bucket += 1
        if self.next_bucket == len(self.buckets):
            if self.dynamic_find_unused():
                self.local_used_work = collectives.allreduce_array(self.group, self.local_used, RedOpType.SUM)
            queue_callback(self.finalize_backward)

    def _copy_in(self, i, view):
        grad = self.params[i]._grad
        if grad is None:
            view[...] = 0
        elif grad._data is view:
            np.divide(view, self.world_size, out=view)
        else:
            np.multiply(grad._data, 1.0 / self.world_size, out=view)
            if self.as_bucket_view:
                self._alias(i, view)

    def _marked_twice(self, i):
        message = (
            'Expected to mark a variable ready only once. This error is caused by one of the following reasons: '
            '1) Use of a module parameter outside the `forward` function. Please make sure model parameters are not '
            'shared across multiple concurrent forward-backward passes. or try to use _set_static_graph() as a '
            'workaround if this module graph does not change during training loop.2) Reused parameters in multiple '
            'reentrant backward passes. For example, if you use multiple `checkpoint` functions to wrap the same '
            'part of your model, it would result in the same set of parameters been used by different reentrant '
            'backward passes multiple times, and hence marking a variable ready multiple times. DDP does not '
            'support such use cases in default. You can try to use _set_static_graph() as a workaround if your '
            'module graph does not change over iterations.\n'
            f'Parameter at index {i} with name {self.names[i]} has been marked as ready twice. This means that '
            'multiple autograd engine  hooks have fired for this particular parameter during this iteration.')
        raise RuntimeError(message)

    def delay_all_reduce(self):
        """Static graph, first iteration: reduce everything once backward has ended."""
        self.local_used_work = collectives.allreduce_array(self.group, self.local_used, RedOpType.SUM)
        self.unused = [i for i in range(len(self.params)) if self.static_counts.get(i, 0) == 0]
        for i in range(len(self.params)):
            bucket, k = self.locate[i]
            self._copy_in(i, bucket.views[k])
            self.ready.add(i)
        for bucket in self.buckets:
            bucket.work = collectives.allreduce_array(self.group, bucket.flat, RedOpType.SUM)
        self.next_bucket = len(self.buckets)
        if self.should_rebuild():
            self.arrival += self.unused
        self.finalize_backward()

    def finalize_backward(self):
        self.expect_hooks = False
        self.require_finalize = False
        if self.local_used_work is not None:
            self.local_used_work.wait()
            self.global_used = self.local_used.copy()  # (static graph: the first iteration's, kept)
            self.local_used[:] = 0
            self.local_used_work = None
        used = self.global_used if self.find_unused or self.static_graph else None
        for bucket in self.buckets:
            bucket.work.wait()
            for k, i in enumerate(bucket.indices):
                if used is not None and used[i] == 0:
                    continue  # unused on every rank: .grad stays as it was
                param = self.params[i]
                view = bucket.views[k]
                if self.as_bucket_view:
                    if param._grad is None or param._grad._data is not view:
                        self._alias(i, view)
                elif param._grad is None:
                    param._grad = Tensor._wrap(view.copy())
                else:
                    param._grad._data[...] = view

    def _rebuild(self):
        """Buckets in the order rank 0's gradients arrived, the first capped at 1 MiB."""
        order = np.array(self.arrival + [i for i in range(len(self.params)) if i not in set(self.arrival)],
                         np.int64)
        collectives.broadcast_array(self.group, order, 0).wait()
        self.has_rebuilt = True
        self.arrival = []
        self._initialize_buckets(bucket_assignment(self.params, self.rebuild_limits, order.tolist()))


def _remove_hooks(handles):
    for h in handles:
        h.remove()


def _reachable_leaves(outputs):
    """ids of the leaves whose AccumulateGrad the graph behind ``outputs`` reaches."""
    seen = set()
    stack = [t.grad_fn for t in outputs if t.grad_fn is not None]
    leaves = {id(t) for t in outputs if t.grad_fn is None and t.requires_grad}
    while stack:
        node = stack.pop()
        if type(node) is AccumulateGrad:
            leaves.add(id(node.variable))
        for nxt, _ in node.next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return leaves


def _warn_once(reducer, message):
    if not getattr(reducer, '_warned', False):
        reducer._warned = True
        warnings.warn(message, UserWarning, stacklevel=4)
