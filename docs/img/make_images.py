"""Regenerate the pictures in docs/img (needs Graphviz's dot): python docs/img/make_images.py"""
import os
import leafgrad as torch
from leafgrad import viz

HERE = os.path.dirname(os.path.abspath(__file__))


def save(graph, name):
    graph.render(os.path.join(HERE, name + '.svg'))


def main():
    save(viz.legend(), 'legend')

    w = torch.tensor([1., 2., 3.], requires_grad=True)
    data = torch.tensor([10., 10., 10.])
    h = w * 2
    loss = (h * data).exp().sum()
    names = dict(w=w, data=data, loss=loss)
    save(viz.draw(loss, params=names), 'lesson_before_backward')
    loss.backward()
    save(viz.draw(loss, params=names), 'lesson_after_backward')

    a = torch.tensor([1., 2.], requires_grad=True)
    b = a * 3
    b.retain_grad()
    c = b.tanh()

    def log_grad(grad):
        return None

    c.register_hook(log_grad)
    save(viz.draw(c.sum(), params=dict(a=a, b=b, c=c)), 'retain_and_hook')

    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1))
    x = torch.randn(2, 4)
    out = model(x).sum()
    save(viz.draw(out, params=dict(model.named_parameters(), x=x)), 'mlp')


if __name__ == '__main__':
    main()
