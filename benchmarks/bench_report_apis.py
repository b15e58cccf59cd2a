"""Time the two report steps that lean on nbconvert and jupyter_client, this code against a baseline.

* ``render``: one report page (``beyondauc.report.render.render_html``) of a
  notebook with ``--figures`` inlined PNG figures and Markdown, as a model's
  report has; the report's exporter, and nbconvert's own ``HTMLExporter`` with
  the same template (which parses and writes the whole page again with
  BeautifulSoup).
* ``handshake``: a new client's ``wait_for_ready`` on a running, idle Jupyter
  kernel, as nbclient does before every notebook: the report's client, and
  jupyter_client's own (which ends by waiting 0.2 s for IOPub to stay silent).

In one process the two variants alternate (``--repeats`` timings each, their
median kept); ``--rounds`` processes run per code. With ``--baseline DIR``
(the ``toolkit`` folder of another checkout, e.g. a ``git worktree`` of an
earlier commit) every process of this code is paired with one of that code
(``PYTHONPATH=DIR``), in alternating order: on a machine whose speed drifts,
only runs made side by side compare.

Usage::

    python benchmarks/bench_report_apis.py
    python benchmarks/bench_report_apis.py --rounds 5 --baseline ../base/toolkit
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import io
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _notebook(n_figures):
    """A notebook holding ``n_figures`` PNG figures (about 40 kB each) between Markdown headings."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import nbformat
    import numpy as np

    rng = np.random.default_rng(0)
    fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
    ax.plot(np.cumsum(rng.normal(size=(2000, 3)), axis=0))
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    png = base64.b64encode(buf.getvalue()).decode()
    nb = nbformat.v4.new_notebook()
    nb.metadata["language_info"] = {"name": "python", "pygments_lexer": "ipython3"}
    cells = [nbformat.v4.new_markdown_cell("# Section")]
    for i in range(n_figures):
        cells.append(nbformat.v4.new_markdown_cell(f"## Figure {i}\n\nWhat the figure shows."))
        cells.append(
            nbformat.v4.new_code_cell(
                "disp.plot()",
                outputs=[
                    nbformat.v4.new_output(
                        "display_data",
                        data={"image/png": png, "text/plain": "<Figure>"},
                        metadata={"alt": f"figure {i}"},
                    )
                ],
            )
        )
    nb.cells = cells
    return nb


def time_render(n_figures, repeats):
    """Median seconds of one page by the report's exporter and by nbconvert's, interleaved."""
    from nbconvert import HTMLExporter

    from beyondauc.report import render
    from beyondauc.report.jobs import NotebookRun

    run = NotebookRun("auc_vs_accuracy", "auc_vs_accuracy.ipynb", "ok", None, 1.0, 0.5)
    header = {
        "title": "beyondauc report: m",
        "model": "m",
        "source": "bench",
        "sha256": "0" * 64,
        "version": "0",
        "date": "2026-01-01T00:00:00+00:00",
        "parameters": {},
        "failed": None,
        "include_code": False,
    }
    combined = render.combine([(run, _notebook(n_figures))], header["title"])
    resources = {"beyondauc": header, "metadata": {"name": header["title"]}}
    ours = render._exporter(False)
    render._exporter.cache_clear()
    render.report_exporter_class = lambda: HTMLExporter
    theirs = render._exporter(False)
    times = {"report": [], "nbconvert": []}
    for i in range(repeats + 1):  # the first of each compiles its templates
        for name, exporter in (("report", ours), ("nbconvert", theirs))[:: 1 if i % 2 else -1]:
            t0 = time.perf_counter()
            exporter.from_notebook_node(combined, resources=dict(resources))
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(t[1:]) for name, t in times.items()}


def time_handshake(repeats):
    """Median seconds of a new client's ``wait_for_ready``, the report's and jupyter_client's, interleaved."""
    from jupyter_client.asynchronous import AsyncKernelClient

    from beyondauc.report.execute import jupyter_kernel_manager_class

    async def main():
        km = jupyter_kernel_manager_class()(kernel_name="python3")
        report_client = km.client_factory
        await km.start_kernel()
        try:
            times = {"report": [], "jupyter_client": []}
            for i in range(repeats + 1):  # the first waits for the kernel to start
                for name, factory in (("report", report_client), ("jupyter_client", AsyncKernelClient))[
                    :: 1 if i % 2 else -1
                ]:
                    km.client_factory = factory
                    kc = km.client()
                    kc.start_channels()
                    t0 = time.perf_counter()
                    await kc.wait_for_ready(timeout=60)
                    times[name].append(time.perf_counter() - t0)
                    kc.stop_channels()
            return {name: statistics.median(t[1:]) for name, t in times.items()}
        finally:
            await km.shutdown_kernel(now=True)

    return asyncio.run(main())


def measure(args, baseline=None):
    """The medians of one child process (``baseline``: a folder first on its PYTHONPATH)."""
    env = dict(os.environ)
    if baseline:
        env["PYTHONPATH"] = os.pathsep.join([str(Path(baseline).resolve()), *filter(None, [env.get("PYTHONPATH")])])
    proc = subprocess.run([sys.executable, __file__, *args], env=env, capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15, help="timings per variant in one process")
    ap.add_argument("--rounds", type=int, default=3, help="child processes per code (alternating with the baseline)")
    ap.add_argument("--figures", type=int, default=40)
    ap.add_argument("--baseline", help="the toolkit folder of another checkout, run side by side with this one")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(time_render(a.figures, a.repeats) if a.child == "render" else time_handshake(a.repeats)))
        return
    codes = [("this code", None)] + ([("baseline", a.baseline)] if a.baseline else [])
    rows = {}
    for kind in ("render", "handshake"):
        for r in range(a.rounds):
            for code, folder in codes if r % 2 == 0 else codes[::-1]:
                args = ["--child", kind, "--repeats", str(a.repeats), "--figures", str(a.figures)]
                for variant, seconds in measure(args, folder).items():
                    rows.setdefault((kind, variant, code), []).append(seconds)
    print("| step | client or exporter | code | median of the rounds' medians (ms) | rounds (ms) |")
    print("|:--|:--|:--|--:|:--|")
    for (kind, variant, code), values in rows.items():
        shown = ", ".join(f"{v * 1000:.1f}" for v in values)
        print(f"| {kind} | {variant} | {code} | {statistics.median(values) * 1000:.1f} | {shown} |")
    out = Path(__file__).resolve().parent / "results" / "bench_report_apis.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(
        json.dumps([{"step": k, "variant": v, "code": c, "seconds": s} for (k, v, c), s in rows.items()], indent=1)
    )


if __name__ == "__main__":
    main()
