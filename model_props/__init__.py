"""model-props: published findings about vision models as executable, statistically honest tests."""
__version__ = "0.1.0"
