"""Judging a model in this session: which models it trains ahead, how each is judged, and the evidence a claim reads.

Owns training ahead of the tests (:mod:`.pretraining`), what a session trains live (:mod:`.live`), how each model is
judged (:mod:`.routes`), gathering a claim's evidence at its scope and handing it to the judge (:mod:`.judging`),
the recipe a checkpoint judgement reads from the seed study (:mod:`.study_side`), the live values a reproduction
reads (:mod:`.reproduction`) and the input checks (:mod:`.inputs`).

May import: :mod:`model_props.study`, :mod:`model_props.store`, :mod:`model_props.config` and every layer beneath
them.
"""
