"""leafgrad.optim: optimizers that update leaves in place under no_grad, and lr schedulers."""
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam, AdamW, Adamax, NAdam, RAdam
from .rmsprop import Adadelta, Adagrad, RMSprop
from .rprop import ASGD, Rprop
from .lbfgs import LBFGS
from . import lr_scheduler
