"""This repository runs the packaged claim suite (``model_props.suite``) as a user's project would."""

from model_props.suite.test_claims import *  # noqa: F401,F403
from model_props.suite.test_gate import *  # noqa: F401,F403
from model_props.suite.test_reproduction import *  # noqa: F401,F403
