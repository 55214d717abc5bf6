"""The Allure report configuration (``allurerc.mjs``) and its pinned npm package; installed as
``model_props.reports``. Generated reports also land in this folder of a checkout (git-ignored)."""
