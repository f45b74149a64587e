"""torch._dynamo.testing's counters of compilation, as a ``backend``:
``compile(fn, backend=CompileCounter())`` replays as the default backend does and counts the
programs it makes (``frame_count``) and their ops (``op_count``). A graph break makes no program
here (the signature runs eagerly), where PyTorch compiles a graph on either side of it; and an
op count is leafgrad's, which may count an op PyTorch decomposes otherwise."""


class CompileCounter:
    def __init__(self):
        self.frame_count = 0
        self.op_count = 0

    def clear(self):
        self.frame_count = 0
        self.op_count = 0

    def _counted(self, n_ops):  # (called by leafgrad.compile for each program it makes)
        self.frame_count += 1
        self.op_count += n_ops


class CompileCounterWithBackend(CompileCounter):
    """A CompileCounter naming the backend it compiles with (one of ``list_backends()``'s,
    checked by ``compile``)."""

    def __init__(self, backend):
        super().__init__()
        self.backend = backend
