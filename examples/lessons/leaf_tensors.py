"""Lesson "requires_grad and leaf tensors": the lesson's program, then its graph and explanations.

The first four lines of output are exactly the lesson's (with leafgrad for torch); the graph
goes to examples/out/leaf_tensors.svg (and .dot).
"""
import warnings

import leafgrad as torch
from leafgrad import viz

from _common import out_dir, parser, save_graph


def main(argv=None):
    args = parser(__doc__).parse_args(argv)
    out = out_dir(args.out)

    w = torch.tensor([1., 2., 3.], requires_grad=True)   # a leaf: you made it
    data = torch.tensor([10., 10., 10.])                 # a leaf too, no grad wanted
    h = w * 2                                            # made BY an operation: not a leaf
    loss = (h * data).sum()

    print(w.is_leaf, data.is_leaf, h.is_leaf)
    print(w.requires_grad, data.requires_grad, h.requires_grad)

    names = dict(w=w, data=data, h=h, loss=loss)
    before = viz.draw(loss, params=names)                # before backward: what is saved
    loss.backward()
    print(w.grad)      # populated: leaf with requires_grad=True
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')                  # the lesson explains this warning
        print(h.grad)      # None: non-leaf grads are used, then thrown away

    save_graph(before, out, 'leaf_tensors')
    save_graph(viz.draw(loss, params=names), out, 'leaf_tensors_after_backward')
    print()
    for name in ('w', 'data', 'h'):
        print(f'--- explain({name})')
        print(torch.explain(names[name], names))


if __name__ == '__main__':
    main()
