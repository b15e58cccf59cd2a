"""The grid bootstrap in chunks of replicates: the evaluation's tasks per model x chunk.

- the chunks of any split, joined, are ``bootstrap_grid``'s result exactly (scores and answers
  benchmarks, chunks across blocks of seeds and batches of the counts, in any order);
- the evaluation's tables do not depend on the split (``n_jobs``, the chunk size), and the
  stage's bar counts the chunk tasks;
- chunks that do not cover a model's replicates once each are an error naming the model.
"""

from __future__ import annotations

from gc import collect as gc_collect

import numpy as np
import pandas as pd
import pytest

import beyondauc as ba
import beyondauc.evaluation.stages as stages
import beyondauc.metrics.calibration.grid_chunks as gc
from beyondauc import bootstrap_grid, load_benchmark
from beyondauc.metrics.calibration.grid_chunks import bootstrap_grid_chunk, join_grid_chunks, replicate_ranges
from beyondauc.metrics.uncertainty.bootstrap import BLOCK
from helpers.benchmarks import DOMAINS, answers_benchmark, small_frame

KW = dict(protocols=["xdomain", "indata", "outdata"], methods=["logistic", "stump"], n_repeats=4, random_state=3)


def _assert_same(joined, whole):
    pd.testing.assert_frame_equal(joined.grid, whole.grid, check_exact=True)
    np.testing.assert_array_equal(joined.replicates, whole.replicates)
    assert (joined.n_bootstrap, joined.confidence_level, joined.random_state) == (
        whole.n_bootstrap,
        whole.confidence_level,
        whole.random_state,
    )


@pytest.mark.parametrize("kind", ["scores", "answers"])
def test_chunks_of_any_split_join_to_bootstrap_grid(monkeypatch, kind):
    bench = (
        load_benchmark(small_frame(1), domains=DOMAINS)
        if kind == "scores"
        else answers_benchmark(n=40, models=("sharp", "coin"))
    )
    kw = dict(KW, protocols=["xdomain", "indata"]) if kind == "answers" else KW
    B = BLOCK + 10
    whole = bootstrap_grid(bench, n_bootstrap=B, **kw)
    # batches of counts inside a chunk, cut at 16, 32, ... (grid_bootstrap.replicate_batches, which the chunks use)
    monkeypatch.setattr("beyondauc.metrics.calibration.grid_bootstrap._TASK_REPLICATES", 16)
    splits = [[(0, B)], [(0, 1), (1, 20), (20, BLOCK), (BLOCK, BLOCK + 1), (BLOCK + 1, B)], [(0, 37), (37, B)]]
    for split in splits:  # per-model benchmarks (the evaluation's tasks), the chunks in reverse order
        chunks = [
            bootstrap_grid_chunk(bench.subset(models=[m]), start=a, stop=b, n_bootstrap=B, **kw)
            for m in bench.models
            for a, b in split
        ]
        _assert_same(join_grid_chunks(chunks[::-1], bench), whole)
    # the whole benchmark in each chunk
    chunks = [bootstrap_grid_chunk(bench, start=a, stop=b, n_bootstrap=B, **kw) for a, b in splits[1]]
    _assert_same(join_grid_chunks(chunks, bench), whole)
    assert chunks[0].grid is not None and all(c.grid is None for c in chunks[1:])  # the point grid: once


def test_replicate_ranges_cover_the_replicates_with_two_tasks_per_worker_where_they_allow():
    for B in (1, 10, 31, 32, 64, 150, 200, 1000):
        for n_models in (1, 2, 3, 8, 40):
            for workers in (1, 2, 3, 8):
                chunks = replicate_ranges(B, n_models=n_models, workers=workers)
                assert [a for a, _ in chunks] == [0, *(b for _, b in chunks[:-1])] and chunks[-1][1] == B
                if workers == 1 or n_models >= 2 * workers:
                    assert chunks == [(0, B)]
                elif len(chunks) > 1:
                    assert min(b - a for a, b in chunks) >= gc.MIN_CHUNK
                    assert max(b - a for a, b in chunks) - min(b - a for a, b in chunks) <= 1  # equal
                if workers > 1 and 2 * workers * gc.MIN_CHUNK <= B:  # replicates enough: two tasks per worker
                    assert n_models * len(chunks) >= 2 * workers
                    assert n_models * (len(chunks) - 1) < 2 * workers  # and no more chunks than that needs


def test_chunks_that_miss_or_repeat_replicates_are_an_error():
    bench = load_benchmark(small_frame(2), domains=DOMAINS)
    kw = dict(protocols=["xdomain"], methods=["logistic"], n_bootstrap=10, random_state=0)
    one = {m: bench.subset(models=[m]) for m in bench.models}
    full = [bootstrap_grid_chunk(one[m], start=0, stop=10, **kw) for m in bench.models]
    with pytest.raises(ValueError, match=r"model\(s\) \['tied'\] do not cover replicates 0 to 10 once each"):
        join_grid_chunks([c for c in full if c.models != ("tied",)], bench)
    extra = bootstrap_grid_chunk(one["cont"], start=4, stop=6, **kw)
    with pytest.raises(ValueError, match=r"\['cont'\] do not cover"):
        join_grid_chunks([*full, extra], bench)
    other = bootstrap_grid_chunk(one["cont"], start=0, stop=10, **{**kw, "random_state": 1})
    with pytest.raises(ValueError, match="different bootstraps"):
        join_grid_chunks([*full[1:], other], bench)
    for start, stop in [(5, 5), (-1, 3), (0, 11), (0.0, 3)]:
        with pytest.raises(ValueError, match=r"`start`, `stop` must be ints with 0 <= start < stop"):
            bootstrap_grid_chunk(bench, start=start, stop=stop, **kw)


def test_a_process_sets_a_model_up_once_for_its_chunks_and_drops_it_with_the_benchmark(monkeypatch):
    made = []

    class Counted(gc.ModelBoot):
        def __init__(self, bctx, s):
            made.append(len(s))
            super().__init__(bctx, s)

    monkeypatch.setattr(gc, "ModelBoot", Counted)
    bench = load_benchmark(small_frame(4), domains=DOMAINS)
    part = bench.subset(models=["cont"])
    kw = dict(protocols=["xdomain"], methods=["logistic"], n_bootstrap=30, random_state=0)
    chunks = [bootstrap_grid_chunk(part, start=a, stop=b, **kw) for a, b in [(0, 10), (10, 20), (20, 30)]]
    assert made == [len(bench)]  # one set-up for the three chunks
    np.testing.assert_array_equal(join_grid_chunks(chunks, part).replicates, bootstrap_grid(part, **kw).replicates)
    key = id(part)
    assert [k[0] for k in gc.SETUPS].count(key) == 1
    del part, chunks
    gc_collect()
    assert key not in [k[0] for k in gc.SETUPS]  # nothing of it stays in the process


class _Bars(stages.StageProgress):
    """A StageProgress that records each stage's total and count of tasks done."""

    seen: list = []

    def __init__(self, desc, total, *, enabled):
        super().__init__(desc, total, enabled=False)
        self.desc, self.total = desc, total
        _Bars.seen.append(self)


@pytest.mark.filterwarnings("ignore:no bootstrap interval contains")
def test_the_evaluation_is_the_same_in_any_split_and_its_bar_counts_the_chunks(monkeypatch):
    # one model on two datasets: fewer models than workers, so its bootstrap is split into chunks
    small = dict(
        models=["svm"],
        datasets=["wine", "diabetes"],
        noise_repeats=2,
        n_repeats=3,
        n_bootstrap=40,
        ood_dataset="breast_cancer",
    )
    one = ba.evaluate("demo", n_jobs=1, **small)
    monkeypatch.setattr(stages, "StageProgress", _Bars)
    _Bars.seen = []
    two = ba.evaluate("demo", n_jobs=2, **small)
    bars = {b.desc: (b.total, b.done) for b in _Bars.seen}
    assert bars["bootstrap"] == (1, 1)  # 40 replicates: no two chunks of MIN_CHUNK
    monkeypatch.setattr(gc, "MIN_CHUNK", 4)
    _Bars.seen = []
    four = ba.evaluate("demo", n_jobs=2, **small)
    bars = {b.desc: (b.total, b.done) for b in _Bars.seen}
    assert bars["bootstrap"] == (4, 4) and bars["calibration grid"] == (1, 1)  # 2 workers: 4 chunks of 10
    head = one.table("grid").query("protocol == 'xdomain' and method == 'logistic'")
    assert len(one.tables) > 20 and len(head) == 2 and head["accuracy_low"].notna().all()  # the bootstrap ran
    for name, table in one.tables.items():
        pd.testing.assert_frame_equal(table, two.tables[name], check_exact=True, obj=f"n_jobs=2: {name}")
        pd.testing.assert_frame_equal(table, four.tables[name], check_exact=True, obj=f"4 chunks: {name}")


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_an_answers_evaluation_is_the_same_in_chunks(monkeypatch):
    bench = answers_benchmark(n=60, models=("sharp", "coin"))  # paired: every model resamples the same rows
    small = dict(n_bootstrap=24, noise_repeats=2, n_repeats=3, ood_dataset="d3")
    one = ba.evaluate(bench, n_jobs=1, **small)
    monkeypatch.setattr(gc, "MIN_CHUNK", 4)
    monkeypatch.setattr(stages, "StageProgress", _Bars)
    _Bars.seen = []
    two = ba.evaluate(bench, n_jobs=2, **small)
    assert {b.desc: b.total for b in _Bars.seen}["bootstrap"] == 2 * 2  # 2 models x 2 ranges of 12
    assert one.table("pairwise")["p_better"].notna().all()
    for name, table in one.tables.items():
        pd.testing.assert_frame_equal(table, two.tables[name], check_exact=True, obj=f"answers in chunks: {name}")
