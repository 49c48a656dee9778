"""Attachments over HTTP: upload, fetch by hash (the owner rule applies), and the
``attachments`` of a submitted turn request.

* ``POST /api/attachments?name=NAME`` — the body is the file's bytes (any content type;
  the type is sniffed from the bytes): stored for the caller, answered with its
  reference (201).
* ``GET /api/attachments/{sha256}`` — the bytes, if they are the caller's (the operator
  sees every owner's); anyone else's is "not found". A text attachment passes the
  redaction policy on its way out, like every body this server sends.
* ``POST /api/turns`` takes ``"attachments": [...]``: each ``{"name": …, "data":
  <base64>}`` (within the body's size limit) or ``{"sha256": …}`` of an upload. Every
  part is checked — hash, size, type, the agent's model takes it — before any is kept
  or the request submitted.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from starlette.responses import Response

from toolang_core import (
    AttachmentError,
    AttachmentNotFound,
    AttachmentRef,
    AttachmentStore,
    check_attachments_accepted,
    redact_text,
)
from toolang_server import models
from toolang_server.http import ApiError, caller_of, ok, runtime_of, store_of
from toolang_server.openapi import operation

if TYPE_CHECKING:
    from starlette.requests import Request

    from toolang_core import RegisterRoute, Runtime
    from toolang_server.http import Caller

FIELD: Final = "attachments"
NAME_LIMIT: Final = 255


def store_for(runtime: Runtime) -> AttachmentStore:
    return AttachmentStore.of(runtime.config, store_of(runtime))


def _refused(exc: AttachmentError, field: str, expected: str) -> ApiError:
    status = 404 if isinstance(exc, AttachmentNotFound) else 400
    return ApiError(status, str(exc), field=field, expected=expected)


def _name(value: Any, field: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > NAME_LIMIT:
        raise ApiError(
            400,
            f"{field}: {value!r:.80} is not a file name",
            field=field,
            expected=f"a file name of 1 to {NAME_LIMIT} characters",
        )
    return value.replace("/", "_").replace("\\", "_")


def parts_of(
    runtime: Runtime, caller: Caller, raw: Any, *, agent: str | None
) -> tuple[AttachmentRef, ...]:
    """The references of a submit body's ``attachments``, kept for ``caller`` once every
    part passed its checks (and the agent's model takes them all).

    :raises ApiError: 400 naming the part (``attachments[1].data``) and what was
        expected; 404 for a hash that is not the caller's."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ApiError(
            400, f"{FIELD} must be a list", field=FIELD, expected="a list of attachment parts"
        )
    store = store_for(runtime)
    taken: list[tuple[AttachmentRef, bytes | None]] = []
    for index, part in enumerate(raw):
        where = f"{FIELD}[{index}]"
        taken.append(_part(store, caller, part, where))
    refs = [ref for ref, _ in taken]
    try:
        check_attachments_accepted(runtime, agent, refs)
    except AttachmentError as exc:
        raise ApiError(
            400, str(exc), field=FIELD, expected="attachments of types the agent's model takes"
        ) from None
    for ref, data in taken:
        if data is not None:
            store.keep(ref, data, owner=caller.owner)
    return tuple(refs)


def _part(
    store: AttachmentStore, caller: Caller, part: Any, where: str
) -> tuple[AttachmentRef, bytes | None]:
    expected = 'an object {"name": …, "data": <base64>} or {"sha256": <an upload\'s hash>}'
    if not isinstance(part, dict) or not ({"data", "sha256"} & set(part)):
        raise ApiError(400, f"{where} is not an attachment part", field=where, expected=expected)
    unknown = sorted(set(part) - {"name", "data", "sha256"})
    if unknown:
        raise ApiError(400, f"{where}: unknown field(s) {unknown}", field=where, expected=expected)
    if "data" not in part:
        try:
            ref = store.ref(part["sha256"], owner=caller.owner)
        except AttachmentError as exc:
            raise _refused(exc, f"{where}.sha256", "the sha256 of an upload of yours") from None
        name = _name(part["name"], f"{where}.name") if "name" in part else ref.name
        return AttachmentRef(ref.sha256, ref.media_type, name, ref.size), None
    name = _name(part.get("name"), f"{where}.name")
    encoded = part["data"]
    try:
        if not isinstance(encoded, str):
            raise ValueError("not a string")
        data = base64.b64decode(encoded, validate=True)
    except (ValueError, binascii.Error):
        raise ApiError(
            400,
            f"{where}.data is not base64",
            field=f"{where}.data",
            expected="the file's bytes in base64 (RFC 4648)",
        ) from None
    try:
        return store.check(data, name=name), data
    except AttachmentError as exc:
        raise _refused(exc, f"{where}.data", _what_fits(store)) from None


def _what_fits(store: AttachmentStore) -> str:
    types = ", ".join(store.config.types)
    return f"at most {store.config.max_bytes} bytes of one of: {types}"


@operation(
    query=models.UploadQuery,
    raw_body="The file's bytes (the type is sniffed from them).",
    responses={201: models.Attachment},
    errors=(400, 413),
)
async def upload(request: Request) -> Response:
    """Store the body's bytes as an attachment of the caller."""
    runtime, caller = runtime_of(request), caller_of(request)
    store = store_for(runtime)
    name = _name(request.query_params.get("name"), "name")
    limit = store.config.max_bytes
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ApiError(
            413, f"the body is {declared} bytes", field="body", expected=_what_fits(store)
        )
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ApiError(
                413, f"the body exceeds {limit} bytes", field="body", expected=_what_fits(store)
            )
        chunks.append(chunk)
    try:
        ref = store.put(b"".join(chunks), name=name, owner=caller.owner)
    except AttachmentError as exc:
        raise _refused(exc, "body", _what_fits(store)) from None
    return ok(ref.to_json(), 201)


@operation(raw_response="The attachment's bytes, of its media type.")
async def download(request: Request) -> Response:
    """The bytes of an attachment of the caller's."""
    runtime, caller = runtime_of(request), caller_of(request)
    sha = request.path_params["sha256"]
    try:
        ref, data = store_for(runtime).read(sha, owner=caller.owner)
    except AttachmentError as exc:
        raise _refused(exc, "sha256", "the sha256 of an attachment of yours") from None
    if ref.media_type.startswith("text/"):
        data = redact_text(data.decode("utf-8")).encode("utf-8")
    return Response(
        data,
        media_type=ref.media_type,
        headers={
            "X-Content-Type-Options": "nosniff",
            "Content-Disposition": "attachment",
            "Cache-Control": "private, no-store",
        },
    )


def refs_json(refs: Sequence[AttachmentRef]) -> list[dict[str, Any]]:
    return [ref.to_json() for ref in refs]


def register(register_route: RegisterRoute) -> None:
    register_route("/api/attachments", upload, methods=("POST",))
    register_route("/api/attachments/{sha256}", download)
