"""Training: recipes and profiles as data, the training loop, the model cache, and many runs at once.

Owns :class:`~.recipes.Recipe` and :class:`~.recipes.MeasurementSettings` (:mod:`.recipes`), profiles read
from TOML (:mod:`.profiles`), the training loss, one builder of a recipe's batches and targets that the loop
trains on and the Hessian replays (:mod:`.loss`), the seeded training loop (:mod:`.loop`), the cache of trained
weights keyed by the recipe and the training code's source hash (:mod:`.checkpoints`), and parallel runs
(:mod:`.parallel`).

May import: :mod:`model_props.zoo`, :mod:`model_props.data`, :mod:`model_props.cache` and the foundation
(:mod:`model_props.errors`, :mod:`model_props.provenance`). This ``__init__`` imports nothing, so that
reading a profile stays free of torch (the pytest plugin reads one before it knows it is used).
"""
