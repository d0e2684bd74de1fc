"""`plan --format requirements | conda`: the first option of each requirement as the file people commit.

``requirements``: exact pins, the index lines pip needs (``--index-url``, ``--extra-index-url``,
``--find-links``), each pin with a comment naming its matrix row's source; what pip cannot do (a module to
load, a new Python, a manual download) as comments at the top. ``conda``: an environment.yml with the Python
the option needs, conda's own packages and channels in the order given, and a ``pip:`` section for the rest.
`check` of either file for the same machine finds nothing wrong (tests/plan/test_plan_files.py)."""

from __future__ import annotations

from ..plan import Plan
from ..plan_options import Option
from ..steps import Step

# pip options that take a value, as a requirements file spells them (one per line, before the pins)
_INDEX_OPTIONS = {
    "--index-url": "--index-url",
    "-i": "--index-url",
    "--extra-index-url": "--extra-index-url",
    "--find-links": "--find-links",
    "-f": "--find-links",
}


class _Files:
    """What the first options of a plan install, gathered: pins, index lines, conda parts, what pip cannot do."""

    def __init__(self, plan: Plan) -> None:
        self.index: list[str] = []  # "--extra-index-url URL", in order, each once
        self.pins: list[tuple[str, str]] = []  # (requirement, its row's source)
        self.conda: list[str] = []  # conda packages (python=3.6 first where a new environment is made)
        self.channels: list[str] = []
        self.python = ""
        self.before: list[str] = []  # what a file cannot carry: a module to load, a manual step
        self.titles: list[str] = []
        for rp in plan.requirements:
            if not rp.options:
                self.before.append(f"{rp.result.requirement}: {rp.message or 'no option found'}")
                continue
            option = rp.options[0]
            self.titles.append(option.title)
            for step in option.steps:
                self._step(step, option)

    def _step(self, step: Step, option: Option) -> None:
        source = option.candidate.release.source if option.candidate else ""
        if step.kind == "pip":
            args = step.pip_args()[1:]  # after "install"
            i = 0
            while i < len(args):
                arg = args[i]
                if arg in _INDEX_OPTIONS and i + 1 < len(args):
                    line = f"{_INDEX_OPTIONS[arg]} {args[i + 1]}"
                    if line not in self.index:
                        self.index.append(line)
                    i += 2
                    continue
                if not arg.startswith("-"):
                    self.pins.append((arg, source))
                i += 1
        elif step.kind == "conda" and step.argv[1:2] == ("create",):
            self.python = next((a.split("=", 1)[1] for a in step.argv if a.startswith("python=")), self.python)
        elif step.kind == "conda" and step.argv[1:2] == ("install",):
            args = list(step.argv[2:])
            i = 0
            while i < len(args):
                if args[i] in ("-c", "--channel") and i + 1 < len(args):
                    if args[i + 1] not in self.channels:
                        self.channels.append(args[i + 1])
                    i += 2
                    continue
                if not args[i].startswith("-"):
                    self.conda.append(args[i])
                i += 1
        elif step.kind == "conda" and step.argv[1:2] == ("activate",):
            pass  # the environment the file describes
        else:
            self.before.append(step.shell if step.argv or step.env else step.description)


def to_requirements(plan: Plan) -> str:
    files = _Files(plan)
    lines = ["# written by `dnnresolve plan`: " + "; ".join(files.titles) if files.titles else "# dnnresolve plan"]
    if files.python:
        lines.append(f"# needs Python {files.python} (a new environment: dnnresolve plan --format conda writes one)")
    lines += [f"# first: {b}" for b in files.before]
    if files.conda:
        lines.append("# conda installs: " + " ".join(files.conda) + "".join(f" -c {c}" for c in files.channels))
    lines += files.index
    lines += [f"{pin}  # {source}" if source else pin for pin, source in files.pins]
    return "\n".join(lines) + "\n"


def to_environment_yml(plan: Plan, name: str = "") -> str:
    files = _Files(plan)
    env_name = name or _env_name(plan)
    lines = ["# written by `dnnresolve plan`: " + "; ".join(files.titles) if files.titles else "# dnnresolve plan"]
    lines += [f"# first: {b}" for b in files.before]
    lines.append(f"name: {_yaml(env_name)}")
    if files.channels:
        lines.append("channels:")
        lines += [f"  - {_yaml(c)}" for c in files.channels]
    lines.append("dependencies:")
    python = files.python or _series(plan)
    if python:
        lines.append(f"  - python={python}")
    lines += [f"  - {_yaml(p)}" for p in files.conda]
    if files.pins:
        lines.append("  - pip")
        lines.append("  - pip:")
        lines += [f"    - {_yaml(line)}" for line in files.index]
        lines += [f"    - {_yaml(pin)}" + (f"  # {source}" if source else "") for pin, source in files.pins]
    return "\n".join(lines) + "\n"


def _env_name(plan: Plan) -> str:
    first = plan.requirements[0].result.best if plan.requirements else None
    if first is None:
        return "dnnresolve"
    return f"{first.release.package}-{first.release.version}"


def _series(plan: Plan) -> str:
    """The Python the machine has, as a series (3.11): what the option's pins were checked against."""
    for rp in plan.requirements:
        check = rp.result.best.check("python") if rp.result.best else None
        if check is not None and check.found:
            parts = check.found.split(".")
            return ".".join(parts[:2])
    return ""


def _yaml(text: str) -> str:
    """A plain YAML scalar where it reads as one, else a double-quoted one."""
    plain = text and all(c.isalnum() or c in "-_.=<>!~+/:@" for c in text) and not text.startswith("-")
    if plain and not text.endswith(":"):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
