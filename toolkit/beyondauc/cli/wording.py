"""Messages in the command line's words: one rendering of the parameters a message names.

The library writes every message in the API's spelling, with each parameter
marked the way its docs mark it: `` `random_state` ``, `` `cohort_protocol`='indata' ``,
`` `domains=` ``, or a keyword with a quoted value, ``nan_policy="drop"``.  That is
the message a Python caller reads.  :func:`cli_message` renders the same
message for a subcommand of the command line: each parameter it has an option
for becomes that option (``--random-state``, ``--cohort-protocol indata``), one
it can only take as ``-p`` becomes ``-p NAME=VALUE``, and a clause that
suggests a parameter the subcommand cannot take at all is dropped.  Names that
are no parameter (`` `y_true` ``) are left as written.
"""

from __future__ import annotations

import argparse
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from ..evaluation.parameters import PARAMETERS

__all__ = ["Spelling", "cli_message", "spelling_of"]

_VALUE = r"'[^']*'|\"[^\"]*\"|-?\d[\w.+-]*|None|True|False"
#: A marked parameter: `name`, `name=`, `name`=VALUE; or a bare keyword with a quoted value, name="value".
_REFERENCE = re.compile(
    rf"`(?P<name>[A-Za-z_]\w*)(?P<kw>=)?`(?:=(?P<value>{_VALUE}))?"
    rf"|(?<![\w`.-])(?P<bare>[a-z_]\w*)=(?P<bare_value>'[^']*'|\"[^\"]*\")"
)


@dataclass(frozen=True)
class Spelling:
    """How one subcommand spells parameters: API name -> its option, and whether it takes ``-p NAME=VALUE``."""

    flags: Mapping[str, str]
    takes_p: bool = False


class OptionsParser(Protocol):
    """A parser that keeps the options added to it (:mod:`beyondauc.cli.parser`'s parsers do)."""

    options: list[argparse.Action]


def spelling_of(parser: OptionsParser | None) -> Spelling:
    """The :class:`Spelling` of a subcommand's parser (an empty one for None).

    An option answers to its destination (``table_`` dropped), to each of its
    long spellings with underscores (``--random-state`` -> ``random_state``)
    and to the API names set on it as ``api_names``.

    Examples
    --------
    >>> import argparse
    >>> p = argparse.ArgumentParser()
    >>> p.options = [p.add_argument("--random-state", "--seed", dest="seed", type=int)]
    >>> spelling_of(p).flags["random_state"]
    '--random-state'
    """
    if parser is None:
        return Spelling({})
    flags: dict[str, str] = {}
    for action in parser.options:
        if not action.option_strings and action.dest != argparse.SUPPRESS:  # a positional: its name, as usage shows
            flags.setdefault(action.dest, action.dest)
            continue
        long = [s for s in action.option_strings if s.startswith("--")]
        if not long or action.dest == "help":
            continue
        names = [
            action.dest.removeprefix("table_"),
            *(s[2:].replace("-", "_") for s in long),
            *getattr(action, "api_names", ()),
        ]
        for name in names:
            flags.setdefault(name, long[0])
    return Spelling(flags, any("-p" in action.option_strings for action in parser.options))


def _shown(value):
    """A Python literal as the command line takes it: a string unquoted (quoted for the shell when it must be)."""
    if value[:1] in "'\"":
        return shlex.quote(value[1:-1])
    return {"None": "null", "True": "true", "False": "false"}.get(value, value)


def cli_message(message: str, spelling: Spelling) -> str:
    """``message`` with every parameter it names spelled as the subcommand takes it.

    Examples
    --------
    >>> s = Spelling({"random_state": "--random-state", "nan_policy": "--nan-policy"}, takes_p=True)
    >>> cli_message("`random_state` must be in [0, 4294967295]", s)
    '--random-state must be in [0, 4294967295]'
    >>> cli_message("or set `cohort_protocol`='indata'", s)
    'or set -p cohort_protocol=indata'
    >>> cli_message('1 such value; pass nan_policy="drop"', s)
    '1 such value; pass --nan-policy drop'
    >>> cli_message("no domains; give `domains=` (dataset -> domain)", Spelling({}))
    'no domains'
    """
    dropped = []

    def render(match):
        name = match["name"] or match["bare"]
        value = match["value"] or match["bare_value"]
        if name in spelling.flags:
            return spelling.flags[name] + (f" {_shown(value)}" if value else "")
        if name in PARAMETERS and spelling.takes_p:
            return f"-p {name}" + (f"={_shown(value)}" if value else "")
        if name in PARAMETERS:  # a parameter this subcommand cannot take
            dropped.append(match.group(0))
        return match.group(0)

    text = _REFERENCE.sub(render, message)
    for api in dropped:  # drop the clause that suggests it, with the separator before it (after it, if first)
        clause = r"[^;,.:]*" + re.escape(api) + r"[^;,.]*"
        text, n = re.subn(r"[;,]\s*" + clause, "", text, count=1)
        if not n:  # the first clause: the next one loses its conjunction
            text = re.sub(r"^\s*" + clause + r"[;,]?\s*(?:(?:or|and)\s+)?", "", text, count=1)
    return text
