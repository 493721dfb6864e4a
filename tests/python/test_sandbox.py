"""SandboxWorkspace (the seed's Podman section; bubblewrap here).

The protocol suites run against its filesystem whether or not bubblewrap
works (the overlay is served by a HostFilesystem); exec() tests are skipped
with the reason when bubblewrap cannot create a sandbox on this machine.
"""

from __future__ import annotations

import os
import threading
import time

import pytest

import weft
from conftest import requires_bubblewrap
from protocol_suite import FilesystemProtocolTests
from snapshot_suite import SnapshotProtocolTests


def make_workspace(tmp_path, **kwargs):
    kwargs.setdefault("overlay_dir", str(tmp_path / "overlay"))
    kwargs.setdefault("git_dir", str(tmp_path / "snapshots.git"))
    return weft.SandboxWorkspace(**kwargs)


class TestSandboxProtocol(FilesystemProtocolTests):

    def make_filesystem(self, tmp_path):
        return make_workspace(tmp_path).filesystem


class TestSandboxSnapshots(SnapshotProtocolTests):
    restores_empty_directories = False  # git records no empty directories

    def make_filesystem(self, tmp_path):
        return make_workspace(tmp_path).filesystem


@pytest.fixture
def workspace(tmp_path):
    with make_workspace(tmp_path) as ws:
        yield ws


def test_workspace_section_protocol(workspace, tmp_path):
    assert isinstance(workspace, weft.WorkspaceSection)
    assert isinstance(workspace.filesystem, weft.SnapshotableFilesystem)
    assert workspace.filesystem is workspace
    assert workspace.overlay_dir == workspace.root == os.path.realpath(tmp_path / "overlay")


def test_hydrated_from_mounts(tmp_path):
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "main.py").write_text("print('hi')\n")
    (project / "src" / "notes.txt").write_text("n\n")
    with make_workspace(tmp_path, mounts=[weft.HostMount("src/", include_glob=("*.py",))],
                        allowed_host_roots=[str(project)]) as ws:
        assert ws.exists("src/main.py") and not ws.exists("src/notes.txt")
        assert (tmp_path / "overlay" / "src" / "main.py").exists()
    with pytest.raises(PermissionError):
        make_workspace(tmp_path, overlay_dir=str(tmp_path / "o2"),
                       mounts=[weft.HostMount(str(project))])


def test_close_removes_default_overlay_unless_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    ws = weft.SandboxWorkspace(git_dir=str(tmp_path / "g.git"))
    overlay = ws.overlay_dir
    assert overlay.startswith(str(tmp_path / "state"))
    ws.write("a.txt", "x")
    ws.close()
    assert not os.path.exists(overlay)
    with pytest.raises(RuntimeError, match="closed"):
        ws.read("a.txt")
    assert "closed" in repr(ws)
    kept = weft.SandboxWorkspace(keep_overlay=True, git_dir=str(tmp_path / "g2.git"))
    kept_overlay = kept.overlay_dir
    kept.write("a.txt", "x")
    kept.close()
    assert open(os.path.join(kept_overlay, "a.txt")).read() == "x"


def test_given_overlay_dir_is_never_deleted(tmp_path):
    with make_workspace(tmp_path) as ws:
        ws.write("a.txt", "x")
    assert (tmp_path / "overlay" / "a.txt").read_text() == "x"
    with make_workspace(tmp_path) as again:  # reopening an existing overlay keeps its files
        assert again.read("a.txt").content == "x"


def test_exec_argument_validation(workspace):
    with pytest.raises(TypeError):
        workspace.exec("ls -l")
    with pytest.raises(ValueError):
        workspace.exec(["true"], timeout=0)
    with pytest.raises(ValueError):
        workspace.exec([])
    with pytest.raises(ValueError, match="null byte"):
        workspace.exec(["echo", "a\0b"])
    with pytest.raises(ValueError, match="null byte"):
        workspace.exec(["true"], env={"A": "x\0y"})
    with pytest.raises(ValueError):
        workspace.exec(["true"], timeout=float("nan"))
    with pytest.raises(TypeError):
        workspace.exec(["true"], env={1: "x"})


@requires_bubblewrap
class TestExec:
    def test_runs_in_workspace_and_sees_files(self, workspace):
        workspace.write("hello.txt", "hi from weft\n")
        result = workspace.exec(["cat", "hello.txt"])
        assert isinstance(result, weft.ExecResult)
        assert result.ok and result.exit_code == 0
        assert result.stdout == "hi from weft\n" and result.stderr == ""
        assert workspace.exec(["pwd"]).stdout.strip() == "/workspace"

    def test_writes_from_inside_are_visible_and_snapshotted(self, workspace):
        snap = workspace.snapshot()
        result = workspace.exec(["sh", "-c", "mkdir -p out && printf 'made\\r\\n' > out/f.txt"])
        assert result.ok, result.stderr
        assert workspace.read("out/f.txt").content == "made\r\n"
        workspace.restore(snap)
        assert not workspace.exists("out")

    def test_exit_code_stderr_cwd_env(self, workspace):
        workspace.mkdir("sub")
        result = workspace.exec(["sh", "-c", "echo $GREETING; pwd; echo err >&2; exit 3"],
                                cwd="sub", env={"GREETING": "bonjour"})
        assert result.exit_code == 3 and not result.ok
        assert result.stdout.splitlines() == ["bonjour", "/workspace/sub"]
        assert result.stderr == "err\n"
        with pytest.raises(FileNotFoundError):
            workspace.exec(["true"], cwd="missing")

    def test_rest_of_system_is_read_only_and_no_network(self, workspace):
        result = workspace.exec(["sh", "-c", "touch /usr/weft-probe 2>&1; echo rc=$?"])
        assert "rc=0" not in result.stdout
        assert not os.path.exists("/usr/weft-probe")
        # /proc/net/dev lists the interfaces of the command's network namespace.
        net = workspace.exec(["sh", "-c", "tail -n +3 /proc/net/dev | cut -d: -f1"])
        assert net.ok, net.stderr
        assert [name.strip() for name in net.stdout.split()] in ([], ["lo"])

    def test_host_paths_outside_are_hidden_unless_listed(self, tmp_path):
        shared = tmp_path / "shared-data"
        shared.mkdir()
        (shared / "notes.txt").write_text("visible\n")
        with make_workspace(tmp_path / "a") as plain:
            hidden = plain.exec(["cat", str(shared / "notes.txt")])
            assert not hidden.ok
        with make_workspace(tmp_path / "b", extra_read_only_paths=[str(shared)]) as ws:
            seen = ws.exec(["cat", str(shared / "notes.txt")])
            assert seen.ok and seen.stdout == "visible\n"
            assert not ws.exec(["sh", "-c", f"echo x > {shared}/new.txt"]).ok
        assert not (shared / "new.txt").exists()
        with pytest.raises(ValueError):
            make_workspace(tmp_path / "c", extra_read_only_paths=["relative/path"])

    def test_timeout(self, workspace):
        started = time.monotonic()
        result = workspace.exec(["sleep", "30"], timeout=0.5)
        assert result.timed_out and not result.ok
        assert time.monotonic() - started < 10

    def test_output_is_bounded(self, workspace):
        result = workspace.exec(["sh", "-c", "head -c 100000 /dev/zero | tr '\\0' x"],
                                max_output_bytes=1000)
        assert result.truncated and len(result.stdout) <= 1000

    def test_exec_releases_the_gil(self, workspace):
        ticks = []
        stop = threading.Event()

        def ticker():
            while not stop.is_set():
                ticks.append(1)
                time.sleep(0.01)

        thread = threading.Thread(target=ticker)
        thread.start()
        try:
            workspace.exec(["sleep", "0.5"])
        finally:
            stop.set()
            thread.join()
        assert len(ticks) >= 10


def test_sandbox_available_matches_probe():
    from conftest import bubblewrap_problem
    assert weft.sandbox_available() is (bubblewrap_problem() is None)
    assert weft.sandbox_available("/nonexistent/bwrap") is False
