"""The rule that maps any model to its units, from what its modules do (Park & Kim 2022, App. A; docs/design.md#anatomy).

The unit kinds are defined in :mod:`.model`. A residual unit whose output has fewer positions than its
input (a strided block with a projection shortcut) is a ``conv`` unit with ``subsamples=True``.

**The rule.** One probe forward pass is traced (:mod:`.tracer`). Every *residual addition* -
``x + f(x)`` inside a module's forward, where ``x`` is that module's input (or a view of it, or an earlier
residual sum of the same call) and ``f(x)`` was computed by its children; or, for projection and
pre-activated shortcuts, the cheaper of two operands computed from the input - is a unit, in forward order.
Its kind comes from the operations of the branch: attention (``softmax(QK^T) V`` or
``scaled_dot_product_attention``) makes ``msa``, a convolution wider than 1x1 or a pooling window makes
``conv``, anything else ``mlp``. Where the stream between two residual units is changed by modules outside
them, that change is a unit of its own (``subsample`` if the number of positions changes, else ``conv``;
``msa`` if it attends, as LeViT's attention downsampling does). A model without residual additions (VGG,
Inception, DenseNet) has as units the outputs of its stages (timm's ``feature_info``), else of its top-level
layers. Attention over as many keys as the map has positions is global, over fewer (windows) local; a model
with any local attention is ``local_msa``.

No family adapters: the rule reproduces the units, taps and traits of the five references (a test captures
identical tensors), and it sees what class names hide (MobileViT's transformer inside a conv block, EdgeNeXt's
cross-covariance attention, MetaFormer token mixers, RegNet's post-activated projections).

A unit says *where* its tensors live as :class:`Tap` s (module path, input or output, memory layout), not
how to compute them: :mod:`.capture` reads every tap of every unit in one forward pass.
"""

from __future__ import annotations

from dataclasses import replace

from torch import nn

from ..errors import AnatomyError
from ..zoo.wrapper import unwrap
from .mapper import Mapper
from .model import Anatomy, numbered

__all__ = ["anatomy"]


def _traced(model: nn.Module, img_size: int) -> Anatomy:
    """The units of any model, from what its modules do in one traced forward pass (module docstring)."""
    try:
        mapper = Mapper(model, img_size)
    except Exception as exc:  # the probe pass itself failed: say so in one line
        raise AnatomyError(
            f"cannot map {type(unwrap(model)).__name__} into units: its forward pass on "
            f"3x{img_size}x{img_size} images raised {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        ) from exc
    units, traits = mapper.units()
    if not units:
        units, traits = mapper.layer_units(), {"conv"}
    if len(units) < 2:
        net = unwrap(model)
        top = ", ".join(f"{n}: {type(c).__name__}" for n, c in net.named_children()) or "no submodules"
        raise AnatomyError(
            f"cannot map {type(net).__name__} into units: a traced forward pass found no residual "
            f"additions (x + f(x)) and no stage outputs with feature maps; its top-level modules are: {top}"
        )
    staged, stage, previous = [], 0, None
    for unit, positions in units:  # a new stage wherever the number of spatial positions changes
        if previous is not None and positions != previous:
            stage += 1
        staged.append(replace(unit, stage=stage))
        previous = positions
    return numbered(getattr(model, "name", None) or type(unwrap(model)).__name__, staged, traits)


def anatomy(model: nn.Module, img_size: int | None = None) -> Anatomy:
    """The ordered units of ``model`` (a :class:`~model_props.zoo.Classifier` or a bare network), traced at
    ``img_size`` (default: the Classifier's, else 32)."""
    if not img_size:
        img_size = getattr(model, "img_size", 32)
    return _traced(model, img_size)
