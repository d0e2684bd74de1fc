"""What a decoder makes of a message's numbers (``Decoded``), and the fix templates' placeholders filled from it."""

from __future__ import annotations

import re
from collections.abc import Callable

from ..records import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .catalog import Catalog, CatalogEntry


@record
class Decoded:
    found: dict[str, str] = field(default_factory=dict)
    expected: dict[str, str] = field(default_factory=dict)
    rows: list[tuple[str, str]] = field(default_factory=list)  # (label, decoded fact) for the reader
    facts: dict[str, str] = field(default_factory=dict)  # placeholders for rule and fix templates
    rule: str = ""
    kind: str = ""  # the kind the vocabulary gives, in place of the entry's
    advice: str = ""  # the catalog entry that advises on it (its summary, explanation and fixes), if not this one
    source: str = ""  # where the vocabulary read it, in place of the entry's source


Decoder = Callable[["re.Match[str]", "CatalogEntry", "Catalog", str], "Decoded | None"]


def fill(template: str, facts: dict[str, str]) -> str:
    """The template with its placeholders filled, or "" when one of them is unknown."""
    missing = False

    def sub(m: re.Match[str]) -> str:
        nonlocal missing
        value = facts.get(m.group(1), "")
        if not value:
            missing = True
        return value

    text = re.sub(r"\{(\w+)\}", sub, template)
    return "" if missing else text


def plain(m: re.Match[str], entry: CatalogEntry, catalog: Catalog, framework: str) -> Decoded:
    """The named groups as they are, as rows and as facts for the fix templates (jaxlib's ``{needs}``)."""
    groups = {k: v for k, v in m.groupdict().items() if v}
    return Decoded(rows=list(groups.items()), facts=dict(groups))
