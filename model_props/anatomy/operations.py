"""The torch operations the tracer tells apart, by the role they play in a module's forward pass."""

from __future__ import annotations

__all__ = ["ALIAS", "SOFTMAX_PASS", "MATMUL", "ADD", "CONV", "ACTIVATIONS", "POOL"]

# views: the same values, another shape
ALIAS = frozenset(
    "view reshape permute transpose flatten unflatten contiguous view_as reshape_as movedim swapaxes".split()
)
# what attention weights may go through between the softmax and the product with V: views, dropout, a linear
# map or 1x1 conv across heads ("talking heads": CaiT, EfficientFormerV2) and elementwise mixing with other
# weights (ConViT's gated positional attention)
SOFTMAX_PASS = ALIAS | frozenset(
    "dropout to type_as float clone __getitem__ expand expand_as squeeze unsqueeze detach linear conv2d mul __mul__ "
    "__rmul__ add __add__ __radd__ sub __sub__ __rsub__ div __truediv__".split()
)
MATMUL = frozenset("matmul __matmul__ __rmatmul__ bmm baddbmm mm einsum".split())
ADD = frozenset("add add_ __add__ __iadd__ __radd__".split())
CONV = frozenset("conv1d conv2d conv3d conv_transpose2d".split())
ACTIVATIONS = frozenset("relu gelu silu hardswish leaky_relu elu mish".split())
POOL = frozenset("avg_pool2d max_pool2d avg_pool1d max_pool1d lp_pool2d max_pool2d_with_indices".split())
