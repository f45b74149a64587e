"""Stands in for PyTorch when tests run with LEAFGRAD_NO_ORACLE=1 (tests/conftest.py puts this
folder first on the path): importing it fails as on a machine without PyTorch."""
raise ModuleNotFoundError("No module named 'torch' (LEAFGRAD_NO_ORACLE=1 hides it)", name='torch')
