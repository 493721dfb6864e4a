"""Plain values of weft.Doc: op ids, versions, import results, changes and events.

The compiled Doc (weft._weft) builds these; they are immutable and hashable
(except the events' payloads, which hold lists and dicts), so a version can key
a dict or sit in a set. Peer ids are unsigned 64-bit integers, counters
non-negative 32-bit integers, as in Loro.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Literal, NamedTuple, Union, overload

VersionOrder = Literal["equal", "less", "greater", "concurrent"]
EventTrigger = Literal["local", "import", "checkout"]

_MAX_PEER = (1 << 64) - 1
_MAX_COUNTER = (1 << 31) - 1


def _check_int(value: object, what: str, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, not {type(value).__name__}")
    if not 0 <= value <= high:
        raise ValueError(f"{what} must be in [0, {high}], got {value}")
    return value


class ID(NamedTuple):
    """One op unit: the `counter`-th op of `peer`. Orders by (peer, counter)."""

    peer: int
    counter: int

    def __str__(self) -> str:
        return f"{self.counter}@{self.peer}"

    @classmethod
    def parse(cls, text: str) -> ID:
        """Parses "counter@peer" (the form str() writes)."""
        counter, sep, peer = text.partition("@")
        if not sep or not counter.isdigit() or not peer.isdigit():
            raise ValueError(f"an op id is 'counter@peer' with decimal numbers, got {text!r}")
        return cls._checked(int(peer), int(counter))

    @classmethod
    def _checked(cls, peer: object, counter: object) -> ID:
        return cls(_check_int(peer, "peer id", _MAX_PEER),
                   _check_int(counter, "counter", _MAX_COUNTER))


class IdSpan(NamedTuple):
    """Consecutive ops [start, end) of one peer."""

    peer: int
    start: int
    end: int


def _as_id(item: object) -> ID:
    if isinstance(item, ID):
        return item
    if isinstance(item, str):
        return ID.parse(item)
    if isinstance(item, tuple) and len(item) == 2:
        return ID._checked(item[0], item[1])
    raise TypeError(f"an op id is weft.ID, (peer, counter) or 'counter@peer', not {item!r}")


class Frontiers:
    """The last op ids of a version (an antichain), sorted; immutable and hashable.

    Build one from op ids (weft.ID, (peer, counter) tuples or "counter@peer"
    strings); Doc.frontiers() and the events return them. Doc.checkout() takes one.
    """

    __slots__ = ("_ids",)
    _ids: tuple[ID, ...]

    def __init__(self, ids: Iterable[ID | tuple[int, int] | str] = ()) -> None:
        if isinstance(ids, (str, bytes)):
            raise TypeError("Frontiers takes an iterable of op ids, not a single string")
        object.__setattr__(self, "_ids", tuple(sorted({_as_id(i) for i in ids})))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Frontiers is immutable")

    def __iter__(self) -> Iterator[ID]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)

    def __bool__(self) -> bool:
        return bool(self._ids)

    def __getitem__(self, index: int) -> ID:
        return self._ids[index]

    def __contains__(self, item: object) -> bool:
        return item in self._ids

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Frontiers):
            return self._ids == other._ids
        return NotImplemented

    def __hash__(self) -> int:
        return hash(("Frontiers", self._ids))

    def __repr__(self) -> str:
        return "Frontiers([" + ", ".join(repr(str(i)) for i in self._ids) + "])"

    @property
    def ids(self) -> tuple[ID, ...]:
        return self._ids

    def to_json(self) -> str:
        """[{"peer":"<decimal>","counter":N},...], the form weft's C++ and Loro write."""
        return json.dumps([{"peer": str(i.peer), "counter": i.counter} for i in self._ids],
                          separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Frontiers:
        items = json.loads(text)
        if not isinstance(items, list):
            raise ValueError("frontiers JSON must be a list of {peer, counter} objects")
        try:
            return cls(ID._checked(int(i["peer"]), i["counter"]) for i in items)
        except (KeyError, TypeError) as error:
            raise ValueError(f"bad frontiers JSON: {error}") from error


class VersionVector(Mapping[int, int]):
    """Peer id -> number of that peer's ops seen (its exclusive end counter).

    An immutable, hashable mapping without zero entries. Comparisons are the
    causal partial order: `a <= b` when b has seen every op a has; two
    concurrent versions are neither <= nor >= each other (see compare()).
    """

    __slots__ = ("_entries", "_hash")
    _entries: dict[int, int]
    _hash: int | None

    def __init__(self, entries: Mapping[int, int] | Iterable[tuple[int, int]] = ()) -> None:
        pairs = entries.items() if isinstance(entries, Mapping) else entries
        clean: dict[int, int] = {}
        for peer, end in pairs:
            _check_int(peer, "peer id", _MAX_PEER)
            _check_int(end, "end counter", _MAX_COUNTER)
            if end > 0:
                clean[peer] = max(end, clean.get(peer, 0))
        object.__setattr__(self, "_entries", dict(sorted(clean.items())))
        object.__setattr__(self, "_hash", None)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("VersionVector is immutable")

    def __getitem__(self, peer: int) -> int:
        return self._entries[peer]

    def __iter__(self) -> Iterator[int]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __hash__(self) -> int:
        if self._hash is None:
            object.__setattr__(self, "_hash", hash(frozenset(self._entries.items())))
            assert self._hash is not None
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return self._entries == {k: v for k, v in other.items() if v != 0}
        return NotImplemented

    def __repr__(self) -> str:
        return f"VersionVector({self._entries!r})"

    def end(self, peer: int) -> int:
        """The number of `peer`'s ops in this version (0 when absent)."""
        return self._entries.get(peer, 0)

    @overload
    def includes(self, other: ID) -> bool: ...
    @overload
    def includes(self, other: Mapping[int, int]) -> bool: ...

    def includes(self, other: ID | Mapping[int, int]) -> bool:
        """True when the op id, or every op of the version `other`, is in this version."""
        if isinstance(other, ID):
            return other.counter < self.end(other.peer)
        return all(end <= self.end(peer) for peer, end in other.items())

    def compare(self, other: Mapping[int, int]) -> VersionOrder:
        """'equal', 'less' (self is before other), 'greater' or 'concurrent'."""
        ge = self.includes(other)
        le = all(end <= (other.get(peer) or 0) for peer, end in self._entries.items())
        if ge and le:
            return "equal"
        if le:
            return "less"
        if ge:
            return "greater"
        return "concurrent"

    def __le__(self, other: Mapping[int, int]) -> bool:
        return self.compare(other) in ("equal", "less")

    def __lt__(self, other: Mapping[int, int]) -> bool:
        return self.compare(other) == "less"

    def __ge__(self, other: Mapping[int, int]) -> bool:
        return self.compare(other) in ("equal", "greater")

    def __gt__(self, other: Mapping[int, int]) -> bool:
        return self.compare(other) == "greater"

    def merge(self, other: Mapping[int, int]) -> VersionVector:
        """The version holding every op of both."""
        merged = dict(self._entries)
        for peer, end in other.items():
            merged[peer] = max(end, merged.get(peer, 0))
        return VersionVector(merged)

    def intersect(self, other: Mapping[int, int]) -> VersionVector:
        """The version both have seen (entry-wise minimum)."""
        return VersionVector({p: min(e, other.get(p) or 0) for p, e in self._entries.items()})

    def total(self) -> int:
        """The number of ops in the version."""
        return sum(self._entries.values())

    def to_json(self) -> str:
        """{"<peer>":end,...} with decimal string keys (the form weft's C++ writes)."""
        return json.dumps({str(p): e for p, e in self._entries.items()}, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> VersionVector:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("version vector JSON must be an object of peer -> end")
        try:
            return cls({int(p): e for p, e in data.items()})
        except (TypeError, ValueError) as error:
            raise ValueError(f"bad version vector JSON: {error}") from error


@dataclasses.dataclass(frozen=True, slots=True)
class ImportStatus:
    """What Doc.import_() applied, and what waits for missing earlier ops."""

    success: tuple[IdSpan, ...]
    pending: tuple[IdSpan, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class ChangeMeta:
    """One stored change (a commit, or several merged ones) of Doc.changes()."""

    id: ID
    length: int
    lamport: int
    timestamp: int
    message: str | None
    deps: Frontiers


# A text delta: [{"retain": n} | {"insert": "text"} | {"delete": n}, ...] (Quill's
# form, lengths in Unicode code points); a list delta is the same with
# {"insert": [values]}; a map delta maps each changed key to its new value
# (None when deleted); a counter delta is the float added.
Delta = Union[list[dict[str, Any]], dict[str, Any], float]


@dataclasses.dataclass(frozen=True, slots=True)
class ContainerDiff:
    """The change of one container: `target` is its container id ("cid:...")."""

    target: str
    kind: Literal["text", "list", "map", "counter"]
    delta: Delta


@dataclasses.dataclass(frozen=True, slots=True)
class DocEvent:
    """Everything one commit, import or checkout changed, as subscribers see it."""

    by: EventTrigger
    origin: str
    message: str | None
    from_frontiers: Frontiers
    to_frontiers: Frontiers
    diffs: tuple[ContainerDiff, ...]
