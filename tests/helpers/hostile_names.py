"""A corpus of hostile names for models, datasets and domains (see ``tests/end_to_end/test_hostile_names.py``).

``ACCEPTED`` names must go through every step (load, analyses, figures, CLI
tables, notebooks, HTML, PDF) and show verbatim; ``REFUSED`` names and the
``NORMALISATION`` pair must be refused by ``load_benchmark`` with a one-line
error naming the column. ``docs/user_guide/data.md`` ("Names are text") gives the reasons.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from beyondauc import load_demo

LONG = "x" * 10_000

#: class -> names that work and are shown verbatim
ACCEPTED = {
    "mathtext": ("m$\\foo$", "$x^2$", "gpt-4o $0.01/1k", "$"),
    "format strings": ("%s", "{}", "{0!r} %(x)d %%"),
    "backslashes": ("C:\\new\\table", "\\", "x\\"),
    "quotes": ("'", '"', "`", "'''\"\"\"", "“double” ‘single’ «guillemets» „low“"),
    "html": ("<script>alert(1)</script>", "javascript:alert(1)", "<img src=x onerror=alert(1)>", "&amp; &lt;b&gt;"),
    "markdown and latex": ("_*#&%~^", "_x_", "**b** `c` [l](http://e.x) | p |", "\\textbf{x} {", "# h"),
    "right-to-left and combining": ("نموذج ١", "מודל", "e\u0301", "Z\u0351\u0324a\u0308", "👩‍💻"),
    "case": ("svm", "SVM"),
    "long": (LONG,),
    "keywords and NA markers": ("class", "None", "True", "lambda", "nan", "NA", "null", "01"),
}
NAMES = tuple(n for names in ACCEPTED.values() for n in names)

#: class -> a name refused at load time (control, line-break and bidi-override characters)
REFUSED = {
    "newline": "a\nb",
    "carriage return": "a\rb",
    "tab": "a\tb",
    "NUL": "a\0b",
    "escape": "\x1b[31mred",
    "line separator": "a\u2028b",
    "paragraph separator": "a\u2029b",
    "bidi override": "abc\u202edcba",
    "bidi isolate": "a\u2066b\u2069",
}
#: the same name in NFC and NFD: refused when both occur
NORMALISATION = ("\u00e9t\u00e9", "e\u0301te\u0301")

#: the worst names, for the real report run (models, datasets, domains)
REPORT_MODELS = (
    "m$\\foo$ <script>alert(1)</script>",
    "$x^2$ %s {} \\ '\"` _*#&%~^ [l](javascript:alert(1))",
    "نموذج e\u0301 «q» SVM",
    LONG,
)
REPORT_DATASETS = ("None", "d$\\foo$ & <i>x</i> | %s {}")
REPORT_DOMAINS = ("NA", "<b>dom</b> $x^2$")

DEMO_MODELS = ("svm", "knn", "logreg", "mlp", "naive_bayes", "random_forest", "grad_boost", "single_feature")


def plain_frame(n_models, datasets=("wine", "diabetes"), rows=None):
    """Demo scores on two datasets: models ``p0``.. (demo columns, cycled), datasets ``d0``.., domains ``g0``.."""
    demo = load_demo().frame
    parts = []
    for i, d in enumerate(datasets):
        part = demo[demo["dataset"] == d]
        if rows is not None:
            part = part.iloc[:rows]
        part = part[["label", "split", *DEMO_MODELS]].copy()
        part.insert(0, "domain", f"g{i}")
        part.insert(0, "dataset", f"d{i}")
        parts.append(part)
    demo = pd.concat(parts, ignore_index=True)
    out = demo[["dataset", "domain", "label", "split"]].copy()
    for j in range(n_models):
        out[f"p{j}"] = demo[DEMO_MODELS[j % len(DEMO_MODELS)]].to_numpy() + 1e-3 * (j // len(DEMO_MODELS))
    return out


def renamed(frame, models, datasets=(), domains=()):
    """``frame`` with models ``p0``.., datasets ``d0``.. and domains ``g0``.. renamed (plain -> hostile)."""
    mapping = {f"p{j}": m for j, m in enumerate(models)}
    out = frame.rename(columns=mapping)
    for col, names, prefix in (("dataset", datasets, "d"), ("domain", domains, "g")):
        names = dict(zip((f"{prefix}{i}" for i in range(len(names))), names))
        out[col] = out[col].map(lambda v, names=names: names.get(v, v))
    return out


def name_map(models, datasets=(), domains=()):
    """plain -> hostile for every renamed name."""
    return {
        **{f"p{j}": m for j, m in enumerate(models)},
        **{f"d{i}": d for i, d in enumerate(datasets)},
        **{f"g{i}": g for i, g in enumerate(domains)},
    }


def rename_values(obj, mapping):
    """A result (DataFrame/Series) with every plain name replaced, in values, index and columns."""

    def one(v):
        return mapping.get(v, v) if isinstance(v, str) else v

    if isinstance(obj, pd.DataFrame):
        out = obj.copy()
        for c in out.columns:
            if out[c].dtype == object or pd.api.types.is_string_dtype(out[c]):
                out[c] = out[c].map(one).astype(out[c].dtype)
        out.index = out.index.map(one) if not isinstance(out.index, pd.MultiIndex) else out.index
        out.columns = out.columns.map(one) if not isinstance(out.columns, pd.MultiIndex) else out.columns
        return out
    return obj


def random_scores(n, seed=0):
    rng = np.random.default_rng(seed)
    y = np.tile([0, 1], n // 2)
    return y, rng.normal(size=n) + y
