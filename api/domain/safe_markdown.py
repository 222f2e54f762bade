"""User text made safe to put in a Markdown file that any viewer may render.

Exports (documents.py) carry turns, titles and checkpoint fields written by users
and by models, and a model writes whatever a prompt injection asks. A viewer
(GitHub, VS Code, Jupyter) renders Markdown and the raw HTML in it, loads images
and follows links. So, outside code:

- ``<`` is written ``&lt;``: no tag, comment or autolink survives
  (``<script>``, ``<img onerror=…>``, ``<iframe>``);
- ``[`` and ``]`` are escaped, so no link, image, footnote or reference
  definition is made (``[x](javascript:…)`` stays text), except a plain link to an
  http(s) or mailto address, kept as written; an image becomes such a link to its
  address, as the web UI shows it (api/rendering/markdown.py): it is never loaded;
- backticks that make no code span on their line are escaped, and so is every
  ``~``: a viewer never opens a code block this module did not write, nor a code
  span running on into the next line (where it would swallow another span's
  backticks and set free what that one held);
- a user's own backslash escapes are kept.

Code stays code. A fenced block is written again inside a backtick fence longer
than any backtick run in it (so no line of it can close the fence early, in any
parser), after a blank line, and closed even when the user left it open; it keeps
its indentation when every line of it is indented as much (else it starts at the
margin, where no container can end it). An inline code span is kept as written
unless it holds a ``|`` (a table row is split there before code is seen).
Indented code and code in a quote are escaped like prose: ``<`` reads ``&lt;`` there.

With ``hard_breaks``, a line of prose followed by another (a single newline, as a
reply writes an address or a poem) ends with a backslash, CommonMark's hard line
break, so a viewer shows one line per line instead of joining them into one
paragraph. Not in code, nor around list items, headings, tables, quotes,
thematic breaks or indented lines, where a newline already means something.
"""

from __future__ import annotations

import re
import string

_FENCE_OPEN = re.compile(r"( *)(`{3,}|~{3,})(.*)")
_FENCE_CLOSE = re.compile(r" *(`{3,}|~{3,})[ \t]*")
_LANGUAGE = re.compile(r"[A-Za-z0-9_+#.-]{1,30}")
_BACKTICKS = re.compile(r"`+")
_SAFE_URL = r"(?:https?://|mailto:)[^\s()<>\\`&\"'|]*"
_LINK = re.compile(r"(!?)\[([^\[\]\n]*)\]\((" + _SAFE_URL + r")\)")
_PUNCTUATION = frozenset(string.punctuation)
_ESCAPED = {"<": "&lt;", "[": "\\[", "]": "\\]", "~": "\\~"}
# Lines whose newline is already structure: a list item, heading, table row, quote,
# thematic break or setext underline, or an indented line (code, a list's inside).
_STRUCTURED = re.compile(r"\s|[-*+] |[-*+]$|\d{1,9}[.)]( |$)|#|\||>|[-_*=]{3,}\s*$|[-=]+\s*$")


def block(text: str, *, hard_breaks: bool = False) -> str:
    """Markdown written by a user or a model, for a block of its own (a turn, a
    summary): safe, with its fenced code still code; with ``hard_breaks``, its
    single newlines between lines of prose kept as line breaks."""
    lines = _lines(text)
    out: list[str] = []
    index = 0
    while index < len(lines):
        opened = _FENCE_OPEN.fullmatch(lines[index])
        if opened is None or (opened.group(2)[0] == "`" and "`" in opened.group(3)):
            line = _escape(lines[index])
            following = lines[index + 1] if index + 1 < len(lines) else ""
            if hard_breaks and _prose(lines[index]) and _prose(following):
                line = _hard_break(line)
            out.append(line)
            index += 1
            continue
        indent, fence, info = opened.groups()
        body: list[str] = []
        index += 1
        while index < len(lines) and not _closes(lines[index], fence):
            body.append(lines[index])
            index += 1
        index += 1  # past the closing line (or the end)
        if out and out[-1].strip():
            out.append("")
        out.extend(_fenced(indent, info, body))
    return "\n".join(out)


def _prose(line: str) -> bool:
    """A line of a paragraph: not blank, not structure, not a code fence."""
    return bool(line.strip()) and not _STRUCTURED.match(line) and not _FENCE_OPEN.match(line)


def _hard_break(line: str) -> str:
    """The line, ending in a hard break: a backslash, unless it ends in an escaping
    one already (that one is the break; another would make it a literal backslash)."""
    line = line.rstrip()
    trailing = len(line) - len(line.rstrip("\\"))
    return line if trailing % 2 else line + "\\"


def inline(text: str) -> str:
    """One line of user text (a title, a name, a list item): line breaks become
    spaces, then it is made safe like prose."""
    return _escape(" ".join(_lines(text)))


def _lines(text: str) -> list[str]:
    # A viewer breaks lines at \r too: so must we, or a line we read as one
    # (a code span, say) is two there.
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _closes(line: str, fence: str) -> bool:
    closing = _FENCE_CLOSE.fullmatch(line)
    return (
        closing is not None
        and closing.group(1)[0] == fence[0]
        and len(closing.group(1)) >= len(fence)
    )


def _fenced(indent: str, info: str, body: list[str]) -> list[str]:
    longest = max((len(run) for line in body for run in _BACKTICKS.findall(line)), default=0)
    fence = "`" * max(3, longest + 1)
    language = _LANGUAGE.match(info.strip())
    # Indented code, or a fence in a list item: either way code, as long as no
    # line of it is less indented (such a line would end the item, and the fence).
    if any(line.strip() and not line.startswith(indent) for line in body):
        indent = ""
    opening = indent + fence + (language.group() if language else "")
    return [opening, *body, indent + fence]


def _escape(line: str, *, links: bool = True, spans: bool = True) -> str:
    out: list[str] = []
    index = 0
    while index < len(line):
        char = line[index]
        if char == "\\" and index + 1 < len(line) and line[index + 1] in _PUNCTUATION:
            out.append(line[index : index + 2])  # the user's escape, kept
            index += 2
            continue
        if char == "`":
            index = _backticks(line, index, out, spans=spans)
            continue
        if links and char in "![":
            link = _LINK.match(line, index)
            if link is not None:
                text = _escape(link.group(2), links=False)
                out.append(f"[{text}]({link.group(3)})")
                index = link.end()
                continue
        out.append(_ESCAPED.get(char, char))
        index += 1
    return "".join(out)


def _backticks(line: str, start: int, out: list[str], *, spans: bool) -> int:
    """The backtick run at ``start``: a code span kept as written, or escaped
    backticks (unclosed on this line, a viewer could close them on the next)."""
    end = start
    while end < len(line) and line[end] == "`":
        end += 1
    run = end - start
    closing = next((m for m in _BACKTICKS.finditer(line, end) if len(m.group()) == run), None)
    if not spans or closing is None:
        out.append("\\`" * run)
        return end
    content = line[end : closing.start()]
    if "|" in content:
        content = _escape(content, links=False, spans=False)
    out.append(line[start:end] + content + closing.group())
    return closing.end()
