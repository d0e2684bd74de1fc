"""Package indexes: the ones pip (or uv, poetry, pipenv) consults for a requirement, and the ones a machine's pip is
configured with. Records only: ``sources`` reads files' index lines, ``detect.pipconf`` a machine's pip.conf."""

from __future__ import annotations

from .records import record


@record(frozen=True)
class IndexContext:
    """The package indexes pip (or uv, poetry, pipenv) consults for a requirement."""

    index_url: str = ""
    extra_index_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()
    no_index: bool = False

    @property
    def urls(self) -> tuple[str, ...]:
        return tuple(u for u in (self.index_url, *self.extra_index_urls, *self.find_links) if u)

    def merged(self, other: IndexContext) -> IndexContext:
        return IndexContext(
            other.index_url or self.index_url,
            _unique(self.extra_index_urls + other.extra_index_urls),
            _unique(self.find_links + other.find_links),
            self.no_index or other.no_index,
        )


def _unique(items: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


@record(frozen=True)
class PipContext:
    """The index context a machine's pip configuration gives, and where each part of it was read (for notes)."""

    index: IndexContext = IndexContext()
    origins: tuple[tuple[str, str], ...] = ()  # (key, file path or variable name)

    def said(self) -> str:
        """``index-url from PIP_INDEX_URL; find-links from /etc/pip.conf``, or "" when pip's configuration names
        no index."""
        return "; ".join(f"{key} from {where}" for key, where in self.origins)
