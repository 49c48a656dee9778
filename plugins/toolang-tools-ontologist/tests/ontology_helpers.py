"""What the ontologist's tests share: the seeded types' schemas and result checks."""

from __future__ import annotations

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "email": {"type": "string", "pattern": "^[^@ ]+@[^@ ]+$"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name"],
}
COMPANY = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "city": {"type": "string"}},
    "required": ["name"],
}


def outputs(results):
    """Each result's output; a failed call fails the test with its error."""
    for result in results:
        assert result["ok"], result
    return [r["output"] for r in results]
