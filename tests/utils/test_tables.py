"""Tables for people (``readable_table``): what a report's tables show, checked cell by cell.

Every table of the reports goes through ``readable_table``; these tests hold it to what a reader
needs (issue 24): integer ranks and rank intervals clipped to the models, words for booleans,
titled columns, every cell shown (no ``...``), and tables split into parts that fit a window.
Real widths in a browser are checked by ``tests/end_to_end/test_browser.py``; here, the content.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from beyondauc import readable_table
from beyondauc.utils.formatting import MINUS, MISSING, format_range
from beyondauc.utils.tables import column_title


class _Cells(HTMLParser):
    """The text of every table part: rows of (tag, text) cells, per part."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts, self.row, self.cell = [], None, None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.parts.append([])
        elif tag == "tr":
            self.row = []
        elif tag in ("td", "th"):
            self.cell = [tag, ""]

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.row.append(tuple(self.cell))
            self.cell = None
        elif tag == "tr":
            self.parts[-1].append(self.row)

    def handle_data(self, data):
        if self.cell is not None:
            self.cell[1] += data


def _parts(table):
    parser = _Cells()
    parser.feed(table._repr_html_())
    return parser.parts


def _body(part):
    """The rows of a part that hold data cells: [(row labels...), [cell texts]]."""
    return [
        ([t for tag, t in row if tag == "th"], [t for tag, t in row if tag == "td"])
        for row in part
        if any(tag == "td" for tag, _ in row)
    ]


def test_ranks_are_integers_and_their_intervals_integers_within_the_models():
    # percentiles of integer ranks are interpolated: 0.975 and 4.025 are ranks 1 and 4 of 4 models
    frame = pd.DataFrame(
        {
            "model": ["a", "b", "c"],
            "auc_rank": [1.0, 2.0, 4.0],
            "auc_rank_low": [0.975, 1.5, 2.49],
            "auc_rank_high": [2.51, 3.0, 4.025],
            "change": [-1.0, 0.0, 2.0],
            "change_low": [-3.6, -0.975, 0.5],
            "change_high": [0.4, 1.0, 4.2],
        }
    ).set_index("model")
    (part,) = _parts(readable_table(frame, n_models=4))
    rows = {labels[0]: cells for labels, cells in _body(part)}
    # rank: value, then its interval (rounded half up, clipped to 1..4); change: clipped to -3..3
    assert rows["a"] == [f"1 1{MISSING}3", f"{MINUS}1 {MINUS}3 to 0"]
    assert rows["b"] == [f"2 2{MISSING}3", f"0 {MINUS}1 to 1"]
    assert rows["c"] == [f"4 2{MISSING}4", "2 1\u20133"]
    text = repr(readable_table(frame, n_models=4))
    assert "0.975" not in text and "4.025" not in text and "." not in text.split("\n", 2)[2]


def test_ranks_without_the_number_of_models_are_still_integers():
    frame = pd.DataFrame({"rank": [1.0, 2.4999, np.nan], "x_rank": [3.5, 1.0, 2.0]}, index=["a", "b", "c"])
    rows = _body(_parts(readable_table(frame))[0])
    assert [cells for _, cells in rows] == [["1", "4"], ["2", "1"], [MISSING, "2"]]


def test_booleans_are_words():
    frame = pd.DataFrame(
        {"significant": [True, False], "rankable": np.array([False, True]), "maybe": [True, None]}, index=["x", "y"]
    )
    table = readable_table(frame, words={"rankable": ("rankable", "not rankable")})
    rows = [cells for _, cells in _body(_parts(table)[0])]
    assert rows == [["yes", "not rankable", "yes"], ["no", "rankable", MISSING]]
    assert not re.search(r"\b(True|False)\b", table._repr_html_() + repr(table))


def test_columns_are_titled_but_the_labels_of_a_pivot_are_data():
    assert column_title("bias_robustness_test") == "bias robustness (T)"
    assert column_title("n_calibration") == "calibration examples"
    assert column_title("some_new_column") == "some new column"
    frame = pd.DataFrame({"balanced_accuracy": [0.5], "my_measure": [1.0]}, index=pd.Index(["w"], name="dataset"))
    headers = [t for tag, t in _parts(readable_table(frame))[0][0]]
    assert headers == ["dataset", "balanced accuracy", "my measure"]
    long = pd.DataFrame(
        {"model": ["m"] * 2, "dataset": ["iris_versicolor", "wine"], "tolerance": [0.9, 0.9], "disca": [0.5, 0.25]}
    )
    pivot = long.pivot_table(index="model", columns=["dataset"], values="disca")
    head = _parts(readable_table(pivot))[0]
    assert [t for _, t in head[0]] == ["model", "dataset"]  # the pivot's level names its columns...
    assert [t for _, t in head[1]] == ["iris_versicolor", "wine"]  # ...and its labels stay as they are


def test_intervals_show_under_their_estimate_not_as_columns():
    frame = pd.DataFrame(
        {
            "drift": [0.0213, np.nan],
            "drift_low": [0.0227, 0.1],
            "drift_high": [0.0502, 0.2],
            "auc": [-0.5, 0.9],
            "auc_low": [-0.61, np.nan],
            "auc_high": [-0.4, 0.95],
        },
        index=["a", "b"],
    )
    table = readable_table(frame)
    assert table.columns == [("drift",), ("AUC",)]
    rows = [cells for _, cells in _body(_parts(table)[0])]
    assert rows == [
        ["0.021 0.023\u20130.050", f"{MINUS}0.500 {MINUS}0.610 to {MINUS}0.400"],
        [f"{MISSING} 0.100\u20130.200", "0.900"],
    ]  # an interval without both ends is not shown
    assert '<span class="ci"' in table._repr_html_()


def test_nothing_is_truncated_and_a_wide_table_is_split_into_parts_that_fit():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        rng.normal(size=(70, 40)),
        columns=[f"measure_{i}" for i in range(40)],
        index=pd.Index([f"dataset_{i}" for i in range(70)], name="dataset"),
    )
    with pd.option_context("display.max_rows", 5, "display.max_columns", 5):  # no global option matters
        table = readable_table(frame, width=720)
    parts = _parts(table)
    assert len(parts) > 1 and len(table.parts) == len(parts)
    # every part repeats the row labels; over the parts, every column once, in order, every cell there
    shown = []
    for part in parts:
        body = _body(part)
        assert [labels[0] for labels, _ in body] == list(frame.index)
        shown.append(pd.DataFrame([cells for _, cells in body]))
    cells = pd.concat(shown, axis=1).to_numpy()
    expected = np.vectorize(lambda v: f"{v:.3f}".replace("-0.000", "0.000").replace("-", MINUS))(frame.to_numpy())
    assert cells.shape == frame.shape and (cells == expected).all()
    assert [h[0] for h in table.columns] == [f"measure {i}" for i in range(40)]
    for part in table.parts:
        assert sum(c.width() for c in part) <= 720
    text = table._repr_html_() + repr(table)
    assert "..." not in text and "\u2026" not in text


def test_a_split_is_as_even_as_its_number_of_parts_allows():
    """Eight equally wide columns of which seven fit a part are cut 4 + 4, not 7 + 1: the overview's tables of
    eight models once ended in a part of one column."""
    frame = pd.DataFrame(np.full((2, 8), 0.123), columns=[f"c{i}" for i in range(8)])
    width = readable_table(frame).parts[0][0].width()  # one column: 5 characters
    table = readable_table(frame, width=7 * width + 1)
    assert [len(part) for part in table.parts] == [4, 4]
    assert [h[0] for h in table.columns] == list(frame.columns)
    assert len(readable_table(frame, width=8 * width).parts) == 1  # all fit: one part
    uneven = readable_table(frame, width=3 * width + 1)  # 3 parts, as greedy would: 3 + 3 + 2
    assert sorted(len(part) for part in uneven.parts) == [2, 3, 3]


def test_a_split_keeps_the_groups_of_a_two_level_header_together():
    columns = pd.MultiIndex.from_product(
        [["xdomain", "outdomain", "indomain", "indata", "outdata"], ["logistic", "isotonic", "stump"]],
        names=["protocol", "method"],
    )
    frame = pd.DataFrame(np.full((3, 15), 0.5), columns=columns, index=pd.Index(["a", "b", "c"], name="dataset"))
    table = readable_table(frame, width=520)
    assert len(table.parts) > 1
    for part in table.parts:
        assert len(part) % 3 == 0, [c.header for c in part]  # whole protocols in every part
    first = _parts(table)[0]
    spans = [t for tag, t in first[0] if t not in ("dataset",)]
    assert spans == list(dict.fromkeys(c.header[0] for c in table.parts[0]))


def test_names_are_escaped_and_numbers_read_as_the_index_does():
    frame = pd.DataFrame({"value": [-0.04231, np.nan], "n": [3, 4]}, index=["<script>x</script>", "b"])
    html = readable_table(frame, digits=2)._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html
    rows = [cells for _, cells in _body(_parts(readable_table(frame, digits=2))[0])]
    assert rows == [[f"{MINUS}0.04", "3"], [MISSING, "4"]]


def test_a_table_without_row_labels_and_bad_input():
    table = readable_table(pd.DataFrame({"auc": [0.91, 0.87]}))
    assert _body(_parts(table)[0]) == [([], ["0.910"]), ([], ["0.870"])]
    with pytest.raises(ValueError, match="`frame` must be a pandas DataFrame"):
        readable_table([[1, 2]])


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        ({"n_models": 0}, "`n_models` must be an int >= 1"),
        ({"n_models": 2.5}, "`n_models` must be an int"),
        ({"digits": -1}, "`digits` must be an int >= 0"),
        ({"digits": {"auc": "3"}}, "`digits` must be an int"),
        ({"words": {"auc": ("yes",)}}, "`words` must map a column to (word for true, word for false)"),
        ({"width": 0}, "`width`"),
    ],
)
def test_bad_parameters_are_named(kwargs, needle):
    with pytest.raises(ValueError, match=re.escape(needle)):
        readable_table(pd.DataFrame({"auc": [0.9]}), **kwargs)


def test_a_rank_column_of_text_is_shown_as_text():
    rows = _body(_parts(readable_table(pd.DataFrame({"rank": ["first", None]}, index=["a", "b"])))[0])
    assert [cells for _, cells in rows] == [["first"], [MISSING]]


@pytest.mark.parametrize(
    "low, high, expected",
    [
        (-10.7, -5.98e-11, f"[{MINUS}10.7, 0.0]"),  # the histogram title of issue 24
        (0.0123, 0.9871, "[0.012, 0.987]"),  # three significant digits of the width, 0.975
        (-1.3612, 2.6079, f"[{MINUS}1.36, 2.61]"),
        (120.0, 4567.0, "[120, 4567]"),
        (2.0, 2.0, "[2.000, 2.000]"),
    ],
)
def test_format_range_gives_both_ends_the_decimals_of_the_width(low, high, expected):
    assert format_range(low, high) == expected


def test_a_number_that_rounds_to_zero_has_no_sign_and_a_negative_interval_reads_to():
    """'+0.013 (−0.000 to +0.026)' and '0.36 (-0.15–0.84)' once stood in the reports: a negative number that
    rounds to zero is zero, and an interval with a negative end reads 'low to high' (as readable_table's)."""
    from beyondauc.utils.formatting import format_interval, format_number

    assert [format_number(v) for v in (-0.0004, -0.0005001, 0.0004, -1e-12)] == [
        "0.000",
        f"{MINUS}0.001",
        "0.000",
        "0.000",
    ]
    assert format_number(-0.0004, signed=True) == "0.000" and format_number(-0.4, 0) == "0"
    assert format_interval(-0.0004, 0.026) == "0.000\u20130.026"
    assert format_interval(-0.15, 0.84, 2, minus="-") == "-0.15 to 0.84"
    assert format_interval(-2.94, -0.5) == f"{MINUS}2.940 to {MINUS}0.500"
    frame = pd.DataFrame({"d": [-0.0004], "d_low": [-0.2], "d_high": [0.3]})
    assert repr(readable_table(frame)).splitlines()[-1].strip() == f"0.000 ({MINUS}0.200 to 0.300)"
