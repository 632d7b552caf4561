"""One writer for every JSON report: validation reports, SARIF, score and simulate
reports, `assign --summary` and the batches' summary.json.

Each is indented by two spaces, ends with a newline and is valid UTF-8 whatever the names
in it hold: a string that cannot be encoded (a file name that is not UTF-8) is written with
its bytes escaped, and the characters JSON allows raw but a terminal acts on are written as
JSON escapes (`escape.encodable_tree`, `escape.json_text`). Non-ASCII names are written as
they are, not as \\u escapes.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from placement.diagnostics.escape import encodable_tree, json_text

if TYPE_CHECKING:
    from pydantic import BaseModel


def report_json(doc: BaseModel | dict[str, Any] | list[Any]) -> str:
    """``doc`` (a pydantic model or a tree of dicts, lists and scalars) as report text."""
    from pydantic import BaseModel
    from pydantic_core import PydanticSerializationError

    if isinstance(doc, BaseModel):
        # the model's own serialiser: its float and datetime formats are the schema's
        try:
            text = doc.model_dump_json(indent=2)
        except PydanticSerializationError:  # a string that is not UTF-8
            clean = encodable_tree(doc.model_dump(mode="python"))
            text = type(doc).model_validate(clean).model_dump_json(indent=2)
    else:
        text = json.dumps(encodable_tree(doc), indent=2, ensure_ascii=False)
    return json_text(text) + "\n"
