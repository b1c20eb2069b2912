"""Reading YAML strictly and editing PLAN.yml without touching what the author wrote.

The only module that imports ruamel.yaml. Reading uses ruamel's C parser (YAML 1.2 schema)
and refuses anchors, aliases, merge keys, explicit tags, duplicate keys and multiple
documents *before* anything is constructed, so reviewers see every value written out and
no alias can expand into a bomb.

Writing never re-emits the author's text. The controller owns whole top-level blocks
(``frozen``, ``approval``, ``execution``, ``validation``) and one scalar (``plan.status``);
edits splice those spans by the parser's line/column marks, so every other byte of the file,
comments and quoting included, stays as it was.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import (
    AliasEvent,
    CollectionStartEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    NodeEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from controller.errors import YamlParseError

PathPart = str | int


def _loader() -> YAML:
    yaml = YAML(typ="safe", pure=False)
    yaml.allow_duplicate_keys = False
    return yaml


_YAML = _loader()


@dataclass
class YamlDoc:
    """A parsed file: its data and the node tree that knows where each value was written."""

    text: str
    data: Any
    root: Node | None

    def line_of(self, path: Sequence[PathPart]) -> int | None:
        """1-based line of the value at ``path``, or of its nearest existing parent."""
        node = self.root
        line = node.start_mark.line + 1 if node is not None else None
        for part in path:
            node = _child(node, part)
            if node is None:
                break
            line = node.start_mark.line + 1
        return line

    def node_at(self, path: Sequence[PathPart]) -> Node | None:
        node = self.root
        for part in path:
            node = _child(node, part)
            if node is None:
                return None
        return node


def _child(node: Node | None, part: PathPart) -> Node | None:
    if isinstance(node, MappingNode):
        for key, value in node.value:
            if isinstance(key, ScalarNode) and key.value == part:
                return value
    elif isinstance(node, SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
        return node.value[part]
    return None


def read_yaml(text: str, source: str = "<string>") -> YamlDoc:
    """Parse strictly; raise :class:`YamlParseError` with the line of the first problem."""
    try:
        _refuse_hidden_structure(text, source)
        root = _YAML.compose(text)
        data = _YAML.constructor.construct_document(root) if root is not None else None
    except YamlParseError:
        raise
    except MarkedYAMLError as exc:
        raise _parse_error(exc, source) from None
    except YAMLError as exc:
        raise YamlParseError(f"{source}: {exc}") from None
    except RecursionError:
        raise YamlParseError(f"{source}: nesting too deep") from None
    return YamlDoc(text, data, root)


def _parse_error(exc: MarkedYAMLError, source: str) -> YamlParseError:
    mark = exc.problem_mark or exc.context_mark
    line = f":{mark.line + 1}" if mark is not None else ""
    what = " ".join(p for p in (exc.context, exc.problem) if p)
    if "duplicate key" in str(exc):
        what = f"duplicate key {_dup_key(str(exc))}"
    err = YamlParseError(f"{source}{line}: {what}")
    err.line = mark.line + 1 if mark is not None else None  # type: ignore[attr-defined]
    return err


def _dup_key(text: str) -> str:
    start = text.find('found duplicate key "')
    return text[start + 20 :].split('"')[0].join('""') if start >= 0 else ""


def _refuse_hidden_structure(text: str, source: str) -> None:
    """Refuse anchors, aliases, explicit tags, merge keys and extra documents."""
    documents = 0
    # Each open collection: [is_mapping, next scalar is a key].
    stack: list[list[bool]] = []
    for event in _YAML.parse(text):
        if isinstance(event, DocumentStartEvent):
            documents += 1
            if documents > 1:
                _refuse(event, source, "more than one YAML document in the file")
        if isinstance(event, AliasEvent):
            _refuse(event, source, f"alias *{event.anchor} (write the value out in full)")
        if isinstance(event, NodeEvent) and event.anchor:
            _refuse(event, source, f"anchor &{event.anchor} (write values out in full)")
        if isinstance(event, ScalarEvent | CollectionStartEvent) and _explicit_tag(event):
            _refuse(event, source, f"tag {event.tag} (quote the value instead)")
        if isinstance(event, ScalarEvent | CollectionStartEvent | AliasEvent):
            is_key = bool(stack) and stack[-1][0] and stack[-1][1]
            if is_key and isinstance(event, ScalarEvent) and event.value == "<<" and not event.style:
                _refuse(event, source, "merge key << (write the keys out in full)")
            if stack and stack[-1][0]:
                stack[-1][1] = not stack[-1][1]
        if isinstance(event, MappingStartEvent | SequenceStartEvent):
            stack.append([isinstance(event, MappingStartEvent), True])
        elif isinstance(event, MappingEndEvent | SequenceEndEvent):
            stack.pop()


def _explicit_tag(event: Any) -> bool:
    if event.tag is None:
        return False
    implicit = event.implicit
    return not (implicit[0] or implicit[1]) if isinstance(implicit, tuple) else not implicit


def _refuse(event: Any, source: str, what: str) -> None:
    line = event.start_mark.line + 1 if event.start_mark else None
    err = YamlParseError(f"{source}:{line}: {what}")
    err.line = line  # type: ignore[attr-defined]
    raise err


# --- writing ----------------------------------------------------------------------------


def dump(value: Any) -> str:
    """Block-style YAML for data the controller writes (plain JSON data only)."""
    yaml = YAML(typ="safe", pure=False)
    yaml.default_flow_style = False
    yaml.sort_base_mapping_type_on_output = False  # type: ignore[assignment]
    yaml.width = 4096
    yaml.allow_unicode = True
    out = io.StringIO()
    yaml.dump(value, out)
    return out.getvalue()


def _last_line(node: Node) -> int:
    """0-based line of the last character of a node's own content."""
    if isinstance(node, MappingNode | SequenceNode) and not node.flow_style and node.value:
        last = node.value[-1]
        return _last_line(last[1] if isinstance(node, MappingNode) else last)
    end = node.end_mark
    return end.line - 1 if end.column == 0 and end.line > node.start_mark.line else end.line


def _entries(root: Node) -> Iterator[tuple[str, int, int]]:
    """(key, first line, last line) of each top-level entry, 0-based and inclusive."""
    for key, value in root.value:
        yield key.value, key.start_mark.line, _last_line(value)


def is_block_mapping(doc: YamlDoc) -> bool:
    return isinstance(doc.root, MappingNode) and not doc.root.flow_style


def set_block(doc: YamlDoc, key: str, value: Any) -> str:
    """The text with top-level ``key`` set to ``value`` (None removes it), all else unchanged."""
    if not is_block_mapping(doc):
        raise YamlParseError("the top level of the file must be a block mapping to be edited")
    assert doc.root is not None
    lines = doc.text.splitlines(keepends=True)
    new = [] if value is None else dump({key: value}).splitlines(keepends=True)
    for name, first, last in _entries(doc.root):
        if name == key:
            return "".join(lines[:first] + new + lines[last + 1 :])
    if value is None:
        return doc.text
    *_, (_, _, end) = _entries(doc.root)
    head = lines[: end + 1]
    if head and not head[-1].endswith("\n"):
        head[-1] += "\n"
    return "".join(head + new + lines[end + 1 :])


def set_blocks(text: str, blocks: dict[str, Any], source: str = "<string>") -> str:
    """Apply several :func:`set_block` edits in turn."""
    for key, value in blocks.items():
        text = set_block(read_yaml(text, source), key, value)
    return text


def set_scalar(doc: YamlDoc, path: Sequence[PathPart], value: str) -> str:
    """The text with the scalar at ``path`` replaced by ``value``, keeping its quote style."""
    node = doc.node_at(path)
    if not isinstance(node, ScalarNode):
        return _insert_scalar(doc, path, value)
    quote = node.style if node.style in ("'", '"') else ""
    lines = doc.text.splitlines(keepends=True)
    start, end = node.start_mark, node.end_mark
    if start.line != end.line:
        raise YamlParseError(f"{'.'.join(map(str, path))} must be written on one line")
    line = lines[start.line]
    lines[start.line] = line[: start.column] + f"{quote}{value}{quote}" + line[end.column :]
    return "".join(lines)


def _insert_scalar(doc: YamlDoc, path: Sequence[PathPart], value: str) -> str:
    parent = doc.node_at(path[:-1])
    if not isinstance(parent, MappingNode) or parent.flow_style or not parent.value:
        raise YamlParseError(f"cannot write {'.'.join(map(str, path))}: its parent is not a mapping")
    first_key = parent.value[0][0]
    lines = doc.text.splitlines(keepends=True)
    indent = " " * first_key.start_mark.column
    lines.insert(first_key.start_mark.line, f"{indent}{path[-1]}: {value}\n")
    return "".join(lines)
