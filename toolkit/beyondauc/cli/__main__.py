"""``python -m beyondauc.cli``: the same as the ``beyondauc`` command."""

from .commands import main

if __name__ == "__main__":
    raise SystemExit(main())
