"""`mrc-plan cache ...`: what mrc-plan keeps in the user's cache directory, and clearing it
(placement/io/cache.py)."""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from .errors import handle_errors

if TYPE_CHECKING:
    from placement.io.cache import CachedFile

app = typer.Typer(
    rich_markup_mode=None,
    help="What mrc-plan keeps in your cache directory ($XDG_CACHE_HOME/mrc-plan, else "
    "~/.cache/mrc-plan): Spark class-data archives and the snapshot check cache.",
    no_args_is_help=True,
)


class CacheFormat(StrEnum):
    TEXT = "text"
    JSON = "json"


def _bytes(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{n:,} B" if unit == "B" else f"{value:,.1f} {unit}"
        value /= 1024
    return f"{n:,} B"  # not reached


def _plural(n: int, kind: str) -> str:
    """``3 check cache entries``: every kind names an archive or an entry."""
    if n != 1:
        kind = kind.replace("archive", "archives", 1).replace("entry", "entries", 1)
    return f"{n:,} {kind}"


def _kinds(files: tuple[CachedFile, ...]) -> list[tuple[str, int, int]]:
    """(kind, files, bytes) per kind, in the order first seen."""
    out: dict[str, list[int]] = {}
    for f in files:
        count = out.setdefault(f.kind, [0, 0])
        count[0] += 1
        count[1] += f.size
    return [(k, n, size) for k, (n, size) in out.items()]


@app.command()
@handle_errors
def show(
    format: Annotated[
        CacheFormat, typer.Option(help="text, or json (every file, its kind and size).")
    ] = CacheFormat.TEXT,
) -> None:
    """List mrc-plan's files in the cache directory, with their sizes and the total.

    The class-data archives one per line; the check cache's entries counted (there may be
    thousands). Anything else in the directory is not mrc-plan's and is not listed."""
    import json

    from placement.io.cache import cache_contents

    from .render import safe  # the directory: escaped

    contents = cache_contents()
    if format is CacheFormat.JSON:
        doc = {
            "directory": str(contents.directory),
            "files": [{"name": f.name, "kind": f.kind, "bytes": f.size} for f in contents.files],
            "total_bytes": contents.total,
        }
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        return
    out = [f"{safe(contents.directory)}:"]
    if not contents.files:
        out.append("  nothing of mrc-plan's")
    for f in contents.files:
        if not f.name.startswith("checked/"):
            out.append(f"  {_bytes(f.size):>12}  {f.name} ({f.kind})")
    for kind, n, size in _kinds(contents.files):
        if "check cache" in kind:
            out.append(f"  {_bytes(size):>12}  checked/: {_plural(n, kind)}")
    if contents.files:
        n = len(contents.files)
        out.append(f"  {_bytes(contents.total):>12}  in all ({n:,} file{'' if n == 1 else 's'})")
    sys.stdout.write("\n".join(out) + "\n")


@app.command()
@handle_errors
def clear() -> None:
    """Remove mrc-plan's files from the cache directory (and nothing else there) and say
    what was freed. Safe while another mrc-plan runs: a JVM keeps the archive it maps,
    and a removed check-cache entry only means the next run checks the table in full."""
    from placement.io.cache import clear_cache

    from .render import safe

    cleared = clear_cache()
    where = safe(cleared.directory)
    for name, why in cleared.failed:
        sys.stderr.write(f"note: could not remove {safe(name)}: {safe(why)}\n")
    if not cleared.removed:
        sys.stdout.write(f"nothing to clear in {where}\n")
        return
    parts = [f"{_plural(n, kind)} ({_bytes(size)})" for kind, n, size in _kinds(cleared.removed)]
    sys.stdout.write(f"removed from {where}: {'; '.join(parts)}\nfreed {_bytes(cleared.freed)}\n")
