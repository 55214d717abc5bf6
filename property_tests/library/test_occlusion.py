"""Random patch occlusion against a pixel-by-pixel reference, and the occlusion report on a trained model."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from model_props.measurements.functional.occlusion import occlude, occlusion_masks
from model_props.measurements.occlusion import OcclusionReport


def naive_mask(size: int, cell: int, oy: int, ox: int, chosen: set[tuple[int, int]]) -> np.ndarray:
    """Pixel (r, c) is occluded when the cell it falls in, counted from the cut cell before the offset, is chosen."""
    return np.array(
        [[((r - oy) // cell + 1, (c - ox) // cell + 1) in chosen for c in range(size)] for r in range(size)]
    )


@pytest.mark.parametrize(("size", "cell"), [(32, 8), (30, 8), (32, 4), (17, 6)])
def test_masks_are_whole_cells_of_an_odd_offset_grid_half_of_them_chosen(size, cell):
    masks = occlusion_masks(40, size, cell=cell, generator=torch.Generator().manual_seed(0)).numpy()
    for mask in masks:
        # recover the offset from the first change along the rows and columns of a cell boundary
        found = None
        for oy in range(1, cell, 2):
            for ox in range(1, cell, 2):
                rows, cols = (size - 1 - oy) // cell + 2, (size - 1 - ox) // cell + 2
                cells = {(i, j) for i in range(rows) for j in range(cols)}
                chosen = {(i, j) for i, j in cells if mask[min(size - 1, max(0, (i - 1) * cell + oy)), min(size - 1, max(0, (j - 1) * cell + ox))]}  # fmt: skip
                if (naive_mask(size, cell, oy, ox, chosen) == mask).all() and len(chosen) == round(len(cells) / 2):
                    found = (oy, ox)
        assert found is not None, "no odd-offset grid with half of its cells chosen reproduces the mask"


def test_the_same_generator_seed_gives_the_same_masks_and_occlude_fills_only_the_mask():
    a = occlusion_masks(8, 32, generator=torch.Generator().manual_seed(5))
    b = occlusion_masks(8, 32, generator=torch.Generator().manual_seed(5))
    assert torch.equal(a, b) and not torch.equal(a, occlusion_masks(8, 32, generator=torch.Generator().manual_seed(6)))
    x = torch.rand(8, 3, 32, 32)
    fill = torch.tensor([0.1, 0.2, 0.3])
    y = occlude(x, a, fill)
    assert torch.equal(y[~a[:, None].expand_as(x)], x[~a[:, None].expand_as(x)])
    assert torch.equal(y.permute(0, 2, 3, 1)[a], fill.expand(int(a.sum()), 3))


def test_no_cell_edge_falls_on_a_4_pixel_token_boundary():
    masks = occlusion_masks(200, 32, generator=torch.Generator().manual_seed(1)).numpy()
    edges = np.flatnonzero(np.diff(masks.astype(int), axis=2).any(axis=(0, 1))) + 1  # columns where a mask changes
    assert edges.size and (edges % 2 == 1).all() and not (edges % 4 == 0).any()


def test_relative_drop_reads_chance_and_the_ceiling():
    report = OcclusionReport(np.array([1, 1, 1, 1, 0] * 4, bool), np.array([1, 0, 0, 0, 0] * 4, bool), 10)
    assert report.relative_drop() == pytest.approx((0.8 - 0.2) / (0.8 - 0.1))
    assert np.isnan(OcclusionReport(np.zeros(4, bool), np.zeros(4, bool), 10).relative_drop())
    again = OcclusionReport.from_arrays(report.to_arrays())
    assert again.num_classes == 10 and np.array_equal(again.occluded_correct, report.occluded_correct)


def test_a_trained_model_loses_accuracy_under_occlusion(model_store):
    """ResNet and ViT (seed 0): half of the image occluded costs accuracy, a relative drop in (0, 1.2] (above 1:
    worse than chance), measured on the profile's corruption_images."""
    reports = {name: model_store.report(name, "occlusion") for name in ("resnet", "vit")}
    for name, r in reports.items():
        assert r.size("images") == model_store.profile.measurement.corruption_images and r.num_classes == 10
        assert 0 < r.relative_drop() <= 1.2, name
    assert reports["resnet"].clean_correct.mean() > 0.9
