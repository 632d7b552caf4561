"""Policy changes (docs/formats.md, policy changes): the topics whose policy in --topics
differs from the one the cluster has, and the files `assign --policy-dir` writes for them.

For Confluent a new policy is two steps: `kafka-configs --alter --replica-placement FILE`
sets the topic's `confluent.placement.constraints`, which moves no data, then the
reassignment moves the replicas. The config goes first: until it is altered, the cluster's
policy is the old one, and the partitions the plan moves break it (every tool that checks
or restores a topic's placement, Confluent's balancers among them, reads the config).
A topic in --topics that the cluster lacks is created with its policy instead.

The directory holds one policy file per changed topic, canonical JSON (the same policy,
the same bytes), `policy-changes.sh`, the commands in topic order, and `topics.json`, a
topics file (docs/formats.md) of the same changes naming those files: what `score
--policy-dir` reads to judge the plan against the policies it sets, with the reader every
topics file goes through.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from placement.model.policy import PlacementPolicy
from placement.plan.summary import PolicyChange, policy_document
from placement.plan.topics import TopicSpec

SCRIPT = "policy-changes.sh"
TOPICS_FILE = "topics.json"  # the changes as a topics file
# a policy file's name is the topic's, unless two topics differ only in case (one file on
# a case-insensitive file system): those get a prefix and a digest of the exact name
# ("~" is not in a topic name, so no plain name can equal it)
_PREFIX = 200


def same_policy(a: PlacementPolicy, b: PlacementPolicy) -> bool:
    """Whether two policies place replicas alike: same version, the same constraints in
    the same order (the first is the lead rack), the same promotion in force (an absent
    `observerPromotionPolicy` of version 2 is `under-min-isr`)."""
    return (
        a.version == b.version
        and a.replicas == b.replicas
        and a.observers == b.observers
        and a.promotion == b.promotion
    )


def file_names(topics: Iterable[str]) -> dict[str, str]:
    """topic -> its policy file's name: ``TOPIC.json``, or ``PREFIX~DIGEST.json`` for topics
    whose names differ only in case and for a topic called `topics` in any case."""
    groups: dict[str, list[str]] = defaultdict(list)
    for t in topics:
        groups[t.lower()].append(t)
    names: dict[str, str] = {}
    for group in groups.values():
        for t in group:
            # `topics.json` is the directory's topics file, on any file system
            if len(group) == 1 and f"{t.lower()}.json" != TOPICS_FILE:
                names[t] = f"{t}.json"
            else:
                digest = hashlib.sha256(t.encode("ascii")).hexdigest()[:12]
                names[t] = f"{t[:_PREFIX]}~{digest}.json"
    return names


def policy_changes(
    topics: Sequence[TopicSpec],
    cluster: Mapping[str, PlacementPolicy],
    existing: Iterable[str],
) -> list[PolicyChange]:
    """The topics of ``topics`` whose policy differs from ``cluster``'s (the policies the
    cluster reports) and those not in ``existing`` (to create), by topic name."""
    present = set(existing)
    changed = [
        t
        for t in topics
        if t.name not in present
        or t.name not in cluster
        or not same_policy(cluster[t.name], t.policy)
    ]
    names = file_names(t.name for t in changed)
    out = []
    for t in sorted(changed, key=lambda t: t.name):
        create = t.name not in present
        out.append(
            PolicyChange(
                topic=t.name,
                action="create" if create else "alter",
                file=names[t.name],
                before=cluster.get(t.name),
                after=t.policy,
                partitions=t.partitions if create else None,
                min_isr=t.min_isr if create else None,
            )
        )
    return out


def policy_file_text(policy: PlacementPolicy) -> str:
    """The policy as `--replica-placement FILE` takes it, canonical: keys in Confluent's
    order, `observers` and `observerPromotionPolicy` only when set, indented, ASCII."""
    return json.dumps(policy_document(policy), indent=2, ensure_ascii=True) + "\n"


_HEADER = """\
#!/bin/sh
# Written by mrc-plan assign: the replica placement changes of {count}.
# Run it BEFORE the reassignment (kafka-reassign-partitions --execute with the plan):
# altering a topic's confluent.placement.constraints moves no data, and until it is
# altered the partitions the plan moves break the policy the cluster has.
#
#   sh {script} HOST:PORT [--command-config FILE]
#
# Needs Confluent's kafka-configs and kafka-topics (--replica-placement); KAFKA_CONFIGS
# and KAFKA_TOPICS name them if they are called otherwise (e.g. kafka-configs.sh).
set -eu
if [ "$#" -lt 1 ]; then
    echo "usage: sh $0 HOST:PORT [--command-config FILE]" >&2
    exit 2
fi
server=$1
shift
dir=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
configs=${{KAFKA_CONFIGS:-kafka-configs}}
topics=${{KAFKA_TOPICS:-kafka-topics}}
"""


def _command(change: PolicyChange) -> str:
    q = shlex.quote
    placement = f'"$dir"/{q(change.file)}'
    if change.action == "alter":
        return (
            f'"$configs" --bootstrap-server "$server" "$@" --entity-type topics '
            f"--entity-name {q(change.topic)} --alter --replica-placement {placement}"
        )
    config = (
        f" --config {q(f'min.insync.replicas={change.min_isr}')}"
        if change.min_isr is not None
        else ""
    )
    return (
        f'"$topics" --bootstrap-server "$server" "$@" --create --topic {q(change.topic)} '
        f"--partitions {change.partitions} --replica-placement {placement}{config}"
    )


def render_script(changes: Sequence[PolicyChange]) -> str:
    """`policy-changes.sh`: one command per change, in the order of ``changes``."""
    count = f"{len(changes)} topic" + ("" if len(changes) == 1 else "s")
    lines = [_HEADER.format(count=count, script=SCRIPT)]
    for c in changes:
        what = "set its policy" if c.before is None else "replace its policy"
        lines.append(f"\n# {c.topic}: " + ("create it" if c.action == "create" else what) + "\n")
        lines.append(_command(c) + "\n")
    return "".join(lines)


def render_topics_file(changes: Sequence[PolicyChange]) -> str:
    """`topics.json`: a topics file with an entry per change naming its policy file; a
    topic to create carries its partition count and min ISR as --topics gave them."""
    entries: list[dict[str, object]] = []
    for c in changes:
        entry: dict[str, object] = {"name": c.topic}
        if c.partitions is not None:
            entry["partitions"] = c.partitions
        entry["placement"] = c.file
        if c.min_isr is not None:
            entry["min_isr"] = c.min_isr
        entries.append(entry)
    return json.dumps({"topics": entries}, indent=2, ensure_ascii=True) + "\n"


def render_policy_dir(changes: Sequence[PolicyChange]) -> dict[str, str]:
    """The files of --policy-dir: each change's policy file, the script and the topics
    file (empty: no change, nothing to write)."""
    if not changes:
        return {}
    files = {c.file: policy_file_text(c.after) for c in changes}
    files[SCRIPT] = render_script(changes)
    files[TOPICS_FILE] = render_topics_file(changes)
    return files
