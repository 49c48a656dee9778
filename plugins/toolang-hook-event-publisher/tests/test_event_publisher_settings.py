"""[plugins.hook-event-publisher]: defaults, and bad settings named by their key."""

from __future__ import annotations

import pytest

import toolang_hook_event_publisher as plugin
from toolang_core import ConfigError, Secret
from toolang_hook_event_publisher.settings import PublisherSettings

SECTION = f"plugins.{plugin.NAME}"


@pytest.fixture
def problems(toolang_runtime, toolang_home):
    """``problems(settings_toml)``: the configuration errors, the file shown by its name."""

    def check(settings: str, env=None) -> list[str]:
        with pytest.raises(ConfigError) as caught:
            toolang_runtime(f"[{SECTION}]\n{settings}", plugins={plugin.NAME: plugin}, env=env)
        path = str(toolang_home.config_path)
        assert all(line.startswith(f"{path}: ") for line in caught.value.problems)
        return [line.replace(path, "toolang.toml", 1) for line in caught.value.problems]

    return check


def settings_of(toolang_runtime, settings: str, env=None) -> PublisherSettings:
    runtime = toolang_runtime(f"[{SECTION}]\n{settings}", plugins={plugin.NAME: plugin}, env=env)
    return runtime.settings[plugin.NAME]


def test_without_a_section_every_kind_goes_to_no_sink(toolang_runtime):
    runtime = toolang_runtime("", plugins={plugin.NAME: plugin})
    settings = runtime.settings[plugin.NAME]
    assert settings == PublisherSettings()
    assert (settings.sinks, settings.kinds, settings.queue_size) == ([], ["*"], 1000)
    assert (settings.include_params, settings.include_output) == (False, False)


def test_an_unknown_sink_type_is_named(problems):
    assert problems('sinks = [{type = "kafka"}]') == [
        f"toolang.toml: {SECTION}.sinks[0].type: expected one of 'jsonl', 'stdout', "
        "'webhook', found a string (\"kafka\")"
    ]


def test_a_webhook_without_url_is_named(problems):
    assert problems('sinks = [{type = "stdout"}, {type = "webhook"}]') == [
        f"toolang.toml: {SECTION}.sinks[1].url: a webhook sink needs a url"
    ]


@pytest.mark.parametrize(
    "url", ["ftp://example.com/x", "example.com/hook", "http://", "http://host:99999/"]
)
def test_a_bad_webhook_url_is_named(problems, url):
    (problem,) = problems(f'sinks = [{{type = "webhook", url = "{url}"}}]')
    assert problem.startswith(
        f"toolang.toml: {SECTION}.sinks[0].url: expected an http:// or https:// URL"
    )


def test_a_bad_url_is_shown_without_its_password(problems):
    (problem,) = problems('sinks = [{type = "webhook", url = "ftp://me:hunter2@example.com/"}]')
    assert "hunter2" not in problem


def test_a_jsonl_sink_without_path_is_named(problems):
    assert problems('sinks = [{type = "jsonl"}]') == [
        f"toolang.toml: {SECTION}.sinks[0].path: a jsonl sink needs a path (the file to append to)"
    ]


def test_keys_of_another_sink_type_are_refused(problems):
    assert problems('sinks = [{type = "stdout", url = "http://x/"}]') == [
        f"toolang.toml: {SECTION}.sinks[0].url: 'url' is for webhook sinks, not stdout"
    ]


def test_unknown_keys_are_named(problems):
    (problem,) = problems('sinks = [{type = "stdout", urll = "x"}]')
    assert problem.startswith(f"toolang.toml: {SECTION}.sinks[0].urll: unknown key")


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        (
            "queue_size = 0\nflush_seconds = -1",
            [
                "flush_seconds: expected a number >= 0, found -1.0",
                "queue_size: expected an integer >= 1, found 0",
            ],
        ),
        (
            'sinks = [{type = "webhook", url = "http://h/", max_attempts = 0, '
            "timeout_seconds = 0}]",
            [
                "sinks[0].max_attempts: expected an integer >= 1, found 0",
                "sinks[0].timeout_seconds: expected a number > 0, found 0.0",
            ],
        ),
    ],
)
def test_every_problem_of_a_table_is_reported_at_once(problems, settings, expected):
    assert sorted(problems(settings)) == [f"toolang.toml: {SECTION}.{line}" for line in expected]


def test_an_empty_kind_pattern_is_refused(problems):
    assert problems('kinds = ["turn.*", ""]') == [
        f"toolang.toml: {SECTION}.kinds: "
        'expected glob patterns such as "turn.*", found an empty one'
    ]


def test_header_values_are_secrets_with_the_environment_expanded(toolang_runtime):
    settings = settings_of(
        toolang_runtime,
        'sinks = [{type = "webhook", url = "http://h/", '
        'headers = {Authorization = "Bearer ${HOOK_TOKEN}"}}]',
        env={"HOOK_TOKEN": "t0ps3cret"},
    )
    header = settings.sinks[0].headers["Authorization"]
    assert isinstance(header, Secret)
    assert header.reveal() == "Bearer t0ps3cret"
    assert "t0ps3cret" not in repr(settings)


def test_an_unset_variable_in_a_header_is_named(problems):
    (problem,) = problems(
        'sinks = [{type = "webhook", url = "http://h/", headers = {X-Key = "${NOPE}"}}]',
        env={},
    )
    assert problem.startswith(f"toolang.toml: {SECTION}.sinks[0].headers.X-Key")
    assert "NOPE is not set" in problem


def test_a_header_value_http_cannot_carry_is_named_without_showing_it(problems):
    (problem,) = problems(
        'sinks = [{type = "webhook", url = "http://h/", headers = {X-Key = "${KEY}"}}]',
        env={"KEY": "line1\nline2"},
    )
    assert problem == (
        f"toolang.toml: {SECTION}.sinks[0].headers: the value of 'X-Key' has characters "
        "HTTP headers cannot hold"
    )


def test_a_jsonl_path_is_relative_to_the_configuration_file(toolang_runtime, toolang_home):
    settings = settings_of(toolang_runtime, 'sinks = [{type = "jsonl", path = "logs/e.jsonl"}]')
    assert settings.sinks[0].path == toolang_home.path / "logs" / "e.jsonl"
