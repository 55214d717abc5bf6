"""Measurements: per-model reports, each computed once per model and checkpoint and cached.

Owns one module per report kind (:mod:`.units`: every unit-level measure from one forward pass per batch;
:mod:`.spectrum`: Hessian spectra; :mod:`.fit`; :mod:`.noise`; :mod:`.corruption`; :mod:`.attack`;
:mod:`.lesion`), how reports are stored (:mod:`.cache`) and the registry that measures or loads a report
(:mod:`.registry`). A report keeps per-sample values so that claims can bootstrap over its sampling unit.

May import: :mod:`model_props.measurements.functional`, :mod:`model_props.anatomy`, :mod:`model_props.training` (the
profile's measurement settings), :mod:`model_props.data`, :mod:`model_props.zoo`, :mod:`model_props.cache`
and the foundation. This ``__init__`` imports nothing: each report kind's cache key hashes the import closure
of its own module only, so a change to one kind does not invalidate the others.
"""
