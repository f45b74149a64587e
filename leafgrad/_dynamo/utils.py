"""torch._dynamo.utils' ``counters``: what compiled calls have done, counted by kind, as
PyTorch's (``counters["stats"]["unique_graphs"]``, ``counters["graph_break"][reason]``).

leafgrad counts, per trace: ``frames`` ``total`` and ``ok`` (a trace that ended without an
exception); ``stats`` ``unique_graphs`` (a program made) and ``calls_captured`` (its ops);
``graph_break`` by reason. A signature with a graph break runs eagerly here, where PyTorch
compiles the code on either side as separate graphs: there PyTorch counts those graphs and
leafgrad none."""
import collections

counters = collections.defaultdict(collections.Counter)
