"""Confinement to the root: what docs/security.md promises, tried as an attacker.

Paths are resolved by the kernel beneath the root (openat2 RESOLVE_BENEATH):
`..`, absolute paths and symlinks leading out are refused, for reads and
writes alike, and nothing outside the root is read or changed.
"""

from __future__ import annotations

import os

import pytest



@pytest.fixture(scope="module")
def escape_dir(shared, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")
    (outside / "secret.txt").write_text("TOP-SECRET\n")
    inside = shared.root / "escape"
    inside.mkdir(parents=True, exist_ok=True)
    os.symlink(outside / "secret.txt", inside / "link-to-secret")
    os.symlink(outside, inside / "link-to-dir")
    os.symlink("../../..", inside / "up")
    return outside


def refused(reply: dict) -> bool:
    return "error" in reply or bool(reply.get("result", {}).get("isError"))


ATTEMPTS = [
    ("fs_read", {"path": "../outside/secret.txt"}),
    ("fs_read", {"path": "/etc/passwd"}),
    ("fs_read", {"path": "escape/link-to-secret"}),
    ("fs_read", {"path": "escape/link-to-dir/secret.txt"}),
    ("fs_read", {"path": "escape/up/etc/passwd"}),
    ("fs_list", {"path": "escape/link-to-dir"}),
    ("fs_grep", {"pattern": "TOP-SECRET", "path": "escape/link-to-dir"}),
    ("fs_stat", {"path": "escape/link-to-dir/secret.txt"}),
    ("fs_write", {"path": "escape/link-to-dir/new.txt", "content": "x"}),
    ("fs_write", {"path": "escape/link-to-secret", "content": "overwritten"}),
    ("fs_edit", {"path": "escape/link-to-secret",
                 "edits": [{"old_string": "TOP", "new_string": "BOTTOM"}]}),
    ("fs_delete", {"path": "escape/link-to-dir/secret.txt"}),
    ("fs_move", {"source": "escape/link-to-dir/secret.txt", "destination": "stolen.txt"}),
    ("fs_copy", {"source": "escape/link-to-secret", "destination": "stolen.txt"}),
]


@pytest.mark.parametrize("tool,args", ATTEMPTS, ids=[f"{t}-{i}" for i, (t, _) in
                                                     enumerate(ATTEMPTS)])
def test_paths_out_of_the_root_are_refused(server, escape_dir, tool, args):
    session = server.session()
    try:
        res = session.rpc("tools/call", {"name": tool, "arguments": args})
    finally:
        session.close()
    reply = res.reply()
    assert refused(reply), f"{tool} {args} was not refused: {str(reply)[:300]}"
    assert "TOP-SECRET" not in str(reply)
    assert (escape_dir / "secret.txt").read_text() == "TOP-SECRET\n"
    assert sorted(p.name for p in escape_dir.iterdir()) == ["secret.txt"]
    assert not (server.root / "stolen.txt").exists()


def test_resource_uri_out_of_the_root_is_refused(server, escape_dir):
    session = server.session()
    try:
        res = session.rpc("resources/read", {"uri": f"file://{escape_dir}/secret.txt"})
        link = session.rpc("resources/read", {
            "uri": f"file://{os.path.realpath(server.root)}/escape/link-to-secret"})
    finally:
        session.close()
    for r in (res, link):
        assert "error" in r.reply(), r.body[:300]
        assert b"TOP-SECRET" not in r.body
