"""weft.Doc: the CRDT document, its container handles, versions, sync and events."""

from __future__ import annotations

import ast
import json
import pathlib
import sys
import threading
import time

import pytest

import weft

STUB = pathlib.Path(__file__).resolve().parents[2] / "src" / "python" / "weft" / "_weft.pyi"


def committed(peer: int = 1) -> weft.Doc:
    """A doc with one text, map, list and counter, committed."""
    doc = weft.Doc(peer)
    doc.get_text("text").insert(0, "hello")
    doc.get_map("map")["k"] = "v"
    doc.get_list("list").push(1)
    doc.get_counter("count").increment(2)
    doc.commit("seed")
    return doc


# ---- text


def test_text_edits():
    doc = weft.Doc(1)
    t = doc.get_text("t")
    assert isinstance(t, weft.Text) and isinstance(t, weft.Container)
    t.insert(0, "hello")
    t.insert(5, " world")
    assert str(t) == t.to_string() == "hello world" and len(t) == 11
    t.delete(0, 6)
    assert str(t) == "world"
    t.splice(0, 1, "W")
    assert str(t) == "World"
    t.splice(5, 0, "!")
    t.splice(0, 1)
    assert str(t) == "orld!"
    t.update("the world!")
    assert str(t) == "the world!"
    assert t.to_python() == "the world!"
    assert doc.to_python() == {"t": "the world!"}


def test_text_units():
    doc = weft.Doc(1)
    t = doc.get_text("t")
    t.insert(0, "a😀b")
    assert len(t) == 3 and t.length() == 3
    assert t.length("utf16") == 4 and t.length("bytes") == 6
    assert t.convert_pos(2, "unicode", "utf16") == 3
    assert t.convert_pos(5, "bytes", "unicode") == 2
    t.insert(3, "c", unit="utf16")
    assert str(t) == "a😀cb"
    t.delete(1, 4, unit="bytes")
    assert str(t) == "acb"
    u = doc.get_text("u")
    u.insert(0, "😀")
    with pytest.raises(ValueError):
        u.insert(1, "x", unit="utf16")  # between the halves of a surrogate pair
    with pytest.raises(ValueError, match="unit"):
        u.length("chars")


def test_text_marks_are_exported():
    doc = weft.Doc(1)
    t = doc.get_text("t")
    t.insert(0, "hello world")
    t.mark(0, 5, "bold")
    t.mark(6, 11, "link", "https://example.org", expand="none")
    t.unmark(0, 2, "bold")
    doc.commit()
    ops = json.loads(doc.export_json_updates())["changes"][0]["ops"]
    marks = [op["content"] for op in ops if op["content"]["type"] == "mark"]
    assert {m["style_key"] for m in marks} == {"bold", "link"}
    other = weft.Doc(2)
    other.import_(doc.export_updates())
    assert str(other.get_text("t")) == "hello world"
    with pytest.raises(ValueError):
        t.mark(3, 3, "bold")
    with pytest.raises(ValueError, match="expand"):
        t.mark(0, 1, "bold", expand="sideways")


def test_text_errors():
    t = weft.Doc(1).get_text("t")
    t.insert(0, "abc")
    with pytest.raises(IndexError, match="past the end"):
        t.insert(4, "x")
    with pytest.raises(IndexError, match=">= 0"):
        t.insert(-1, "x")
    with pytest.raises(IndexError):
        t.delete(2, 5)
    with pytest.raises(IndexError, match="length"):
        t.delete(0, -1)
    with pytest.raises(TypeError, match="str"):
        t.insert(0, b"bytes")
    with pytest.raises(UnicodeEncodeError):
        t.insert(0, "\udc80")
    assert str(t) == "abc"


# ---- map


def test_map_values_and_protocol():
    doc = weft.Doc(1)
    m = doc.get_map("m")
    values = {"none": None, "bool": True, "int": -(2**63), "float": 1.5, "str": "ü",
              "bytes": b"\x00\xff", "list": [1, [2, {"x": None}]], "dict": {"a": {"b": [True]}}}
    for key, value in values.items():
        m[key] = value
    m.set("tuple", (1, 2))
    m.set("bytearray", bytearray(b"ab"))
    expected = dict(values, tuple=[1, 2], bytearray=b"ab")
    assert m.to_python() == expected
    assert len(m) == len(expected)
    assert sorted(m) == sorted(expected) == m.keys()
    assert dict(m.items()) == expected and m.values() == [expected[k] for k in m.keys()]
    assert m["int"] == -(2**63) and m.get("missing") is None and m.get("missing", 7) == 7
    assert "str" in m and "missing" not in m and 3 not in m
    with pytest.raises(KeyError):
        m["missing"]
    del m["str"]
    with pytest.raises(KeyError):
        del m["str"]
    m.delete("str")  # no-op when absent
    assert "str" not in m
    assert doc.to_python()["m"] == m.to_python()


def test_map_rejects_bad_values():
    m = weft.Doc(1).get_map("m")
    with pytest.raises(ValueError, match="64 bits"):
        m["big"] = 2**63
    with pytest.raises(TypeError, match="keys must be str"):
        m["d"] = {1: "x"}
    with pytest.raises(TypeError, match="cannot store"):
        m["s"] = {1, 2}
    with pytest.raises(TypeError, match="set_container"):
        m["h"] = m
    cyclic: list = []
    cyclic.append(cyclic)
    with pytest.raises(ValueError, match="deeper"):
        m["c"] = cyclic
    deep: list = []
    for _ in range(300):
        deep = [deep]
    with pytest.raises(ValueError):
        m["deep"] = deep
    assert len(m) == 0


def test_nested_containers():
    doc = weft.Doc(1)
    root = doc.get_map("root")
    text = root.set_container("title", weft.Text)
    text.insert(0, "Title")
    items = root.set_container("items", "List")
    inner = items.push_container("Map")
    inner["done"] = False
    counter = items.insert_container(0, weft.Counter)
    counter.increment(3)
    assert isinstance(root["title"], weft.Text) and root["title"] == text
    assert hash(root["title"]) == hash(text)
    assert items[0] == counter and items[1] == inner
    assert text.id.startswith("cid:") and not text.id.startswith("cid:root")
    assert text.container_type == "Text" and items.container_type == "List"
    assert text.is_attached and text.doc.to_python() == doc.to_python()
    assert doc.to_python() == {"root": {"title": "Title",
                                        "items": [3.0, {"done": False}]}}
    assert doc.container(text.id) == text
    assert doc.container("cid:root-root:Map") == root
    root["title"] = "plain"  # overwrites the child
    assert not text.is_attached
    assert doc.to_python()["root"]["title"] == "plain"
    with pytest.raises(ValueError):
        root.set_container("x", "Tree")
    with pytest.raises(TypeError):
        root.set_container("x", int)


# ---- list


def test_list_operations():
    doc = weft.Doc(1)
    lst = doc.get_list("l")
    lst.push("a")
    lst.append("b")
    lst.insert(0, 0)
    lst.insert(3, {"k": [1]})
    assert len(lst) == 4 and list(lst) == lst.values() == [0, "a", "b", {"k": [1]}]
    assert lst.get(1) == lst[1] == lst[-3] == "a"
    assert lst[1:3] == ["a", "b"] and lst[::-1][0] == {"k": [1]}
    lst.delete(1, 2)
    assert lst.to_python() == [0, {"k": [1]}]
    del lst[-1]
    assert lst.to_python() == [0]
    for bad in (lambda: lst.get(1), lambda: lst[1], lambda: lst[-2], lambda: lst.insert(2, 1),
                lambda: lst.delete(0, 2), lambda: lst.get(-1), lambda: lst.insert(-1, 1)):
        with pytest.raises(IndexError):
            bad()
    with pytest.raises(IndexError):
        del lst[5]
    assert lst.to_python() == [0]


# ---- counter


def test_counter():
    doc = weft.Doc(1)
    c = doc.get_counter("c")
    c.increment()
    c.increment(2.5)
    c.decrement(0.5)
    c.decrement()
    assert c.value == float(c) == 2.0 and c.to_python() == 2.0
    with pytest.raises(ValueError):
        c.increment(float("nan"))
    with pytest.raises(ValueError):
        c.increment(float("inf"))
    other = weft.Doc(2)
    other.get_counter("c").increment(10)
    other.commit()
    doc.commit()
    doc.import_(other.export_updates())
    assert c.value == 12.0


# ---- doc


def test_peer_id():
    assert weft.Doc(42).peer_id == 42
    assert 0 <= weft.Doc().peer_id < 2**64 - 1
    doc = weft.Doc(2**64 - 2)
    assert doc.peer_id == 2**64 - 2
    doc.peer_id = 7
    assert doc.peer_id == 7
    for bad in (2**64 - 1, 2**64, -1):
        with pytest.raises(ValueError):
            weft.Doc(bad)
        with pytest.raises(ValueError):
            doc.peer_id = bad
    with pytest.raises(TypeError):
        weft.Doc("1")
    with pytest.raises(TypeError):
        doc.peer_id = True


def test_root_names_and_container_ids():
    doc = weft.Doc(1)
    for bad in ("", "a/b", "a\0b", "🤝:x"):
        with pytest.raises(ValueError):
            doc.get_text(bad)
    with pytest.raises(ValueError):
        doc.container("not a cid")
    with pytest.raises(LookupError):
        doc.container("cid:5@9:Text")
    with pytest.raises(TypeError, match="MovableList"):
        doc.container("cid:root-x:MovableList")
    assert repr(doc.get_text("t")) == "Text('cid:root-t:Text')"
    assert repr(doc).startswith("Doc(peer_id=1,")


def test_commit_message_origin_timestamp_and_changes():
    doc = weft.Doc(1)
    doc.get_text("t").insert(0, "ab")
    doc.commit("first", origin="test", timestamp=1_700_000_000)
    doc.commit()  # nothing pending: a no-op
    assert doc.op_count() == 2
    changes = doc.changes()
    assert doc.change_count() == len(changes) == 1
    meta = changes[0]
    assert isinstance(meta, weft.ChangeMeta)
    assert meta.id == weft.ID(1, 0) and meta.length == 2 and meta.lamport == 0
    assert meta.message == "first" and meta.timestamp == 1_700_000_000
    assert meta.deps == weft.Frontiers()
    doc.set_change_merge_interval(0)
    doc.set_record_timestamp(True)
    doc.get_text("t").insert(0, "x")
    doc.commit("second", timestamp=1_800_000_000)
    assert [c.message for c in doc.changes()] == ["first", "second"]
    with pytest.raises(ValueError):
        doc.set_change_merge_interval(-1)


def test_auto_commit():
    doc = weft.Doc(1)
    events = []
    doc.subscribe(events.append)
    doc.set_auto_commit(True)
    doc.get_text("t").insert(0, "a")
    doc.get_text("t").insert(1, "b")
    assert len(events) == 2 and doc.oplog_version() == {1: 2}


def test_versions_and_frontiers():
    doc = committed(1)
    vv = doc.version()
    assert isinstance(vv, weft.VersionVector)
    assert vv == doc.oplog_version() == {1: 8} and vv.total() == doc.op_count() == 8
    f = doc.frontiers()
    assert f == doc.oplog_frontiers() == weft.Frontiers([weft.ID(1, 7)])
    assert doc.frontiers_to_vv(f) == vv and doc.vv_to_frontiers(vv) == f
    assert doc.frontiers_to_vv([(1, 3)]) == {1: 4}
    assert doc.vv_to_frontiers({1: 4}) == weft.Frontiers(["3@1"])
    assert doc.compare([(1, 3)], f) == "less" and doc.compare(f, f) == "equal"
    assert doc.compare(f, weft.Frontiers()) == "greater"
    with pytest.raises(LookupError):
        doc.frontiers_to_vv([(9, 0)])
    with pytest.raises(LookupError):
        doc.compare([(1, 99)], f)
    with pytest.raises(ValueError, match="history"):
        doc.vv_to_frontiers({1: 99})
    with pytest.raises(TypeError):
        doc.checkout("3@1")
    with pytest.raises(ValueError):
        doc.checkout([(1, -1)])


def test_version_values():
    a = weft.VersionVector({1: 3, 2: 0})
    b = weft.VersionVector([(1, 3), (2, 1)])
    c = weft.VersionVector({3: 1})
    assert len(a) == 1 and 2 not in a and a.end(2) == 0 and a[1] == 3
    assert a < b and a <= b and b > a and not (a > b) and a != b
    assert a.compare(c) == "concurrent" and not (a <= c) and not (a >= c)
    assert a.merge(c) == {1: 3, 3: 1} and b.intersect(a) == a
    assert a.includes(weft.ID(1, 2)) and not a.includes(weft.ID(1, 3)) and b.includes(a)
    assert {a: "x"}[weft.VersionVector({1: 3})] == "x"
    assert weft.VersionVector.from_json(b.to_json()) == b and b.to_json() == '{"1":3,"2":1}'
    with pytest.raises(AttributeError):
        a._entries = {}
    with pytest.raises(ValueError):
        weft.VersionVector({1: -1})
    with pytest.raises(TypeError):
        weft.VersionVector({"1": 1})
    f = weft.Frontiers([(2, 1), "0@1", weft.ID(2, 1)])
    assert list(f) == [weft.ID(1, 0), weft.ID(2, 1)] and len(f) == 2 and weft.ID(1, 0) in f
    assert hash(f) == hash(weft.Frontiers(["1@2", "0@1"])) and {f}
    assert weft.Frontiers.from_json(f.to_json()) == f
    assert str(weft.ID(5, 3)) == "3@5" and weft.ID.parse("3@5") == weft.ID(5, 3)
    with pytest.raises(ValueError):
        weft.ID.parse("3-5")
    with pytest.raises(TypeError):
        weft.Frontiers("0@1")
    with pytest.raises(ValueError):
        weft.Frontiers([(2**64, 0)])


# ---- sync


def test_sync_binary_updates_both_ways():
    a, b = weft.Doc(1), weft.Doc(2)
    a.get_text("t").insert(0, "hello")
    a.commit()
    status = b.import_(a.export_updates())
    assert isinstance(status, weft.ImportStatus)
    assert status.success == (weft.IdSpan(1, 0, 5),) and status.pending == ()
    a.get_text("t").insert(5, "!")
    b.get_text("t").insert(0, ">")
    a.commit()
    b.commit()
    since_a = a.version()
    b.import_(a.export_updates(b.version()))
    a.import_(b.export_updates(from_=since_a))
    assert str(a.get_text("t")) == str(b.get_text("t")) == ">hello!"
    assert a.version() == b.version() and a.frontiers() == b.frontiers()
    assert a.to_json() == b.to_json()


def test_sync_loro_json_updates():
    a, b = committed(1), weft.Doc(2)
    text = a.export_json_updates()
    data = json.loads(text)
    assert data["schema_version"] == 1 and data["peers"] == ["1"]
    b.import_(text)
    assert b.to_python() == a.to_python()
    b.get_map("map")["k2"] = [1, 2]
    b.commit()
    delta = b.export_json_updates(a.version(), peer_compression=False)
    assert json.loads(delta)["peers"] is None
    a.import_(delta.encode())  # UTF-8 bytes of JSON work too
    assert a.to_python() == b.to_python()
    assert json.loads(a.export_json_updates(a.version()))["changes"] == []


def test_doc_loro_json_export_imports_into_another_doc():
    doc = weft.Doc(7)
    root = doc.get_map("root")
    root["n"] = 1
    root.set_container("body", weft.Text).insert(0, "x😀y")
    lst = doc.get_list("list")
    lst.push({"deep": [1, 2.5, None, True]})
    lst.push_container(weft.Counter).increment(-4)
    doc.get_text("t").insert(0, "hi")
    doc.get_text("t").mark(0, 2, "bold")
    doc.commit("m1")
    doc.get_text("t").delete(0, 1)
    del root["n"]
    doc.commit("m2")
    copy = weft.Doc(8)
    copy.import_(doc.export_json_updates())
    assert copy.to_python() == doc.to_python()
    assert copy.oplog_version() == doc.oplog_version()
    assert [c.message for c in copy.changes()] == [c.message for c in doc.changes()]
    # and back again through JSON, from the copy
    again = weft.Doc(9)
    again.import_(copy.export_json_updates())
    assert again.to_json() == doc.to_json()


def test_snapshot_and_pending_imports():
    doc = committed(1)
    for fast in (False, True):
        other = weft.Doc(3)
        other.import_(doc.export_snapshot(fast=fast))
        assert other.to_python() == doc.to_python()
        assert other.changes() == doc.changes()
    doc.get_text("text").insert(0, ">")
    doc.commit()
    mid = doc.version()
    doc.get_text("text").insert(0, ">")
    doc.commit()
    late = weft.Doc(4)
    assert late.import_(doc.export_updates(doc.version())).success == ()  # nothing new
    status = late.import_(doc.export_updates(mid))
    assert status.success == () and status.pending == (weft.IdSpan(1, 9, 10),)
    late.import_(doc.export_updates())
    assert late.to_python() == doc.to_python()


def test_import_errors_leave_the_doc_unchanged():
    doc = committed(1)
    before = (doc.to_json(), doc.oplog_version())
    updates = doc.export_updates()
    for bad in (b"", b"\x00garbage", updates[:-3], "{not json", '{"schema_version": 2}',
                bytearray(b"\xff" * 10)):
        with pytest.raises(ValueError):
            weft.Doc(2).import_(bad)
        with pytest.raises(ValueError):
            doc.import_(bad)
    with pytest.raises(TypeError, match="json.dumps"):
        doc.import_({"schema_version": 1})
    with pytest.raises(TypeError):
        doc.import_(None)
    assert (doc.to_json(), doc.oplog_version()) == before


def test_import_memoryview_and_origin():
    doc = committed(1)
    other = weft.Doc(2)
    events = []
    other.subscribe(events.append)
    other.import_(memoryview(doc.export_updates()), origin="server")
    assert other.to_python() == doc.to_python()
    assert events[0].by == "import" and events[0].origin == "server"


# ---- time travel


def test_checkout_attach_detach():
    doc = weft.Doc(1)
    t = doc.get_text("t")
    t.insert(0, "one")
    doc.commit()
    v1 = doc.frontiers()
    t.insert(3, " two")
    doc.commit()
    v2 = doc.frontiers()
    doc.checkout(v1)
    assert doc.is_detached and str(t) == "one" and doc.frontiers() == v1
    assert doc.oplog_frontiers() == v2
    with pytest.raises(RuntimeError, match="detached"):
        t.insert(0, "x")
    other = weft.Doc(2)
    other.import_(doc.export_updates())
    other.get_text("t").insert(0, ">")
    other.commit()
    doc.import_(other.export_updates())  # history grows, state stays
    assert str(t) == "one"
    doc.attach()
    assert not doc.is_detached and str(t) == ">one two"
    doc.checkout(v1)
    doc.checkout_to_latest()
    assert str(t) == ">one two"
    doc.detach()
    other.get_text("t").insert(0, "!")
    other.commit()
    doc.import_(other.export_updates())
    assert doc.is_detached and str(t) == ">one two"
    doc.attach()
    assert str(t) == "!>one two"
    with pytest.raises(LookupError):
        doc.checkout([(1, 100)])


def test_fork_diff_revert():
    doc = committed(1)
    v1 = doc.frontiers()
    fork = doc.fork()
    assert fork.peer_id != doc.peer_id and fork.to_python() == doc.to_python()
    fork.get_text("text").insert(0, "fork:")
    fork.commit()
    assert str(doc.get_text("text")) == "hello"
    doc.get_text("text").insert(5, " world")
    doc.get_map("map").delete("k")
    doc.commit()
    early = doc.fork_at([(1, 0)])
    assert early.to_python() == {"text": "h"} or early.to_python()["text"] == "h"
    diffs = doc.diff(v1, doc.frontiers())
    by_target = {d.target: d for d in diffs}
    assert by_target["cid:root-text:Text"].kind == "text"
    assert by_target["cid:root-text:Text"].delta == [{"retain": 5}, {"insert": " world"}]
    assert by_target["cid:root-map:Map"].delta == {"k": None}
    doc.revert_to(v1)
    doc.commit()
    assert doc.to_python() == committed(1).to_python()
    assert doc.op_count() > 8  # history kept
    with pytest.raises(LookupError):
        doc.fork_at([(5, 5)])
    with pytest.raises(LookupError):
        doc.diff([(5, 5)], v1)


def test_undo_manager():
    doc = weft.Doc(1)
    undo = weft.UndoManager(doc)
    t = doc.get_text("t")
    t.insert(0, "a")
    doc.commit()
    t.insert(1, "b")
    doc.commit()
    assert undo.can_undo and undo.undo_count == 2
    assert undo.undo() and str(t) == "a"
    assert undo.can_redo and undo.redo() and str(t) == "ab"
    undo.add_exclude_origin_prefix("sys")
    t.insert(0, "x")
    doc.commit(origin="sys:auto")
    assert undo.undo_count == 2
    undo.group_start()
    with pytest.raises(RuntimeError):
        undo.group_start()
    t.insert(0, "1")
    doc.commit()
    t.insert(0, "2")
    doc.commit()
    undo.group_end()
    assert undo.undo() and str(t) == "xab"
    undo.clear()
    assert not undo.undo() and not undo.can_undo
    undo.set_merge_interval(1000)
    undo.set_max_undo_steps(5)
    undo.add_include_origin_prefix("user")
    with pytest.raises(ValueError):
        undo.set_merge_interval(-1)
    with pytest.raises(IndexError):
        undo.set_max_undo_steps(-1)
    del undo  # the manager unsubscribes under the doc's lock
    t.insert(0, "z")
    doc.commit()


# ---- events


def test_subscribe_doc_events():
    doc = weft.Doc(1)
    events = []
    sub = doc.subscribe(events.append)
    assert isinstance(sub, weft.Subscription) and sub.active
    doc.get_text("t").insert(0, "hi")
    doc.get_map("m")["k"] = 1
    doc.get_list("l").push("x")
    doc.get_counter("c").increment(2)
    assert events == []  # nothing until the commit
    doc.commit("msg", origin="me")
    (event,) = events
    assert isinstance(event, weft.DocEvent)
    assert event.by == "local" and event.origin == "me" and event.message == "msg"
    assert event.from_frontiers == weft.Frontiers() and event.to_frontiers == doc.frontiers()
    deltas = {d.target: (d.kind, d.delta) for d in event.diffs}
    assert deltas == {
        "cid:root-t:Text": ("text", [{"insert": "hi"}]),
        "cid:root-m:Map": ("map", {"k": 1}),
        "cid:root-l:List": ("list", [{"insert": ["x"]}]),
        "cid:root-c:Counter": ("counter", 2.0),
    }
    sub.unsubscribe()
    sub.unsubscribe()  # idempotent
    assert not sub.active
    doc.get_text("t").insert(0, "x")
    doc.commit()
    assert len(events) == 1


def test_subscribe_container_import_and_checkout_events():
    doc = committed(1)
    text_events, all_events = [], []
    with doc.get_text("text").subscribe(text_events.append):
        doc.subscribe(all_events.append)
        doc.get_map("map")["z"] = 0
        doc.commit()
        assert text_events == [] and len(all_events) == 1
        other = weft.Doc(2)
        other.import_(doc.export_updates())
        other.get_text("text").delete(0, 1)
        other.commit()
        doc.import_(other.export_updates(), origin="peer")
        assert text_events[-1].by == "import" and text_events[-1].origin == "peer"
        assert text_events[-1].diffs[0].delta == [{"delete": 1}]
        doc.checkout([(1, 0)])
        assert all_events[-1].by == "checkout"
        doc.attach()
    count = len(text_events)
    doc.get_text("text").insert(0, "x")
    doc.commit()
    assert len(text_events) == count  # the with block unsubscribed


def test_child_container_values_in_events_are_handles():
    doc = weft.Doc(1)
    events = []
    doc.subscribe(events.append)
    child = doc.get_list("l").push_container("Text")
    doc.commit()
    inserted = next(d for d in events[0].diffs if d.kind == "list").delta[0]["insert"]
    assert inserted == [child]


def test_local_update_subscription_syncs_a_peer():
    a, b = weft.Doc(1), weft.Doc(2)
    sent = []
    sub = a.subscribe_local_update(sent.append)
    a.get_text("t").insert(0, "x")
    a.commit()
    a.get_text("t").insert(1, "y")
    a.commit()
    assert sent and all(isinstance(s, bytes) for s in sent)
    for update in sent:
        b.import_(update)
    assert b.to_python() == a.to_python() == {"t": "xy"}
    sub.unsubscribe()


def test_callback_exceptions_are_reported_not_raised(monkeypatch):
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)
    doc = weft.Doc(1)
    seen = []

    def broken(event):
        raise RuntimeError("callback failed")

    doc.subscribe(broken)
    doc.subscribe(seen.append)
    doc.get_text("t").insert(0, "x")
    doc.commit()  # does not raise
    assert len(seen) == 1  # later callbacks still run
    assert len(reported) == 1 and isinstance(reported[0].exc_value, RuntimeError)
    assert str(doc.get_text("t")) == "x"


def test_callbacks_may_read_and_edit_the_doc():
    doc = weft.Doc(1)
    seen = []

    def mirror(event):
        seen.append(doc.to_python()["t"])
        if event.origin != "mirror":
            doc.get_counter("events").increment()
            doc.commit(origin="mirror")

    sub = doc.subscribe(mirror)
    doc.get_text("t").insert(0, "a")
    doc.commit()
    assert seen == ["a", "a"] and doc.get_counter("events").value == 1.0
    sub.unsubscribe()
    with pytest.raises(TypeError, match="callable"):
        doc.subscribe(42)


def test_unsubscribe_inside_callback_and_after_doc_is_gone():
    doc = weft.Doc(1)
    calls = []

    def once(event):
        calls.append(event)
        sub.unsubscribe()

    sub = doc.subscribe(once)
    for i in range(3):
        doc.get_text("t").insert(0, str(i))
        doc.commit()
    assert len(calls) == 1
    other = weft.Doc(2).subscribe(print)
    assert not other.active  # its doc is gone
    other.unsubscribe()


# ---- threads


def test_threads_share_one_doc():
    doc = weft.Doc(1)
    events = []
    doc.subscribe(events.append)
    text = doc.get_text("t")
    counter = doc.get_counter("c")
    errors = []

    def writer(n):
        try:
            for i in range(200):
                text.insert(0, "x")
                counter.increment()
                if i % 10 == 0:
                    doc.commit(origin=f"w{n}")
                    doc.export_updates()
                    doc.to_python()
        except Exception as error:  # pragma: no cover - reported by the assert below
            errors.append(error)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    doc.commit()
    assert errors == []
    assert len(text) == 800 and counter.value == 800.0
    copy = weft.Doc(2)
    copy.import_(doc.export_snapshot())
    assert copy.to_python() == doc.to_python()
    assert sum(len(e.diffs) > 0 for e in events) == len(events) >= 4


def test_threads_sync_separate_docs():
    docs = [weft.Doc(i + 1) for i in range(4)]
    big = weft.Doc(99)
    big.get_text("big").insert(0, "x" * 200_000)
    big.commit()
    payload = big.export_updates()

    def work(doc):
        doc.import_(payload)
        for i in range(50):
            doc.get_list("l").push(i)
            doc.commit()
        return doc

    threads = [threading.Thread(target=work, args=(d,)) for d in docs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    merged = weft.Doc(100)
    for doc in docs:
        merged.import_(doc.export_updates())
    assert len(merged.get_list("l")) == 200 and len(merged.get_text("big")) == 200_000


def test_heavy_calls_release_the_gil():
    big = weft.Doc(2)
    text = big.get_text("t")
    for i in range(2000):
        text.insert(0, f"line {i} of the text\n")
        big.commit()
    ready = threading.Event()
    marks = []

    def mark_soon():
        ready.set()
        time.sleep(0.001)
        marks.append(time.perf_counter())  # needs the GIL

    for call in (big.export_snapshot, lambda: weft.Doc(3).import_(big.export_json_updates())):
        marks.clear()
        ready.clear()
        thread = threading.Thread(target=mark_soon)
        thread.start()
        ready.wait()
        start = time.perf_counter()
        call()
        end = time.perf_counter()
        thread.join()
        if end - start < 0.02:
            continue  # too fast to tell on this machine
        # Holding the GIL, the other thread would run only as the call returns.
        assert marks[0] - start < (end - start) / 2, "the GIL was held during the call"


# ---- stubs


def test_stub_covers_the_extension_module():
    tree = ast.parse(STUB.read_text())
    stubbed = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            stubbed[node.name] = {n.name for n in node.body
                                  if isinstance(n, (ast.FunctionDef, ast.AnnAssign))
                                  and not isinstance(n, ast.AnnAssign)} | {
                n.target.id for n in node.body
                if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
        elif isinstance(node, ast.FunctionDef):
            stubbed[node.name] = set()
    runtime = {name: obj for name, obj in vars(weft._weft).items() if not name.startswith("_")}
    assert set(runtime) <= set(stubbed), set(runtime) - set(stubbed)
    for name, obj in runtime.items():
        if not isinstance(obj, type):
            continue
        own = {attr for attr in vars(obj) if not attr.startswith("_")}
        assert own <= stubbed[name], (name, own - stubbed[name])
    assert (STUB.parent / "py.typed").exists()


def test_package_type_checks_with_mypy(tmp_path, monkeypatch):
    api = pytest.importorskip("mypy.api", reason="mypy is not installed")
    usage = tmp_path / "usage.py"
    usage.write_text(
        "import weft\n"
        "doc = weft.Doc()\n"
        "text: weft.Text = doc.get_map('m').set_container('t', 'Text')\n"
        "counter: weft.Counter = doc.get_list('l').push_container(weft.Counter)\n"
        "events: list[weft.DocEvent] = []\n"
        "doc.subscribe(events.append)\n"
        "status: weft.ImportStatus = weft.Doc().import_(doc.export_updates(doc.version()))\n"
        "order: str = doc.compare(doc.frontiers(), [(1, 0)])\n"
        "entries: list[weft.FileEntry] = weft.InMemoryFilesystem().list()\n"
        "bad: int = doc.to_json()  # the one error expected\n")
    monkeypatch.setenv("MYPYPATH", str(pathlib.Path(weft.__file__).parent.parent))
    out, err, code = api.run(["--strict", "--no-incremental", "--python-version", "3.11",
                              "--cache-dir", str(tmp_path / "cache"), str(usage)])
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert len(errors) == 1 and "usage.py:10:" in errors[0], out + err
