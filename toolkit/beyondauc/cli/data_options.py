"""The data a command reads: its ``--data``, ``--models`` and ``--domains`` options made one benchmark,
and the datasets an analysis command goes over."""

from __future__ import annotations

from pathlib import Path

from ..data.demo import load_demo
from ..data.load import load_benchmark
from ..data.readers import domain_pairs, read_domains
from ..evaluation.parameters import PARAMETERS
from .parser import label_value

__all__ = ["domains_option", "load_data", "analysed_datasets"]


def domains_option(args):
    """The ``--domains`` values as one dataset -> domain mapping (None without any): files read, pairs parsed."""
    values = getattr(args, "domains", None)
    if not values:
        return None
    flag = PARAMETERS["domains"].flag
    out = {}
    for value in values:
        if Path(value).expanduser().is_file():
            mapping = read_domains(Path(value).expanduser())
        elif "=" in value:
            mapping = domain_pairs(value, name=flag)
        else:
            raise ValueError(
                f"{flag} {value!r} is neither a file nor NAME=DOMAIN pairs (e.g. {flag} begin=dialogue,q2=dialogue)"
            )
        for dataset, domain in mapping.items():
            if out.get(dataset, domain) != domain:
                raise ValueError(f"{flag} gives dataset {dataset!r} two domains: {out[dataset]!r} and {domain!r}")
            out[dataset] = domain
    return out


def load_data(args):
    """The benchmark a command reads: ``--data`` (the demo without one), with ``--models``, ``--domains``,
    ``--pos-label`` and ``--nan-policy`` applied."""
    models = getattr(args, "models", None)
    models = [m.strip() for m in models.split(",") if m.strip()] if models else None
    domains = domains_option(args)
    if args.data is None:
        bench = load_demo()
        if models is not None or domains:
            bench = load_benchmark(bench.frame, models=models, domains=domains, nan_policy=args.nan_policy)
    else:
        bench = load_benchmark(
            args.data, domains=domains, pos_label=label_value(args.pos_label), models=models, nan_policy=args.nan_policy
        )
    return bench


def analysed_datasets(bench, args):
    """The datasets an analysis command goes over: ``--dataset`` (refused when the data lacks it), else every
    dataset but the out-of-distribution one."""
    if args.dataset is not None:
        bench.rows_of(args.dataset)
        return [args.dataset]
    return [d for d in bench.datasets if d != getattr(args, "ood_dataset", None)]
