"""hydrate_from_host and HostMount (seed: VfsToolsSection mounts / allowed_host_roots)."""

from __future__ import annotations

import pytest

import weft


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "main.py").write_text("print('hi')\n")
    (root / "src" / "notes.txt").write_text("notes\n")
    (root / "src" / "pkg" / "mod.py").write_text("x = 1\n")
    (root / "docs").mkdir()
    (root / "docs" / "guide.md").write_text("# guide\n")
    (root / "docs" / "draft.md").write_text("# draft\n")
    (root / "bin.dat").write_bytes(bytes(range(256)))
    return root


def test_seed_example_relative_mounts(project):
    fs = weft.InMemoryFilesystem()
    fs.hydrate_from_host(weft.HostMount(host_path="src/", include_glob=("*.py",)),
                         allowed_roots=(str(project),))
    fs.hydrate_from_host(weft.HostMount(host_path="docs/", include_glob=("*.md",)),
                         allowed_roots=(str(project),))
    assert fs.exists("src/main.py")
    assert not fs.exists("src/notes.txt")
    assert fs.read("docs/guide.md").content == "# guide\n"
    fs.write("scratch/notes.txt", "Working notes...")
    assert fs.exists("scratch/notes.txt")


def test_absolute_mount_with_mount_path_and_excludes(project):
    fs = weft.InMemoryFilesystem()
    stats = fs.hydrate_from_host(
        weft.HostMount(host_path=project / "docs", mount_path="manual",
                       exclude_glob=("draft*",)),
        allowed_roots=[project])
    assert isinstance(stats, weft.HydrateStats)
    assert stats.files == 1 and stats.bytes == len("# guide\n")
    assert [e.name for e in fs.list("manual")] == ["guide.md"]


def test_absolute_mount_defaults_to_root_and_copies_bytes_exactly(project):
    fs = weft.InMemoryFilesystem()
    fs.hydrate_from_host(weft.HostMount(host_path=str(project)), allowed_roots=[str(project)])
    assert fs.read_bytes("bin.dat").content == bytes(range(256))
    assert fs.exists("src/pkg/mod.py") and fs.exists("docs/draft.md")


def test_mount_outside_allowed_roots_is_refused(project, tmp_path):
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "key.txt").write_text("secret")
    fs = weft.InMemoryFilesystem()
    with pytest.raises(PermissionError):
        fs.hydrate_from_host(weft.HostMount(host_path=str(outside)), allowed_roots=[str(project)])
    with pytest.raises(PermissionError):
        fs.hydrate_from_host(weft.HostMount(host_path=str(outside)))
    with pytest.raises(PermissionError):
        fs.hydrate_from_host(weft.HostMount(host_path="../secret"), allowed_roots=[str(project)])
    assert list(fs.list()) == []


def test_missing_host_path(project):
    fs = weft.InMemoryFilesystem()
    with pytest.raises(FileNotFoundError):
        fs.hydrate_from_host(weft.HostMount(host_path="nope"), allowed_roots=[str(project)])


def test_max_bytes(project):
    fs = weft.InMemoryFilesystem()
    with pytest.raises(ValueError):
        fs.hydrate_from_host(weft.HostMount(host_path=str(project), max_bytes=10),
                             allowed_roots=[str(project)])


def test_host_mount_is_a_frozen_dataclass():
    mount = weft.HostMount(host_path="src", include_glob="*.py")
    assert mount.include_glob == ("*.py",)
    with pytest.raises(AttributeError):
        mount.host_path = "other"
    with pytest.raises(TypeError):
        weft.InMemoryFilesystem().hydrate_from_host("src", allowed_roots=["/"])
    with pytest.raises(TypeError):
        weft.InMemoryFilesystem().hydrate_from_host(mount, allowed_roots="/")


def test_globs_match_the_path_relative_to_host_path(project):
    fs = weft.InMemoryFilesystem()
    fs.hydrate_from_host(weft.HostMount(host_path="src", include_glob=("**/*.py",)),
                         allowed_roots=[str(project)])
    assert [m.path for m in fs.glob("**/*.py")] == ["src/main.py", "src/pkg/mod.py"]
    top = weft.InMemoryFilesystem()
    top.hydrate_from_host(weft.HostMount(host_path="src", include_glob=("*.py",)),
                          allowed_roots=[str(project)])
    assert top.exists("src/main.py")
