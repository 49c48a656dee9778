"""toolang-tools-vault, alone: each tool driven by the scripted model through the whole
tool chain of a real runtime (real SQLite files in a temporary home); the key from the
settings, by way of the environment."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

import toolang_tools_vault as plugin
from toolang_core.testing.models import text, tool_call
from toolang_core.testing.runtimes import run_turn, tool_results

SECRET = "Quillfeather-7c1e9a44-horse-battery"
"""A value with no shape any detector knows: only the vault can have it masked."""


def new_key() -> str:
    return base64.urlsafe_b64encode(os.urandom(32)).decode()


@pytest.fixture
def vault(toolang_runtime, toolang_scripted_model, toolang_home):
    """``run(steps, owner=…, agent=…, key=…, said=…)``: one turn whose model plays
    ``steps`` then says done; returns each tool call's result."""
    first_key = new_key()

    def run(steps, *, owner="alice", agent=None, key=None, said="go", section=None):
        """``agent``: the name of the general agent that answers (default: assistant)."""
        model = toolang_scripted_model([*steps, text("done")])
        if section is None:
            section = 'key = "${TOOLANG_VAULT_KEY}"\n'
        runtime = toolang_runtime(
            '[models]\ndefault = "scripted"\n'
            f"[plugins.tools-vault]\nuse_keyring = false\n{section}"
            + (f'[agents]\ndefault = "{agent}"\n' if agent else ""),
            plugins={"tools-vault": plugin, "scripted": model.plugin()},
            env={"HOME": str(toolang_home.path), "TOOLANG_VAULT_KEY": key or first_key},
        )
        turn_id = run_turn(runtime, said, owner=owner)
        return tool_results(runtime, turn_id)

    run.home = toolang_home.path
    return run


def every_file_holding(root: Path, value: str) -> list[str]:
    needle = value.encode()
    return [
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and needle in p.read_bytes()
    ]


def test_a_secret_set_then_read_is_returned_to_its_caller_and_masked_everywhere_at_rest(vault):
    set_, listed, got = vault(
        [
            tool_call("secrets_set", {"name": "db", "secret": SECRET}),
            tool_call("secrets_list", {}),
            tool_call("secrets_get", {"name": "db"}),
        ]
    )
    assert set_["output"] == {"name": "db", "stored": True, "replaced": False}
    assert [item["name"] for item in listed["output"]] == ["db"]
    # What the model was handed is the value; what was recorded of it is masked.
    assert got["ok"] and got["output"]["value"] == "********"
    # A later turn's message repeating it is masked too: the policy knows the value.
    vault([], said=f"remember, the db password is {SECRET}")
    assert every_file_holding(vault.home, SECRET) == []


def test_another_owner_and_another_agent_cannot_read_the_secret(vault):
    vault([tool_call("secrets_set", {"name": "db", "secret": SECRET})])
    for who in ({"owner": "bob"}, {"agent": "keeper"}):
        got, listed = vault(
            [tool_call("secrets_get", {"name": "db"}), tool_call("secrets_list", {})], **who
        )
        assert not got["ok"]
        assert "no secret 'db' in your vault (yours: none)" in got["error"]
        assert listed["output"] == []


def test_a_wrong_key_is_a_clear_error_and_decrypts_nothing(vault):
    vault([tool_call("secrets_set", {"name": "db", "secret": SECRET})])
    got, sign = vault(
        [tool_call("secrets_get", {"name": "db"}), tool_call("crypto_sign", {"message": "x"})],
        key=new_key(),
    )
    for result in (got, sign):
        assert not result["ok"]
        assert "wrong vault key" in result["error"] and "Nothing was decrypted" in result["error"]
    assert "output" not in got or got["output"] is None


def test_a_key_that_is_no_key_a_key_file_beside_the_data_and_no_key_are_refused(vault):
    (got,) = vault([tool_call("secrets_list", {})], key="c2hvcnQ=")
    assert "[plugins.tools-vault] key: expected 32 bytes in base64, found 5 bytes" in got["error"]
    inside = vault.home / ".toolang" / "vault.key"
    inside.parent.mkdir(parents=True, exist_ok=True)
    inside.write_text(new_key())
    (got,) = vault([tool_call("secrets_list", {})], section=f'key_file = "{inside}"\n')
    assert f"key_file: {inside} is inside the toolang home, beside the data" in got["error"]
    outside = vault.home / "vault.key"
    outside.write_text(new_key())
    (got,) = vault([tool_call("secrets_list", {})], section='key_file = "vault.key"\n')
    assert got["ok"], got
    (got,) = vault([tool_call("secrets_list", {})], section="")
    assert "the vault has no key: set [plugins.tools-vault] key" in got["error"]


def test_set_replace_delete_and_bad_parameters(vault):
    results = vault(
        [
            tool_call("secrets_set", {"name": "db", "secret": SECRET}),
            tool_call("secrets_set", {"name": "db", "secret": SECRET + "-2"}),
            tool_call("secrets_delete", {"name": "db"}),
            tool_call("secrets_delete", {"name": "db"}),
            tool_call("secrets_set", {"name": "db", "secret": "short"}),
            tool_call("secrets_set", {"name": "../x", "secret": SECRET}),
        ]
    )
    assert [r["output"] for r in results[:4]] == [
        {"name": "db", "stored": True, "replaced": False},
        {"name": "db", "stored": True, "replaced": True},
        {"name": "db", "deleted": True},
        {"name": "db", "deleted": False},
    ]
    assert [r["error_type"] for r in results[4:]] == ["invalid_params", "invalid_params"]


def test_crypto_tools_encrypt_sign_and_verify_with_keys_held_in_the_vault(vault):
    hashed, enc = vault(
        [
            tool_call("crypto_hash", {"text": "abc"}),
            tool_call("crypto_encrypt", {"plaintext": "the eagle lands", "key_name": "k1"}),
        ]
    )
    assert hashed["output"]["hex"].startswith("ba7816bf")
    ciphertext = enc["output"]["ciphertext"]
    dec, wrong, signed = vault(
        [
            tool_call("crypto_decrypt", {"ciphertext": ciphertext, "key_name": "k1"}),
            tool_call("crypto_decrypt", {"ciphertext": ciphertext, "key_name": "k2"}),
            tool_call("crypto_sign", {"message": "pay 5"}),
        ]
    )
    assert dec["output"]["plaintext"] == "the eagle lands"
    assert "you have no key 'k2'; nothing was decrypted" in wrong["error"]
    signature, public = signed["output"]["signature"], signed["output"]["public_key"]
    mine, theirs, forged = vault(
        [
            tool_call("crypto_verify", {"message": "pay 5", "signature": signature}),
            tool_call(
                "crypto_verify", {"message": "pay 5", "signature": signature, "public_key": public}
            ),
            tool_call("crypto_verify", {"message": "pay 500", "signature": signature}),
        ]
    )
    assert [r["output"]["valid"] for r in (mine, theirs, forged)] == [True, True, False]
    # Bob's key of the same name is another key: alice's ciphertext does not open with it.
    (bobs,) = vault(
        [tool_call("crypto_decrypt", {"ciphertext": ciphertext, "key_name": "k1"})], owner="bob"
    )
    assert "nothing was decrypted" in bobs["error"]


def test_the_vault_works_across_serves_of_one_runtime(toolang_runtime, toolang_home):
    """A runtime closes its plugin databases when a serve ends; the next serve's calls
    open the vault again (not a closed connection)."""
    from toolang_core.testing.models import ScriptedModel

    model = ScriptedModel(
        [
            tool_call("secrets_set", {"name": "db", "secret": SECRET}),
            text("kept"),
            tool_call("secrets_list", {}),
            text("listed"),
        ]
    )
    runtime = toolang_runtime(
        '[models]\ndefault = "scripted"\n'
        '[plugins.tools-vault]\nkey = "${TOOLANG_VAULT_KEY}"\nuse_keyring = false\n',
        plugins={"tools-vault": plugin, "scripted": model.plugin()},
        env={"HOME": str(toolang_home.path), "TOOLANG_VAULT_KEY": new_key()},
    )
    first = run_turn(runtime, "keep it")
    second = run_turn(runtime, "list them")
    assert tool_results(runtime, first)[0]["ok"]
    (listed,) = tool_results(runtime, second)
    assert [item["name"] for item in listed["output"]] == ["db"], listed
