from .module import Module
from .linear import Identity, Linear
from .activation import ReLU, Sigmoid, Tanh
from .container import Sequential
