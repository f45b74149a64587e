"""leafgrad.nn: modules, parameters, functional ops, initialisation and utilities."""
from .parameter import Parameter
from .modules import *  # noqa: F401,F403
from .modules import MultiheadAttention, TransformerEncoderLayer  # noqa: F401
from . import functional, init, utils
