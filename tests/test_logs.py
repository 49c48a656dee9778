"""Logging: JSON or console on stderr, secrets masked, never configured by library code."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import subprocess
import sys
from collections.abc import Iterator

import structlog

from toolang_core.logs import _library_message, configure_logging
from toolang_core.redaction import MASK, redact, redact_text


@contextlib.contextmanager
def logs_as_text(*, level: str, fmt: str) -> Iterator[io.StringIO]:
    """The logs of the block, ``configure_logging(level=…, fmt=…)`` into a string."""
    stream = io.StringIO()
    configure_logging(level=level, fmt=fmt, stream=stream)  # type: ignore[arg-type]
    try:
        yield stream
    finally:
        structlog.reset_defaults()


def test_json_lines_with_secrets_masked():
    with logs_as_text(level="info", fmt="json") as stream:
        structlog.get_logger("t").info(
            "store.connect",
            dsn="postgresql://app:hunter2@db/toolang",
            api_key="sk-abc",
            note="token sk-proj-abcdefghijklmnopqrstuvwx here",
        )
    event = json.loads(stream.getvalue())
    assert event["event"] == "store.connect"
    assert event["level"] == "info"
    assert event["dsn"] == f"postgresql://app:{MASK}@db/toolang"
    assert event["api_key"] == MASK
    assert event["note"] == f"token {MASK} here"


def test_a_json_traceback_is_masked_too():
    with logs_as_text(level="info", fmt="json") as stream:
        try:
            raise RuntimeError("could not reach postgresql://app:hunter2@db/toolang")
        except RuntimeError:
            structlog.get_logger("t").exception("store.failed")
    event = json.loads(stream.getvalue())
    assert "hunter2" not in stream.getvalue()
    assert f"postgresql://app:{MASK}@db/toolang" in event["exception"]


def test_a_registered_detector_masks_log_events():
    from toolang_core.redaction import use_detectors

    stream = io.StringIO()
    undo = use_detectors({"cards": lambda t: t.replace("4539148803436467", "[card]")})
    configure_logging(level="info", fmt="json", stream=stream)
    try:
        structlog.get_logger("t").info("turn.finished", output="paid with 4539148803436467")
    finally:
        structlog.reset_defaults()
        undo()
    assert json.loads(stream.getvalue())["output"] == "paid with [card]"


def test_console_format_is_readable_and_filters_by_level():
    with logs_as_text(level="warning", fmt="console") as stream:
        log = structlog.get_logger("t")
        log.info("hidden")
        log.warning("plugin.failed", plugin="x")
    text = stream.getvalue()
    assert "hidden" not in text
    assert "plugin.failed" in text
    assert "plugin=x" in text


def test_redact_handles_nested_values():
    value = {
        "headers": {"Authorization": "Bearer abc.def.ghi"},
        "args": ["ghp_" + "a" * 36, "plain"],
        "password": "pw",
    }
    assert redact(value) == {
        "headers": {"Authorization": MASK},
        "args": [MASK, "plain"],
        "password": MASK,
    }
    assert redact_text("curl -H 'Authorization: Bearer abcdefgh123'") == (
        f"curl -H 'Authorization: Bearer {MASK}'"
    )


def test_importing_the_library_does_not_configure_logging():
    code = (
        "import structlog; before = structlog.get_config(); "
        "import toolang_core.runtime, toolang_core.plugins, toolang_core.doctor; "
        "print(structlog.get_config() == before)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def test_cli_logs_json_on_stderr_and_keeps_stdout_clean(cli_run, tmp_path):
    from toolang_core.testing import make_distribution

    site = tmp_path / "site"
    make_distribution(
        site,
        "toolang-test-broken",
        entry_points={"toolang": {"broken": "tl_b"}},
        modules={"tl_b": "raise ImportError('nope')"},
    )
    result = cli_run(
        "--log-format", "json", "plugins", pythonpath=[site], env={"TOOLANG_LOAD_PLUGINS": "broken"}
    )
    assert json.loads(result.stdout) == []
    (line,) = [json.loads(x) for x in result.stderr.splitlines() if x.startswith("{")]
    assert (line["event"], line["plugin"], line["distribution"]) == (
        "plugin.failed",
        "broken",
        "toolang-test-broken",
    )


def test_a_librarys_records_are_json_lines_masked_and_from_warning_up():
    with logs_as_text(level="info", fmt="json") as stream:
        library = logging.getLogger("some.library")
        library.info("HTTP Request: GET https://agent.example/card?api_key=sk-abc123secret")
        library.warning("could not reach postgresql://app:hunter2@db/toolang")
    (line,) = [json.loads(x) for x in stream.getvalue().splitlines()]
    assert line["event"] == f"could not reach postgresql://app:{MASK}@db/toolang"
    assert (line["level"], line["logger"]) == ("warning", "some.library")
    assert "timestamp" in line


def test_a_librarys_debug_records_show_with_log_level_debug_masked():
    with logs_as_text(level="debug", fmt="json") as stream:
        logging.getLogger("httpx").info(
            "HTTP Request: GET https://agent.example/card"
            '?api_key=sk-abcdef0123456789abcdef "200 OK"'
        )
    (line,) = [json.loads(x) for x in stream.getvalue().splitlines()]
    assert "sk-abcdef0123456789abcdef" not in stream.getvalue()
    assert line["event"].startswith("HTTP Request: GET https://agent.example/card?api_key=")
    assert line["logger"] == "httpx"


def test_a_librarys_traceback_is_masked_in_both_formats():
    for fmt in ("json", "console"):
        with logs_as_text(level="info", fmt=fmt) as stream:
            try:
                raise RuntimeError("could not reach postgresql://app:hunter2@db/toolang")
            except RuntimeError:
                # A logger no other test configures (uvicorn's default config, started by
                # a test server in the same process, would stop "uvicorn" propagating).
                logging.getLogger("tests.logs.server").exception("Exception in ASGI application")
        assert "Exception in ASGI application" in stream.getvalue(), fmt
        assert "hunter2" not in stream.getvalue(), fmt


def test_a_librarys_basic_config_adds_no_second_handler():
    """The MCP SDK calls ``logging.basicConfig(level="INFO", …)`` when a server is built:
    its raw lines (httpx's request URLs among them) must not reach stderr."""
    stream = io.StringIO()
    other = io.StringIO()
    configure_logging(level="info", fmt="json", stream=stream)
    configure_logging(level="info", fmt="json", stream=stream)  # again: still one handler
    try:
        logging.basicConfig(level="INFO", format="%(message)s", stream=other)
        logging.getLogger("mcp.server").info("StreamableHTTP session manager started")
        logging.getLogger("mcp.server").warning("a warning")
    finally:
        structlog.reset_defaults()
    assert other.getvalue() == ""
    assert [json.loads(x)["event"] for x in stream.getvalue().splitlines()] == ["a warning"]


def test_a_python_warning_is_a_json_line_too():
    import warnings

    with logs_as_text(level="info", fmt="json") as stream:
        warnings.warn("XDG_RUNTIME_DIR is not set", RuntimeWarning, stacklevel=1)
    (line,) = [json.loads(x) for x in stream.getvalue().splitlines()]
    assert (line["logger"], line["level"]) == ("py.warnings", "warning")
    assert "RuntimeWarning: XDG_RUNTIME_DIR is not set" in line["event"]


def test_a_librarys_arguments_are_masked_by_their_keys_and_error_level_hides_its_warnings():
    with logs_as_text(level="info", fmt="json") as stream:
        library = logging.getLogger("some.library")
        library.warning("calling %s with %s\n", "https://a.example", {"api_key": "plain-value-1"})
    shown = [json.loads(x)["event"] for x in stream.getvalue().splitlines()]
    assert shown == [f"calling https://a.example with {{'api_key': '{MASK}'}}"]
    misfit = {"event": "a format the args do not fit %d", "positional_args": ("x",)}
    assert _library_message(None, "warning", misfit) == {
        "event": "a format the args do not fit %d ('x',)"
    }

    with logs_as_text(level="error", fmt="json") as stream:
        logging.getLogger("some.library").warning("not shown at --log-level error")
        logging.getLogger("some.library").error("shown")
    assert [json.loads(x)["event"] for x in stream.getvalue().splitlines()] == ["shown"]


def test_http_headers_are_not_logged_even_at_debug():
    with logs_as_text(level="debug", fmt="json") as stream:
        logging.getLogger("httpcore.http11").debug(
            "receive_response_headers.complete return_value=[(b'Set-Cookie', b'session=s3cr3t')]"
        )
        logging.getLogger("httpx").debug("shown")
    assert [json.loads(x)["event"] for x in stream.getvalue().splitlines()] == ["shown"]
