"""leafgrad.nn: modules, parameters, functional ops, initialisation and utilities."""
import importlib

from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter
from .modules import *  # noqa: F401,F403
from .modules import MultiheadAttention, TransformerEncoderLayer  # noqa: F401
from . import functional, init, utils
# the package nn.attention, in place of modules/attention.py, which the star import bound
attention = importlib.import_module('.attention', __name__)


def __getattr__(name):
    # nn.parallel loads on first use (DistributedDataParallel, DataParallel)
    if name in ('parallel', 'DataParallel'):
        parallel = importlib.import_module('.parallel', __name__)
        return parallel if name == 'parallel' else parallel.DataParallel
    raise AttributeError(f"module 'leafgrad.nn' has no attribute '{name}'")
