"""Recurrent layers RNN, LSTM and GRU, written with leafgrad ops (so autograd needs nothing new).

Each layer and direction projects the whole input sequence at once (one matmul), then steps
through time with the hidden-to-hidden product; gates are slices (``narrow``) of one
pre-activation, in PyTorch's order (LSTM: i, f, g, o; GRU: r, z, n). Parameter names, shapes
and initialisation (U(-1/sqrt(hidden), 1/sqrt(hidden)) for all) are PyTorch's.
"""
import math
import numbers
import warnings

from .. import functional as F, init
from ..parameter import Parameter
from .module import Module
from ... import creation, ops
from ...backend import float32 as _float32
from ...ops.inplace import _renamed
from ..utils.rnn import PackedSequence
from .._functional.recurrent import gru_step as _gru_step, lstm_step as _lstm_step, rnn_step as _rnn_step


def _stack(tensors, dim):
    return ops.stack(tensors, dim)


def _cat(tensors, dim):
    return ops.cat(tensors, dim)


class RNNBase(Module):
    _gates = {'LSTM': 4, 'GRU': 3, 'RNN_TANH': 1, 'RNN_RELU': 1}

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError('dropout should be a number in range [0, 1] representing the probability of an '
                             'element being zeroed')
        if dropout > 0 and num_layers == 1:
            warnings.warn('dropout option adds dropout after all but last recurrent layer, so non-zero dropout '
                          f'expects num_layers greater than 1, but got dropout={dropout} and '
                          f'num_layers={num_layers}', stacklevel=2)
        if not isinstance(input_size, int):
            raise TypeError(f'input_size should be of type int, got: {type(input_size).__name__}')
        if input_size <= 0:
            raise ValueError('input_size must be greater than zero')
        if not isinstance(hidden_size, int):
            raise TypeError(f'hidden_size should be of type int, got: {type(hidden_size).__name__}')
        if hidden_size <= 0:
            raise ValueError('hidden_size must be greater than zero')
        if num_layers <= 0:
            raise ValueError('num_layers must be greater than zero')
        if proj_size < 0:
            raise ValueError('proj_size should be a positive integer or zero to disable projections')
        if proj_size >= hidden_size:
            raise ValueError('proj_size has to be smaller than hidden_size')
        if mode not in self._gates:
            raise ValueError('Unrecognized RNN mode: ' + mode)
        gate_size = self._gates[mode] * hidden_size
        num_directions = 2 if bidirectional else 1
        self._flat_weights_names = []
        self._all_weights = []
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input = input_size if layer == 0 else real_hidden_size * num_directions
                suffix = '_reverse' if direction == 1 else ''
                shapes = [('weight_ih_l{}{}', (gate_size, layer_input)),
                          ('weight_hh_l{}{}', (gate_size, real_hidden_size))]
                if bias:
                    shapes += [('bias_ih_l{}{}', (gate_size,)), ('bias_hh_l{}{}', (gate_size,))]
                if proj_size > 0:
                    shapes.append(('weight_hr_l{}{}', (proj_size, hidden_size)))
                names = []
                for fmt, shape in shapes:
                    name = fmt.format(layer, suffix)
                    setattr(self, name, Parameter(creation.empty(shape, device=device, dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def all_weights(self):
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self):
        """Nothing to do: PyTorch packs the weights into one block for cuDNN, and on the CPU it
        returns without doing anything, as here."""

    def extra_repr(self):
        s = f'{self.input_size}, {self.hidden_size}'
        if self.proj_size != 0:
            s += f', proj_size={self.proj_size}'
        if self.num_layers != 1:
            s += f', num_layers={self.num_layers}'
        if self.bias is not True:
            s += f', bias={self.bias}'
        if self.batch_first is not False:
            s += f', batch_first={self.batch_first}'
        if self.dropout != 0:
            s += f', dropout={self.dropout}'
        if self.bidirectional is not False:
            s += f', bidirectional={self.bidirectional}'
        return s

    # ---- the recurrence ------------------------------------------------------------------
    def _weights(self, layer, direction):
        """w_ih, w_hh, b_ih, b_hh and the LSTM projection w_hr (None where absent)."""
        suffix = '_reverse' if direction == 1 else ''
        get = lambda n: getattr(self, f'{n}_l{layer}{suffix}')  # noqa: E731
        w_hr = get('weight_hr') if self.proj_size > 0 else None
        if self.bias:
            return get('weight_ih'), get('weight_hh'), get('bias_ih'), get('bias_hh'), w_hr
        return get('weight_ih'), get('weight_hh'), None, None, w_hr

    def _cell(self, x_t, state, w_hh, b_hh, w_hr):
        """One step: x_t is the input projection at this step; returns the new state."""
        raise NotImplementedError

    def _run_direction(self, x, state, layer, direction):
        """x: (T, N, in). Returns outputs (T, N, H) and the final state."""
        w_ih, w_hh, b_ih, b_hh, w_hr = self._weights(layer, direction)
        proj = F.linear(x, w_ih, b_ih)  # all time steps at once
        steps = range(x.shape[0] - 1, -1, -1) if direction == 1 else range(x.shape[0])
        outs = [None] * x.shape[0]
        for t in steps:
            state = self._cell(proj.select(0, t), state, w_hh, b_hh, w_hr)
            outs[t] = state[0] if isinstance(state, tuple) else state
        out = _stack(outs, 0)
        if out._grad_fn is not None and self._oneDNN_layer(x):
            out._grad_fn.__class__ = _renamed(type(out._grad_fn), 'MkldnnRnnLayerBackward0')
        return out, state

    def _oneDNN_layer(self, x):
        """Whether PyTorch's CPU LSTM runs this layer as one oneDNN op (its history then shows
        MkldnnRnnLayerBackward0 where leafgrad stacks the steps): an unpacked float32 LSTM without
        projections while torch.backends.mkldnn.enabled (RNN.cpp's use_mkldnn on a machine without
        oneDNN's bfloat16/float16 support, as PyTorch's wheels here)."""
        from ...backends import mkldnn  # (loaded when first used: import leafgrad.nn does not load backends)
        return self.mode == 'LSTM' and not self.proj_size and x.dtype is _float32 and mkldnn.enabled

    def _run_packed_direction(self, x, batch_sizes, state, layer, direction):
        """x: packed (sum(batch_sizes), in). Step t runs the first batch_sizes[t] rows; a sequence's
        final state is taken at its last step (forward) and its initial state joins at its last
        step (reverse). Returns the packed outputs and the final state (all rows)."""
        w_ih, w_hh, b_ih, b_hh, w_hr = self._weights(layer, direction)
        proj = F.linear(x, w_ih, b_ih)
        offsets = [0]
        for b in batch_sizes[:-1]:
            offsets.append(offsets[-1] + b)
        is_lstm = isinstance(state, tuple)
        parts = state if is_lstm else (state,)
        outs = [None] * len(batch_sizes)
        if direction == 0:
            cur = tuple(p.narrow(0, 0, batch_sizes[0]) for p in parts)
            done = []  # final states of sequences that ended, last rows first
            for t, (off, b) in enumerate(zip(offsets, batch_sizes)):
                if b < cur[0].shape[0]:
                    done.append(tuple(c.narrow(0, b, c.shape[0] - b) for c in cur))
                    cur = tuple(c.narrow(0, 0, b) for c in cur)
                new = self._cell(proj.narrow(0, off, b), cur if is_lstm else cur[0], w_hh, b_hh, w_hr)
                cur = new if is_lstm else (new,)
                outs[t] = cur[0]
            pieces = [cur] + done[::-1]
            final = tuple(_cat([p[i] for p in pieces], 0) if len(pieces) > 1 else pieces[0][i]
                          for i in range(len(parts)))
        else:
            last = batch_sizes[-1]
            cur = tuple(p.narrow(0, 0, last) for p in parts)
            for t in range(len(batch_sizes) - 1, -1, -1):
                b = batch_sizes[t]
                if b > cur[0].shape[0]:
                    n = cur[0].shape[0]
                    cur = tuple(_cat([c, p.narrow(0, n, b - n)], 0) for c, p in zip(cur, parts))
                new = self._cell(proj.narrow(0, offsets[t], b), cur if is_lstm else cur[0], w_hh, b_hh, w_hr)
                cur = new if is_lstm else (new,)
                outs[t] = cur[0]
            final = cur
        return _cat(outs, 0), (final if is_lstm else final[0])

    def _check_input(self, input, batched):
        expected = 3 if batched else 2
        if input.dim() != expected:
            raise ValueError(f'input must have {expected} dimensions, got {input.dim()}')
        if self.input_size != input.shape[-1]:
            raise RuntimeError(f'input.size(-1) must be equal to input_size. Expected {self.input_size}, '
                               f'got {input.shape[-1]}')

    def _forward(self, input, hx, batch_sizes=None):
        """input (T, N, in) or packed (sum(batch_sizes), in); hx: (L*D, N, H) tensor or tuple of
        them. Returns output and final states."""
        num_directions = 2 if self.bidirectional else 1
        is_lstm = self.mode == 'LSTM'
        finals = []
        layer_input = input
        for layer in range(self.num_layers):
            dir_outs = []
            for d in range(num_directions):
                idx = layer * num_directions + d
                state = (hx[0].select(0, idx), hx[1].select(0, idx)) if is_lstm else hx.select(0, idx)
                if batch_sizes is None:
                    out, state = self._run_direction(layer_input, state, layer, d)
                else:
                    out, state = self._run_packed_direction(layer_input, batch_sizes, state, layer, d)
                dir_outs.append(out)
                finals.append(state)
            layer_input = dir_outs[0] if num_directions == 1 else _cat(dir_outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout, True)
        if is_lstm:
            h_n = _stack([s[0] for s in finals], 0)
            c_n = _stack([s[1] for s in finals], 0)
            return layer_input, (h_n, c_n)
        return layer_input, _stack(finals, 0)

    def forward(self, input, hx=None):
        is_lstm = self.mode == 'LSTM'
        num_directions = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        packed = isinstance(input, PackedSequence)
        batch_sizes = None
        if packed:
            input, batch_sizes_t, sorted_indices, unsorted_indices = input
            batch_sizes = [int(b) for b in batch_sizes_t._data]
            batched = True
            if input.dim() != 2:
                raise RuntimeError(f'input must have 2 dimensions, got {input.dim()}')
            if self.input_size != input.shape[-1]:
                raise RuntimeError(f'input.size(-1) must be equal to input_size. Expected {self.input_size}, '
                                   f'got {input.shape[-1]}')
            batch = batch_sizes[0]
        else:
            sorted_indices = unsorted_indices = None
            batched = input.dim() == 3
            self._check_input(input, batched)
            if not batched:
                input = input.unsqueeze(1)
            elif self.batch_first:
                input = input.transpose(0, 1)
            batch = input.shape[1]
        shape = (self.num_layers * num_directions, batch, real_hidden)
        cell_shape = (self.num_layers * num_directions, batch, self.hidden_size)
        if hx is None:
            zeros = creation.zeros(shape, dtype=input.dtype, device=input.device)
            hx = (zeros, creation.zeros(cell_shape, dtype=input.dtype, device=input.device)) if is_lstm else zeros
        else:
            hs = tuple(hx) if is_lstm else (hx,)
            if not batched:
                for h in hs:
                    if h.dim() != 2:
                        raise RuntimeError(f'For unbatched 2-D input, hx should also be 2-D but got {h.dim()}-D '
                                           'tensor')
                hs = tuple(h.unsqueeze(1) for h in hs)
            for i, (h, want) in enumerate(zip(hs, (shape, cell_shape))):
                if tuple(h.shape) != want:
                    what = f'hidden[{i}]' if is_lstm else 'hidden'
                    raise RuntimeError(f'Expected {what} size {want}, got {list(h.shape)}')
            if sorted_indices is not None:  # the caller's batch order into the packed order
                hs = tuple(h.index_select(1, sorted_indices) for h in hs)
            hx = hs if is_lstm else hs[0]
        output, hidden = self._forward(input, hx, batch_sizes)
        if packed:
            if unsorted_indices is not None:
                hidden = (tuple(h.index_select(1, unsorted_indices) for h in hidden) if is_lstm
                          else hidden.index_select(1, unsorted_indices))
            return PackedSequence(output, batch_sizes_t, sorted_indices, unsorted_indices), hidden
        if not batched:
            output = output.squeeze(1)
            hidden = tuple(h.squeeze(1) for h in hidden) if is_lstm else hidden.squeeze(1)
        elif self.batch_first:
            output = output.transpose(0, 1)
            if not is_lstm and output._grad_fn is not None:  # PyTorch's GRU and RNN transpose in place
                output._grad_fn.__class__ = _renamed(type(output._grad_fn), 'TransposeBackward1')
        return output, hidden


class RNN(RNNBase):
    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None, **kwargs):
        if 'proj_size' in kwargs:
            raise ValueError('proj_size argument is only supported for LSTM, not RNN or GRU')
        if kwargs:
            raise TypeError(f"RNNBase.__init__() got an unexpected keyword argument '{next(iter(kwargs))}'")
        if nonlinearity == 'tanh':
            mode = 'RNN_TANH'
        elif nonlinearity == 'relu':
            mode = 'RNN_RELU'
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)

    def _cell(self, x_t, h, w_hh, b_hh, w_hr):
        return _rnn_step(x_t, h, w_hh, b_hh, relu=self.mode == 'RNN_RELU')


class LSTM(RNNBase):
    def __init__(self, *args, **kwargs):
        super().__init__('LSTM', *args, **kwargs)

    def _cell(self, x_t, state, w_hh, b_hh, w_hr):
        return _lstm_step(x_t, state, w_hh, b_hh, w_hr)


class GRU(RNNBase):
    def __init__(self, *args, **kwargs):
        if 'proj_size' in kwargs:
            raise ValueError('proj_size argument is only supported for LSTM, not RNN or GRU')
        super().__init__('GRU', *args, **kwargs)

    def _cell(self, x_t, h, w_hh, b_hh, w_hr):
        return _gru_step(x_t, h, w_hh, b_hh)


# ---- single steps ------------------------------------------------------------------------------
class RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        n = num_chunks * hidden_size
        kw = dict(device=device, dtype=dtype)
        self.weight_ih = Parameter(creation.empty((n, input_size), **kw))
        self.weight_hh = Parameter(creation.empty((n, hidden_size), **kw))
        if bias:
            self.bias_ih = Parameter(creation.empty(n, **kw))
            self.bias_hh = Parameter(creation.empty(n, **kw))
        else:
            self.register_parameter('bias_ih', None)
            self.register_parameter('bias_hh', None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = f'{self.input_size}, {self.hidden_size}'
        if self.bias is not True:
            s += f', bias={self.bias}'
        if getattr(self, 'nonlinearity', 'tanh') != 'tanh':
            s += f', nonlinearity={self.nonlinearity}'
        return s

    def _prepare(self, input, hx, name):
        if input.dim() not in (1, 2):
            raise ValueError(f'{name}: Expected input to be 1D or 2D, got {input.dim()}D instead')
        hs = hx if isinstance(hx, tuple) else (hx,)
        for h in hs:
            if h is not None and h.dim() not in (1, 2):
                raise ValueError(f'{name}: Expected hidden to be 1D or 2D, got {h.dim()}D instead')
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        zeros = lambda: creation.zeros((input.shape[0], self.hidden_size), dtype=input.dtype,  # noqa: E731
                                       device=input.device)
        hs = tuple(zeros() if h is None else (h if batched else h.unsqueeze(0)) for h in hs)
        return input, hs, batched


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity='tanh', device=None, dtype=None):
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, (h,), batched = self._prepare(input, hx, 'RNNCell')
        if self.nonlinearity not in ('tanh', 'relu'):
            raise RuntimeError(f'Unknown nonlinearity: {self.nonlinearity}')
        out = _rnn_step(F.linear(input, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh,
                        relu=self.nonlinearity == 'relu')
        return out if batched else out.squeeze(0)


class LSTMCell(RNNCellBase):

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        hx = (None, None) if hx is None else tuple(hx)
        input, (h, c), batched = self._prepare(input, hx, 'LSTMCell')
        h, c = _lstm_step(F.linear(input, self.weight_ih, self.bias_ih), (h, c), self.weight_hh, self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, (h,), batched = self._prepare(input, hx, 'GRUCell')
        out = _gru_step(F.linear(input, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh)
        return out if batched else out.squeeze(0)


__all__ = ['RNNBase', 'RNN', 'LSTM', 'GRU', 'RNNCellBase', 'RNNCell', 'LSTMCell', 'GRUCell']
