"""leafgrad.optim: optimizers that update leaves in place under no_grad."""
from .optimizer import Optimizer
from .sgd import SGD
