"""What the matrix answers about NVIDIA's side: minimum drivers per CUDA toolkit, CUDA and cuDNN releases, GPU
models by name."""

from __future__ import annotations

import marshal
from collections.abc import Callable, Iterator

from .rows import MatrixRows

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..compat import DriverTable
    from ..model import CudaRelease, CudnnRelease, GpuModel
    from ..suggest import GpuGuess
    from ..versions import CudaVersion, CudnnVersion, DriverVersion


def gpu_key(name: str) -> str:
    """A GPU name reduced to what identifies it: no brand prefixes, case or extra spaces."""
    s = " ".join(name.lower().split())  # (string methods: a start-up looks one name up)
    if s.startswith("nvidia "):
        s = s[len("nvidia ") :]
    for brand in ("tesla ", "geforce ", "quadro "):  # "titan" stays: it is part of the model's name
        if s.startswith(brand) and len(s) > len(brand):
            return s[len(brand) :]
    return s


def same_series(a: CudaVersion, b: CudaVersion) -> bool:
    if a.is_major_only or b.is_major_only:
        return a.major == b.major
    return a.series == b.series


class NvidiaQueries(MatrixRows):
    """The queries of the CUDA, cuda_family, cudnn and gpu tables (``Matrix`` has them all)."""

    def driver_table(self, os_name: str = "linux") -> DriverTable:
        """The toolkit -> minimum driver table for one OS (built once: the solver asks for every row)."""
        if os_name not in self._driver_tables:
            self._driver_tables[os_name] = self._make_driver_table(os_name)
        return self._driver_tables[os_name]

    def _make_driver_table(self, os_name: str) -> DriverTable:
        from ..compat import DriverTable

        if "cuda" not in self._built and self._rows is not None:
            return DriverTable(self._toolkit_drivers(os_name), self._family_drivers(os_name))
        if os_name == "windows":
            toolkits = tuple((c.version, c.driver_min_windows) for c in self.cuda if c.driver_min_windows)
            families = tuple((f.major, f.driver_min_windows) for f in self.cuda_families if f.driver_min_windows)
        else:
            toolkits = tuple((c.version, c.driver_min_linux) for c in self.cuda)
            families = tuple((f.major, f.driver_min_linux) for f in self.cuda_families)
        return DriverTable(toolkits, families)

    def _toolkit_drivers(self, os_name: str) -> tuple[tuple[CudaVersion, DriverVersion], ...]:
        """(toolkit, minimum driver) from the cached CUDA rows, without building them."""
        from ..versions import CudaVersion, DriverVersion

        key = "driver_min_windows" if os_name == "windows" else "driver_min_linux"
        return tuple(
            (CudaVersion.parse(d["version"]), DriverVersion.parse(d[key]))
            for _, _, d in self._raw("cuda")
            if d.get(key)
        )

    def _family_drivers(self, os_name: str) -> tuple[tuple[int, DriverVersion], ...]:
        if os_name == "windows":
            return tuple((f.major, f.driver_min_windows) for f in self.cuda_families if f.driver_min_windows)
        return tuple((f.major, f.driver_min_linux) for f in self.cuda_families)

    def cuda_release(self, cuda: CudaVersion) -> CudaRelease | None:
        """The first release of ``cuda``'s series (of its major for ``12``); only that row is built."""
        if cuda not in self._cuda_rows:
            found: CudaRelease | None = None
            if "cuda" in self._built or self._rows is None:
                rows = [c for c in self.cuda if same_series(c.version, cuda)]
                found = min(rows, key=lambda c: c.version) if rows else None
            else:
                from ..versions import CudaVersion

                raw = [(CudaVersion.parse(row[2]["version"]), row) for row in self._raw("cuda")]
                matching = [pair for pair in raw if same_series(pair[0], cuda)]
                if matching:
                    found = self._one("cuda", *min(matching, key=lambda pair: pair[0])[1])
            self._cuda_rows[cuda] = found
        return self._cuda_rows[cuda]

    def cudnn_releases(self, series: CudnnVersion | None = None) -> list[CudnnRelease]:
        """The cuDNN releases (of one series), oldest first."""
        if series is not None and "cudnn" not in self._built and self._rows is not None:
            from ..versions import CudnnVersion

            rows = [
                self._one("cudnn", i, line, d)
                for i, line, d in self._raw("cudnn")
                if CudnnVersion.parse(d["version"]).series == series.series
            ]
        else:
            rows = self.cudnn if series is None else [c for c in self.cudnn if c.version.series == series.series]
        return sorted(rows, key=lambda c: c.version)

    def cudnn_newest_first(self, accept: Callable[[CudnnVersion], bool] | None = None) -> Iterator[CudnnRelease]:
        """The cuDNN releases whose version ``accept`` takes (all without it), newest first, each built only when
        the caller gets that far."""
        if "cudnn" in self._built or self._rows is None:
            rows = reversed(sorted(self.cudnn, key=lambda c: c.version))
            yield from (c for c in rows if accept is None or accept(c.version))
            return
        from ..versions import CudnnVersion

        raw = sorted(((CudnnVersion.parse(row[2]["version"]), row) for row in self._raw("cudnn")), key=lambda x: x[0])
        for version, (i, line, d) in reversed(raw):
            if accept is None or accept(version):
                yield self._one("cudnn", i, line, d)

    def gpu(self, name: str) -> GpuModel | None:
        """The GPU model for a name as nvidia-smi prints it, without its brand prefix, or an alias."""
        key = gpu_key(name)
        if not key:
            return None
        if "gpus" not in self._built and self._rows is not None:
            return self._gpu_unbuilt(key)
        index = self._gpu_index()
        if key in index:
            return index[key]
        # "A100-SXM4-40GB" when only "A100" is listed: the longest listed name that starts it.
        best: GpuModel | None = None
        best_len = 0
        for k, g in index.items():
            if (key.startswith(k + "-") or key.startswith(k + " ")) and len(k) > best_len:
                best, best_len = g, len(k)
        return best

    def gpu_typed(self, name: str) -> tuple[GpuModel | None, GpuGuess | None]:
        """A GPU name as a person types it (``--gpu 4090``): a name or alias the table spells so at once (the
        guess is None), else as ``suggest.guess_gpu`` reads it against the whole table, with the guess that
        says which rows it meant or which names to offer instead."""
        from ..suggest import GpuRow, guess_gpu
        from ..versions import ComputeCapability

        key = gpu_key(name)
        if "gpus" in self._built or self._rows is None:
            index = self._gpu_index()
            if key in index:
                return index[key], None
            gpus = self.gpus
            guess = guess_gpu(
                name, [GpuRow(i, g.name, (g.name, *g.aliases), str(g.compute_capability)) for i, g in enumerate(gpus)]
            )
            return (gpus[guess.found.position] if guess.found is not None else None), guess
        raw = self._raw("gpu")
        position = self._cached.meta["gpu_keys"].get(key)
        typed = None
        if position is None:  # the table read as plain rows: only the GPU found becomes a model object
            rows = [
                GpuRow(
                    at,
                    d["name"],
                    (d["name"], *d.get("aliases", ())),
                    str(ComputeCapability.parse(d["compute_capability"])),
                )
                for at, (_, _, d) in enumerate(raw)
            ]
            typed = guess_gpu(name, rows)
            if typed.found is None:
                return None, typed
            position = typed.found.position
        i, line, d = raw[position]
        found: GpuModel = self._one("gpu", i, line, d)
        return found, typed

    def _gpu_unbuilt(self, key: str) -> GpuModel | None:
        """``gpu`` over the cached key index: only the GPU found becomes a model object."""

        keys = self._cached.meta["gpu_keys"]
        position = keys.get(key)
        if position is None:
            best_len = 0
            for k, at in keys.items():
                if (key.startswith(k + "-") or key.startswith(k + " ")) and len(k) > best_len:
                    position, best_len = at, len(k)
        if position is None:
            return None
        blob = self._cached.blob(f"packages/gpu_row/{position}")
        i, line, d = marshal.loads(blob) if blob is not None else self._raw("gpu")[position]
        gpu: GpuModel = self._one("gpu", i, line, d)
        return gpu

    def _gpu_index(self) -> dict[str, GpuModel]:
        index: dict[str, GpuModel] = {}
        for g in self.gpus:
            for n in (g.name, *g.aliases):
                index.setdefault(gpu_key(n), g)
        return index
