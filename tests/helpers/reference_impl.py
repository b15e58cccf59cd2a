"""Straightforward per-fit reference for expected accuracy.

One scikit-learn estimator fitted per cell (and per repeat for ``indata``),
with no sharing, no sorting tricks and no vectorisation: the independent
reference the fast implementation is tested and timed against.

The default calibrators are scale-free: logistic is
``make_pipeline(StandardScaler(), LogisticRegression())``, the stump is
:class:`ScaleFreeStump` (scikit-learn's tree on the ranks of the calibration
scores, so no float32 rounding), isotonic is ``IsotonicRegression`` (rank-based).

``reference="opitz2024"`` uses the settings of the code behind the Opitz
paper's tables: ``LogisticRegression()``, ``IsotonicRegression()`` and
``DecisionTreeClassifier(max_depth=1)`` on the raw scores with their defaults
(isotonic predicts NaN, hence negative, outside the calibration range), and
the ``outdata`` AUC on the pooled other datasets.
"""

import warnings

import numpy as np
import pandas as pd
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, cohen_kappa_score, roc_auc_score
from sklearn.model_selection import ShuffleSplit
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.class_weight import compute_sample_weight


class ScaleFreeStump:
    """``DecisionTreeClassifier(max_depth=1)`` on the rank of each distinct calibration score.

    The ranks are integers, exact in float32 and 1 apart, so scikit-learn's
    split search (Gini, first best split, majority leaves) runs without the
    float32 rounding of the raw scores; the split between ranks r and r + 1 is
    mapped back to the mid-point of the two scores it separates (scikit-learn's
    ``a / 2 + b / 2``).  What a tree fitted on the standardised score gives
    wherever no two calibration scores are within float32 rounding of each other.
    """

    def __init__(self, class_weight=None):
        self.class_weight = class_weight

    def fit(self, X, y):
        s = np.asarray(X, dtype=float)[:, 0]
        values = np.unique(s)
        ranks = np.searchsorted(values, s).astype(float)
        self.tree_ = DecisionTreeClassifier(max_depth=1, class_weight=self.class_weight).fit(ranks[:, None], y)
        self.lo_, self.threshold_ = 0, np.nan
        if self.tree_.tree_.node_count > 1:
            self.lo_ = int(np.floor(self.tree_.tree_.threshold[0]))  # the split lies at rank lo + 0.5
            a, b = values[self.lo_], values[self.lo_ + 1]
            thr = a / 2.0 + b / 2.0
            self.threshold_ = a if (thr == b or np.isinf(thr)) else thr
        return self

    def _ranks(self, X):
        s = np.asarray(X, dtype=float)[:, 0]
        if np.isnan(self.threshold_):
            return np.zeros((len(s), 1))
        return np.where(s <= self.threshold_, self.lo_, self.lo_ + 1).astype(float)[:, None]

    def predict(self, X):
        return self.tree_.predict(self._ranks(X))

    def predict_proba(self, X):
        return self.tree_.predict_proba(self._ranks(X))


def standardized_logistic(class_weight=None, **kw):
    """The default logistic calibrator: ``make_pipeline(StandardScaler(), LogisticRegression(...))``."""
    return make_pipeline(StandardScaler(), LogisticRegression(class_weight=class_weight, **kw))


def fit_predict(method, s_cal, y_cal, s_eval, *, class_weight=None, logistic_tol=None, reference=None):
    """Decisions on ``s_eval`` of ``method`` fitted on (``s_cal``, ``y_cal``)."""
    if len(np.unique(y_cal)) < 2:
        return np.full(len(s_eval), y_cal[0])
    if reference == "opitz2024":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if method == "logistic":
                return LogisticRegression(class_weight=class_weight).fit(s_cal[:, None], y_cal).predict(s_eval[:, None])
            if method == "stump":
                est = DecisionTreeClassifier(max_depth=1, class_weight=class_weight).fit(s_cal[:, None], y_cal)
                return est.predict(s_eval[:, None])
            sw = None if class_weight is None else compute_sample_weight(class_weight, y_cal)
            return (IsotonicRegression().fit(s_cal, y_cal, sample_weight=sw).predict(s_eval) > 0.5).astype(int)
    if method == "logistic":
        kw = {} if logistic_tol is None else {"tol": logistic_tol, "max_iter": 10_000}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = standardized_logistic(class_weight, **kw).fit(s_cal[:, None], y_cal)
        return est.predict(s_eval[:, None])
    if method == "isotonic":
        sw = None if class_weight is None else compute_sample_weight(class_weight, y_cal)
        est = IsotonicRegression(out_of_bounds="clip").fit(s_cal, y_cal, sample_weight=sw)
        return (est.predict(s_eval) > 0.5).astype(int)
    return ScaleFreeStump(class_weight).fit(s_cal[:, None], y_cal).predict(s_eval[:, None])


def accuracy_and_kappa(y, pred):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return accuracy_score(y, pred), cohen_kappa_score(y, pred)


def _auc(y, s):
    return float(roc_auc_score(y, s)) if len(np.unique(y)) == 2 else np.nan


def reference_expected_accuracy(
    df,
    domains,
    *,
    protocol,
    method,
    class_weight=None,
    n_repeats=100,
    random_state=0,
    logistic_tol=None,
    reference=None,
):
    """Per-fit loop over models x datasets; returns dataset, model, auc, accuracy, kappa."""
    models = [c for c in df.columns if c not in ("dataset", "label", "domain", "split", "id")]
    datasets = list(pd.unique(df["dataset"]))
    rows = []
    for m in models:
        for d in datasets:
            in_d = (df["dataset"] == d).to_numpy()
            same = [o for o in datasets if o != d and domains.get(o) == domains.get(d)]
            use = protocol
            if protocol == "indomain" and not same:
                use = "indata"
            s = df[m].to_numpy(dtype=float)
            y = df["label"].to_numpy().astype(int)
            if use == "indata":
                sd, yd = s[in_d], y[in_d]
                accs, kappas = [], []
                ss = ShuffleSplit(n_splits=n_repeats, test_size=0.2, random_state=random_state)
                for train, test in ss.split(np.zeros((len(sd), 1))):
                    pred = fit_predict(
                        method,
                        sd[train],
                        yd[train],
                        sd[test],
                        class_weight=class_weight,
                        logistic_tol=logistic_tol,
                        reference=reference,
                    )
                    a, k = accuracy_and_kappa(yd[test], pred)
                    accs.append(a)
                    kappas.append(k)
                kappas = np.array(kappas, dtype=float)
                kappa = float(np.nanmean(kappas)) if np.isfinite(kappas).any() else np.nan
                rows.append(dict(dataset=d, model=m, auc=_auc(yd, sd), accuracy=float(np.mean(accs)), kappa=kappa))
                continue
            if use == "xdomain":
                cal, ev = ~in_d, in_d
            elif use == "outdomain":
                other = df["dataset"].map(lambda o: domains.get(o) != domains.get(d)).to_numpy()
                cal, ev = other, in_d
            elif use == "indomain":
                cal, ev = df["dataset"].isin(same).to_numpy(), in_d
            else:  # outdata
                cal, ev = in_d, ~in_d
            auc = _auc(y[ev], s[ev]) if (reference == "opitz2024" and use == "outdata") else _auc(y[in_d], s[in_d])
            if not cal.any() or not ev.any():
                rows.append(dict(dataset=d, model=m, auc=auc, accuracy=np.nan, kappa=np.nan))
                continue
            pred = fit_predict(
                method, s[cal], y[cal], s[ev], class_weight=class_weight, logistic_tol=logistic_tol, reference=reference
            )
            a, k = accuracy_and_kappa(y[ev], pred)
            rows.append(dict(dataset=d, model=m, auc=auc, accuracy=float(a), kappa=float(k)))
    return pd.DataFrame(rows)
