"""The claim suite: one test per (claim, model under test), generated from the catalogue.

Run it from any project that has model-props installed::

    pytest --pyargs model_props.suite --model mypkg.models:build --checkpoint=runs/best.safetensors

or pull it into a test module of your own with ``from model_props.suite.test_claims import *``.

May import: :mod:`model_props.claims` (the catalogue); everything else reaches the tests through the plugin's
fixtures.
"""
