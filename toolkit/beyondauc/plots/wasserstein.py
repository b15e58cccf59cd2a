"""The Wasserstein matrix of the cohort diagnostics (Roberts et al.): the distance between the classes
within each cohort and across the two cohorts, drawn as one matrix.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..metrics.diagnostics.cohorts import wasserstein_matrix
from ._base import axes_or_new, literal_plot
from .diagnostics import cohort_scores

if TYPE_CHECKING:  # names in annotations only
    from matplotlib.axes import Axes
    from numpy.typing import ArrayLike

    from ..metrics.diagnostics.cohorts import WassersteinMatrix

__all__ = ["WassersteinDisplay"]


class WassersteinDisplay:
    """The Wasserstein matrix: diagonal = between classes (want large), off = across cohorts (want small).

    Parameters
    ----------
    result : WassersteinMatrix
        The matrix drawn (colours and first number of each cell).
    other : WassersteinMatrix, optional
        The same matrix at another order p (e.g. p = 1, which the paper's
        Figure 4 used, beside the p = 2 its text names): its entries are
        written in brackets under each cell and its W in the title.

    Examples
    --------
    >>> from beyondauc.plots import WassersteinDisplay
    >>> disp = WassersteinDisplay.from_predictions([0, 1, 0, 1], [0.1, 0.8, 0.4, 0.6], [0, 1, 0, 1], [0.3, 0.9, 0.5, 0.4])
    >>> len(disp.ax_.texts)
    4
    """

    def __init__(self, result: WassersteinMatrix, *, other: WassersteinMatrix | None = None) -> None:
        self.result = result
        self.other = other

    @literal_plot
    def plot(self, ax: Axes | None = None, *, cmap: str = "Greens") -> WassersteinDisplay:
        ax = axes_or_new(ax)
        r = self.result
        m = r.matrix
        finite = np.isfinite(m)
        vmax = float(m[finite].max()) if finite.any() and m[finite].max() > 0 else 1.0
        ax.imshow(np.where(finite, m, 0.0), cmap=cmap, vmin=0, vmax=vmax)
        hints = [["want large", "want small"], ["want small", "want large"]]
        o = self.other
        for i in range(2):
            for j in range(2):
                dark = finite[i, j] and m[i, j] > 0.6 * vmax
                extra = f"\n[p={o.p:g}: {o.matrix[i, j]:.4g}]" if o is not None else ""
                ax.text(
                    j,
                    i,
                    f"{m[i, j]:.4g}{extra}\n({hints[i][j]})",
                    ha="center",
                    va="center",
                    fontsize=9,
                    color="white" if dark else "black",
                )
        ax.set_xticks([0, 1], list(r.col_labels))
        ax.set_yticks([0, 1], list(r.row_labels))
        title = f"{r.p:g}-Wasserstein matrix: W = {r.score:.3f}"
        if o is not None:
            title += f"\n[p={o.p:g}: W = {o.score:.3f}]"
        ax.set_title(title + (f"\n{r.note}" if r.note else ""))
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_predictions(
        cls,
        y_val: ArrayLike,
        s_val: ArrayLike,
        y_test: ArrayLike,
        s_test: ArrayLike,
        *,
        p: float = 2,
        pos_label: object = None,
        ax: Axes | None = None,
        **kwargs: Any,
    ) -> WassersteinDisplay:
        """Compute the matrix and plot it."""
        return cls(wasserstein_matrix(y_val, s_val, y_test, s_test, p=p, pos_label=pos_label)).plot(ax, **kwargs)

    @classmethod
    def from_estimator(
        cls,
        estimator: object,
        X_val: ArrayLike,
        y_val: ArrayLike,
        X_test: ArrayLike,
        y_test: ArrayLike,
        *,
        response_method: str = "auto",
        pos_label: object = None,
        **kwargs: Any,
    ) -> WassersteinDisplay:
        """Score both cohorts with a fitted binary classifier, then :meth:`from_predictions`."""
        return cls.from_predictions(
            *cohort_scores(estimator, X_val, y_val, X_test, y_test, response_method, pos_label), **kwargs
        )
