"""Regenerate ``toolang_client/models.py`` from toolang-server's OpenAPI document with
datamodel-code-generator (an off-the-shelf generator: the client's types are the
document's, never written by hand). ``tests/test_models.py`` fails when they drift.

    python plugins/toolang-client/generate_models.py          # rewrite the module
    python plugins/toolang-client/generate_models.py --check  # exit 1 if it is stale
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

MODULE = Path(__file__).resolve().parent / "toolang_client" / "models.py"
HEADER = '''"""The API's types, generated from toolang-server's OpenAPI document by
datamodel-code-generator: do not edit (``generate_models.py`` rewrites this module;
a test fails when it drifts from the document)."""

'''
OPTIONS = (
    "--input-file-type",
    "openapi",
    "--output-model-type",
    "dataclasses.dataclass",
    "--target-python-version",
    "3.11",
    "--use-union-operator",
    "--use-standard-collections",
    "--enum-field-as-literal",
    "all",
    "--disable-timestamp",
    "--formatters",
    "builtin",
    "--keep-model-order",
)


def generated() -> str:
    """The module's text, generated from the document the server builds now."""
    from toolang_server.openapi import api_document

    with tempfile.TemporaryDirectory() as tmp:
        spec, out = Path(tmp) / "openapi.json", Path(tmp) / "models.py"
        spec.write_text(json.dumps(api_document()), encoding="utf-8")
        codegen = Path(sys.executable).with_name("datamodel-codegen")
        subprocess.run(
            [str(codegen), "--input", str(spec), "--output", str(out), *OPTIONS],
            check=True,
            capture_output=True,
        )
        body = out.read_text(encoding="utf-8")
    lines = [line for line in body.splitlines() if not line.startswith("#")]
    return HEADER + "\n".join(lines).lstrip("\n") + "\n"


if __name__ == "__main__":
    text = generated()
    if "--check" in sys.argv:
        sys.exit(0 if MODULE.read_text(encoding="utf-8") == text else 1)
    MODULE.write_text(text, encoding="utf-8")
