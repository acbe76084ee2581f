"""Item 9 of issue 15: a damaged manifest is one line from every command, and never hides
the other sessions; a manifest's remote Ray address needs the user's confirmation.

Before, ``"created": "yesterday"``, 100k-deep nesting or a lone surrogate crashed ``reset``,
``show`` and ``sessions`` with tracebacks, and one bad session broke ``sessions`` for all.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from kvcli.errors import SessionError
from kvcli.session import Session, list_sessions
from tests.session.legacy import legacy_form, read_manifest, write_legacy


def good_manifest(home: Path, name: str = "bad") -> dict:
    with Session(name, home) as session:
        session.init(["w"], [np.ones(3, np.float32)])
    folder = home / "sessions" / name
    return legacy_form(folder, read_manifest(folder))  # planted as an old manifest.json below


def damage(data: dict, how: str) -> str:
    """The damaged manifest text."""
    if how == "deep":
        return json.dumps(data)[:-1] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    if how == "huge-int":
        return json.dumps(data).replace('"generation": 1', '"generation": ' + "9" * 5000)
    if how == "big-int":
        return json.dumps(data).replace('"generation": 1', '"generation": ' + "9" * 4000)
    if how == "surrogate":
        return json.dumps(data).replace('"updater": "assign"', '"updater": "\\ud800"')
    changes = {
        "created-text": ("created", "yesterday"),
        "negative-generation": ("generation", -1),
        "bool-generation": ("generation", True),
        "unknown-field": ("surprise", 1),
        "updater-list": ("updater", ["assign"]),
        "long-updater": ("updater", "x" * 5000),
        "store-options-list": ("store", {"type": "local", "options": []}),
        "device-zero": ("store", {"type": "device", "options": {"num_devices": 0}}),
        "option-for-other-store": ("store", {"type": "local", "options": {"num_devices": 2}}),
        "keys-dict": ("keys", {"w": 1}),
        "nan-time": ("updated", float("nan")),
        "trust-malformed": ("updater_trust", {"path": "/x.py"}),
    }
    if how in changes:
        field, value = changes[how]
        data[field] = value
        return json.dumps(data)
    entry = data["keys"][0]
    entry_changes = {
        "shape-strings": ("shape", ["3"]),
        "shape-huge": ("shape", [2**61, 2**61]),
        "shape-deep": ("shape", [[[[3]]]]),
        "version-float": ("version", 1.5),
        "dtype-object": ("dtype", "object"),
        "key-float": ("key", 1.5),
        "entry-extra": ("extra", {}),
    }
    field, value = entry_changes[how]
    entry[field] = value
    return json.dumps(data)


CASES = ["deep", "huge-int", "big-int", "surrogate", "created-text", "negative-generation", "bool-generation",
         "unknown-field", "updater-list", "long-updater", "store-options-list", "device-zero",
         "option-for-other-store", "keys-dict", "nan-time", "trust-malformed", "shape-strings", "shape-huge",
         "shape-deep", "version-float", "dtype-object", "key-float", "entry-extra"]


@pytest.mark.parametrize("how", CASES)
def test_damaged_manifest_is_one_line_everywhere_and_reset_repairs_it(tmp_path: Path, how: str) -> None:
    home = tmp_path / "home"
    with Session("fine", home) as session:
        session.init(["a"], [np.zeros(2, np.float32)])
    data = good_manifest(home)
    write_legacy(home / "sessions" / "bad", damage(data, how))

    for operation in (lambda s: s.describe(), lambda s: s.keys(), lambda s: s.pull(["w"]),
                      lambda s: s.push(["w"], [np.ones(3, np.float32)])):
        with Session("bad", home) as session:
            with pytest.raises(SessionError) as caught:
                operation(session)
        message = str(caught.value)
        assert "\n" not in message and "is corrupted" in message and len(message) < 600, message

    rows = {row["session"]: row for row in list_sessions(home)}
    assert "is corrupted" in rows["bad"]["error"]
    assert rows["fine"]["keys"] == 1 and "error" not in rows["fine"]  # the rest are listed

    with Session("bad", home) as session:
        session.reset()
        assert session.keys() == []


def test_cli_sessions_lists_a_damaged_session_on_its_own_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    home = tmp_path / "home"
    with Session("fine", home) as session:
        session.init(["a"], [np.zeros(2, np.float32)])
    data = good_manifest(home)
    write_legacy(home / "sessions" / "bad", damage(data, "surrogate"))
    kvcli = Path(sys.executable).parent / "kvcli"
    env = {"KVCLI_HOME": str(home), "NO_COLOR": "1", "COLUMNS": "200", "PATH": "/usr/bin:/bin"}
    if "PYTHONPATH" in os.environ:  # the kvcli under test, not the installed one
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    listing = subprocess.run([str(kvcli), "sessions"], capture_output=True, text=True, env=env, timeout=120)
    assert listing.returncode == 0, listing.stderr
    lines = listing.stdout.splitlines()
    assert any("bad" in line and "damaged" in line for line in lines)
    assert any("fine" in line and "local" in line for line in lines)
    show = subprocess.run([str(kvcli), "--session", "bad", "show"], capture_output=True, text=True, env=env, timeout=120)
    assert show.returncode == 1 and "Traceback" not in show.stderr
    assert len(show.stderr.strip().splitlines()) == 1 and "is corrupted" in show.stderr


# ---------------------------------------------------------------------- Ray addresses
def dist_manifest(home: Path, address: str) -> None:
    data = good_manifest(home, "dist")
    data["store"] = {"type": "dist_sync", "options": {"address": address}}
    write_legacy(home / "sessions" / "dist", data)


@pytest.mark.parametrize("address", ["10.1.2.3:6379", "ray://evil.example.com:10001", "[2001:db8::1]:6379"])
def test_manifest_only_remote_ray_address_is_refused(tmp_path: Path, address: str, monkeypatch) -> None:
    monkeypatch.delenv("KVCLI_RAY_ADDRESS", raising=False)
    dist_manifest(tmp_path, address)
    with Session("dist", tmp_path) as session:
        with pytest.raises(SessionError, match="not on this machine") as caught:
            # a pull reads the committed value and an assign push writes it: neither starts a
            # store; a push from two devices sums them in the store
            session.push(["w"], [[np.ones(3, np.float32), np.ones(3, np.float32)]])
    message = str(caught.value)
    assert address in message and f"address={address!r}" in message and "--" not in message
    from kvcli.cli.output import hint_for

    assert hint_for(caught.value) == f"pass --ray-address {address}, or set KVCLI_RAY_ADDRESS"


def test_confirmed_remote_address_passes_the_check(tmp_path: Path, monkeypatch) -> None:
    dist_manifest(tmp_path, "10.1.2.3:6379")
    session = Session("dist", tmp_path, store_type="dist_sync", store_options={"address": "10.1.2.3:6379"})
    manifest = session._committer.read_manifest()
    session._live.check_ray_address(manifest)  # --ray-address names it: confirmed
    monkeypatch.setenv("KVCLI_RAY_ADDRESS", "10.1.2.3:6379")
    Session("dist", tmp_path)._live.check_ray_address(manifest)


@pytest.mark.parametrize("address, local", [
    ("auto", True), ("local", True), ("127.0.0.1:6379", True), ("localhost:6379", True),
    ("ray://127.0.0.1:10001", True), ("[::1]:6379", True), ("10.0.0.1:6379", False),
    ("ray://localhost.evil.com:1", False), ("192.168.1.2", False),
])
def test_local_addresses(address: str, local: bool) -> None:
    from kvcli.session import is_local_address

    assert is_local_address(address) is local


def test_an_address_of_this_machine_counts_as_local() -> None:
    """Ray names a local cluster by the node's IP when there is a network (192.0.2.2 here)."""
    import socket

    from kvcli.session import is_local_address

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))  # picks the outgoing interface; sends nothing
            own = probe.getsockname()[0]
        except OSError:
            own = "127.0.0.1"  # no network: the loopback address is the node's address
    assert is_local_address(f"{own}:6379") is True
    assert is_local_address("203.0.113.7:6379") is False  # TEST-NET-3: never this machine's
