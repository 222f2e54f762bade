"""A checkpoint's content read back from Markdown: what an agent writes, or
what the exports write (documents.checkpoint_markdown).

    # A title                        the title (or the export's
                                     "### Checkpoint `abc1234` · A title",
                                     whose Branch/Saved/Hash lines are skipped)
    ## Objective                     a text field: the lines under it
    **Summary:** one line            the export's spelling of the same
    ## Decisions                     a list field: one "- item" a line
    - Use SQLite                     ("*", "+" and "1." bullets too; an
                                     indented line continues the item)

The headings are the labels of CONTENT_FIELDS (Objective, Summary, Decisions,
Tasks, Open questions, Entities), in any case, in any order, each at most
once. An unknown heading, text before the first heading or outside a list's
items, or a heading given twice is an InputError naming it (field
``markdown``). The escapes the export adds (safe_markdown) are undone outside
fenced code; the result is checked by the use case as any content is.
"""

from __future__ import annotations

import re

from ..errors import InputError
from .types import CONTENT_FIELDS, CONTENT_LIST_FIELDS, CheckpointContent, ContentField

FIELD = "markdown"
_BY_LABEL = {f.label.casefold(): f for f in CONTENT_FIELDS}
_LISTS = {f.attr for f in CONTENT_LIST_FIELDS}
_EXPORT_TITLE = re.compile(r"#{1,6} Checkpoint `[0-9a-f]{4,64}` · (.*)")
_TITLE = re.compile(r"# +(.*?)(?: +#+)? *")
_HEADING = re.compile(r"#{1,6} +(.*?)(?: +#+)? *")
_LABEL = re.compile(r"\*\*([^*]+?):\*\*(?: (.*))?")
_BULLET = re.compile(r" {0,3}(?:[-*+]|[0-9]{1,9}[.)])(?: +(.*)|$)")
_EXPORT_FACT = re.compile(r"- (?:Branch|Saved|Hash|Parent|From turns) ?.*")
_FENCE = re.compile(r" *(`{3,}|~{3,})")
_FENCE_CLOSE = re.compile(r" *(`{3,}|~{3,})[ \t]*")
# What safe_markdown.inline/block write for a character a user typed.
_UNESCAPED = (("&lt;", "<"), ("\\[", "["), ("\\]", "]"), ("\\~", "~"), ("\\`", "`"))


def parse_checkpoint_markdown(text: str) -> CheckpointContent:
    """The content ``text`` holds (unvalidated: the use case checks it)."""
    title: str | None = None
    exported = False
    sections: dict[str, list[str]] = {}
    current: ContentField | None = None
    fence: str | None = None  # the fence of the code block of a text field we are in
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for number, line in enumerate(lines, start=1):
        if fence is not None:  # code: kept as written, headings and all
            assert current is not None
            sections[current.attr].append(line)
            fence = None if _closes(line, fence) else fence
            continue
        if title is None and current is None and line.strip():
            heading = _EXPORT_TITLE.fullmatch(line) or _TITLE.fullmatch(line)
            if heading is not None:
                exported = heading.re is _EXPORT_TITLE
                title = heading.group(1)
                continue
        found = _section(line)
        if found is not None:
            field, rest = found
            if field.attr in sections or (field.attr == "title" and title is not None):
                raise InputError(f"The heading `{field.label}` appears twice.", field=FIELD)
            current = field
            sections[field.attr] = [rest] if rest else []
            continue
        if current is None:
            if not line.strip() or (exported and _EXPORT_FACT.fullmatch(line)):
                continue
            if title is None:
                raise InputError(
                    f"Line {number}: start with the title as a heading: `# Title`.", field=FIELD
                )
            raise InputError(
                f"Line {number}: put text under a heading "
                f"({', '.join(f.label for f in CONTENT_FIELDS[1:])}).",
                field=FIELD,
            )
        sections[current.attr].append(line)
        opened = _FENCE.match(line)
        if opened is not None and current.attr not in _LISTS:
            fence = opened.group(1)
    if "title" in sections:
        title = " ".join(line.strip() for line in sections.pop("title") if line.strip())
    if title is None:
        raise InputError("Start with the title as a heading: `# Title`.", field=FIELD)
    given: dict[str, object] = {"title": _unescape(title.strip())}
    for attr, body in sections.items():
        label = next(f.label for f in CONTENT_FIELDS if f.attr == attr)
        given[attr] = _items(body, label) if attr in _LISTS else _text(body)
    return CheckpointContent(**given)  # type: ignore[arg-type]


def _closes(line: str, fence: str) -> bool:
    closing = _FENCE_CLOSE.fullmatch(line)
    return (
        closing is not None
        and closing.group(1)[0] == fence[0]
        and (len(closing.group(1)) >= len(fence))
    )


def _section(line: str) -> tuple[ContentField, str] | None:
    """The field a heading line opens and the text on its line; None for a
    line that is no heading below the title. An unknown heading is refused."""
    heading = _HEADING.fullmatch(line)
    if heading is not None:
        label, rest = heading.group(1).rstrip(":").strip(), ""
    else:
        bold = _LABEL.fullmatch(line)
        if bold is None:
            return None
        label, rest = bold.group(1).strip(), bold.group(2) or ""
    field = _BY_LABEL.get(label.casefold())
    if field is None:
        known = ", ".join(f.label for f in CONTENT_FIELDS)
        raise InputError(f"Unknown heading `{label[:100]}`: the headings are {known}.", field=FIELD)
    return field, rest


def _text(body: list[str]) -> str:
    out: list[str] = []
    fence: str | None = None
    for line in body:
        if fence is not None:
            out.append(line)
            fence = None if _closes(line, fence) else fence
            continue
        opened = _FENCE.match(line)
        if opened is not None:
            fence = opened.group(1)
            out.append(line)
        else:
            out.append(_unescape(line))
    return "\n".join(out).strip()


def _items(body: list[str], label: str) -> tuple[str, ...]:
    items: list[str] = []
    for line in body:
        if not line.strip():
            continue
        bullet = _BULLET.fullmatch(line)
        if bullet is not None:
            items.append(_unescape((bullet.group(1) or "").strip()))
        elif items and line.startswith((" ", "\t")):
            items[-1] = f"{items[-1]} {_unescape(line.strip())}".strip()
        else:
            raise InputError(
                f"Under `{label}`, write each item on a line of its own starting with `- `.",
                field=FIELD,
            )
    return tuple(items)


def _unescape(text: str) -> str:
    for written, meant in _UNESCAPED:
        text = text.replace(written, meant)
    return text
