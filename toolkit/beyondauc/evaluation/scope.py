"""Which analyses an evaluation holds, and why the others are left out.

A report says, in words, what each analysis means for the benchmark's kind
(scores or answers, :class:`~beyondauc.Benchmark`) and which analyses its inputs do
not allow: domain protocols without domains, cohort diagnostics without
cohorts, DiSCA out of distribution without an OOD dataset, DiDMA without a
computation score.
"""

from __future__ import annotations

import pandas as pd

from .container import Evaluation

__all__ = ["analyses_table", "kind_text", "notes", "scope_markdown"]

_COLUMNS = ["analysis", "status", "why"]


def kind_text(evaluation: Evaluation) -> str:
    """One paragraph on what the benchmark's numbers mean for its kind (scores or answers).

    Examples
    --------
    >>> import beyondauc as ba
    >>> ev = ba.evaluate("demo", models=["svm", "knn"], datasets=["wine", "diabetes"], n_bootstrap=0,
    ...                  noise_repeats=2)
    >>> kind_text(ev).split(":")[0]
    'Scores'
    """
    if evaluation.data.get("kind", "scores") == "answers":
        return (
            "Answers: each model gave an answer per example with its own confidence, and whether the answer is "
            'right is known. Here "label" means *the answer is right* and "score" means *the model\'s '
            "confidence*: the AUC is the AUROC of confidence for telling right answers from wrong ones, "
            '"accuracy" is how often a confidence threshold learnt on other data tells them apart, and '
            "selective answering ranks the answers by the confidence "
            f"{_selective_source(evaluation)}."
        )
    return (
        "Scores: a binary label per example and one score per model; the AUC ranks the scores, the accuracy "
        "is that of a threshold learnt on other data, and selective answering ranks the answers by the "
        f"confidence {_selective_source(evaluation)}."
    )


def _selective_source(evaluation):
    protocol = evaluation.parameters.get("selective_protocol")
    if protocol == "none":
        return "as the model gave it (no recalibration)"
    return f"recalibrated with the {protocol!r} protocol"


def analyses_table(evaluation: Evaluation) -> pd.DataFrame:
    """One row per analysis: shown or left out, and why, in words.

    Parameters
    ----------
    evaluation : Evaluation

    Returns
    -------
    pandas.DataFrame
        Columns ``analysis``, ``status`` ("shown", "left out", or "replaced" for a default that the data
        made fall back) and ``why``.

    Examples
    --------
    >>> import beyondauc as ba
    >>> ev = ba.evaluate("demo", models=["svm", "knn"], datasets=["wine", "diabetes"], n_bootstrap=0,
    ...                  noise_repeats=2)
    >>> analyses_table(ev).set_index("analysis").loc["DiDMA", "status"]
    'left out'
    """
    p, data = evaluation.parameters, evaluation.data
    rows = [
        _threshold_row(evaluation),
        _domain_row(evaluation),
        _cohort_row(evaluation),
        ("Selective answering (DiSCA, AURC)", "shown", "confidences " + _selective_source(evaluation)),
    ]
    ood = p.get("ood_dataset")
    one = len(data.get("datasets", [])) == 1
    rows.append(
        (
            "DiSCA out of distribution, NiDMA",
            "shown" if ood else "left out",
            f"on the out-of-distribution dataset {ood!r}"
            if ood
            else "needs a second dataset as the out-of-distribution one, and the data has one"
            if one
            else "needs an out-of-distribution dataset: give --ood-dataset (ood_dataset=)",
        )
    )
    if one:
        rows.append(
            (
                "Cross-dataset protocols (xdomain, outdomain, indomain, outdata)",
                "left out",
                "they calibrate on other datasets, and the data has one: the indata protocol (a random split "
                "of the dataset) stands in, and the threshold-transfer, cross-dataset risk-control and "
                "Friedman analyses are left out",
            )
        )
    for name, r in (data.get("defaults_replaced") or {}).items():
        rows.append((f"Default {name}", "replaced", f"{r['used']!r} instead of {r['default']!r}: {r['why']}"))
    cs = p.get("computation_score")
    rows.append(
        (
            "DiDMA",
            "shown" if cs is not None else "left out",
            f"with the computation score {cs}"
            if cs is not None
            else "needs the model's computation score (1/energy or reference/parameters): give "
            "--computation-score (computation_score=)",
        )
    )
    if data.get("kind") == "answers":
        rows.append(
            (
                "Paired DeLong test between models",
                "left out",
                "the models' answers are right on different examples, so their AUROCs rest on different "
                "labels; models are compared by the paired bootstrap instead",
            )
        )
    return pd.DataFrame(rows, columns=_COLUMNS)


def _threshold_row(evaluation):
    if evaluation.data.get("kind") == "answers":
        why = "AUROC of confidence for right vs wrong answers, against the accuracy of a transferred threshold"
    else:
        why = "AUC against the accuracy of a threshold learnt on other data"
    return ("AUC vs expected accuracy", "shown", why)


def _domain_row(evaluation):
    domains = evaluation.data.get("domains", {})
    missing = [d for d, v in domains.items() if v is None]
    grid = evaluation.table("grid")
    shown = sorted(set(grid["protocol"]) & {"outdomain", "indomain"}) if len(grid) else []
    if len(domains) == 1:
        return (
            "Domain protocols (outdomain, indomain)",
            "left out",
            "they calibrate on the datasets of other domains, and the data has one dataset",
        )
    if not missing:
        return ("Domain protocols (outdomain, indomain)", "shown", "every dataset has a domain")
    names = ", ".join(map(repr, missing[:5])) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
    status = "shown" if shown else "left out"
    return (
        "Domain protocols (outdomain, indomain)",
        status,
        f"need a domain per dataset; none for {names}: give --domains (domains=) or a 'domain' column",
    )


def _cohort_row(evaluation):
    diag = evaluation.table("diagnostics")
    protocol = evaluation.parameters.get("cohort_protocol")
    if not len(diag):
        return ("Cohort diagnostics (test-set AUROC)", "left out", "no model had two cohorts to compare")
    if protocol is None:
        return (
            "Cohort diagnostics (test-set AUROC)",
            "shown",
            "validation and test cohorts from the 'split' column, or the indata split without one",
        )
    return ("Cohort diagnostics (test-set AUROC)", "shown", f"cohorts from the {protocol!r} protocol")


def scope_markdown(evaluation: Evaluation, *, model: str | None = None) -> str:
    """:func:`kind_text` then :func:`analyses_table` as a Markdown list, for a report, then its notes.

    The notes (:func:`notes`) are those that apply to ``model`` (all of them
    when None), under a heading "Notes".

    Examples
    --------
    >>> import beyondauc as ba
    >>> ev = ba.evaluate("demo", models=["svm", "knn"], datasets=["wine", "diabetes"], n_bootstrap=0,
    ...                  noise_repeats=2)
    >>> scope_markdown(ev).splitlines()[-1].startswith("- **DiDMA**: left out")
    True
    """
    from ..utils.formatting import markdown_text

    lines = [kind_text(evaluation), ""]
    for row in analyses_table(evaluation).itertuples(index=False):
        lines.append(f"- **{markdown_text(row.analysis)}**: {row.status}; {markdown_text(row.why)}")
    said = notes(evaluation, model=model)
    if said:
        lines += ["", "**Notes** (said while the evaluation was computed):", ""]
        lines += [f"- {markdown_text(text)}" for text in said]
    return "\n".join(lines)


def notes(evaluation: Evaluation, *, model: str | None = None) -> list[str]:
    """The warnings of the run that computed ``evaluation``, in full, each once: those about ``model`` or about
    no model in particular (every one when ``model`` is None).

    A command-line run prints one line about them (``--verbose``: each); the
    reports show them.  An evaluation saved before they were kept has none.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> ev = SimpleNamespace(data={"notes": [
    ...     {"text": "an interval is NaN (model 'svm')", "models": ["svm"], "datasets": ["wine"]},
    ...     {"text": "protocols outdomain and indomain are left out", "models": [], "datasets": []}]})
    >>> notes(ev, model="knn")
    ['protocols outdomain and indomain are left out']
    >>> len(notes(ev, model="svm")), len(notes(ev))
    (2, 2)
    """
    kept = evaluation.data.get("notes") or []
    return [n["text"] for n in kept if model is None or not n.get("models") or model in n["models"]]
