"""torch._inductor's ``config``: leafgrad.compile has no Inductor (it replays NumPy calls, see
docs/compile.md); the settings of programs written for it are accepted, and warn once that
they have no effect here."""
from . import config  # noqa: F401
