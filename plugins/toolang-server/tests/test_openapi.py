"""The OpenAPI document: valid OpenAPI 3.1 (checked by openapi-spec-validator), written
from the models the handlers validate with, and true — every API route's real answers
(and its refusals, and a turn's events) fit the schemas it gives, and a client that an
off-the-shelf generator (openapi-python-client) makes from it submits a turn."""

from __future__ import annotations

import base64
import importlib
import json
import re
import subprocess
import sys
from typing import Any

from openapi_schema_validator import OAS31Validator
from openapi_spec_validator import validate
from server_helpers import ANSWER_WAIT, TOKENS, spawn_run, wait_for

from toolang_core.testing.live_server import parse_sse
from toolang_server.openapi import api_document

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def fits(document: dict[str, Any], schema: dict[str, Any], value: Any, where: str) -> None:
    root = {**schema, "components": document["components"]}
    errors = sorted(OAS31Validator(root).iter_errors(value), key=str)
    assert not errors, f"{where}: {errors[0].message} at {list(errors[0].absolute_path)}"


class Tour:
    """Checks each answer against the document's schema for its operation and status,
    and remembers which operations it saw."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.seen: set[tuple[str, str]] = set()
        self.templates = [
            (re.compile("^" + re.sub(r"\{\w+\}", "[^/]+", p) + "$"), p)
            for p in sorted(document["paths"], key=lambda p: (p.count("{"), -len(p)))
        ]

    def template(self, path: str) -> str:
        if path.startswith("/api/threads/"):
            return "/api/threads/{thread_id}"  # a thread id may hold "/" (a path parameter)
        return next(t for pattern, t in self.templates if pattern.match(path))

    def check(self, response: Any) -> Any:
        method, path = response.request.method.lower(), response.request.url.path
        template = self.template(path)
        operation = self.document["paths"][template][method]
        self.seen.add((method, template))
        responses = operation["responses"]
        described = responses.get(str(response.status_code)) or responses["default"]
        kind = response.headers["content-type"].split(";")[0]
        content = described.get("content", {})
        if "application/octet-stream" in content and kind not in content:
            return response  # bytes of their own media type (an attachment)
        assert kind in content, f"{method} {path} answered {kind}; the document says {content}"
        if kind == "application/json":
            fits(self.document, content[kind]["schema"], response.json(), f"{method} {path}")
            return response.json()
        if kind == "text/event-stream":
            events = content[kind]["x-events"]
            for name, data in parse_sse(response.text):
                fits(self.document, events[name], data, f"{method} {path} event {name}")
        return response


def test_the_document_validates_and_its_request_examples_fit_their_schemas():
    document = api_document()
    validate(document)  # raises on any violation of the OpenAPI 3.1 schema
    examples = 0
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            media = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if media and "example" in media:
                fits(document, media["schema"], media["example"], f"{method} {path}")
                examples += 1
            for param in operation.get("parameters", ()):
                if "example" in param:
                    fits(document, param["schema"], param["example"], f"{path} {param['name']}")
                    examples += 1
    assert examples >= 3
    submit = document["paths"]["/api/turns"]["post"]
    body = document["components"]["schemas"]["SubmitTurn"]
    assert body["required"] == ["input"] and body["additionalProperties"] is False
    assert set(submit["responses"]["200"]["content"]["text/event-stream"]["x-events"]) >= {
        "text",
        "approval",
        "finished",
    }
    assert "Idempotency-Key" in {p["name"] for p in submit["parameters"]}


def test_every_api_route_answers_as_its_document_says(token_server):
    with token_server.client(TOKENS["alice"]) as alice:
        served = alice.get("/api/openapi.json").json()
        validate(served)
        tour = Tour(served)
        check = tour.check
        assert check(alice.get("/openapi.json")) == check(alice.get("/api/openapi.json"))
        turn = check(alice.post("/api/turns", json={"input": "hi", "wait": ANSWER_WAIT}))
        check(alice.post("/api/turns", json={"input": "later", "thread_id": "chat:x"}))
        check(alice.post("/api/turns", json={"input": "streamed", "stream": True}))
        for path in ("", "/steps", "/trace", "/events"):
            check(alice.get(f"/api/turns/{turn['id']}{path}"))
        check(alice.post(f"/api/turns/{turn['id']}/cancel"))
        fork = {"input": "hi again", "wait": ANSWER_WAIT}
        check(alice.post(f"/api/turns/{turn['id']}/fork", json=fork))
        replay = {"model": "testmodel", "wait": ANSWER_WAIT}
        check(alice.post(f"/api/turns/{turn['id']}/replay", json=replay))
        check(alice.get("/api/turns", params={"status": "completed", "limit": 5}))
        check(alice.get("/api/threads"))
        check(alice.get(f"/api/threads/{turn['thread_id']}"))
        # an approval, decided inline
        asked = '/tool guarded_write {"name": "a.txt", "text": "x"}'
        parked = check(alice.post("/api/turns", json={"input": asked}))
        (approval,) = wait_for(lambda: alice.get("/api/approvals?status=pending").json())
        check(alice.get("/api/approvals", params={"status": "pending"}))
        check(alice.post(f"/api/approvals/{approval['id']}/approve", json={"reason": "ok"}))
        wait_for(
            lambda: alice.get(f"/api/turns/{parked['turn_id']}").json()["status"] == "completed"
        )
        # a question, answered
        ask = '/tool ask_person {"question": "Which?", "choices": ["a", "b"]}'
        check(alice.post("/api/turns", json={"input": ask, "thread_id": "chat:q"}))
        (question,) = wait_for(lambda: alice.get("/api/questions").json())
        check(alice.get("/api/questions", params={"status": "all"}))
        check(alice.get(f"/api/questions/{question['id']}"))
        check(alice.post(f"/api/questions/{question['id']}/answer", json={"answer": "a"}))
        # a task run
        run_id = spawn_run(token_server, "alice", '/tool slow_wait {"seconds": 60}')
        wait_for(lambda: alice.get(f"/api/task-runs/{run_id}").json()["status"] == "running")
        for path in ("", "/transcript"):
            check(alice.get(f"/api/task-runs/{run_id}{path}"))
        check(alice.get(f"/api/task-runs/{run_id}/wait", params={"timeout": 0}))
        check(alice.post(f"/api/task-runs/{run_id}/cancel"))
        check(alice.get("/api/task-runs"))
        # the rest
        upload = check(alice.post("/api/attachments", params={"name": "dot.png"}, content=PNG))
        check(alice.get(f"/api/attachments/{upload['sha256']}"))
        check(alice.get("/api/memory/search", params={"q": "hi"}))
        for path in (
            "/api/usage",
            "/api/health",
            "/api/status",
            "/api/agents",
            "/api/agents/tools",
            "/api/plugins",
            "/api/hooks",
            "/api/chores",
            "/api",
        ):
            check(alice.get(path))
        # refusals are the Error shape, each where the document lists it
        check(alice.post("/api/turns", json={"input": "x", "bogus": 1}))
        check(alice.get("/api/turns", params={"limit": 0}))
        check(alice.get("/api/turns/nope"))
        check(alice.post(f"/api/approvals/{approval['id']}/deny"))
        check(alice.get("/api/session"))
    documented = {
        (method, path)
        for path, operations in served["paths"].items()
        if path.startswith("/api")
        for method in operations
    }
    assert documented - tour.seen == set(), "routes the tour did not check"


GENERATOR_CONFIG = "post_hooks: []\npackage_name_override: toolang_generated\n"


def test_a_client_generated_by_openapi_python_client_submits_a_turn(open_server, tmp_path):
    with open_server.client() as http:
        (tmp_path / "openapi.json").write_text(json.dumps(http.get("/openapi.json").json()))
    (tmp_path / "config.yaml").write_text(GENERATOR_CONFIG)
    generator = str(__import__("pathlib").Path(sys.executable).with_name("openapi-python-client"))
    subprocess.run(
        [
            generator,
            "generate",
            "--path",
            "openapi.json",
            "--config",
            "config.yaml",
            "--meta",
            "none",
            "--output-path",
            "toolang_generated",
        ],
        cwd=tmp_path,
        check=True,
        capture_output=True,
        text=True,
    )
    sys.path.insert(0, str(tmp_path))
    try:
        generated = importlib.import_module("toolang_generated")
        submit = importlib.import_module("toolang_generated.api.server.post_api_turns")
        models = importlib.import_module("toolang_generated.models")
        client = generated.Client(base_url=open_server.url, timeout=ANSWER_WAIT + 30)
        answer = submit.sync(
            client=client,
            body=models.SubmitTurn(input_="from a generated client", wait=ANSWER_WAIT),
        )
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m.startswith("toolang_generated")]:
            del sys.modules[name]
    assert isinstance(answer, models.Turn)
    assert (answer.status, answer.output) == ("completed", "echo: from a generated client")
