"""The redaction detector makes its scrubber on the first text that could hold something
to mask, not when the runtime is made; that first text is masked in full."""

from __future__ import annotations

import types

import toolang_hook_security_filter as plugin
from toolang_hook_security_filter import pii
from toolang_hook_security_filter.settings import FilterSettings

TOKEN = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"


def counting_scrubbers(monkeypatch):
    made = []
    real = pii.Scrubber.__init__

    def init(self, *args, **kwargs):
        made.append(self)
        real(self, *args, **kwargs)

    monkeypatch.setattr(pii.Scrubber, "__init__", init)
    return made


def test_the_detector_makes_no_scrubber_until_a_text_could_hold_a_secret(monkeypatch):
    made = counting_scrubbers(monkeypatch)
    detect = plugin._detector(types.SimpleNamespace(settings=None))
    assert made == []
    assert detect("hi") == "hi"  # shorter than anything masked
    assert made == []
    first = detect(f"token {TOKEN} and mail ada@example.com")
    assert TOKEN not in first and "ada@example.com" not in first
    assert len(made) == 1
    assert TOKEN not in detect(f"again {TOKEN}")
    assert len(made) == 1  # made once


def test_the_lazy_detector_masks_the_kinds_of_its_settings(monkeypatch):
    only_email = FilterSettings(pii_kinds=("email",))
    detect = plugin._detector(types.SimpleNamespace(settings=only_email))
    masked = detect(f"token {TOKEN} and mail ada@example.com")
    assert "ada@example.com" not in masked
    assert TOKEN in masked


def test_a_key_shape_is_masked_by_a_fresh_scrubber_for_every_shape():
    from toolang_hook_security_filter.finders import KEY_SHAPES

    scrubber = pii.Scrubber()
    assert scrubber._finders._shapes == {}  # compiled on first need
    masked = scrubber.scrub_text(f"token {TOKEN}", {})
    assert TOKEN not in masked
    assert set(scrubber._finders._shapes) <= set(KEY_SHAPES)
    assert 0 < len(scrubber._finders._shapes) < len(KEY_SHAPES)


def test_plain_text_compiles_no_kinds_pattern_and_each_kind_is_still_masked():
    scrubber = pii.Scrubber()
    kinds = {"_labelled", "_url_password", "_email_local", "_email_domain", "_iban", "_card"}
    kinds |= {"_phone", "_aws_pair", "_labelled_any_case"}
    assert scrubber.scrub_text("(demo model) You said: hi", {}) == "(demo model) You said: hi"
    assert not kinds & set(vars(scrubber._finders))
    found: dict[str, int] = {}
    masked = scrubber.scrub_text(
        "mail ada@example.com, call +44 20 7946 0958, card 4111 1111 1111 1111, "
        "iban GB82 WEST 1234 5698 7654 32, password=hunter2hunter2, "
        "https://bob:s3cretpass@example.com/x",
        found,
    )
    for raw in ("ada@example.com", "7946 0958", "4111 1111 1111 1111", "GB82", "hunter2", "s3cret"):
        assert raw not in masked
    assert {"email", "phone", "card", "iban", "secret"} <= set(found)
