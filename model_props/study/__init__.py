"""The seed study: running it, building it in shards, and judging whether the code still computes what built it.

Owns running a profile's seed study (:mod:`.run`: every recipe trained with several seeds, every claim part measured
on each), its checks (:mod:`.checks`) and readable report (:mod:`.report`), generations built in shards that land one
seed at a time (:mod:`.generation`), the canaries that judge later code by what it computes (:mod:`.canaries`) and
the ``expectations`` command that writes the reviewed snapshot (:mod:`.expectations`). The study read back as
evidence is :mod:`model_props.verdicts.study`.

May import: :mod:`model_props.store`, :mod:`model_props.config` and the layers beneath them.
"""
