"""Configuration: the options declared once (:mod:`.options`: pytest options, ``[tool.model_props]`` keys, CLI flags)
and the settings a session merges from them (:mod:`.settings`).

May import: :mod:`model_props.verdicts` and the layers beneath it. This ``__init__`` imports nothing, so that
importing :mod:`.options` stays free of torch (the pytest plugin reads it before it knows it is used).
"""
