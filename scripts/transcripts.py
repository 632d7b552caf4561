"""Regenerate (or check) the command transcripts in README.md and docs/*.md.

A transcript is a fenced block between two HTML comments:

    <!-- transcript: NAME -->
    ```text
    $ mrc-plan ...
    ...
    ```
    <!-- /transcript -->

The commands behind NAME live in TRANSCRIPTS below. Each runs with bash from the repository
root, `mrc-plan` being `.venv/bin/mrc-plan`, in a scratch directory that is emptied before
every transcript (WORK, a fixed path, so the paths shown never change). What a command prints
on stdout and stderr is shown together, trimmed by the step's explicit rules; a figure of
seconds at the end of a line is cut, so that timings never make a block stale.

    python scripts/transcripts.py            # rewrite every block in place
    python scripts/transcripts.py --check    # exit 1 naming the blocks that are stale
    python scripts/transcripts.py --spark skip|only ...   # leave out or keep only Spark ones

A fenced block outside the markers that shows `$ mrc-plan` is an error too: every
transcript in the documentation is produced here.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WORK = Path("/tmp/mrc-tour")
ELIDED = "[...]"
OPEN = re.compile(r"^<!-- transcript: ([\w-]+) -->\n", re.M)
CLOSE = "<!-- /transcript -->"
# "; 0.01 s" or " in 0.2 s" closing a line: the only figures that change from run to run
TIMING = re.compile(r"(?:;| in) \d+(?:\.\d+)? s$")


@dataclass(frozen=True)
class Step:
    """One command: shown as `$ cmd`, then its output trimmed by the rules, in order.

    head N: the first N lines, then [...]; tail N: [...], then the last N lines;
    keep REGEX: only the matching lines, each run of dropped lines becoming one [...];
    quiet: no output shown (the prose says so). A hidden step runs but is not shown.
    """

    cmd: str
    rc: int = 0
    head: int | None = None
    tail: int | None = None
    keep: str | None = None
    quiet: bool = False
    hidden: bool = False


@dataclass(frozen=True)
class Transcript:
    steps: tuple[Step, ...]
    spark: bool = False
    notes: tuple[str, ...] = field(default=())


def _t(*steps: Step, spark: bool = False) -> Transcript:
    return Transcript(steps=steps, spark=spark)


INV = "--inventory examples/inventory.json"
FRESH = Step(
    f"mrc-plan assign {INV} --topics examples/topics.json --out /tmp/mrc-tour/current.json"
)
DRAIN = Step(
    f"mrc-plan assign {INV} --topics examples/topics.json --current /tmp/mrc-tour/current.json"
    " --drain 4,8 --out /tmp/mrc-tour/drain.json"
)
SNAPD = Step(
    f"mrc-plan snapshot from-describe examples/describe.txt {INV}"
    " --sizes examples/sizes.csv --out /tmp/mrc-tour/snapd"
)
CHANGE = Step(
    "mrc-plan assign --current /tmp/mrc-tour/snapd --topics examples/topics-changes.json"
    " --out /tmp/mrc-tour/change.json --policy-dir /tmp/mrc-tour/policies"
)
RISK = (
    f"--current examples/describe.txt {INV} \\\n"
    "      --fail-rack us-west --replica-status examples/replica-status.json"
)


def _hidden(step: Step) -> Step:
    return Step(step.cmd, rc=step.rc, hidden=True)


TRANSCRIPTS: dict[str, Transcript] = {
    # README.md
    "readme-validate": _t(
        Step(f"mrc-plan validate examples/broken {INV} --ibp 3.2", rc=1, head=8, tail=1),
    ),
    "readme-drain": _t(
        Step(FRESH.cmd, keep=r"^(partitions changed|wrote)"),
        Step(DRAIN.cmd.replace(" --drain", " \\\n      --drain")),
    ),
    "readme-policy-change": _t(
        SNAPD,
        Step(
            CHANGE.cmd.replace(" --out", " \\\n      --out"),
            keep=r"^(topics|note: topic|partitions changed|replicas added|per topic|  legacy"
            r"|left alone|  orders|policy changes|  run first|wrote)",
        ),
        Step("ls /tmp/mrc-tour/policies"),
    ),
    "readme-score": _t(
        _hidden(SNAPD),
        _hidden(CHANGE),
        Step(
            "mrc-plan score --snapshot /tmp/mrc-tour/snapd --plan /tmp/mrc-tour/change.json"
            " \\\n      --policy-dir /tmp/mrc-tour/policies",
            head=21,
        ),
        spark=True,
    ),
    "readme-simulate": _t(
        _hidden(FRESH),
        _hidden(DRAIN),
        Step(
            f"mrc-plan simulate --current /tmp/mrc-tour/current.json {INV} \\\n"
            "      --topics examples/topics.json --plan /tmp/mrc-tour/drain.json"
            " --fail-rack us-west --min-insync-replicas 2",
            rc=1,
            head=22,
        ),
    ),
    "readme-exit-code": _t(Step("mrc-plan validate nope.json", rc=2), Step("echo $?")),
    # docs/validate.md
    "validate-good": _t(
        Step(
            "mrc-plan validate examples/placement examples/server.properties"
            f" {INV} --min-insync-replicas 2"
        ),
    ),
    "validate-strict": _t(
        Step(
            "mrc-plan validate examples/placement/clickstream.json"
            " --min-insync-replicas 2 --strict",
            rc=1,
        ),
    ),
    "validate-broken": _t(Step(f"mrc-plan validate examples/broken {INV} --ibp 3.2", rc=1)),
    "validate-ibp": _t(
        Step("mrc-plan validate examples/placement/payments-stretched.json --ibp 3.2", rc=1),
    ),
    "validate-drifted": _t(Step(f"mrc-plan validate examples/describe-drifted.txt {INV}", rc=1)),
    "validate-topology": _t(
        Step(
            "mrc-plan validate examples/placement/clickstream.json"
            " examples/placement/payments-stretched.json"
            " --inventory examples/inventory-two-dc.json",
            rc=1,
        ),
    ),
    "validate-json": _t(
        Step("mrc-plan validate examples/broken/pasted-from-docs.json --format json", rc=1),
    ),
    "validate-github": _t(
        Step(
            "GITHUB_ACTIONS=true mrc-plan validate examples/broken/pasted-from-docs.json"
            f" examples/placement {INV} --format auto",
            rc=1,
        ),
    ),
    "validate-sarif": _t(
        Step(
            f"mrc-plan validate examples/broken/v1-promotion.json {INV}"
            " --format sarif -o /tmp/mrc-tour/results.sarif",
            rc=1,
        ),
        Step("head -11 /tmp/mrc-tour/results.sarif"),
    ),
    "validate-junit": _t(Step("mrc-plan validate examples/placement/orders.json --format junit")),
    "rules-code": _t(Step("mrc-plan rules MRC503")),
    "schema-placement": _t(Step("mrc-plan schema placement | head -20")),
    # docs/snapshots.md
    "snapshot-synth": _t(
        Step(
            "mrc-plan snapshot synth --brokers 11 --racks 3 --topics 50 --partitions-per-topic 12"
            " \\\n      --policy examples/placement/orders.json"
            " --policy examples/placement/payments-stretched.json \\\n"
            "      --violations 0.02 --out /tmp/mrc-tour/snap"
        ),
        Step("mrc-plan snapshot show /tmp/mrc-tour/snap"),
        Step("mrc-plan snapshot export /tmp/mrc-tour/snap --topic audit-000004 | head -3"),
    ),
    "snapshot-describe": _t(SNAPD, Step("mrc-plan snapshot show /tmp/mrc-tour/snapd --violations")),
    "snapshot-logdirs": _t(
        Step(
            f"mrc-plan snapshot from-describe examples/describe.txt {INV} \\\n"
            "      --sizes examples/log-dirs.txt --out /tmp/mrc-tour/snapd"
        ),
    ),
    "snapshot-chain": _t(
        _hidden(SNAPD),
        Step(
            f"mrc-plan assign {INV} --topics examples/topics-describe.json \\\n"
            "      --current /tmp/mrc-tour/snapd --drain 4 --out /tmp/mrc-tour/drain.json",
            quiet=True,
        ),
        Step(
            "mrc-plan snapshot apply /tmp/mrc-tour/snapd /tmp/mrc-tour/drain.json"
            " --out /tmp/mrc-tour/drained"
        ),
        Step(
            f"mrc-plan simulate --current /tmp/mrc-tour/drained {INV} --fail-rack us-east",
            rc=1,
            quiet=True,
        ),
        Step(
            f"mrc-plan assign {INV} --topics examples/topics-describe.json \\\n"
            "      --current /tmp/mrc-tour/drained --rebalance --drain 4",
            quiet=True,
        ),
    ),
    # docs/assign.md
    "assign-apache": _t(
        Step(
            f"mrc-plan assign {INV} --current examples/describe-apache.txt"
            " --drain 9,10 \\\n      --out /tmp/mrc-tour/apache-drain.json",
            keep=r"^(topics|partitions changed|replicas (added|left)|lower bound|leadership"
            r"|per topic|  __consumer_offsets|  orders)",
        ),
    ),
    "assign-walkthrough": _t(
        FRESH,
        Step(
            DRAIN.cmd.replace(" --drain", " \\\n      --drain")
            + " --rollback /tmp/mrc-tour/rollback.json --summary /tmp/mrc-tour/summary.json"
        ),
        Step("head -3 /tmp/mrc-tour/drain.json"),
        Step(
            "mrc-plan assign --inventory examples/inventory-expanded.json"
            " --topics examples/topics.json \\\n"
            "      --current /tmp/mrc-tour/current.json --rebalance --balance-leaders \\\n"
            "      --out /tmp/mrc-tour/rebalance.json --election /tmp/mrc-tour/election.json"
        ),
        Step("head -3 /tmp/mrc-tour/election.json"),
        Step(
            f"mrc-plan assign {INV} --topics examples/topics.json"
            " --current /tmp/mrc-tour/current.json --drain 1,2,3",
            rc=1,
        ),
        Step("echo $?"),
    ),
    "assign-repair": _t(
        _hidden(SNAPD),
        Step(
            "mrc-plan assign --current /tmp/mrc-tour/snapd --out /tmp/mrc-tour/repair.json",
            keep=r"^(topics|note: brokers|degraded|partitions changed|replicas added|per topic"
            r"|  orders|  legacy|offline partitions|wrote)",
        ),
        Step(
            CHANGE.cmd.replace(" --out", " \\\n      --out"),
            keep=r"^(topics|note: topic|partitions changed|replicas added|per topic|  legacy"
            r"|left alone|  orders|policy changes|  make|  run first|wrote)",
        ),
        Step("grep -e --alter -e --create /tmp/mrc-tour/policies/policy-changes.sh"),
    ),
    "assign-batches": _t(
        _hidden(FRESH),
        Step(
            f"mrc-plan assign {INV} --topics examples/topics.json \\\n"
            "      --current /tmp/mrc-tour/current.json --drain 4,8 \\\n"
            "      --out-dir /tmp/mrc-tour/drain --max-moves-per-broker 3 --throttle 50MB",
            quiet=True,
        ),
        Step("mrc-plan plan show /tmp/mrc-tour/drain", head=12),
    ),
    # docs/simulate.md
    "simulate-drain": _t(
        _hidden(FRESH),
        _hidden(DRAIN),
        Step(
            f"mrc-plan simulate --current /tmp/mrc-tour/current.json {INV} \\\n"
            "      --topics examples/topics.json --plan /tmp/mrc-tour/drain.json"
            " --fail-rack us-west \\\n"
            "      --min-insync-replicas 2 --unclean-out /tmp/mrc-tour/unclean.json",
            rc=1,
        ),
    ),
    "simulate-batches": _t(
        Step(
            f"mrc-plan assign {INV} --current examples/describe.txt \\\n"
            "      --drain 4,8 --out-dir /tmp/mrc-tour/described --batch-size 1",
            quiet=True,
        ),
        Step(
            f"mrc-plan simulate {RISK} \\\n      --plan /tmp/mrc-tour/described",
            rc=1,
            head=16,
        ),
    ),
    "simulate-risk": _t(
        Step(
            f"mrc-plan simulate {RISK} \\\n      --unclean-out /tmp/mrc-tour/unclean.json",
            rc=1,
        ),
    ),
}


def _run(step: Step, env: dict[str, str], last_rc: int) -> tuple[int, list[str]]:
    if step.cmd == "echo $?":
        return 0, [str(last_rc)]
    proc = subprocess.run(
        ["bash", "-c", step.cmd],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        check=False,
    )
    text = proc.stdout.decode("utf-8", errors="backslashreplace")
    text = text.replace(f"{REPO}/", "")
    lines = [TIMING.sub("", line).rstrip() for line in text.splitlines()]
    return proc.returncode, lines


def _trim(step: Step, lines: list[str]) -> list[str]:
    if step.quiet:
        return []
    if step.keep is not None:
        pattern = re.compile(step.keep)
        kept: list[str] = []
        for line in lines:
            if pattern.search(line):
                kept.append(line)
            elif not kept or kept[-1] != ELIDED:
                kept.append(ELIDED)
        lines = kept
    head, tail = step.head, step.tail
    if head is not None and tail is not None and head + tail < len(lines):
        return [*lines[:head], ELIDED, *lines[-tail:]]
    if head is not None and tail is None and head < len(lines):
        return [*lines[:head], ELIDED]
    if tail is not None and head is None and tail < len(lines):
        return [ELIDED, *lines[-tail:]]
    return lines


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MRC_PLAN_", "GITHUB_"))}
    env["PATH"] = f"{REPO / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONUNBUFFERED"] = "1"  # stdout and stderr interleave as on a terminal
    env["NO_COLOR"] = "1"
    env.pop("COLUMNS", None)
    return env


def _fresh_workdir() -> None:
    try:
        info = WORK.lstat()
    except FileNotFoundError:
        pass
    else:
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            raise SystemExit(f"error: {WORK} is not a directory of yours; remove it first")
        shutil.rmtree(WORK)
    WORK.mkdir(mode=0o700)


def render(name: str) -> str:
    """The block for NAME, fence included."""
    if not (REPO / ".venv" / "bin" / "mrc-plan").is_file():
        raise SystemExit("error: .venv/bin/mrc-plan not found: run `make install` first")
    transcript = TRANSCRIPTS[name]
    env = _environment()
    _fresh_workdir()
    out: list[str] = []
    last_rc = 0
    for step in transcript.steps:
        rc, lines = _run(step, env, last_rc)
        if rc != step.rc:
            shown = "\n".join(lines[-20:])
            raise SystemExit(
                f"error: transcript {name}: `{step.cmd}` exited {rc}, expected {step.rc}\n{shown}"
            )
        last_rc = rc
        if step.hidden:
            continue
        out.append(f"$ {step.cmd}")
        out.extend(_trim(step, lines))
    return "```text\n" + "\n".join(out) + "\n```\n"


@contextlib.contextmanager
def _lock() -> Iterator[None]:
    """One regeneration at a time: they share WORK."""
    path = Path(tempfile.gettempdir()) / f"mrc-tour-{os.getuid()}.lock"
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def documents() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def blocks(text: str) -> list[tuple[str, int, int]]:
    """(name, start, end) of each transcript's body, between its two markers."""
    found = []
    for m in OPEN.finditer(text):
        end = text.find(CLOSE, m.end())
        if end < 0:
            raise SystemExit(f"error: transcript {m.group(1)} has no {CLOSE}")
        found.append((m.group(1), m.end(), end))
    return found


def unmarked(text: str) -> list[int]:
    """Line numbers of fenced blocks showing `$ mrc-plan` outside the markers."""
    spans = [(start, end) for _, start, end in blocks(text)]
    lines = []
    for m in re.finditer(r"^```[^\n]*\n(.*?)^```", text, re.M | re.S):
        shows = re.search(r"^\$ (\w+=\S+ )*mrc-plan\b", m.group(1), re.M)
        if shows and not any(start <= m.start() < end for start, end in spans):
            lines.append(text.count("\n", 0, m.start()) + 1)
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if stale")
    parser.add_argument("--spark", choices=["include", "skip", "only"], default="include")
    parser.add_argument("names", nargs="*", help="only these transcripts")
    args = parser.parse_args(argv)
    unknown = set(args.names) - set(TRANSCRIPTS)
    if unknown:
        parser.error(f"no transcript named {', '.join(sorted(unknown))}")

    def wanted(name: str) -> bool:
        spark = TRANSCRIPTS[name].spark
        if (args.spark == "skip" and spark) or (args.spark == "only" and not spark):
            return False
        return not args.names or name in args.names

    problems: list[str] = []
    used: set[str] = set()
    with _lock():
        for path in documents():
            rel = path.relative_to(REPO)
            text = path.read_text(encoding="utf-8")
            problems += [
                f"{rel}:{n}: a `$ mrc-plan` block outside the markers" for n in unmarked(text)
            ]
            new = text
            for name, start, end in reversed(blocks(text)):
                if name not in TRANSCRIPTS:
                    problems.append(f"{rel}: no transcript named {name} in {Path(__file__).name}")
                    continue
                if name in used:
                    problems.append(f"{rel}: transcript {name} shown twice")
                used.add(name)
                if not wanted(name):
                    continue
                block = render(name)
                if text[start:end] != block:
                    if args.check:
                        problems.append(f"{rel}: transcript {name} is stale")
                    new = new[:start] + block + new[end:]
            if new != text and not args.check:
                path.write_text(new, encoding="utf-8")
                print(f"updated {rel}", file=sys.stderr)
        if not args.names:
            problems += [
                f"transcript {n} is in no document" for n in sorted(set(TRANSCRIPTS) - used)
            ]
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        if args.check:
            print("run `make transcripts` to regenerate them", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
