"""Layer 5: the ``beyondauc`` command, a thin layer over the others."""

from .commands import main  # noqa: F401

__all__ = ["main"]
