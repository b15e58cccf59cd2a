"""Which domain each dataset belongs to: given, from a 'domain' column, or TRUE's built-in domains."""

from __future__ import annotations

import warnings

from ..utils.formatting import quoted_name
from .readers import TRUE_DOMAINS, check_names

__all__ = ["column_domains_of", "dataset_domains"]


def dataset_domains(frame, order, domains, origin):
    """Dataset -> domain: from ``domains``, else the 'domain' column, else the TRUE domains (None if unknown)."""
    where = origin.where
    column_domains = column_domains_of(frame, origin) if "domain" in frame.columns else {}
    dom = {}
    for d in order:
        if domains is not None and d in domains:
            dom[d] = str(domains[d])
        elif column_domains.get(d) is not None:
            dom[d] = column_domains[d]
        else:
            dom[d] = TRUE_DOMAINS.get(d)
    if domains is not None:
        check_names(dict.fromkeys(str(v) for v in domains.values()), "`domains` value", where)
    check_names(dict.fromkeys(v for v in dom.values() if v is not None), "domain", where)
    if domains is not None:
        extra = [k for k in domains if k not in order]
        if extra:
            warnings.warn(f"`domains` names dataset(s) not in the data: {extra}", UserWarning, stacklevel=3)
    return dom


def column_domains_of(frame, origin):
    """Dataset -> the one value of its 'domain' column (None where empty); several values are an error."""
    where = origin.where
    column_domains = {}
    g = frame.groupby("dataset", sort=False)["domain"].agg(lambda s: s.dropna().astype(str).unique().tolist())
    for d, vals in g.items():
        if len(vals) > 1:
            if origin.one_dataset:
                raise ValueError(
                    f"{where} has no 'dataset' column, so all of it is one dataset ({d!r}), but its 'domain' "
                    f"column has several values {quoted_name(vals)}; a dataset has one domain: add a 'dataset' "
                    "column naming each row's dataset"
                )
            files = frame.loc[frame["dataset"] == d, "_file"].unique() if "_file" in frame.columns else ()
            at = f"file {str(files[0])!r}" if len(files) == 1 and where.startswith("directory") else where
            raise ValueError(
                f"{at}: dataset {d!r} has several values in column 'domain': {quoted_name(vals)}; "
                "a dataset has one domain"
            )
        column_domains[d] = vals[0] if vals else None
    check_names(dict.fromkeys(v for v in column_domains.values() if v is not None), "column 'domain' value", where)
    return column_domains
