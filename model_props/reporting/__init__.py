"""Reporting: what a run tells its reader: the session summary (``reports/summary.{json,md}`` and the terminal
verdict table, :mod:`.summary`), Allure labels and attachments (:mod:`.allure`), the figures the papers would
show (:mod:`.figures`) and the offline Allure HTML report (:mod:`.html`).

May import: :mod:`model_props.claims` and the layers beneath it. It never measures: it formats what the
claims layer decided.
"""
