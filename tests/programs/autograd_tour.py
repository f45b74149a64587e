"""Autograd as programs use and inspect it: grad_fn names and next_functions, backward with a
gradient argument, retain_graph, autograd.grad with create_graph for a second derivative, the
grad-mode managers and detach."""
import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
w = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]], requires_grad=True)
h = w @ x
y = torch.tanh(h).sum() * 2 + (x ** 2).mean()
print(h, h.grad_fn, h.grad_fn.name())
print(y.grad_fn.name(), [type(f).__name__ if f else None for f, _ in y.grad_fn.next_functions])
print('leaves:', x.is_leaf, w.is_leaf, h.is_leaf, 'requires_grad:', h.requires_grad)

y.backward(retain_graph=True)
print('x.grad', x.grad, 'w.grad', w.grad)
y.backward()
print('after a second backward (accumulated):', x.grad)
x.grad.zero_()

v = x * torch.tensor([1.0, 10.0, 100.0])
v.backward(gradient=torch.tensor([1.0, 0.5, 0.25]))
print('vector-Jacobian product:', x.grad)

z = torch.tensor(2.0, requires_grad=True)
f = z ** 3 + torch.sin(z)
(df,) = torch.autograd.grad(f, z, create_graph=True)
(d2f,) = torch.autograd.grad(df, z)
print(f'f={f.item():.5f} df={df.item():.5f} d2f={d2f.item():.5f} df.requires_grad={df.requires_grad}')

a = torch.ones(2, requires_grad=True)
with torch.no_grad():
    b = a * 2
    with torch.enable_grad():
        c = a * 3
print('no_grad:', b.requires_grad, 'enable_grad inside no_grad:', c.requires_grad)
with torch.set_grad_enabled(False):
    print('set_grad_enabled(False):', (a * 2).requires_grad, torch.is_grad_enabled())
with torch.inference_mode():
    d = a * 4
print('inference_mode:', d.requires_grad, torch.is_grad_enabled())


@torch.no_grad()
def predict(t):
    return t * 5


print('decorated no_grad:', predict(a).requires_grad)
e = (a * 2).detach()
print('detached:', e.requires_grad, e.grad_fn, (a * 2).detach_().is_leaf)
print(torch.autograd.grad((a ** 2).sum(), a))
out = torch.stack([a.sum(), (a * a).sum()])
print(torch.autograd.grad(out, a, grad_outputs=torch.tensor([1.0, 1.0])))
jac = torch.autograd.functional.jacobian(lambda t: t ** 2 + t.sum(), torch.tensor([1.0, 2.0]))
print(jac)
print(torch.autograd.functional.hessian(lambda t: (t ** 3).sum(), torch.tensor([1.0, -2.0])))
