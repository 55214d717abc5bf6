"""Datasets: the procedural dead-leaves default, CIFAR-10/100 and ImageFolder trees."""
from .datasets import DATASETS, DEFAULT_DATASET, ImageDataset, Split, class_balanced_subset, load_dataset
from .deadleaves import SHAPES, DeadLeavesConfig, render_dead_leaves

__all__ = [
    "DATASETS", "DEFAULT_DATASET", "ImageDataset", "Split", "class_balanced_subset", "load_dataset",
    "SHAPES", "DeadLeavesConfig", "render_dead_leaves",
]
