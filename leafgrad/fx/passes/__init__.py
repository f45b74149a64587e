"""``torch.fx.passes``: passes over a GraphModule (``shape_prop``)."""
