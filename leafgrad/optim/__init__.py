"""leafgrad.optim: optimizers that update leaves in place under no_grad, and lr schedulers."""
import importlib

from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam, AdamW, Adamax, NAdam, RAdam
from .sparse_adam import SparseAdam
from .rmsprop import Adadelta, Adagrad, RMSprop
from .rprop import ASGD, Rprop
from .lbfgs import LBFGS
from .adafactor import Adafactor
from .muon import Muon
from . import lr_scheduler


def __getattr__(name):
    # swa_utils builds on nn (AveragedModel is a Module): loaded on first use
    if name == 'swa_utils':
        return importlib.import_module('.swa_utils', __name__)
    raise AttributeError(f"module 'leafgrad.optim' has no attribute '{name}'")
