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
