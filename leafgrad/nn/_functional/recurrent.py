"""One step of each recurrent layer (nn.RNN, LSTM, GRU and their cells, and torch.rnn_tanh_cell,
lstm_cell ...), given the input's projection ``x_proj`` = input w_ih^T + b_ih, computed by the
caller (a layer computes it for every time step at once)."""
from ...ops import elementwise as ew
from .basic import linear


def rnn_step(x_proj, h, w_hh, b_hh, relu=False):
    """h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh); x_proj is the input part, already computed."""
    pre = ew.add(x_proj, linear(h, w_hh, b_hh))
    return ew.relu(pre) if relu else ew.tanh(pre)


def lstm_step(x_proj, state, w_hh, b_hh, w_hr=None):
    h, c = state
    H = c.shape[-1]
    gates = ew.add(x_proj, linear(h, w_hh, b_hh))
    i = ew.sigmoid(gates.narrow(-1, 0, H))
    f = ew.sigmoid(gates.narrow(-1, H, H))
    g = ew.tanh(gates.narrow(-1, 2 * H, H))
    o = ew.sigmoid(gates.narrow(-1, 3 * H, H))
    c = f * c + i * g
    h = o * ew.tanh(c)
    if w_hr is not None:  # LSTM with projections: h is projected to proj_size
        h = linear(h, w_hr)
    return h, c


def gru_step(x_proj, h, w_hh, b_hh):
    H = h.shape[-1]
    hp = linear(h, w_hh, b_hh)
    r = ew.sigmoid(x_proj.narrow(-1, 0, H) + hp.narrow(-1, 0, H))
    z = ew.sigmoid(x_proj.narrow(-1, H, H) + hp.narrow(-1, H, H))
    n = ew.tanh(x_proj.narrow(-1, 2 * H, H) + r * hp.narrow(-1, 2 * H, H))
    return (1 - z) * n + z * h
