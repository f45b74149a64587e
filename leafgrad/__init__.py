"""leafgrad: define-by-run reverse-mode autodiff on NumPy with PyTorch semantics."""
