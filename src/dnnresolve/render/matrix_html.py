"""`matrix --format html`: the whole matrix as one self-contained page (no network, no CDN), one table row per
build (a release and one of its CUDA variants), filterable by framework, release, CUDA, cuDNN, driver and GPU,
every cell linked to the page its fact comes from, readable printed.

What a GPU can run is not worked out in the page: the solver's own check of each build against each compute
capability the GPU table names is embedded, so the page and `plan` give one answer. The driver a build needs is
the CUDA table's (full support) and, from CUDA 11, its family's minimum (minor-version compatibility)."""

from __future__ import annotations

import html
import json
from typing import Any

from ..machine import Gpu, Runtime
from ..matrix import Matrix
from ..model import FrameworkRelease
from ..query import in_listing_order
from ..versions import CudaVersion

CUDA_NOTES = "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html"
MINOR_COMPAT = "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html"

_VERDICT = {"ok": "o", "warn": "w", "fail": "f", "unknown": "u"}  # the solver's statuses, one letter each


def page_data(matrix: Matrix) -> dict[str, Any]:
    """What the page shows: its builds and GPUs, as the script in the page reads them."""
    from ..solve.gpu import gpu_check

    ccs = sorted({g.compute_capability for g in matrix.gpus})
    tables = {os_name: matrix.driver_table(os_name) for os_name in ("linux", "windows")}
    reasons: dict[str, int] = {}  # the solver's reasons, each once: builds name them by number
    builds = []
    for row in in_listing_order(list(matrix.frameworks)):
        for cuda in row.cuda or [None]:
            build: dict[str, Any] = _build(row, cuda, matrix)
            if cuda is not None:
                os_name = "linux" if "linux" in row.os else row.os[0]  # a Windows-only row: Windows' minimums
                table = tables.get(os_name, tables["linux"])
                runtimes = {cc: Runtime(os=os_name, gpus=[Gpu(f"compute capability {cc}", cc)]) for cc in ccs}
                driver = table.min_driver_for(cuda)
                family = table.family_min_driver(cuda.major) if cuda.major >= 11 else None
                build["driver"] = str(driver) if driver else ""
                build["driver_compat"] = str(family) if family and driver and family < driver else ""
                verdicts = {str(cc): gpu_check(row, cuda, rt, matrix) for cc, rt in runtimes.items()}
                build["gpu"] = {
                    cc: _VERDICT[c.status.value] + str(reasons.setdefault(c.reason, len(reasons)))
                    for cc, c in verdicts.items()
                }
            builds.append(build)
    gpus = [{"name": g.name, "cc": str(g.compute_capability), "source": g.source} for g in matrix.gpus]
    return {"builds": builds, "gpus": gpus, "reasons": list(reasons), "minor_compat": MINOR_COMPAT}


def _build(row: FrameworkRelease, cuda: CudaVersion | None, matrix: Matrix) -> dict[str, Any]:
    from ..solve.gpu import VariantCode, variant_gpu_code

    c = variant_gpu_code(row, cuda) if cuda is not None else VariantCode()
    code = ", ".join([*(s.sm for s in c.sm), *(f"{e.sm}a" for e in c.exact), *(p.compute for p in c.ptx)])
    perhaps = ", ".join([*(s.sm for s in c.sm_unconfirmed), *(p.compute for p in c.ptx_unconfirmed)])
    code += f" (perhaps {perhaps})" if perhaps else ""
    cuda_row = matrix.cuda_release(cuda) if cuda is not None else None
    return {
        "package": row.package,
        "version": str(row.version),
        "os": ", ".join(row.os),
        "python": [str(p) for p in row.python],
        "cuda": str(cuda) if cuda is not None else "",
        "cudnn": [str(c) for c in row.cudnn] if cuda is not None else [],
        "code": code,
        "source": row.source,
        "cuda_source": (cuda_row.source if cuda_row and cuda_row.source else CUDA_NOTES) if cuda is not None else "",
        "driver": "",
        "driver_compat": "",
        "gpu": {},  # compute capability -> the solver's verdict (o, w, f, u) and the number of its reason
    }


def to_html(matrix: Matrix) -> str:
    data = json.dumps(page_data(matrix), separators=(",", ":")).replace("</", "<\\/")  # no "</script>" inside
    frameworks = sorted({b.package for b in matrix.frameworks})
    options = "".join(f'<option value="{html.escape(p)}">{html.escape(p)}</option>' for p in frameworks)
    gpu_names = "".join(f'<option value="{html.escape(g.name)}">' for g in matrix.gpus)
    return _PAGE.format(options=options, gpu_names=gpu_names, data=data, count=len(matrix.frameworks))


_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>dnnresolve compatibility matrix</title>
<style>
body {{ font: 14px/1.4 system-ui, sans-serif; margin: 1em; color: #111; }}
h1 {{ font-size: 1.3em; margin: 0 0 .3em; }}
form {{ display: flex; flex-wrap: wrap; gap: .5em 1em; margin: .5em 0 1em; align-items: end; }}
label {{ display: flex; flex-direction: column; font-size: .85em; color: #444; }}
input, select {{ font: inherit; padding: .15em .3em; min-width: 8em; }}
fieldset {{ display: flex; gap: 1em; border: 1px solid #bbb; padding: .3em .6em; }}
table {{ border-collapse: collapse; width: 100%; }}
th, td {{ border-bottom: 1px solid #ddd; padding: .2em .45em; text-align: left; vertical-align: top; }}
th {{ position: sticky; top: 0; background: #f4f4f4; }}
td a {{ color: inherit; text-decoration: none; }}
td a:hover {{ text-decoration: underline; }}
tr.o td.verdict {{ background: #d9f2d9; }} tr.w td.verdict {{ background: #fff2cc; }}
tr.f td.verdict {{ background: #f8d7d7; }} tr.u td.verdict {{ background: #eee; }}
#count {{ color: #444; margin: .3em 0; }}
@media print {{
  form, #help {{ display: none; }}
  body {{ margin: 0; font-size: 9pt; }}
  th {{ position: static; }}
  tr {{ break-inside: avoid; }}
  td a::after {{ content: ""; }}
}}
</style>
</head>
<body>
<h1>dnnresolve compatibility matrix</h1>
<p id="help">{count} releases, one row per build (a release and one of its CUDA variants). Every cell links to the
page its fact comes from. Type a driver and a GPU to see what runs on a machine.</p>
<form id="filters" onsubmit="return false">
<label>framework <select id="framework"><option value="">all</option>{options}</select></label>
<label>release <input id="release" placeholder="2.1"></label>
<label>CUDA <input id="cuda" placeholder="11.8"></label>
<label>cuDNN <input id="cudnn" placeholder="8.9"></label>
<fieldset><legend>what runs on my machine</legend>
<label>driver <input id="driver" placeholder="535.104.05"></label>
<label>GPU <input id="gpu" list="gpu-names" placeholder="Tesla T4 or 7.5"></label>
</fieldset>
</form>
<datalist id="gpu-names">{gpu_names}</datalist>
<div id="count"></div>
<table>
<thead><tr><th>framework</th><th>release</th><th>OS</th><th>CUDA</th><th>cuDNN</th><th>driver</th><th>Python</th>
<th>GPU code</th><th>on this machine</th></tr></thead>
<tbody id="rows"></tbody>
</table>
<script id="matrix-data" type="application/json">{data}</script>
<script>
"use strict";
const DATA = JSON.parse(document.getElementById("matrix-data").textContent);
const $ = (id) => document.getElementById(id);
const parts = (v) => v.split(".").map((x) => parseInt(x, 10) || 0);
function cmp(a, b) {{
  const x = parts(a), y = parts(b);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {{
    const d = (x[i] || 0) - (y[i] || 0);
    if (d) return d;
  }}
  return 0;
}}
// a version typed is a series: "11" matches 11.x, "2.1" matches 2.1 and 2.1.2 but not 2.10
const series = (value, typed) => value === typed || value.startsWith(typed + ".");
function gpuCc(typed) {{
  const t = typed.trim().toLowerCase();
  if (!t) return "";
  if (/^\\d+(\\.\\d+)?$/.test(t)) return t.includes(".") ? t : t + ".0";
  const hit = DATA.gpus.find((g) => g.name.toLowerCase() === t);
  return hit ? hit.cc : null;
}}
function link(text, href) {{
  const a = document.createElement("a");
  a.textContent = text;
  if (href) a.href = href;
  return a;
}}
function cell(tr, text, href, cls) {{
  const td = document.createElement("td");
  td.appendChild(link(text, href));
  if (cls) td.className = cls;
  tr.appendChild(td);
}}
function verdict(b, driver, cc) {{
  // [class, text]: the GPU check is the solver's, embedded; the driver against the CUDA table's minimums
  if (!driver && cc === "") return ["", ""];
  if (!b.cuda) return ["o", "CPU build"];
  let cls = "o", said = [];
  if (cc !== "") {{
    const v = cc === null ? "u" : (b.gpu[cc] || "u");
    said.push(cc === null ? "GPU not in the table" : v.length > 1 ? DATA.reasons[+v.slice(1)] : "GPU not known");
    cls = v[0];
  }}
  if (driver) {{
    if (b.driver && cmp(driver, b.driver) >= 0) said.push("driver ok");
    else if (b.driver_compat && cmp(driver, b.driver_compat) >= 0) {{
      said.push("driver through minor-version compatibility (>= " + b.driver_compat + ")");
      if (cls === "o") cls = "w";
    }} else {{
      said.push("needs driver >= " + (b.driver_compat || b.driver));
      cls = "f";
    }}
  }}
  return [cls, said.join("; ")];
}}
function render() {{
  const fw = $("framework").value, rel = $("release").value.trim(), cu = $("cuda").value.trim();
  const dnn = $("cudnn").value.trim(), driver = $("driver").value.trim(), cc = gpuCc($("gpu").value);
  const body = $("rows");
  body.textContent = "";
  let shown = 0;
  for (const b of DATA.builds) {{
    if (fw && b.package !== fw) continue;
    if (rel && !series(b.version, rel)) continue;
    if (cu && !series(b.cuda, cu)) continue;
    if (dnn && !b.cudnn.some((c) => series(c, dnn))) continue;
    const [cls, why] = verdict(b, driver, cc);
    const tr = document.createElement("tr");
    tr.className = cls;
    tr.dataset.package = b.package;
    tr.dataset.version = b.version;
    tr.dataset.cuda = b.cuda;
    tr.dataset.os = b.os;
    tr.dataset.verdict = cls;
    cell(tr, b.package, b.source);
    cell(tr, b.version, b.source);
    cell(tr, b.os, b.source);
    cell(tr, b.cuda || "CPU", b.cuda_source || b.source);
    cell(tr, b.cudnn.join(", ") || "-", b.source);
    cell(tr, b.driver ? ">= " + b.driver + (b.driver_compat ? " (" + b.driver_compat + ")" : "") : "-",
         b.driver_compat ? DATA.minor_compat : b.cuda_source);
    cell(tr, b.python.join(", "), b.source);
    cell(tr, b.code || "-", b.source);
    cell(tr, why, b.source, "verdict");
    body.appendChild(tr);
    shown++;
  }}
  $("count").textContent = shown + " of " + DATA.builds.length + " builds";
}}
for (const id of ["framework", "release", "cuda", "cudnn", "driver", "gpu"]) $(id).addEventListener("input", render);
render();
</script>
</body>
</html>
"""
