"""The model store: every model a session reads, built, trained or loaded once, and its measurement reports.

Owns the store itself (:mod:`.model_store`: references and variants trained by recipe, a user's ``--checkpoint``
files, each training seed with its own measurement sample), a model under test (:mod:`.tested`), reading a user's
weights files (:mod:`.weights`), pretrained models on the user's image folder (:mod:`.pretrained`), the measurement
samples (:mod:`.samples`), the pair reports of two models on the same inputs and their independent runs
(:mod:`.pairs`), the measuring task a worker runs (:mod:`.tasks`), and the tasks that killed every worker that ran
them, which a test is refused in one line instead of running again in its process (:mod:`.lost`).

May import: :mod:`model_props.config`, :mod:`model_props.verdicts` and the layers beneath them.
"""
