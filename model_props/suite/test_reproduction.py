"""This machine reproduces the seed study: a reference's family (the reference and its variants), trained here with
the profile's live seed (which no study holds), falls inside the study's prediction intervals on every estimate the
claims read and on every accuracy (Holm within a reference, 5 % family-wise over the run's references); a live
estimate undefined where the study's is defined fails."""

__all__ = ["test_reproduces_the_seed_study"]


def test_reproduces_the_seed_study(reproduction):
    assert not reproduction.failed, reproduction.message()
