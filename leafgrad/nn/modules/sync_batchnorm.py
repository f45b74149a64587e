"""SyncBatchNorm: batch normalisation whose statistics are those of the batch across all ranks.

In training, with a process group of more than one rank, each rank computes the count, mean
and sum of squared deviations of its part of the batch; one all-gather gives every rank all
of them, combined (Chan's formula) into the mean and variance of the whole batch. The
backward all-reduces the two per-channel sums the input's gradient needs (of dy and of
dy * (x - mean)), so that the gradient is the one of normalising the whole batch at once.
Elsewhere (eval, one rank, no process group) it is BatchNorm.
"""
import numpy as np

from ... import backend
from .normalization import _BatchNorm, _InstanceNorm
from .. import functional as F
from ...autograd.function import Function
from .._functional import norm
from ...tensor import Tensor


class SyncBatchNorm(_BatchNorm):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f'expected at least 2D input (got {input.dim()}D input)')

    def _check_non_zero_input_channels(self, input):
        if input.size(1) == 0:
            raise ValueError('SyncBatchNorm number of input channels should be non-zero')

    def forward(self, input):
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            factor = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        bn_training = True if self.training else (self.running_mean is None and self.running_var is None)
        running_mean = self.running_mean if not self.training or self.track_running_stats else None
        running_var = self.running_var if not self.training or self.track_running_stats else None
        need_sync = bn_training and self.training
        if need_sync:
            from ... import distributed as dist  # (loaded when first used)
            need_sync = dist.is_initialized()
            if need_sync:
                group = self.process_group or dist.group.WORLD
                need_sync = dist.get_world_size(group) > 1
        if not need_sync:
            return F.batch_norm(input, running_mean, running_var, self.weight, self.bias, bn_training, factor,
                                self.eps)
        from ...distributed import process_group as pgm  # (loaded when first used)
        group = pgm.default_group() if self.process_group is None else self.process_group
        return _SyncBatchNormFunction.apply(input, self.weight, self.bias, running_mean, running_var, self.eps,
                                            factor, group)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """``module`` with every BatchNorm*D replaced by a SyncBatchNorm that shares its
        parameters and buffers (the module itself when it is one)."""
        output = module
        if isinstance(module, _BatchNorm) and not isinstance(module, _InstanceNorm):
            output = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                                   module.track_running_stats, process_group, bias=module.bias is not None)
            if module.affine:
                output.weight = module.weight
                output.bias = module.bias
            output.running_mean = module.running_mean
            output.running_var = module.running_var
            output.num_batches_tracked = module.num_batches_tracked
            output.training = module.training
            if hasattr(module, 'qconfig'):
                output.qconfig = module.qconfig
        for name, child in module.named_children():
            output.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return output


class _SyncBatchNormFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias, running_mean, running_var, eps, momentum, group):
        x = input._data
        C = x.shape[1]
        for name, t in (('running_mean', running_mean), ('running_var', running_var), ('weight', weight),
                        ('bias', bias)):
            if t is not None and t._data.size != C:
                raise RuntimeError(f'{name} should contain {C} elements not {t._data.size}')
        dims = (0,) + tuple(range(2, x.ndim))
        chan = (1, C) + (1,) * (x.ndim - 2)
        count = x.size // C
        mean = x.mean(axis=dims, dtype=np.float64)
        m2 = ((x - mean.reshape(chan).astype(x.dtype)) ** 2).sum(axis=dims, dtype=np.float64)
        # (the statistics, 2C + 1 numbers, go to MPI through host memory when x is a GPU's)
        mine = np.concatenate([[count], backend.to_numpy(mean), backend.to_numpy(m2)])
        everyone = np.empty(group.size() * mine.size)
        group.run('ALLGATHER', lambda: [group._comm.Iallgather(mine, everyone)])
        stats = everyone.reshape(group.size(), -1)
        counts, means, m2s = stats[:, 0], stats[:, 1:1 + C], stats[:, 1 + C:]
        total = counts.sum()
        if total <= 1:
            raise ValueError(f'Expected more than 1 value per channel when training, got input size {list(x.shape)}')
        g_mean = (counts[:, None] * means).sum(axis=0) / total
        g_m2 = (m2s + counts[:, None] * (means - g_mean) ** 2).sum(axis=0)
        var = g_m2 / total
        invstd = 1.0 / np.sqrt(var + eps)
        if running_mean is not None:
            F_norm = _norm()
            F_norm._update_running(running_mean, _where(g_mean, x), momentum)
            F_norm._update_running(running_var, _where(var * total / (total - 1), x), momentum)
        mu = _where(g_mean.astype(x.dtype).reshape(chan), x)
        rs = _where(invstd.astype(x.dtype).reshape(chan), x)
        y = (x - mu) * rs
        if weight is not None:
            y = y * weight._data.reshape(chan)
        if bias is not None:
            y = y + bias._data.reshape(chan)
        ctx.save_for_backward(input, weight)
        ctx.stats = (mu, rs, dims, chan, total, group)
        return Tensor._wrap(y.astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad_output):
        input, weight = ctx.saved_tensors
        mu, rs, dims, chan, total, group = ctx.stats
        x, gy = input._data, grad_output._data
        xmu = x - mu
        sum_dy = gy.sum(axis=dims, dtype=np.float64)
        sum_dy_xmu = (gy * xmu).sum(axis=dims, dtype=np.float64)
        dtype = x.dtype
        grad_weight = Tensor._wrap((sum_dy_xmu * rs.reshape(-1)).astype(dtype)) \
            if weight is not None and ctx.needs_input_grad[1] else None
        grad_bias = Tensor._wrap(sum_dy.astype(dtype)) if ctx.needs_input_grad[2] else None
        grad_input = None
        if ctx.needs_input_grad[0]:
            combined = np.concatenate([backend.to_numpy(sum_dy), backend.to_numpy(sum_dy_xmu)])
            group.run('ALLREDUCE', lambda: [group._comm.Iallreduce(_mpi().IN_PLACE, combined, _mpi().SUM)])
            C = sum_dy.size
            mean_dy = _where((combined[:C] / total).astype(dtype).reshape(chan), x)
            mean_dy_xmu = _where((combined[C:] / total).astype(dtype).reshape(chan), x)
            scale = rs if weight is None else rs * weight._data.reshape(chan)
            grad_input = Tensor._wrap(((gy - mean_dy - xmu * (rs * rs) * mean_dy_xmu) * scale).astype(dtype))
        return grad_input, grad_weight, grad_bias, None, None, None, None, None


def _where(values, like):
    """Host ``values`` where ``like`` lives (copied to its GPU; NumPy's as they are)."""
    return values if type(like) is np.ndarray else backend.to_device(values, backend.device_of(like))


def _mpi():
    from ...distributed import process_group as pgm  # (loaded when first used)
    return pgm._state.mpi


def _norm():
    return norm
