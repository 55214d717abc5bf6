"""Mutation: mutants, models on which a claim is false by construction (:mod:`.mutants`, with the modules they put in
place of a model's own, :mod:`.modules`), so that every claim part is shown able to fail.

May import: :mod:`model_props.session` (a mutant is a model under test) and every layer beneath it.
"""
