"""FilesystemProtocolTests: the seed 004 protocol contract, written once.

Each backend's test module subclasses FilesystemProtocolTests and implements
the abstract factory `make_filesystem(tmp_path)`; every test here then runs
against that backend. The class name does not start with "Test", so pytest
collects only the concrete subclasses.

Snapshot/restore round trips live in snapshot_suite.py (same pattern).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import threading

import pytest

import weft
from protocol_paths import PathAndTreeTests

MAX_WRITE_CHARS = 48_000
DEFAULT_READ_LINES = 2_000
MAX_GREP_MATCHES = 1_000


class FilesystemProtocolTests(PathAndTreeTests):
    """The protocol contract every backend must pass (path and tree tests inherited)."""

    # --- metadata -------------------------------------------------------------

    def test_root_and_read_only(self, fs):
        assert isinstance(fs.root, str) and fs.root
        assert fs.read_only is False

    def test_new_filesystem_is_empty(self, fs):
        assert list(fs.list()) == []
        assert fs.exists(".")
        assert fs.stat(".").is_directory

    # --- write / read ---------------------------------------------------------

    def test_write_then_read_round_trip(self, fs):
        result = fs.write("hello.txt", "hello\nworld\n")
        assert result == weft.WriteResult(path="hello.txt", bytes_written=12, mode="overwrite")
        read = fs.read("hello.txt")
        assert isinstance(read, weft.ReadResult)
        assert read.content == "hello\nworld\n"
        assert read.path == "hello.txt"
        assert read.total_lines == 2
        assert read.offset == 0
        assert read.limit == DEFAULT_READ_LINES
        assert read.truncated is False

    def test_bytes_written_counts_utf8_bytes(self, fs):
        assert fs.write("u.txt", "été ✓").bytes_written == len("été ✓".encode())

    def test_write_default_mode_overwrites(self, fs):
        fs.write("a.txt", "first version, long")
        fs.write("a.txt", "second")
        assert fs.read("a.txt").content == "second"

    def test_write_create_mode_refuses_existing_file(self, fs):
        assert fs.write("a.txt", "one", mode="create").mode == "create"
        with pytest.raises(FileExistsError):
            fs.write("a.txt", "two", mode="create")
        assert fs.read("a.txt").content == "one"

    def test_write_append_mode(self, fs):
        fs.write("log.txt", "a\n", mode="append")  # append creates a missing file
        result = fs.write("log.txt", "b\n", mode="append")
        assert result.mode == "append" and result.bytes_written == 2
        assert fs.read("log.txt").content == "a\nb\n"

    def test_write_rejects_unknown_mode(self, fs):
        with pytest.raises(ValueError):
            fs.write("a.txt", "x", mode="truncate")
        assert not fs.exists("a.txt")

    def test_write_creates_parents_by_default(self, fs):
        fs.write("deep/er/file.txt", "x")
        assert fs.stat("deep/er").is_directory
        assert fs.read("deep/er/file.txt").content == "x"

    def test_write_without_create_parents_needs_parent(self, fs):
        with pytest.raises(FileNotFoundError):
            fs.write("missing/file.txt", "x", create_parents=False)
        assert not fs.exists("missing")
        fs.mkdir("present")
        fs.write("present/file.txt", "x", create_parents=False)
        assert fs.exists("present/file.txt")

    def test_write_to_directory_raises_is_a_directory(self, fs):
        fs.mkdir("dir")
        with pytest.raises(IsADirectoryError):
            fs.write("dir", "x")

    def test_write_below_a_file_raises_not_a_directory(self, fs):
        fs.write("file.txt", "x")
        with pytest.raises(NotADirectoryError):
            fs.write("file.txt/child.txt", "y")
        assert fs.read("file.txt").content == "x"

    def test_write_requires_str_and_write_bytes_requires_bytes(self, fs):
        with pytest.raises(TypeError):
            fs.write("a.txt", b"bytes")
        with pytest.raises(TypeError):
            fs.write_bytes("a.txt", "text")
        assert not fs.exists("a.txt")

    def test_write_unencodable_text_raises_value_error(self, fs):
        with pytest.raises(ValueError):
            fs.write("a.txt", "lone surrogate \udcff")
        assert not fs.exists("a.txt")

    def test_write_at_limit_succeeds_and_over_limit_keeps_old_content(self, fs):
        at_limit = "a" * MAX_WRITE_CHARS
        assert fs.write("big.txt", at_limit).bytes_written == MAX_WRITE_CHARS
        with pytest.raises(ValueError):
            fs.write("big.txt", "b" * (MAX_WRITE_CHARS + 1))
        assert fs.read("big.txt").content == at_limit
        with pytest.raises(ValueError):
            fs.write_bytes("big.bin", b"\0" * (MAX_WRITE_CHARS + 1))
        assert not fs.exists("big.bin")

    def test_limit_counts_characters_not_bytes(self, fs):
        text = "é" * MAX_WRITE_CHARS  # 96,000 UTF-8 bytes, 48,000 characters
        assert fs.write("e.txt", text).bytes_written == 2 * MAX_WRITE_CHARS
        assert fs.read("e.txt").content == text

    def test_file_larger_than_one_write_via_append(self, fs):
        chunk = "".join(f"line {i:05d}\n" for i in range(4_000))  # 44,000 chars
        for _ in range(3):
            fs.write("big.log", chunk, mode="append")
        assert fs.stat("big.log").size_bytes == 3 * len(chunk)
        first = fs.read("big.log")
        assert first.total_lines == 12_000
        assert first.truncated is True
        assert first.content == "".join(chunk.splitlines(keepends=True)[:DEFAULT_READ_LINES])
        last = fs.read("big.log", offset=11_999, limit=10)
        assert last.content == "line 03999\n" and last.truncated is False
        assert fs.read_bytes("big.log").content == (chunk * 3).encode()

    def test_empty_file(self, fs):
        assert fs.write("empty.txt", "").bytes_written == 0
        read = fs.read("empty.txt")
        assert (read.content, read.total_lines, read.truncated) == ("", 0, False)
        assert fs.read_bytes("empty.txt").content == b""
        assert fs.stat("empty.txt").size_bytes == 0
        assert fs.stat("empty.txt").is_file

    def test_crlf_and_mixed_line_endings_preserved(self, fs):
        text = "one\r\ntwo\r\nthree\nfour\r\n"
        fs.write("crlf.txt", text)
        assert fs.read_bytes("crlf.txt").content == text.encode()
        read = fs.read("crlf.txt")
        assert read.content == text and read.total_lines == 4
        assert fs.read("crlf.txt", offset=1, limit=2).content == "two\r\nthree\n"

    def test_final_line_without_newline_counts(self, fs):
        fs.write("a.txt", "a\nb")
        read = fs.read("a.txt")
        assert read.total_lines == 2 and read.content == "a\nb"
        assert fs.read("a.txt", offset=1).content == "b"

    # --- read pagination ------------------------------------------------------

    @pytest.fixture
    def ten_lines(self, fs):
        fs.write("ten.txt", "".join(f"line{i}\n" for i in range(10)))
        return fs

    def test_read_offset_and_limit(self, ten_lines):
        page = ten_lines.read("ten.txt", offset=2, limit=3)
        assert page.content == "line2\nline3\nline4\n"
        assert (page.offset, page.limit, page.total_lines, page.truncated) == (2, 3, 10, True)

    def test_read_last_page_is_not_truncated(self, ten_lines):
        page = ten_lines.read("ten.txt", offset=8, limit=5)
        assert page.content == "line8\nline9\n"
        assert page.truncated is False

    def test_read_exact_fit_is_not_truncated(self, ten_lines):
        page = ten_lines.read("ten.txt", offset=0, limit=10)
        assert page.truncated is False and page.content.count("\n") == 10

    def test_read_offset_past_end_is_empty(self, ten_lines):
        page = ten_lines.read("ten.txt", offset=50)
        assert page.content == "" and page.truncated is False and page.total_lines == 10

    def test_read_default_limit_truncates(self, fs):
        fs.write("many.txt", "x\n" * 2_500)
        page = fs.read("many.txt")
        assert page.limit == DEFAULT_READ_LINES and page.truncated is True
        assert page.content == "x\n" * DEFAULT_READ_LINES and page.total_lines == 2_500
        assert fs.read("many.txt", offset=DEFAULT_READ_LINES).content == "x\n" * 500

    @pytest.mark.parametrize("kwargs", [{"offset": -1}, {"limit": -1}, {"limit": 0}])
    def test_read_rejects_bad_pagination(self, ten_lines, kwargs):
        with pytest.raises(ValueError):
            ten_lines.read("ten.txt", **kwargs)

    def test_read_arguments_are_keyword_only(self, ten_lines):
        with pytest.raises(TypeError):
            ten_lines.read("ten.txt", 1, 2)

    def test_read_encoding(self, ten_lines):
        assert ten_lines.read("ten.txt", encoding="utf-8").total_lines == 10
        assert ten_lines.read("ten.txt", encoding="UTF8").total_lines == 10
        with pytest.raises(ValueError):
            ten_lines.read("ten.txt", encoding="latin-1-not-a-codec")

    def test_read_invalid_utf8_raises_value_error(self, fs):
        fs.write_bytes("bad.txt", b"ok\n\xff\xfe broken\n")
        with pytest.raises(ValueError):
            fs.read("bad.txt")
        assert fs.read_bytes("bad.txt").content == b"ok\n\xff\xfe broken\n"

    def test_read_errors(self, fs):
        with pytest.raises(FileNotFoundError):
            fs.read("nope.txt")
        fs.mkdir("dir")
        with pytest.raises(IsADirectoryError):
            fs.read("dir")
        with pytest.raises(IsADirectoryError):
            fs.read_bytes("dir")
        with pytest.raises(FileNotFoundError):
            fs.read_bytes("nope.bin")
        fs.write("f.txt", "x")
        with pytest.raises((NotADirectoryError, FileNotFoundError)):
            fs.read("f.txt/child")

    # --- bytes ----------------------------------------------------------------

    def test_binary_round_trip_all_byte_values(self, fs):
        blob = bytes(range(256)) * 4 + b"\r\n\0\r"
        result = fs.write_bytes("blob.bin", blob)
        assert result == weft.WriteResult(path="blob.bin", bytes_written=len(blob),
                                          mode="overwrite")
        read = fs.read_bytes("blob.bin")
        assert isinstance(read, weft.ReadBytesResult)
        assert read.content == blob and read.size_bytes == len(blob)
        assert (read.offset, read.truncated) == (0, False)
        assert fs.stat("blob.bin").size_bytes == len(blob)

    def test_write_bytes_accepts_bytearray_and_memoryview(self, fs):
        fs.write_bytes("a.bin", bytearray(b"\x01\x02"))
        fs.write_bytes("a.bin", memoryview(b"\x03"), mode="append")
        assert fs.read_bytes("a.bin").content == b"\x01\x02\x03"

    def test_read_bytes_pagination(self, fs):
        fs.write_bytes("d.bin", bytes(range(100)))
        page = fs.read_bytes("d.bin", offset=10, limit=5)
        assert page.content == bytes(range(10, 15))
        assert (page.offset, page.limit, page.size_bytes, page.truncated) == (10, 5, 100, True)
        tail = fs.read_bytes("d.bin", offset=95, limit=50)
        assert tail.content == bytes(range(95, 100)) and tail.truncated is False
        assert fs.read_bytes("d.bin", offset=500).content == b""
        with pytest.raises(ValueError):
            fs.read_bytes("d.bin", offset=-1)
        with pytest.raises(ValueError):
            fs.read_bytes("d.bin", limit=-3)

    def test_write_bytes_modes(self, fs):
        fs.write_bytes("m.bin", b"ab", mode="create")
        with pytest.raises(FileExistsError):
            fs.write_bytes("m.bin", b"zz", mode="create")
        fs.write_bytes("m.bin", b"cd", mode="append")
        assert fs.read_bytes("m.bin").content == b"abcd"
        with pytest.raises(FileNotFoundError):
            fs.write_bytes("no/parent.bin", b"x", create_parents=False)

    # --- exists / stat --------------------------------------------------------

    def test_exists(self, fs):
        assert not fs.exists("a.txt")
        fs.write("dir/a.txt", "x")
        assert fs.exists("a.txt") is False
        assert fs.exists("dir/a.txt") is True
        assert fs.exists("dir") is True
        assert fs.exists("dir/a.txt/below") is False

    def test_stat_file_and_directory(self, fs):
        fs.write("dir/a.txt", "12345")
        st = fs.stat("dir/a.txt")
        assert isinstance(st, weft.FileStat)
        assert (st.path, st.is_file, st.is_directory, st.size_bytes) == ("dir/a.txt", True,
                                                                           False, 5)
        for stamp in (st.created_at, st.modified_at):
            assert stamp is None or isinstance(stamp, dt.datetime)
        if st.modified_at is not None:
            assert st.modified_at.tzinfo is not None
            age = dt.datetime.now(dt.timezone.utc) - st.modified_at
            assert abs(age.total_seconds()) < 600
        d = fs.stat("dir")
        assert d.is_directory and not d.is_file and d.path == "dir"
        with pytest.raises(FileNotFoundError):
            fs.stat("nope")

    def test_paths_are_normalised(self, fs):
        fs.write("./dir//a.txt", "x")
        assert fs.exists("dir/a.txt")
        assert fs.stat("dir/./a.txt").path == "dir/a.txt"
        assert fs.read("./dir/a.txt").path == "dir/a.txt"

    # --- list -----------------------------------------------------------------

    def test_list_root_and_subdirectory(self, fs):
        fs.write("b.txt", "x")
        fs.write("a/inner.txt", "y")
        fs.write("c.txt", "z")
        entries = fs.list()
        assert all(isinstance(e, weft.FileEntry) for e in entries)
        assert [(e.name, e.path, e.is_file, e.is_directory) for e in entries] == [
            ("a", "a", False, True), ("b.txt", "b.txt", True, False),
            ("c.txt", "c.txt", True, False)]
        inner = fs.list("a")
        assert [(e.name, e.path) for e in inner] == [("inner.txt", "a/inner.txt")]
        assert [e.name for e in fs.list(".")] == ["a", "b.txt", "c.txt"]

    def test_list_errors(self, fs):
        with pytest.raises(FileNotFoundError):
            fs.list("nope")
        fs.write("f.txt", "x")
        with pytest.raises(NotADirectoryError):
            fs.list("f.txt")

    # --- glob -----------------------------------------------------------------

    @pytest.fixture
    def tree(self, fs):
        for path in ["a.py", "b.txt", "src/main.py", "src/util/helpers.py", "src/util/data.json",
                     "docs/readme.md", "docs/deep/x/y.py"]:
            fs.write(path, f"# {path}\nvalue = 1\n")
        return fs

    def test_glob_top_level(self, tree):
        matches = tree.glob("*.py")
        assert all(isinstance(m, weft.GlobMatch) for m in matches)
        assert [(m.path, m.is_file) for m in matches] == [("a.py", True)]

    def test_glob_recursive_sorted(self, tree):
        assert [m.path for m in tree.glob("**/*.py")] == [
            "a.py", "docs/deep/x/y.py", "src/main.py", "src/util/helpers.py"]

    def test_glob_relative_to_base_path(self, tree):
        assert [m.path for m in tree.glob("*.py", path="src")] == ["src/main.py"]
        assert [m.path for m in tree.glob("**/*.py", path="src")] == [
            "src/main.py", "src/util/helpers.py"]

    def test_glob_character_classes_and_no_match(self, tree):
        assert [m.path for m in tree.glob("src/util/*.[jp][sy]*")] == [
            "src/util/data.json", "src/util/helpers.py"]
        assert list(tree.glob("**/*.rs")) == []

    def test_glob_path_is_keyword_only(self, tree):
        with pytest.raises(TypeError):
            tree.glob("*.py", "src")

    # --- grep -----------------------------------------------------------------

    def test_grep_sorted_by_path_then_line(self, tree):
        tree.write("src/main.py", "import os\nvalue = 2\nprint(value)\n")
        matches = tree.grep(r"value")
        assert all(isinstance(m, weft.GrepMatch) for m in matches)
        keys = [(m.path, m.line_number) for m in matches]
        assert keys == sorted(keys)
        assert ("src/main.py", 2) in keys and ("src/main.py", 3) in keys
        hit = next(m for m in matches if m.path == "src/main.py" and m.line_number == 2)
        assert hit.line_content == "value = 2"
        assert (hit.match_start, hit.match_end) == (0, 5)

    def test_grep_match_offsets_are_python_string_indices(self, fs):
        fs.write("u.txt", "naïve café → needle here\n")
        [hit] = fs.grep("needle")
        assert hit.line_content[hit.match_start:hit.match_end] == "needle"
        assert hit.line_number == 1

    def test_grep_regex_path_and_glob_filters(self, tree):
        assert {m.path for m in tree.grep(r"^value = \d$", glob="*.py")} == {
            "a.py", "docs/deep/x/y.py", "src/main.py", "src/util/helpers.py"}
        assert {m.path for m in tree.grep("value", path="src", glob="*.json")} == {
            "src/util/data.json"}
        assert {m.path for m in tree.grep("value", path="docs")} == {
            "docs/readme.md", "docs/deep/x/y.py"}

    def test_grep_max_matches(self, fs):
        fs.write("many.txt", "hit\n" * 50)
        assert len(fs.grep("hit", max_matches=7)) == 7
        assert [m.line_number for m in fs.grep("hit", max_matches=3)] == [1, 2, 3]
        assert len(fs.grep("hit")) == 50

    def test_grep_default_cap(self, fs):
        fs.write("a.txt", "hit\n" * 800)
        fs.write("b.txt", "hit\n" * 800)
        assert len(fs.grep("hit")) == MAX_GREP_MATCHES

    def test_grep_invalid_pattern_raises_value_error(self, tree):
        with pytest.raises(ValueError):
            tree.grep("(unclosed")

    def test_grep_no_match_and_binary_files(self, tree):
        tree.write_bytes("blob.bin", b"\0\xffvalue\0")
        assert list(tree.grep("definitely-absent")) == []
        assert "a.py" in {m.path for m in tree.grep("value")}

    def test_grep_crlf_lines(self, fs):
        fs.write("w.txt", "alpha\r\nbeta\r\n")
        [hit] = fs.grep("beta")
        assert hit.line_number == 2 and hit.line_content.rstrip("\r") == "beta"

    # --- delete ---------------------------------------------------------------

    def test_delete_file(self, fs):
        fs.write("a.txt", "x")
        assert fs.delete("a.txt") is None
        assert not fs.exists("a.txt")
        with pytest.raises(FileNotFoundError):
            fs.delete("a.txt")

    def test_delete_directory_needs_recursive(self, fs):
        fs.write("d/e/f.txt", "x")
        with pytest.raises(IsADirectoryError):
            fs.delete("d")
        assert fs.exists("d/e/f.txt")
        fs.delete("d", recursive=True)
        assert not fs.exists("d")
        fs.mkdir("empty")
        with pytest.raises(IsADirectoryError):
            fs.delete("empty")

    def test_delete_root_is_refused(self, fs):
        fs.write("keep.txt", "x")
        with pytest.raises((PermissionError, ValueError)):
            fs.delete(".", recursive=True)
        assert fs.exists("keep.txt")

    # --- mkdir ----------------------------------------------------------------

    def test_mkdir_defaults(self, fs):
        assert fs.mkdir("a/b/c") is None
        assert fs.stat("a/b/c").is_directory
        fs.mkdir("a/b/c")  # exist_ok defaults to True

    def test_mkdir_exist_ok_false(self, fs):
        fs.mkdir("a")
        with pytest.raises(FileExistsError):
            fs.mkdir("a", exist_ok=False)

    def test_mkdir_without_parents(self, fs):
        with pytest.raises(FileNotFoundError):
            fs.mkdir("x/y", parents=False)
        fs.mkdir("x", parents=False)
        fs.mkdir("x/y", parents=False)
        assert fs.stat("x/y").is_directory

    def test_mkdir_over_a_file(self, fs):
        fs.write("f", "x")
        with pytest.raises(FileExistsError):
            fs.mkdir("f")
        with pytest.raises(NotADirectoryError):
            fs.mkdir("f/sub")

    # --- result types ---------------------------------------------------------

    def test_results_are_frozen(self, fs):
        fs.write("a.txt", "x")
        for value in (fs.read("a.txt"), fs.read_bytes("a.txt"), fs.stat("a.txt"),
                      fs.list()[0], fs.glob("*")[0], fs.write("b.txt", "x")):
            assert dataclasses.is_dataclass(value)
            field = dataclasses.fields(value)[0].name
            with pytest.raises(dataclasses.FrozenInstanceError):
                setattr(value, field, None)

    def test_sequences_are_independent_copies(self, fs):
        fs.write("a.txt", "x")
        listing = fs.list()
        fs.write("b.txt", "y")
        assert [e.name for e in listing] == ["a.txt"]

    # --- concurrency (the binding releases the GIL; calls must still be safe) -

    def test_threads_sharing_one_filesystem(self, fs):
        errors = []

        def worker(n):
            try:
                for i in range(40):
                    fs.write(f"t{n}/f{i}.txt", f"{n}:{i}\n")
                    assert fs.read(f"t{n}/f{i}.txt").content == f"{n}:{i}\n"
                    fs.list(f"t{n}")
            except Exception as error:  # noqa: BLE001 - collected for the assert
                errors.append(error)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert len(fs.glob("**/*.txt")) == 160
