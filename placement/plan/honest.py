"""The topics file held against the cluster (docs/formats.md, topics file): what an entry's
`partitions`, stated or left out, says about a topic, and whether that is true.

The reader (placement/plan/topics.py) cannot tell on its own: whether an entry may leave
out its partition count depends on `--current`. So, once the current state is read:

- without a current state (a fresh layout) every topic is created, and every entry must
  state its count;
- with one, an entry without a count changes the policy of a topic the cluster has. A
  name the cluster lacks is a new topic only when its entry states a count; otherwise it
  is far likelier a typo than a request, and creating a topic called ``order`` next to
  ``orders`` is worse than stopping, so the run stops and names the closest topics;
- a count stated for a topic the cluster has must be the cluster's: `assign` moves
  replicas and never changes a partition count, and a different figure silently ignored
  would leave the file saying what the cluster is not.

Each refusal is an InputError (exit 2) at the entry's line and column. It quotes only
topic names, which the reader and the current-state readers have held to Kafka's rules
(suggested names that are not legal are left out, so no message carries other text).
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from placement.errors import InputError
from placement.io.columns import TOPIC
from placement.io.current import CurrentState
from placement.model.kafka import topic_name_error
from placement.plan.topics import TopicSpec

SUGGESTED = 3  # cluster topics named as "did you mean"


def partition_counts(current: CurrentState) -> dict[str, int]:
    """The partitions of each topic in ``current``. One row is one partition: every
    current-state reader refuses a partition listed twice, so rows counted are distinct
    partitions (counted from the columns at C speed when the reader made them)."""
    columns = current.columns
    if columns is not None:
        counts = np.bincount(columns.topic, minlength=len(columns.names))
        return dict(zip(columns.names, map(int, counts), strict=True))
    return dict(Counter(map(TOPIC, current.assignments)))


def _fail(spec: TopicSpec, path: str | Path, message: str, hint: str) -> InputError:
    return InputError(str(path), message, hint, line=spec.line, column=spec.column)


def _listed(names: Sequence[str]) -> str:
    quoted = [f'"{n}"' for n in names]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def close_topics(name: str, cluster: Iterable[str]) -> list[str]:
    """At most three legal cluster topic names close to ``name``, closest first."""
    legal = [t for t in cluster if topic_name_error(t) is None]
    return difflib.get_close_matches(name, legal, n=SUGGESTED)


def require_partitions(specs: Sequence[TopicSpec], topics_path: str | Path) -> None:
    """A fresh layout creates every topic: refuse the first entry without a count."""
    for spec in specs:
        if spec.partitions is None:
            raise _fail(
                spec,
                topics_path,
                f'topic "{spec.name}" needs "partitions": without --current every topic is created',
                'give each entry its partition count; an entry may leave "partitions" out '
                "only for a topic the cluster has, with --current",
            )


def check_topics_against_cluster(
    specs: Sequence[TopicSpec], partition_counts: Mapping[str, int], topics_path: str | Path
) -> None:
    """Refuse, in file order, the first entry without a count whose topic the cluster
    lacks (naming the closest cluster topics), and the first count that differs from the
    cluster's. ``partition_counts``: the cluster's topics and their partition counts."""
    for spec in specs:
        have = partition_counts.get(spec.name)
        if have is None:
            if spec.partitions is None:
                _no_such_topic(spec, partition_counts, topics_path)
            continue  # a new topic, created with the count stated
        if spec.partitions is not None and spec.partitions != have:
            _other_count(spec, spec.partitions, have, topics_path)


def _no_such_topic(spec: TopicSpec, cluster: Iterable[str], topics_path: str | Path) -> None:
    close = close_topics(spec.name, cluster)
    guess = f"; did you mean {_listed(close)}?" if close else ""
    raise _fail(
        spec,
        topics_path,
        f'topic "{spec.name}": no topic of that name in the cluster{guess}',
        'an entry without "partitions" is for a topic the cluster has: fix the name, or '
        f'give "partitions" to create "{spec.name}" as a new topic',
    )


def _other_count(spec: TopicSpec, stated: int, have: int, topics_path: str | Path) -> None:
    why = (
        f"a partition increase is `kafka-topics --alter --topic {spec.name} --partitions "
        f"{stated}`, not a placement change"
        if stated > have
        else "Kafka cannot take partitions away from a topic"
    )
    raise _fail(
        spec,
        topics_path,
        f'topic "{spec.name}" has "partitions": {stated} here, but {have} in the cluster',
        f'assign never changes a partition count ({why}); drop "partitions" from the entry '
        f"or set it to {have}",
    )


def check_topics(
    specs: Sequence[TopicSpec], topics_path: str | Path, current: CurrentState | None
) -> None:
    """What `assign` runs once the current state is read: a fresh layout needs every
    count, a current state must agree with the file (see the module's docstring)."""
    if current is None:
        require_partitions(specs, topics_path)
    else:
        check_topics_against_cluster(specs, partition_counts(current), topics_path)
