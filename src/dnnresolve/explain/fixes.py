"""The catalog's generic steps for a diagnosis, filled with its decoded facts: explain's reading half gives these;
``dnnresolve.advice.fixes`` makes them concrete for a machine. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Iterable

from .catalog import Catalog
from .decoders import fill
from .diagnosis import Diagnosis

__all__ = ["Step", "generic_fixes"]

Step = tuple[str, str]  # (channel, text)


def generic_fixes(diagnosis: Diagnosis, catalog: Catalog, concrete: Iterable[Step] = ()) -> list[str]:
    """The entry's steps, filled; a ``concrete`` step takes the place of the generic step of its channel."""
    entry = catalog.entry(diagnosis.id)
    # A concrete step takes the place of the generic step of its channel, so the catalog's order (least
    # change and least privilege first) holds; facts about the machine ("manual") lead.
    by_channel: dict[str, list[str]] = {}
    for channel, text in concrete:
        by_channel.setdefault(channel, []).append(text)
    steps = list(by_channel.pop("manual", []))
    for template in entry.fixes:
        texts = by_channel.pop(template.channel, None)
        if texts is None:
            filled = fill(template.text, diagnosis.facts)
            texts = [filled] if filled else []
        steps += [t for t in texts if t not in steps]
    for texts in by_channel.values():
        steps += texts
    if steps and steps[0].startswith("or "):
        steps[0] = steps[0][3:]
    return steps
