"""torch.fx programs, run by tests/test_fx.py once with PyTorch (``python fx_cases.py``) and once
on leafgrad (``python -m leafgrad fx_cases.py``): each case's printed output, or its exception's
type and message, as one JSON object {case: outcome} on stdout.

A program of its own because importing torch.fx switches on ``__torch_function__`` dispatch in
every leafgrad function for the rest of the process (leafgrad/overrides.py): the other tests run
without it."""
import contextlib
import io
import json
import math
import operator
import sys

try:
    import torch
    import torch.fx as fx
except ImportError:  # (a program for PyTorch or `python -m leafgrad`: tests/test_fx.py runs it both ways)
    raise SystemExit('tests/fx_cases.py runs with PyTorch or under python -m leafgrad')

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def lowp_sigmoid(x):
    return x.float().sigmoid().half()


def lowp_add(a, b):
    return (a.float() + b.float()).half()


fx.wrap(lowp_sigmoid)
fx.wrap('lowp_add')


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.lin = torch.nn.Linear(3, 4)
        self.seq = torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Linear(4, 2))
        self.w = torch.nn.Parameter(torch.ones(2))
        self.register_buffer('b', torch.zeros(2))

    def forward(self, x, y=None, *, k=3):
        a = self.lin(x)
        s = a.sum(dim=1, keepdim=True)
        t = self.seq(a) * self.w + self.b
        u = t[:, 0], t[..., 1:]
        v = torch.cat([u[0].unsqueeze(1), u[1]], dim=-1).to(torch.float64)
        f = torch.nn.functional.relu(v)
        g = torch.nn.functional.dropout(f, 0.5, training=False)
        h = a.size(0)
        return {'out': g + h, 'n': -s, 'z': (x.shape, 2 ** t)}


@case
def module_code_graph_and_values():
    gm = fx.symbolic_trace(Net())
    print(gm.code)
    print(gm.graph)
    print(gm)
    x = torch.arange(6.).reshape(2, 3)
    out, ref = gm(x), Net()(x)
    print(torch.equal(out['out'], ref['out']), torch.equal(out['n'], ref['n']), out['z'][0] == ref['z'][0])
    print(type(gm).__name__, [n for n, _ in gm.named_parameters()], [n for n, _ in gm.named_buffers()])


@case
def function_operators_methods_attributes():
    def f(x, y):
        return torch.max(x, 1), x @ y, x.view(-1, 2).T, abs(x), x.float().int(), x[0] > y[0, 0], ~(x < 2)
    g = fx.symbolic_trace(f)
    print(g.code)
    print(g.graph)
    for n in g.graph.nodes:
        print(n.op, n.name, n.args, n.kwargs, list(n.users), n.all_input_nodes)
    x, y = torch.arange(4.).reshape(2, 2), torch.ones(2, 2)
    for got, want in zip(g(x, y)[1:], f(x, y)[1:]):
        print(torch.equal(got, want))


@case
def wrapped_functions_are_leaves():
    class Foo(torch.nn.Module):
        def forward(self, x, y):
            return lowp_add(lowp_sigmoid(x), lowp_sigmoid(y))
    traced = fx.symbolic_trace(Foo())
    print(traced.code)
    x = torch.randn(3)
    print(torch.equal(traced(x, x), Foo()(x, x)))


@case
def graph_built_by_hand_inverts_a_function():
    inverse = {torch.sin: torch.arcsin, torch.exp: torch.log, torch.tan: torch.arctan}

    def f(x):
        return torch.exp(torch.tan(x))
    traced = fx.symbolic_trace(f)
    new_graph, env = fx.Graph(), {}
    for node in reversed(traced.graph.nodes):
        if node.op == 'call_function':
            env[node.args[0].name] = new_graph.call_function(inverse[node.target], (env[node.name],))
        elif node.op == 'output':
            env[node.args[0].name] = new_graph.placeholder(node.name)
        else:
            new_graph.output(env[node.name])
    new_graph.lint()
    inv = fx.GraphModule(traced, new_graph)
    print(inv.code)
    x = torch.arange(5.) + 1
    print(torch.allclose(f(inv(x)), x))


@case
def proxies_on_a_graph_and_replacing_ops():
    graph = fx.Graph()
    tracer = fx.proxy.GraphAppendingTracer(graph)
    y = fx.Proxy(graph.placeholder('x'), tracer)
    z = fx.Proxy(graph.placeholder('y'), tracer)
    b = torch.tanh(torch.cat([y, z]))
    c = torch.neg(b)
    torch.add(b, c, alpha=2)
    graph.output(c.node)
    mod = fx.GraphModule(torch.nn.Module(), graph)
    print(mod.code)
    print(len(graph.nodes), graph.eliminate_dead_code(), mod.graph is graph)
    mod.recompile()
    print(mod.code)

    class M(torch.nn.Module):
        def forward(self, x, y):
            return x + y, torch.add(x, y), x.add(y)
    traced = fx.symbolic_trace(M())
    for n in traced.graph.nodes:
        if any(n.target == pattern for pattern in (operator.add, torch.add, 'add')):
            with traced.graph.inserting_after(n):
                new_node = traced.graph.call_function(torch.bitwise_and, n.args, n.kwargs)
                n.replace_all_uses_with(new_node)
            traced.graph.erase_node(n)
    traced.recompile()
    print(traced.code)
    a = torch.tensor([1, 2, 3])
    print(traced(a, torch.tensor([3, 3, 3])))


@case
def inlining_a_module_call_and_wrapping_the_output():
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.relu = torch.nn.ReLU()

        def forward(self, x, y):
            return self.relu(torch.cat([x, y])) + 1.0
    m = fx.symbolic_trace(M())
    tracer = fx.proxy.GraphAppendingTracer(m.graph)
    for node in m.graph.nodes:
        if (node.op, node.target) == ('call_module', 'relu'):
            with m.graph.inserting_before(node):
                proxy_args = fx.node.map_arg(node.args, lambda n: fx.Proxy(n, tracer))
                out = m.relu(*proxy_args)
                node.replace_all_uses_with(out.node)
                m.graph.erase_node(node)
    m.recompile()
    print(m.code)
    output_node = next(n for n in reversed(m.graph.nodes) if n.op == 'output')
    wrap_node = output_node.all_input_nodes[0]
    class Leaky(torch.nn.Module):  # (torch.nn's modules annotate forward's types; leafgrad's do not)
        def forward(self, x):
            return torch.nn.functional.leaky_relu(x, 0.2)
    act = fx.symbolic_trace(Leaky())
    print(act.code)
    with m.graph.inserting_after(wrap_node):
        output_node.args = (act(fx.Proxy(wrap_node)).node,)
    m.recompile()
    print(m.code)
    x = torch.tensor([-1., 2.])
    print(m(x, -x))


@case
def subgraph_rewriter():
    class M(torch.nn.Module):
        def forward(self, x, w1, w2):
            m1 = torch.cat([torch.neg(w1), w2]).sum()
            m2 = torch.cat([torch.neg(w1), w2]).sum()
            return x + torch.max(m1) + torch.max(m2)

    def pattern(a1, a2):
        return torch.cat([torch.neg(a1), a2]).sum()

    def replacement(w1, w2):
        return torch.stack([w1, w2])
    traced = fx.symbolic_trace(M())
    matches = fx.replace_pattern(traced, pattern, replacement)
    print(len(matches), [m.anchor.name for m in matches])
    print(traced.code)
    print(traced(torch.tensor(1.), torch.tensor([1., 2.]), torch.tensor([3., 4.])))


@case
def interpreter_and_transformer():
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(2, 2)

        def forward(self, x):
            return torch.sigmoid(self.lin(x)).sum(1)

    class NegSigmoid(fx.Transformer):
        def call_function(self, target, args, kwargs):
            if target is torch.sigmoid:
                return torch.neg(super().call_function(target, args, kwargs))
            return super().call_function(target, args, kwargs)
    torch.manual_seed(0)
    gm = fx.symbolic_trace(M())
    x = torch.ones(3, 2)
    print(torch.equal(fx.Interpreter(gm).run(x), gm(x)))
    new = NegSigmoid(gm).transform()
    print(new.code)
    print(torch.allclose(new(x), -torch.sigmoid(gm.lin(x)).sum(1)))


class Attention(torch.nn.Module):
    """minGPT's causal self-attention, small."""

    def __init__(self, slice_the_mask):
        super().__init__()
        torch.manual_seed(0)
        self.c_attn, self.c_proj, self.n_head = torch.nn.Linear(8, 24), torch.nn.Linear(8, 8), 2
        self.register_buffer('bias', torch.tril(torch.ones(4, 4)).view(1, 1, 4, 4))
        self.slice_the_mask = slice_the_mask

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        mask = self.bias[:, :, :T, :T] if self.slice_the_mask else self.bias
        att = torch.nn.functional.softmax(att.masked_fill(mask == 0, float('-inf')), dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


@case
def attention_block_unpacking_sizes_and_math():
    m = Attention(slice_the_mask=False)
    gm = fx.symbolic_trace(m)
    print(gm.code)
    x = torch.randn(2, 4, 8)
    print(torch.allclose(gm(x), m(x)))


@case
def attention_block_slicing_a_buffer_by_a_proxy():
    fx.symbolic_trace(Attention(slice_the_mask=True))


@case
def shape_propagation():
    from torch.fx.passes.shape_prop import ShapeProp
    gm = fx.symbolic_trace(Attention(slice_the_mask=False))
    ShapeProp(gm).propagate(torch.randn(2, 4, 8))
    for node in gm.graph.nodes:
        meta = node.meta.get('tensor_meta')
        if isinstance(meta, tuple) and hasattr(meta, 'shape'):
            print(node.name, meta.dtype, tuple(meta.shape), meta.stride, meta.requires_grad, meta.memory_format)
        else:
            print(node.name, node.meta['type'].__name__, meta)


@case
def control_flow_on_a_proxy():
    def f(x):
        if x.sum() > 0:
            return x
        return -x
    fx.symbolic_trace(f)


@case
def iterating_a_proxy():
    def f(x):
        return [a for a in x]
    fx.symbolic_trace(f)


@case
def erasing_a_used_node():
    g = fx.symbolic_trace(lambda x: torch.relu(x) + 1)
    relu = next(n for n in g.graph.nodes if n.op == 'call_function')
    g.graph.erase_node(relu)


@case
def ops_inside_vmap_and_profiler_still_seen():
    # torch.fx is loaded: the functions check their arguments for proxies, and must still meet
    # the replacements that vmap and the profiler put in place
    x = torch.arange(6.).reshape(2, 3)
    print(torch.func.vmap(torch.sin)(x))
    print(torch.func.vmap(lambda r: torch.cat([r, r]))(x).shape)
    with torch.autograd.profiler.profile() as prof:
        torch.sigmoid(x)
    print(sorted({e.name for e in prof.function_events}))


@case
def profiler_ranges_opened_and_closed_as_operators():
    x = torch.randn(3)
    with torch.autograd.profiler.profile() as prof:
        handle = torch.ops.profiler._record_function_enter('block')
        torch.relu(x)
        torch.ops.profiler._record_function_exit(handle)
    print([e.name for e in prof.function_events if not e.name.startswith('aten::')])


def main():
    outcomes = {}
    for name, fn in CASES.items():
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            try:
                fn()
                outcome = out.getvalue()
            except Exception as e:  # noqa: BLE001  the exception is the outcome
                outcome = out.getvalue() + f'{type(e).__name__}: {e}'
        outcomes[name] = outcome
    json.dump(outcomes, sys.stdout)


if __name__ == '__main__':
    main()
