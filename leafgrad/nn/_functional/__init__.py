"""nn.functional's implementation, one module per kind of op; ``nn/functional.py`` re-exports."""
