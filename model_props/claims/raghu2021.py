"""Raghu et al., "Do Vision Transformers See Like Convolutional Neural Networks?" (NeurIPS 2021): the paper,
and the scope its attention claims share.

Its claims, one module per topic: :mod:`.raghu2021_skip` (Sec. 5, skip connections), :mod:`.raghu2021_attention`
(Sec. 4, local and global attention), :mod:`.raghu2021_location` (Sec. 6, location probes) and
:mod:`.raghu2021_similarity` (Sec. 3, cross-model CKA).
"""

from __future__ import annotations

from .base import Paper, needs_traits

PAPER = Paper(
    key="raghu2021",
    title="Do Vision Transformers See Like Convolutional Neural Networks?",
    authors="Maithra Raghu, Thomas Unterthiner, Simon Kornblith, Chiyuan Zhang, Alexey Dosovitskiy",
    venue="NeurIPS 2021",
    arxiv="2108.08810",
)

has_global_attention = needs_traits(any_of=("global_msa",))
