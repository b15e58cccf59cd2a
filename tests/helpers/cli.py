"""Helpers shared by the command-line tests: run ``main`` in-process, check one-line errors."""

from __future__ import annotations

import io

from beyondauc.cli import main


def run(argv):
    """Run the CLI in-process; return (exit status, stdout text)."""
    out = io.StringIO()
    code = main(argv, out=out)
    return code, out.getvalue()


def check_single_error(capsys, argv, *needles):
    """Assert the CLI exits 2 with one stderr line (no traceback) holding every needle."""
    code, out = run(argv)
    err = capsys.readouterr().err
    assert code == 2, (argv, err)
    assert out == ""
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1, err
    assert lines[0].startswith("beyondauc"), err
    assert "Traceback" not in err
    for n in needles:
        assert n in lines[0], (n, err)
    return lines[0]
