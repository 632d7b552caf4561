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
