"""A JupyterLab server of its own for a real-browser test, and the clicks that run a notebook in it.

:func:`jupyterlab` starts ``python -m jupyterlab`` on a free local port, over a
root folder the caller made, without a token, without opening a browser, with
every Jupyter and IPython folder (config, data, runtime, settings, workspaces)
inside a scratch folder, so nothing of the user's is read or written. It stops
the server and the kernels it started (the whole process group) on the way out.

The page functions drive JupyterLab 4 as a user would: open the notebook, pick
*Run > Run All Cells* in the menu bar, pick an option of a widget's dropdown.
``scripts/make_explore_screenshots.py`` uses the same functions.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: How long the server may take to answer, and a kernel to import beyondauc and run the notebook, on a loaded machine.
START_TIMEOUT_S = 90
RUN_TIMEOUT_MS = 120_000
# JupyterLab's own settings: no news or update check (no request leaves the machine, no toast over the notebook).
SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
        "doNotDisturbMode": True,
    }
}


def free_port() -> int:
    """A TCP port nobody listens on now (the server gets it a moment later)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def private_environment(scratch: Path) -> dict[str, str]:
    """``os.environ`` with every Jupyter and IPython folder moved into ``scratch`` (and JupyterLab kept quiet)."""
    env = dict(os.environ)
    for var, sub in (
        ("JUPYTER_CONFIG_DIR", "config"),
        ("JUPYTER_DATA_DIR", "data"),
        ("JUPYTER_RUNTIME_DIR", "runtime"),
        ("JUPYTERLAB_SETTINGS_DIR", "lab-settings"),
        ("JUPYTERLAB_WORKSPACES_DIR", "lab-workspaces"),
        ("IPYTHONDIR", "ipython"),
    ):
        env[var] = str(scratch / sub)
        (scratch / sub).mkdir(parents=True, exist_ok=True)
    for name, values in SETTINGS.items():
        path = scratch / "lab-settings" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    env.pop("JUPYTER_TOKEN", None)
    return env


def _wait_until_up(proc: subprocess.Popen, url: str, log: Path) -> None:
    """Poll ``url`` until the server answers; fail with its log if it exits or does not answer in time."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url + "api/status", timeout=5) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.25)
    raise RuntimeError(f"JupyterLab did not answer {url} within {START_TIMEOUT_S} s:\n{log.read_text()[-3000:]}")


def _stop(proc: subprocess.Popen) -> None:
    """Stop the server's process group: SIGTERM (the server stops its kernels), then SIGKILL whatever is left."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=15)
    with contextlib.suppress(ProcessLookupError):  # a kernel that outlived the server is in the same group
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


@contextmanager
def jupyterlab(root: Path, scratch: Path) -> Iterator[str]:
    """A JupyterLab server over ``root``; yields its URL (``http://127.0.0.1:PORT/``) and stops it on exit."""
    env = private_environment(scratch)
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    log = scratch / "jupyterlab.log"
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        "--IdentityProvider.token=",
        "--ServerApp.password=",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.allow_root=True",
        "--ServerApp.terminals_enabled=False",
        "--LabApp.news_url=None",
        "--LabApp.extension_manager=readonly",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    with open(log, "wb") as out:
        # its own session: the server and the kernels it starts are one process group, stopped together
        proc = subprocess.Popen(
            cmd,
            cwd=root,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    try:
        _wait_until_up(proc, url, log)
        yield url
    finally:
        _stop(proc)


def wait_for_kernel(url: str, timeout_s: float = RUN_TIMEOUT_MS / 1000) -> None:
    """Wait until the server has a session whose kernel is idle and has a front end connected to it."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with urllib.request.urlopen(url + "api/sessions", timeout=10) as response:
            kernels = [s["kernel"] for s in json.load(response)]
        if any(k["execution_state"] == "idle" and k.get("connections", 0) > 0 for k in kernels):
            return
        time.sleep(0.25)
    raise RuntimeError(f"no idle kernel connected within {timeout_s:.0f} s: {kernels}")


def run_all_cells(page, url: str, notebook: str) -> None:
    """Open ``notebook`` (a path under the server's root), wait for its kernel, run all cells from the *Run* menu."""
    page.goto(f"{url}lab/tree/{notebook}")
    page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=RUN_TIMEOUT_MS)
    # the notebook's kernelspec is python3, the server's default: JupyterLab starts it; run once it is connected
    wait_for_kernel(url)
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=RUN_TIMEOUT_MS)
    page.locator(".lm-MenuBar-item", has_text="Run").first.click()
    page.locator(".lm-Menu-item[data-command='runmenu:run-all']").click()


def dropdown(page, label: str):
    """The ``<select>`` of the ipywidgets Dropdown whose description is ``label``."""
    return page.locator(".widget-dropdown").filter(has=page.locator("label", has_text=label)).locator("select")
