"""A minimal pytree: leaves in (nested) tuples, lists and dicts, flattened to a list and a
structure and built again, as the function transforms (``leafgrad.func``) and ``vmap`` take
their arguments and results. It imports nothing: both sit on it."""


def _flatten(tree):
    if isinstance(tree, (tuple, list)):
        leaves, specs = [], []
        for item in tree:
            lv, spec = _flatten(item)
            leaves += lv
            specs.append(spec)
        return leaves, (type(tree), specs)
    if isinstance(tree, dict):
        leaves, specs = [], []
        for key, item in tree.items():
            lv, spec = _flatten(item)
            leaves += lv
            specs.append((key, spec))
        return leaves, (dict, specs)
    return [tree], None


def _unflatten(leaves, spec):
    it = iter(leaves)

    def build(spec):
        if spec is None:
            return next(it)
        kind, children = spec
        if kind is dict:
            return {key: build(child) for key, child in children}
        if hasattr(kind, '_fields'):  # a named tuple (values, indices)
            return kind(*[build(child) for child in children])
        return kind(build(child) for child in children)
    return build(spec)


def _treespec(tree, depth=0):
    """A structure as PyTorch's pytree prints it: ``TreeSpec(tuple, None, [*, *])``."""
    if isinstance(tree, (tuple, list, dict)):
        kind = type(tree).__name__
        context = repr(list(tree)) if isinstance(tree, dict) else 'None'
        children = [_treespec(c, depth + 1) for c in (tree.values() if isinstance(tree, dict) else tree)]
        joined = (',\n' + ' ' * (2 * depth + 2)).join(children)
        return f'TreeSpec({kind}, {context}, [{joined}])'
    return '*'
