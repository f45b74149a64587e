"""The exceptions torch._dynamo raises, under leafgrad's name (``leafgrad._dynamo.exc``)."""


class TorchDynamoException(RuntimeError):
    pass


class Unsupported(TorchDynamoException):
    """What ``compile(..., fullgraph=True)`` raises at a graph break or at a call it cannot replay."""


class InvalidBackend(TorchDynamoException):
    def __init__(self, message):
        super().__init__(message)


class BackendCompilerFailed(TorchDynamoException):
    pass


class FailOnRecompileLimitHit(Exception):
    """A ``fullgraph=True`` compiled callable met more signatures than its recompile limit."""
