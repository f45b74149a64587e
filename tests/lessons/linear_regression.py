import torch

# Training data
x = torch.linspace(0, 10, 100)
y_true = 3 * x + 2 + torch.randn(100) * 0.5

# Model parameters
w = torch.randn(1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)

learning_rate = 0.01
for epoch in range(100):
    # Forward pass
    y_pred = w * x + b
    loss = (y_pred - y_true).pow(2).mean()

    # Backward pass
    loss.backward()

    # Update parameters (no autograd tracking)
    with torch.no_grad():
        w -= learning_rate * w.grad
        b -= learning_rate * b.grad

    # Zero gradients
    w.grad.zero_()
    b.grad.zero_()

print(f"Learned w: {w.item():.3f}, b: {b.item():.3f}")
