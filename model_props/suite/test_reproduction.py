"""This machine reproduces the seed study: a reference's own weights, trained here, fall inside the study's
prediction intervals on every estimate the claims read and on its accuracy (Holm within a reference,
5 % family-wise over the run's references)."""

__all__ = ["test_reproduces_the_seed_study"]


def test_reproduces_the_seed_study(reproduction):
    assert not reproduction.failed, reproduction.message()
