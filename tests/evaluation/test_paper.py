"""Tables for papers (``Evaluation.to_latex``, ``beyondauc table``): structure, escaping, numbers, bold, compiling.

The references are independent of the code under test: numbers are formatted
here with plain f-strings from the evaluation's own tables, LaTeX is
un-escaped with a table written here, and the bold rule is checked by brute
force over every pair of models. Where a TeX engine is installed, the tables
are compiled.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

import beyondauc as ba
from beyondauc.cli import main
from beyondauc.evaluation.paper import paper_table, separated_best

#: A model and a dataset named with every character LaTeX treats specially (and Markdown's).
ODD_MODEL = "k_n%n&#$ {x}~^\\y|<z>"
ODD_DATASET = "w_i%ne#1"
MODELS = ["svm", "knn", "logreg"]


@pytest.fixture(scope="module")
def ev():
    bench = ba.load_demo().subset(models=MODELS, datasets=["wine", "diabetes", "iris_versicolor"])
    frame = bench.frame.rename(columns={"knn": ODD_MODEL})
    frame["dataset"] = frame["dataset"].replace({"wine": ODD_DATASET})
    return ba.evaluate(frame, noise_repeats=2, n_bootstrap=40, baseline="logreg", progress=False)


@pytest.fixture(scope="module")
def ev0():
    return ba.evaluate(
        "demo", models=["svm", "knn"], datasets=["wine", "diabetes"], noise_repeats=2, n_bootstrap=0, progress=False
    )


# -- an independent reading of the LaTeX ----------------------------------------------------------------------

_UNESCAPE = {
    r"\textbackslash{}": "\\",
    r"\textasciitilde{}": "~",
    r"\textasciicircum{}": "^",
    r"\textless{}": "<",
    r"\textgreater{}": ">",
    r"\textbar{}": "|",
    r"\_": "_",
    r"\%": "%",
    r"\&": "&",
    r"\#": "#",
    r"\$": "$",
    r"\{": "{",
    r"\}": "}",
    "$-$": "\u2212",
    "--": "\u2013",
}
_TOKEN = re.compile("|".join(re.escape(k) for k in sorted(_UNESCAPE, key=len, reverse=True)))


def unescape(cell):
    return _TOKEN.sub(lambda m: _UNESCAPE[m.group(0)], cell)


def latex_rows(text):
    """header, [(cells, bold flags)] of a booktabs tabular, checking its structure on the way."""
    lines = text.strip().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(r"\begin{tabular}"))
    assert lines[start + 1] == r"\toprule" and lines[start + 3] == r"\midrule"
    end = lines.index(r"\end{tabular}")
    assert lines[end - 1] == r"\bottomrule"
    assert all(
        line.startswith("%")
        for line in lines[:start]
        if not line.startswith(("\\begin{table}", "\\centering", "\\caption", "\\label"))
    )
    align = re.fullmatch(r"\\begin\{tabular\}\{([lr]+)\}", lines[start]).group(1)

    def split(line):
        assert line.endswith(r" \\")
        cells = re.split(r"(?<!\\)&", line[:-3])
        assert len(cells) == len(align), line
        return [c.strip() for c in cells]

    header = split(lines[start + 2])
    rows = []
    for line in lines[start + 4 : end - 1]:
        cells = split(line)
        bold = [c.startswith(r"\textbf{") for c in cells]
        rows.append(([c[len(r"\textbf{") : -1] if b else c for c, b in zip(cells, bold)], bold))
    return [unescape(h) for h in header], [([unescape(c) for c in cells], bold) for cells, bold in rows]


def check_specials_escaped(text):
    """No LaTeX special character outside an escape, a command, a column separator or ``$-$``/``$\\infty$``."""
    body = "\n".join(line for line in text.splitlines() if not line.startswith("%"))
    body = _TOKEN.sub("", body)
    body = re.sub(r"\$\\infty\$|\\(textbf|begin|end|toprule|midrule|bottomrule|centering|caption|label)\b", "", body)
    body = re.sub(r"(?<!\\)&|\\\\$", "", body, flags=re.M)
    assert not re.search(r"[_%#$~^\\]", body), body
    assert body.count("{") == body.count("}")


# -- numbers formatted here, from the evaluation's tables -------------------------------------------------------


def num(x, digits=3):
    return "\u2013" if not np.isfinite(x) else f"{x:.{digits}f}".replace("-", "\u2212")


def with_interval(value, low, high):
    if not (np.isfinite(low) and np.isfinite(high)):
        return num(value)
    sep = " to " if low < 0 or high < 0 else "\u2013"
    return f"{num(value)} [{num(low)}{sep}{num(high)}]"


def brute_best(est, low, high, higher=True):
    """The separated best by checking every other model against every candidate."""
    est, low, high = (np.asarray(v, dtype=float) for v in (est, low, high))
    idx = [i for i in range(len(est)) if np.isfinite(est[i])]
    if len(idx) < 2:
        return None
    best = max(idx, key=lambda i: est[i] if higher else -est[i])
    for j in idx:
        if j == best:
            continue
        if higher and not (low[best] > high[j]):
            return None
        if not higher and not (high[best] < low[j]):
            return None
    return best


def test_separated_best_matches_brute_force():
    rng = np.random.default_rng(0)
    for _ in range(400):
        n = int(rng.integers(1, 6))
        est = np.round(rng.random(n), 1)
        half = rng.random(n) * 0.2
        low, high = est - half, est + half
        for arr in (est, low, high):
            arr[rng.random(n) < 0.1] = np.nan
        for higher in (True, False):
            got = separated_best(est, low, high, higher_is_better=higher)
            ref = brute_best(est, low, high, higher)
            if ref is not None and not (np.isfinite(low[ref]) and np.isfinite(high[ref])):
                ref = None
            others = [j for j in range(n) if np.isfinite(est[j]) and j != ref]
            if ref is not None and not all(np.isfinite(low[j]) and np.isfinite(high[j]) for j in others):
                ref = None
            assert got == ref, (est, low, high, higher)


def test_leaderboard_latex_numbers_bold_and_names(ev):
    text = ev.to_latex("leaderboard")
    check_specials_escaped(text)
    header, rows = latex_rows(text)
    assert header == [
        "model",
        "mean AUC",
        "AUC rank",
        "mean accuracy",
        "accuracy rank",
        "change",
        "kappa",
        "DiSCA",
        "drift",
    ]
    board = ev.table("leaderboard")
    assert [cells[0] for cells, _ in rows] == list(board["model"])  # the odd name reads back verbatim
    assert ODD_MODEL in [cells[0] for cells, _ in rows]
    for (cells, _bold), rec in zip(rows, board.to_dict("records")):
        by = dict(zip(header, cells))
        for name, title in (
            ("auc", "mean AUC"),
            ("accuracy", "mean accuracy"),
            ("kappa", "kappa"),
            ("disca", "DiSCA"),
            ("drift", "drift"),
        ):
            assert by[title] == with_interval(rec[name], rec[f"{name}_low"], rec[f"{name}_high"]), title
        lo, hi = (int(np.floor(rec[f"auc_rank_{e}"] + 0.5)) for e in ("low", "high"))
        assert by["AUC rank"] == f"{rec['auc_rank']} [{lo}\u2013{hi}]"
        change = int(rec["rank_change"])
        assert by["change"] == (f"+{change}" if change > 0 else str(change).replace("-", "\u2212"))
    for col, name, higher in (
        ("mean AUC", "auc", True),
        ("mean accuracy", "accuracy", True),
        ("kappa", "kappa", True),
        ("DiSCA", "disca", True),
        ("drift", "drift", False),
    ):
        j = header.index(col)
        best = brute_best(board[name], board[f"{name}_low"], board[f"{name}_high"], higher)
        assert [bold[j] for _, bold in rows] == [i == best for i in range(len(rows))], col
    assert not any(b for _, bold in rows for k, b in enumerate(bold) if header[k] in ("model", "AUC rank", "change"))


def test_a_separated_best_is_bold():
    """A hand-made evaluation whose best AUC is separated and whose accuracies overlap."""
    from beyondauc.evaluation import Evaluation

    board = pd.DataFrame(
        {
            "model": ["a", "b", "c"],
            "auc": [0.9, 0.8, 0.7],
            "auc_low": [0.85, 0.75, 0.6],
            "auc_high": [0.95, 0.84, 0.86],
            "accuracy": [0.8, 0.79, 0.5],
            "accuracy_low": [0.7, 0.72, 0.4],
            "accuracy_high": [0.9, 0.85, 0.6],
        }
    )
    ev = Evaluation(
        tables={"leaderboard": board},
        parameters={"protocol": "xdomain", "method": "logistic", "n_bootstrap": 10, "confidence_level": 0.95},
        data={"models": ["a", "b", "c"], "datasets": ["d"]},
        versions={},
    )
    header, rows = latex_rows(ev.to_latex())
    assert [bold[header.index("mean AUC")] for _, bold in rows] == [False, False, False]  # 0.85 < 0.86 (model c)
    board.loc[2, "auc_high"] = 0.84
    header, rows = latex_rows(ev.to_latex())
    assert [bold[header.index("mean AUC")] for _, bold in rows] == [True, False, False]
    assert [bold[header.index("mean accuracy")] for _, bold in rows] == [False, False, False]


def test_grid_numbers_ranks_and_csv(ev):
    table = paper_table(ev, "grid", score="accuracy")
    header, rows = latex_rows(table.to_latex())
    assert header == ["model", *ev.datasets, "mean"] and ODD_DATASET in header
    head = ev.headline().set_index(["model", "dataset"])
    ranks = ev.table("rank_table")
    ranks = ranks[ranks["score"] == "accuracy"].set_index(["model", "dataset"])["rank"]
    mean = ev.table("mean_intervals")
    mean = mean[mean["score"] == "accuracy"].set_index("model")
    for cells, _bold in rows:
        model = cells[0]
        for dataset, cell in zip(header[1:], cells[1:]):
            if dataset == "mean":
                r = mean.loc[model]
                expected = with_interval(r["estimate"], r["low"], r["high"])
            else:
                r = head.loc[(model, dataset)]
                expected = with_interval(r["accuracy"], r["accuracy_low"], r["accuracy_high"])
            assert cell == f"{expected} ({ranks.loc[(model, dataset)]})", (model, dataset)
    back = pd.read_csv(io.StringIO(table.to_csv()), keep_default_na=False, na_values=[""])
    for rec in back.to_dict("records"):
        if rec["dataset"] != "mean":
            assert rec["accuracy"] == head.loc[(rec["model"], rec["dataset"]), "accuracy"]
            assert rec["low"] == head.loc[(rec["model"], rec["dataset"]), "accuracy_low"]
        else:
            assert rec["accuracy"] == pytest.approx(mean.loc[rec["model"], "estimate"], rel=1e-12)
        assert rec["rank"] == ranks.loc[(rec["model"], rec["dataset"])]
    for j, dataset in enumerate(header[1:], start=1):  # bold by brute force, per dataset
        part = back[back["dataset"] == dataset].set_index("model").reindex([c[0] for c, _ in rows])
        best = brute_best(part["accuracy"], part["low"], part["high"])
        assert [bold[j] for _, bold in rows] == [i == best for i in range(len(rows))], dataset


def test_comparison_numbers_and_bold(ev):
    header, rows = latex_rows(ev.to_latex("comparison", values=("auc", "accuracy", "drift")))
    assert header[:2] == ["model", "reference"] and len(header) == 2 + 2 * 3
    t = ev.table("comparison")
    t = t[t["dataset"] == "mean"].set_index(["model", "value"])
    for cells, bold in rows:
        for k, value in enumerate(("auc", "accuracy", "drift")):
            r = t.loc[(cells[0], value)]
            cell = cells[2 + 2 * k]
            signed = lambda x: ("+" if x > 0 else "") + num(x)  # noqa: E731
            assert cell.startswith(signed(r["difference"]))
            if np.isfinite(r["low"]):
                assert cell == f"{signed(r['difference'])} ({signed(r['low'])} to {signed(r['high'])})"
            assert bold[2 + 2 * k] == bool(r["low"] > 0 if value != "drift" else r["high"] < 0)
            assert cells[1] == r["reference"]


def test_comparison_on_one_dataset_prints_the_holm_p_value(ev):
    from beyondauc.evaluation.readings import p_text

    dataset = ev.datasets[0]
    header, rows = latex_rows(ev.to_latex("comparison", values=("auc", "accuracy"), dataset=dataset))
    assert header[3] == "Holm p (AUC)" and header[5] == "Holm p (deployed accuracy)"
    t = ev.table("comparison")
    t = t[t["dataset"] == dataset].set_index(["model", "value"])
    for cells, _ in rows:
        for k, value in enumerate(("auc", "accuracy")):
            assert cells[3 + 2 * k] == unescape(p_text(t.loc[(cells[0], value), "pvalue_holm"]))
    mean_header, _ = latex_rows(ev.to_latex("comparison", values=("auc",)))
    assert mean_header[3] == "p (AUC)"  # the mean is one test: its raw p-value


def test_markdown_and_latex_agree(ev):
    for name in ("leaderboard", "comparison", "grid"):
        table = paper_table(ev, name)
        md = table.to_markdown().splitlines()
        _, rows = latex_rows(table.to_latex())
        body = [line for line in md if line.startswith("| ")][2:]
        assert len(body) == len(rows)
        for line, (cells, bold) in zip(body, rows):
            parts = [p.strip() for p in re.split(r"(?<!\\)\|", line)[1:-1]]
            assert [p.startswith("**") for p in parts] == bold
            plain = [re.sub(r"\\(.)", r"\1", p.strip("*")) for p in parts]
            assert plain == cells


def test_without_bootstrap_nothing_is_bold(ev0):
    for name in ("leaderboard", "grid", "comparison"):
        text = ev0.to_latex(name)
        _, rows = latex_rows(text)
        assert not any(any(bold) for _, bold in rows), name
        assert "[" not in "".join(c for cells, _ in rows for c in cells)
        assert "no intervals" in text.splitlines()[0]


def test_caption_and_label_make_a_float(ev0):
    text = ev0.to_latex("grid", caption="Accuracy", label="tab:acc")
    lines = text.splitlines()
    assert lines[:4] == [r"\begin{table}", r"\centering", r"\caption{Accuracy}", r"\label{tab:acc}"]
    assert lines[-1] == r"\end{table}"


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"table": "nope"}, ["`table`", "nope"]),
        ({"table": "leaderboard", "score": "auc"}, ["`score`", "leaderboard"]),
        ({"table": "grid", "score": "bogus"}, ["`score`", "bogus"]),
        ({"table": "grid", "protocol": "indata", "method": "nope"}, ["'indata'", "'nope'"]),
        ({"table": "comparison", "dataset": "nowhere"}, ["`dataset`", "nowhere"]),
        ({"table": "comparison", "values": ("auc", "x")}, ["`values`", "'x'"]),
    ],
)
def test_bad_options_one_line(ev0, kwargs, words):
    with pytest.raises(ValueError) as err:
        paper_table(ev0, **kwargs)
    message = str(err.value)
    assert "\n" not in message and all(w in message for w in words), message


# -- the command line -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def saved(ev, tmp_path_factory):
    return ev.save(tmp_path_factory.mktemp("paper") / "ev")


@pytest.mark.parametrize("fmt", ["latex", "markdown", "csv"])
@pytest.mark.parametrize("table", ["leaderboard", "comparison", "grid"])
def test_cli_table_prints_what_the_api_gives(ev, saved, table, fmt):
    out = io.StringIO()
    assert main(["table", str(saved), "--table", table, "--format", fmt], out=out) == 0
    assert out.getvalue() == paper_table(ba.load_evaluation(saved), table).to(fmt)
    assert out.getvalue() == paper_table(ev, table).to(fmt)  # the saved evaluation reads the same


def test_cli_table_options(saved):
    out = io.StringIO()
    assert (
        main(["table", str(saved), "--table", "grid", "--score", "auc", "--caption", "AUC", "--label", "t"], out=out)
        == 0
    )
    assert out.getvalue().startswith("\\begin{table}") and "AUC per dataset" in out.getvalue()
    out = io.StringIO()
    assert (
        main(["table", str(saved), "--table", "comparison", "--values", "kappa,disca", "--format", "markdown"], out=out)
        == 0
    )
    assert "kappa difference" in out.getvalue() and "DiSCA difference" in out.getvalue()


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--score", "auc"], ["--score", "--table grid"]),
        (["--table", "comparison", "--values", "auc,bogus"], ["--values", "bogus"]),
        (["--format", "csv", "--caption", "x"], ["--caption", "latex"]),
        (["--table", "grid", "--score", "bogus"], ["--score", "bogus"]),
    ],
)
def test_cli_table_errors_are_one_line(saved, capsys, argv, words):
    assert main(["table", str(saved), *argv], out=io.StringIO()) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("beyondauc: error:"), err
    assert all(w in err for w in words), err


def test_cli_table_missing_folder(tmp_path, capsys):
    assert main(["table", str(tmp_path / "none")], out=io.StringIO()) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "EVALUATION" in err and "none" in err


# -- compiling ----------------------------------------------------------------------------------------------------

ENGINES = [e for e in ("pdflatex", "lualatex") if shutil.which(e)]


@pytest.mark.parametrize("table", ["leaderboard", "comparison", "grid"])
def test_latex_compiles(ev, tmp_path, table):
    if not ENGINES:
        pytest.skip(
            "no TeX engine (pdflatex or lualatex) on PATH: the LaTeX structure is checked by the other tests, "
            "only compiling it is skipped"
        )
    body = ev.to_latex(table, caption=f"The {table}", label=f"tab:{table}")
    doc = (
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\usepackage[margin=1cm,landscape]{geometry}\n"
        f"\\begin{{document}}\n{body}\\end{{document}}\n"
    )
    (tmp_path / "t.tex").write_text(doc, encoding="utf-8")
    engine = ENGINES[0]
    proc = subprocess.run(
        [engine, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "t.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    log = (tmp_path / "t.log").read_text(errors="replace") if (tmp_path / "t.log").exists() else proc.stdout
    assert proc.returncode == 0, log[-2000:]
    assert (tmp_path / "t.pdf").stat().st_size > 1000
    assert "Missing character" not in log, [line for line in log.splitlines() if "Missing character" in line]
