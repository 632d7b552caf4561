"""What of an input file a report may show besides the findings' own messages.

A file `validate` reads may be no placement file at all: a path named on the command line,
or a link, can lead to a secret of the machine (a CI runner's `.git-credentials`), and CI
logs are public. The findings' messages quote at most a few characters of any input
(`placement.io.jsonsrc.shorten`); a report that shows the source line of a finding (the
text report's excerpt) must show none for a file that is not what validate expected:
text that is no JSON at all, or bytes that are not UTF-8 text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from placement.io.jsonsrc import NOT_JSON

if TYPE_CHECKING:
    from placement.model.diagnostic import Diagnostic

_NOT_UTF8 = "MRC106"  # invalid-utf8: the file is not text the readers could decode
_SYNTAX = "MRC101"  # invalid-json: no JSON at all when its message says so


def may_excerpt(d: Diagnostic) -> bool:
    """Whether a report may show the source line ``d`` points at: not when the file (or
    the value, in a properties file or describe output) is not the expected format."""
    if d.code == _NOT_UTF8:
        return False
    return not (d.code == _SYNTAX and f"({NOT_JSON})" in d.message)
