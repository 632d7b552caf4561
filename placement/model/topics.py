"""The topics file (docs/formats.md, topics file): the desired state `assign --topics`
reads, as written, before placement references are resolved.

The JSON Schema generated from :class:`TopicsFile` describes the shape. The reader,
`placement/plan/topics.py`, checks more than a schema can say, so a file the schema
accepts may still be refused:

- a topic name listed twice (JSON Schema cannot compare one member across array
  items; the model checks it, the schema does not);
- the caps of `placement/io/limits.py` (file size, topics, partitions per topic and in
  all), which an environment variable can raise;
- a placement given as a path: it must resolve inside the topics file's directory (or
  `--root`), without NUL characters, to a regular file of at most 1 MiB that holds a
  placement policy;
- every policy, inline or referenced, goes through the `validate` rules with the
  inventory and the topic's `min_isr` (the schema checks only the shape of an inline
  policy, as `placement.schema.json` does);
- `partitions`, which the shape leaves optional: a fresh layout needs it in every entry;
  against a current state, an entry without it must name a topic the cluster has, and
  a count given for such a topic must be the cluster's (`placement/plan/honest.py`:
  the file alone cannot tell);
- a key repeated in one object (a schema sees the document after parsing, when one of
  the two has already won), and `2.0` where an integer is asked for, which JSON Schema
  counts as an integer and the reader and this model do not.

The reader keeps its own messages and positions; it builds a :class:`TopicEntry` for
each topic it accepts, so what it accepts the model accepts too.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, model_validator
from pydantic.config import JsonDict
from pydantic_core import PydanticCustomError

from placement.model.kafka import TOPIC_NAME_MAX, topic_name_error
from placement.model.policy import PlacementPolicy, not_null


def _legal_topic_name(name: str) -> str:
    problem = topic_name_error(name)
    if problem is not None:
        raise PydanticCustomError("topic_name", problem)
    return name


def _optional_not_null(schema: dict[str, Any]) -> None:
    # the key may be left out, but its value is never null: no null branch, no default
    branches = [s for s in schema.pop("anyOf") if s != {"type": "null"}]
    if len(branches) == 1:
        schema.update(branches[0])
    else:
        schema["anyOf"] = branches
    schema.pop("default", None)


TopicName = Annotated[
    str,
    AfterValidator(_legal_topic_name),
    Field(
        description="a Kafka topic name: 1 to 249 of [a-zA-Z0-9._-], not '.' or '..'",
        # for the schema only; _legal_topic_name is the check (model/kafka.py)
        json_schema_extra={
            "minLength": 1,
            "maxLength": TOPIC_NAME_MAX,
            "pattern": "^[a-zA-Z0-9._-]+$",
            "not": {"enum": [".", ".."]},
        },
    ),
]

PolicyReference = Annotated[
    str,
    Field(
        min_length=1,
        description="path of a placement policy file, relative to the topics file's "
        "directory (or --root) and inside it",
    ),
]

Partitions = Annotated[
    Annotated[int, Field(ge=1)] | None,
    BeforeValidator(not_null),
    Field(json_schema_extra=_optional_not_null),
]

Placement = Annotated[
    PlacementPolicy | PolicyReference | None,
    BeforeValidator(not_null),
    Field(json_schema_extra=_optional_not_null),
]


class _Strict(BaseModel):
    # strict: "3", 3.0 and true are not integers; forbid: a misspelt key is an error
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class TopicEntry(_Strict):
    """One topic: its name, partition count (if stated), placement and min ISR."""

    name: TopicName
    partitions: Partitions = Field(
        default=None,
        description="how many partitions the topic has or gets: needed in a fresh layout "
        "and for a topic the cluster lacks; with --current, absent means a topic the "
        "cluster has, and a count given must be the cluster's",
    )
    placement: Placement = Field(
        default=None,
        description="an inline placement policy, or the path of a file holding one; "
        "absent: default_placement",
    )
    min_isr: Annotated[int, Field(ge=1)] | None = Field(
        default=None,
        description="the topic's min.insync.replicas, used by the policy checks (and by "
        "simulate); absent or null: not given",
    )


# JSON Schema's way of saying the second half of _each_name_once_and_placed
_DEFAULT_NEEDED: JsonDict = {
    "if": {"not": {"required": ["default_placement"]}},
    "then": {"properties": {"topics": {"items": {"required": ["placement"]}}}},
}


class TopicsFile(_Strict):
    """The desired state: every topic's placement policy, and the partition count of new ones."""

    model_config = ConfigDict(
        title="Topics file",
        json_schema_extra={
            "$id": "https://mrc-plan.dev/schemas/topics.schema.json",
            **_DEFAULT_NEEDED,
        },
    )

    default_placement: Placement = Field(
        default=None,
        description="the policy of every topic without a placement of its own: inline, "
        "or the path of a file holding it",
    )
    topics: Annotated[list[TopicEntry], Field(min_length=1, description="the topics")]

    @model_validator(mode="after")
    def _each_name_once_and_placed(self) -> TopicsFile:
        seen: set[str] = set()
        for topic in self.topics:
            if topic.name in seen:
                raise ValueError(f'topic "{topic.name}" is listed twice')
            seen.add(topic.name)
            if topic.placement is None and self.default_placement is None:
                raise ValueError(
                    f'topic "{topic.name}" has no "placement" and there is no "default_placement"'
                )
        return self
