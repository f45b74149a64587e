"""What the lesson examples share: where pictures go, and saving a graph as SVG (or DOT)."""
import argparse
import os

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(os.path.dirname(HERE), 'out')


def parser(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument('--out', default=DEFAULT_OUT, help='folder for pictures (default: examples/out)')
    return p


def out_dir(path):
    os.makedirs(path, exist_ok=True)
    return path


def save_graph(graph, out, name):
    """Write ``name``.dot always and ``name``.svg when Graphviz is installed; returns the paths."""
    from leafgrad import viz
    paths = [graph.render(os.path.join(out, name + '.dot'))]
    try:
        paths.append(graph.render(os.path.join(out, name + '.svg')))
    except viz.GraphvizNotFound as e:
        print(f'(no SVG: {e})')
    return paths


def pyplot():
    """matplotlib's pyplot on the file-only Agg backend, or None when matplotlib is missing."""
    try:
        import matplotlib
    except ImportError:
        print('(matplotlib is not installed: pip install matplotlib to get the pictures)')
        return None
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    return plt
