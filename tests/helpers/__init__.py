"""What the test files share: reference implementations, small benchmarks, and the helpers of the CLI, report,
browser and JupyterLab tests.

``tests/`` is on ``sys.path`` (``pythonpath`` in pyproject.toml's pytest options), so a test file anywhere under
``tests/`` imports them as ``from helpers.cli import run``. Fixtures shared by many files live in ``tests/conftest.py``.
"""
