"""Data: the procedural dead-leaves default (:mod:`.deadleaves`), CIFAR-10/100 and ImageFolder trees with a
validation split carved from the training images (:mod:`.datasets`), and training augmentation (:mod:`.augment`).

May import: :mod:`model_props.cache` (the dataset cache) and the foundation (:mod:`model_props.errors`).
"""

from .datasets import DATASETS, DEFAULT_DATASET, ImageDataset, Split, class_balanced_subset, load_dataset
from .deadleaves import SHAPES, DeadLeavesConfig, render_dead_leaves

__all__ = [
    "DATASETS",
    "DEFAULT_DATASET",
    "ImageDataset",
    "Split",
    "class_balanced_subset",
    "load_dataset",
    "SHAPES",
    "DeadLeavesConfig",
    "render_dead_leaves",
]
