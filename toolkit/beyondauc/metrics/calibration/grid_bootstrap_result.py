"""What the bootstrap of the AUC vs expected accuracy grid returns: :class:`GridBootstrap`.

The replicates of every cell of the grid (:func:`~beyondauc.bootstrap_grid`),
read as percentile intervals of each value (:meth:`GridBootstrap.intervals`),
the stability of the AUC and score rankings (:meth:`GridBootstrap.rank_stability`),
the pairwise wins of each pair of models (:meth:`GridBootstrap.pairwise`) and
Kendall's tau between the two rankings (:meth:`GridBootstrap.kendall`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...utils.validation import check_option
from ..uncertainty.bootstrap import check_bootstrap, percentile_interval
from ..uncertainty.paired import bootstrap_pvalue, holm_adjust
from .grid import SCORES
from .grid_replicates import VALUES

__all__ = ["GridBootstrap", "MEAN", "kendall_b", "nanmean_quiet", "ranks"]

MEAN = "mean"


# -- ranks ----------------------------------------------------------------------------


def ranks(values):
    """Ranks along the last axis: 1 = highest, ties share the best rank, NaN stays NaN."""
    v = np.asarray(values, dtype=float)
    ok = np.isfinite(v)
    better = (v[..., None, :] > v[..., :, None]) & ok[..., None, :]
    r = 1.0 + better.sum(axis=-1)
    return np.where(ok, r, np.nan)


def kendall_b(a, b):
    """Kendall's tau-b between a and b along the last axis (NaN pairs left out)."""
    ok = np.isfinite(a) & np.isfinite(b)
    sa = np.sign(a[..., :, None] - a[..., None, :])
    sb = np.sign(b[..., :, None] - b[..., None, :])
    both = ok[..., :, None] & ok[..., None, :]
    sa, sb = np.where(both, sa, 0.0), np.where(both, sb, 0.0)
    num = (sa * sb).sum(axis=(-1, -2))
    den = np.sqrt((sa * sa).sum(axis=(-1, -2)) * (sb * sb).sum(axis=(-1, -2)))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / den, np.nan)


def nanmean_quiet(a, axis):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(a, axis=axis)


# -- the result -----------------------------------------------------------------------


@dataclass(frozen=True)
class GridBootstrap:
    """Bootstrap replicates of an expected-accuracy grid (see :func:`~beyondauc.bootstrap_grid`).

    Attributes
    ----------
    grid : DataFrame
        The point-estimate grid of :func:`~beyondauc.expected_accuracy_grid`
        with ``<value>_low`` / ``<value>_high`` after each of ``auc``,
        ``accuracy``, ``kappa``, ``balanced_accuracy``, ``mcc``, ``f1``
        (percentile intervals).
    replicates : ndarray, shape (n_bootstrap, len(grid), 6)
        Every replicate's value of every grid row; last axis ``VALUES``
        (``auc`` then the scores).
    n_bootstrap, confidence_level, random_state
        As given.
    """

    grid: pd.DataFrame = field(repr=False)
    replicates: np.ndarray = field(repr=False)
    n_bootstrap: int
    confidence_level: float
    random_state: object
    values: tuple = VALUES

    def __repr__(self) -> str:
        p = list(pd.unique(self.grid["protocol"]))
        meth = list(pd.unique(self.grid["method"]))
        return (
            f"GridBootstrap(n_bootstrap={self.n_bootstrap}, confidence_level={self.confidence_level}, "
            f"protocols={p}, methods={meth}, cells={len(self.grid)})"
        )

    def _repr_html_(self) -> str:
        import html

        return f"<p><code>{html.escape(repr(self))}</code></p>" + self.grid.head(10).to_html(index=False)

    # -- selection helpers
    def replicates_of(
        self, protocol: str, method: str, value: str
    ) -> tuple[list[str], list[str], np.ndarray, np.ndarray]:
        """(datasets, models, point estimates (datasets x models), replicates (B x datasets x models)) of one
        protocol, method and value."""
        check_option(value, "score", VALUES)
        g = self.grid
        sel = (g["protocol"] == protocol).to_numpy() & (g["method"] == method).to_numpy()
        if not sel.any():
            raise ValueError(
                f"`protocol`/`method` ({protocol!r}, {method!r}) is not in this bootstrap; it has "
                f"{sorted(set(zip(g['protocol'], g['method'])))}"
            )
        sub = g[sel]
        datasets = list(pd.unique(sub["dataset"]))
        models = list(pd.unique(sub["model"]))
        di = sub["dataset"].map({d: i for i, d in enumerate(datasets)}).to_numpy()
        mi = sub["model"].map({mm: i for i, mm in enumerate(models)}).to_numpy()
        j = VALUES.index(value)
        point = np.full((len(datasets), len(models)), np.nan)
        point[di, mi] = sub[value].to_numpy()
        reps = np.full((self.n_bootstrap, len(datasets), len(models)), np.nan)
        reps[:, di, mi] = self.replicates[:, np.flatnonzero(sel), j]
        # the mean over datasets as one more "dataset" (NaN datasets skipped, as rank_table does)
        point = np.concatenate([point, nanmean_quiet(point, 0)[None]], axis=0)
        reps = np.concatenate([reps, nanmean_quiet(reps, 1)[:, None]], axis=1)
        return datasets + [MEAN], models, point, reps

    def intervals(self, *, confidence_level: float | None = None) -> pd.DataFrame:
        """Every value of every cell and of the mean over datasets, with its interval.

        Returns
        -------
        DataFrame
            ``protocol``, ``method``, ``dataset`` (datasets then ``"mean"``),
            ``model``, ``score`` (``auc`` or a score), ``estimate``, ``low``,
            ``high``, ``standard_error`` (the replicates' standard deviation).
        """
        level = self.confidence_level if confidence_level is None else check_bootstrap(1, confidence_level)[1]
        parts = []
        for p, meth in self.grid[["protocol", "method"]].drop_duplicates().itertuples(index=False):
            for v in VALUES:
                datasets, models, point, reps = self.replicates_of(p, meth, v)
                low, high = percentile_interval(reps, level, axis=0)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    se = np.nanstd(reps, axis=0, ddof=1)
                parts.append(
                    pd.DataFrame(
                        {
                            "protocol": p,
                            "method": meth,
                            "dataset": np.repeat(datasets, len(models)),
                            "model": np.tile(models, len(datasets)),
                            "score": v,
                            "estimate": point.ravel(),
                            "low": low.ravel(),
                            "high": high.ravel(),
                            "standard_error": se.ravel(),
                        }
                    )
                )
        return pd.concat(parts, ignore_index=True)

    def rank_stability(self, protocol: str, method: str, *, score: str = "accuracy") -> pd.DataFrame:
        """Bootstrap distribution of each model's AUC rank and ``score`` rank.

        Per dataset and for the mean over datasets: the point ranks (rank 1 =
        best, ties share the best rank), their percentile intervals,
        ``sign_share``: the share of replicates whose rank change ``auc_rank -
        rank`` has the sign reported (for a reported change of 0: the share
        where it is 0), a stability, not a p-value; ``p_value``: the
        bootstrap's two-sided p-value of the change, ``2 * min(P*(change <=
        0), P*(change >= 0))`` capped at 1 (the change's percentile interval
        at level ``1 - p_value`` just reaches 0).  ``significant``: a nonzero
        change with ``p_value <= 1 - confidence_level``.  ``p_change`` is
        ``sign_share`` under its former name, kept for compatibility.

        Returns
        -------
        DataFrame
            ``dataset``, ``model``, ``auc_rank``, ``auc_rank_low``,
            ``auc_rank_high``, ``rank``, ``rank_low``, ``rank_high``,
            ``change``, ``change_low``, ``change_high``, ``sign_share``,
            ``p_value``, ``p_change``, ``significant``.
        """
        check_option(score, "score", SCORES)
        datasets, models, auc_p, auc_r = self.replicates_of(protocol, method, "auc")
        _, _, sc_p, sc_r = self.replicates_of(protocol, method, score)
        ra_p, rs_p = ranks(auc_p), ranks(sc_p)
        ra_r, rs_r = ranks(auc_r), ranks(sc_r)
        ch_p, ch_r = ra_p - rs_p, ra_r - rs_r
        lvl = self.confidence_level
        ra_lo, ra_hi = percentile_interval(ra_r, lvl)
        rs_lo, rs_hi = percentile_interval(rs_r, lvl)
        ch_lo, ch_hi = percentile_interval(ch_r, lvl)
        valid = np.isfinite(ch_r)
        same_sign = np.where(ch_p > 0, ch_r > 0, np.where(ch_p < 0, ch_r < 0, ch_r == 0))
        with np.errstate(invalid="ignore", divide="ignore"):
            n_valid = valid.sum(axis=0)
            p = (same_sign & valid).sum(axis=0) / n_valid
            tail = np.minimum((valid & (ch_r <= 0)).sum(axis=0), (valid & (ch_r >= 0)).sum(axis=0)) / n_valid
        p = np.where(np.isfinite(ch_p), p, np.nan)
        p_value = np.where(np.isfinite(ch_p), np.minimum(1.0, 2 * tail), np.nan)
        n = len(models)
        out = pd.DataFrame(
            {
                "dataset": np.repeat(datasets, n),
                "model": np.tile(models, len(datasets)),
                "auc_rank": ra_p.ravel(),
                "auc_rank_low": ra_lo.ravel(),
                "auc_rank_high": ra_hi.ravel(),
                "rank": rs_p.ravel(),
                "rank_low": rs_lo.ravel(),
                "rank_high": rs_hi.ravel(),
                "change": ch_p.ravel(),
                "change_low": ch_lo.ravel(),
                "change_high": ch_hi.ravel(),
                "sign_share": p.ravel(),
                "p_value": p_value.ravel(),
                "p_change": p.ravel(),
            }
        )
        out["significant"] = (out["change"] != 0) & (out["p_value"] <= 1 - lvl)
        return out

    def pairwise(self, protocol: str, method: str, *, score: str = "accuracy") -> pd.DataFrame:
        """For each ordered pair of models, how often the first beats the second by ``score``.

        Returns
        -------
        DataFrame
            ``dataset`` (datasets then ``"mean"``), ``model``, ``other``,
            ``difference`` (point estimate of model - other), ``low``, ``high``
            (percentile interval of the difference), ``p_better`` (share of
            replicates where model > other), ``p_tie``, ``pvalue`` (two-sided
            bootstrap p-value of "no difference",
            :func:`~beyondauc.metrics.uncertainty.paired.bootstrap_pvalue`) and
            ``pvalue_holm``: Holm-adjusted within the family of one dataset's
            (or the mean's) pairs of models, each unordered pair one test
            (:func:`~beyondauc.metrics.uncertainty.paired.holm_adjust`).
        """
        datasets, models, point, reps = self.replicates_of(protocol, method, score)
        n = len(models)
        a, b = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
        keep = a != b
        a, b = a[keep], b[keep]
        diff_p = point[:, a] - point[:, b]  # (D+1, pairs)
        diff_r = reps[:, :, a] - reps[:, :, b]
        low, high = percentile_interval(diff_r, self.confidence_level)
        valid = np.isfinite(diff_r)
        with np.errstate(invalid="ignore", divide="ignore"):
            p_better = (diff_r > 0).sum(axis=0) / valid.sum(axis=0)
            p_tie = (diff_r == 0).sum(axis=0) / valid.sum(axis=0)
        k = len(a)
        names = np.asarray(models, dtype=object)
        pvalue = bootstrap_pvalue(diff_r)  # (D+1, pairs): the same for (a, b) and (b, a)
        once = a < b  # each unordered pair is one test of its dataset's family; both orders read its value
        family = np.broadcast_to(np.arange(len(datasets))[:, None], pvalue.shape)[:, once]
        matrix = np.empty((len(datasets), n, n))
        matrix[:, a[once], b[once]] = holm_adjust(pvalue[:, once].ravel(), groups=family.ravel()).reshape(family.shape)
        matrix[:, b[once], a[once]] = matrix[:, a[once], b[once]]
        holm = matrix[:, a, b]
        return pd.DataFrame(
            {
                "dataset": np.repeat(datasets, k),
                "model": np.tile(names[a], len(datasets)),
                "other": np.tile(names[b], len(datasets)),
                "difference": diff_p.ravel(),
                "low": low.ravel(),
                "high": high.ravel(),
                "p_better": p_better.ravel(),
                "p_tie": p_tie.ravel(),
                "pvalue": pvalue.ravel(),
                "pvalue_holm": holm.ravel(),
            }
        )

    def kendall(self, protocol: str, method: str, *, score: str = "accuracy") -> pd.DataFrame:
        """Kendall's tau-b between the AUC and ``score`` rankings, with a percentile interval.

        Returns
        -------
        DataFrame
            ``dataset`` (datasets then ``"mean"``), ``tau``, ``tau_low``,
            ``tau_high``, ``p_tau_below_1`` (share of replicates where the
            rankings disagree on some pair), ``n_models``.
        """
        check_option(score, "score", SCORES)
        datasets, models, auc_p, auc_r = self.replicates_of(protocol, method, "auc")
        _, _, sc_p, sc_r = self.replicates_of(protocol, method, score)
        tau_p = kendall_b(auc_p, sc_p)
        tau_r = kendall_b(auc_r, sc_r)
        low, high = percentile_interval(tau_r, self.confidence_level)
        valid = np.isfinite(tau_r)
        with np.errstate(invalid="ignore", divide="ignore"):
            below = ((tau_r < 1) & valid).sum(axis=0) / valid.sum(axis=0)
        return pd.DataFrame(
            {
                "dataset": datasets,
                "tau": tau_p,
                "tau_low": low,
                "tau_high": high,
                "p_tau_below_1": below,
                "n_models": (np.isfinite(auc_p) & np.isfinite(sc_p)).sum(axis=1),
            }
        )
