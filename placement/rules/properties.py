"""MRC6xx: placement policies inside broker `server.properties` files."""

from __future__ import annotations

import re

from placement.model.diagnostic import Severity
from placement.rules.base import Rule

# Broker-level defaults (docs/formats.md, server.properties).
# `confluent.placement.constraints` is the topic-level config and has no effect in
# server.properties.
BROKER_PLACEMENT_KEYS = (
    "confluent.log.placement.constraints",
    "confluent.offsets.topic.placement.constraints",
    "confluent.transaction.state.log.placement.constraints",
)
PLACEMENT_KEY = re.compile(r"^confluent\.[\w.-]*placement\.constraints?$", re.IGNORECASE)


class UnknownPlacementProperty(Rule):
    """A `confluent.*placement.constraints` key that brokers do not read.

    What it does: warns on keys in `.properties` files that look like placement
    settings but are not one of `confluent.log.placement.constraints`,
    `confluent.offsets.topic.placement.constraints` or
    `confluent.transaction.state.log.placement.constraints`; suggests the closest.
    The value is still checked as a policy.

    Why: a misspelt key is ignored silently, and topics are created without the
    intended placement. `confluent.placement.constraints` is a topic config: set it
    with `kafka-configs` or `kafka-topics --replica-placement`, not in the broker file.

    Example: `confluent.log.placement.constraint={...}`

    Fix: use one of the three broker keys.
    """

    code = "MRC601"
    name = "unknown-placement-property"
    severity = Severity.WARNING


class FollowerFetchingDisabled(Rule):
    """A broker without the rack-aware replica selector, where consumers could read nearby.

    What it does: reads the broker `server.properties` files validated together (and
    those of an `--inventory` directory) and warns at every broker that does not set
    `replica.selector.class=org.apache.kafka.common.replica.RackAwareReplicaSelector`
    when a placement policy validated with it (a `confluent.log.placement.constraints`
    value or a policy file) puts replicas or observers in that broker's rack; when other
    brokers of the same set do set it (the files of one run are taken as one cluster,
    unless a node id repeats); or, for a file with `broker.rack`, when its own placement
    property places observers. A selector class of your own counts as set.

    Why: the broker that leads a partition picks the replica a consumer reads from. With
    no selector (Kafka's default, the same as `LeaderSelector`) it keeps every consumer
    on itself, so a consumer's `client.rack` is ignored and reads cross racks, regions
    and their links even where a follower or an observer sits next to the consumer.
    Follower fetching (KIP-392, Kafka 2.4) needs the selector on the brokers, each with
    `broker.rack`, and `client.rack` on the consumers.

    Example: a broker file with `broker.rack=east` and an observer in `east` in
    `confluent.log.placement.constraints`, but no `replica.selector.class`.

    Fix: add `replica.selector.class=org.apache.kafka.common.replica.RackAwareReplicaSelector`
    to every broker's server.properties, restart the brokers one at a time, and set
    `client.rack` on the consumers to the rack they run in.
    """

    code = "MRC602"
    name = "follower-fetching-disabled"
    severity = Severity.WARNING
