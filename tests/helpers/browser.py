"""What the real-browser tests share: Debian's Chromium, launched so it calls nobody, or skipped on request."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
SKIP_VARIABLE = "BEYONDAUC_SKIP_BROWSER"
# Flags that keep Chromium from calling home (updates, sync, field trials, QUIC
# probes): on a closed network those would show up as requests or console errors.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
TIMEOUT_MS = 20_000


def require_browser():
    """Skip on request, else fail with a hint when the browser or its driver is missing."""
    if os.environ.get(SKIP_VARIABLE) == "1":
        pytest.skip(f"{SKIP_VARIABLE}=1: the real-browser test is skipped on request")
    if not CHROMIUM.is_file():
        pytest.fail(
            f"{CHROMIUM} not found: the browser test needs Debian's chromium, which .ci/run installs "
            f"(apt-get install chromium); set {SKIP_VARIABLE}=1 to skip it on purpose",
            pytrace=False,
        )
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.fail(
            "the browser test needs Playwright's Python package (the `dev` extra: "
            f"pip install -e '.[dev]'); set {SKIP_VARIABLE}=1 to skip it on purpose",
            pytrace=False,
        )
