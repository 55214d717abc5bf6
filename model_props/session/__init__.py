"""The session: settings from options and the project's pyproject, the models under test, the seed study.

Owns the option declaration (:mod:`.options`, light: the pytest plugin reads it before it knows it is used),
the merged settings (:mod:`.settings`), the model store that builds, trains or loads each model once and
serves its measurement reports (:mod:`.store`) and loads a user's weights files (:mod:`.weights`), training ahead of the tests (:mod:`.pretraining`), pretrained
models on the user's image folder (:mod:`.pretrained`), how each model is judged (:mod:`.routes`), running a
profile's seed study (:mod:`.study`), building it in shards that land one seed at a time (:mod:`.generation`), and
its canaries (:mod:`.canaries`).

May import: :mod:`model_props.claims` and every layer beneath it. This ``__init__`` imports nothing, so that
importing :mod:`.options` stays free of torch.
"""
