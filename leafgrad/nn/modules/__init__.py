"""The module zoo, one file per family (as PyTorch lays it out)."""
from .module import Module
from .linear import Bilinear, Identity, Linear
from .flatten import Flatten, Unflatten
from .container import Container, ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .activation import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .upsampling import Fold, Unfold, Upsample, UpsamplingBilinear2d, UpsamplingNearest2d
from .distance import CosineSimilarity, PairwiseDistance
from .normalization import *  # noqa: F401,F403
from .sync_batchnorm import SyncBatchNorm
from .dropout import *  # noqa: F401,F403
from .sparse import Embedding, EmbeddingBag
from .pixelshuffle import ChannelShuffle, PixelShuffle, PixelUnshuffle
from .rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell, RNNCellBase
from .attention import MultiheadAttention
from .lazy import *  # noqa: F401,F403
from .adaptive import AdaptiveLogSoftmaxWithLoss
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
                          TransformerEncoderLayer)
