"""The module zoo, one file per family (as PyTorch lays it out)."""
from .module import Module
from .linear import Bilinear, Identity, Linear
from .flatten import Flatten, Unflatten
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .activation import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .conv import Conv1d, Conv2d, ConvTranspose2d
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from .normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm
from .dropout import Dropout
from .sparse import Embedding
from .rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell, RNNCellBase
from .attention import MultiheadAttention
from .transformer import TransformerEncoder, TransformerEncoderLayer
