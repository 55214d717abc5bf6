"""A user's checkpoint file loaded into the model built for it, with a one-line answer for the two files given by
mistake most often: a folder, and a whole pickled ``nn.Module``. Torch refuses the latter under
``weights_only=True`` with a page of advice on allow-listing globals, which is the wrong fix here: unpickling runs
code, and a state dict is the portable form of the weights.

The answers belong in the reader itself (``zoo.registry``), where a pretrained ``=FILE`` would get them too; it sits in
the import closure of the seed study's canary code digests, so that move waits for the next study generation."""

from __future__ import annotations

import pickle
from pathlib import Path

from torch import nn

from ..errors import CheckpointError
from ..zoo import load_checkpoint

__all__ = ["load_user_checkpoint"]

SAVE_WEIGHTS = "torch.save(model.state_dict(), PATH) or safetensors' save_file(model.state_dict(), PATH)"


def load_user_checkpoint(model: nn.Module, path: Path) -> None:
    """Load the weights file ``path`` (a --checkpoint, or a gate's baseline) into ``model``."""
    path = Path(path).expanduser()
    if path.is_dir():
        raise CheckpointError(
            f"--checkpoint {str(path)!r} is a folder; give the weights file, saved with {SAVE_WEIGHTS}"
        )
    try:
        load_checkpoint(model, path)
    except CheckpointError as exc:
        if isinstance(exc.__cause__, pickle.UnpicklingError):
            raise CheckpointError(
                f"--checkpoint {str(path)!r} holds pickled Python objects (a whole nn.Module?), which are not "
                f"loaded because unpickling runs code; save the weights with {SAVE_WEIGHTS}"
            ) from None
        raise
