"""leafgrad.nn: modules, parameters, functional ops and initialisation."""
from .parameter import Parameter
from .modules import *  # noqa: F401,F403
from . import functional, init
