"""The install commands of a Dockerfile's ``RUN`` steps: pip (``pip``, ``pip3``, ``python -m pip``, ``uv pip``),
conda (``conda``, ``mamba``, ``micromamba``) and apt (the Python, CUDA and cuDNN packages it installs).

A RUN line is shell: it is split into simple commands at ``&&``, ``||``, ``;`` and ``|``, each into words
(``shlex``), with ``$VAR`` and ``${VAR}`` replaced by the build's ARG and ENV values where known.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator, Mapping

from ..records import field, record

_SEPARATORS = re.compile(r"&&|\|\||;|\|(?!\|)|\n")
_VAR = re.compile(r"\$(?:\{(?P<braced>[A-Za-z_]\w*)(?::?(?P<op>[-+])(?P<word>[^}]*))?\}|(?P<bare>[A-Za-z_]\w*))")
_PIP = re.compile(r"^(?:.*/)?pip(?:\d(?:\.\d+)?)?$")
_PYTHON = re.compile(r"^(?:.*/)?python(?:\d(?:\.\d+)?)?$")
_CONDA = re.compile(r"^(?:.*/)?(?:conda|mamba|micromamba)$")
_PREFIXES = {"sudo", "time", "exec", "nohup", "env", "command"}
# pip install options that take a value (the value is the next word unless written --opt=value)
_PIP_VALUED = {
    "-r", "--requirement", "-c", "--constraint", "-i", "--index-url", "--extra-index-url", "-f", "--find-links",
    "-e", "--editable", "-t", "--target", "--prefix", "--root", "--src", "--progress-bar", "--timeout",
    "--retries", "--trusted-host", "--platform", "--python-version", "--implementation", "--abi",
    "--only-binary", "--no-binary", "--upgrade-strategy", "--cache-dir", "--log", "--proxy", "--cert",
    "--client-cert", "--global-option", "--install-option", "--config-settings", "-C", "--python",
    "--exists-action", "--use-feature", "--use-deprecated", "--root-user-action", "--report", "-p",
}  # fmt: skip
_CONDA_VALUED = {"-c", "--channel", "-n", "--name", "-p", "--prefix", "-f", "--file", "--override-channels-x"}


@record
class Command:
    """One install command of a RUN step: its tool ("pip", "conda", "apt"), the words after the subcommand."""

    tool: str
    words: list[str] = field(default_factory=list)
    unexpanded: list[str] = field(default_factory=list)  # words that name a variable no ARG or ENV defines


def expand(text: str, env: Mapping[str, str], missing: list[str] | None = None) -> str:
    """``$VAR``, ``${VAR}``, ``${VAR:-default}`` and ``${VAR:+alt}`` with the values known; an unknown variable
    is left as written (and named in ``missing``)."""

    def sub(m: re.Match[str]) -> str:
        name = m.group("braced") or m.group("bare")
        value = env.get(name)
        op = m.group("op")
        if op == "-":
            return value if value else expand(m.group("word") or "", env, missing)
        if op == "+":
            return expand(m.group("word") or "", env, missing) if value else ""
        if value is None:
            if missing is not None:
                missing.append(name)
            return m.group(0)
        return value

    return _VAR.sub(sub, text)


def commands(script: str, env: Mapping[str, str]) -> Iterator[Command]:
    """The pip, conda and apt install commands of one RUN step's shell text."""
    for part in _SEPARATORS.split(script):
        words = _words(part)
        while words and (words[0] in _PREFIXES or re.match(r"^[A-Za-z_]\w*=", words[0])):
            words = words[1:]  # sudo, env, VAR=value before the command
        if not words:
            continue
        missing: list[str] = []
        words = [expand(w, env, missing) for w in words]
        command = _install(words)
        if command is not None:
            command.unexpanded = missing
            yield command


def _words(text: str) -> list[str]:
    try:
        return shlex.split(text, comments=True)
    except ValueError:  # an unbalanced quote inside one part: words as written
        return text.split()


def _install(words: list[str]) -> Command | None:
    head = words[0]
    rest = words[1:]
    if _PYTHON.match(head) and rest[:2] == ["-m", "pip"]:
        rest = rest[2:]
        head = "pip"
    elif head == "uv" and rest[:1] == ["pip"]:
        rest = rest[1:]
        head = "pip"
    if _PIP.match(head) or head == "pip":
        return Command("pip", rest[1:]) if rest[:1] == ["install"] else None
    if _CONDA.match(head):
        if rest[:1] in (["install"], ["create"]):
            return Command("conda", rest[1:])
        if rest[:2] == ["env", "create"]:
            return Command("conda-env", rest[2:])
        return None
    if head in ("apt-get", "apt", "yum", "dnf", "microdnf") and "install" in rest:
        return Command("apt", [w for w in rest[rest.index("install") + 1 :] if not w.startswith("-")])
    return None


def pip_arguments(words: list[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """(options with their values, requirement words) of ``pip install`` words."""
    options: list[tuple[str, str]] = []
    reqs: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w.startswith("-") and len(w) > 1:
            name, eq, value = w.partition("=")
            if not eq and name in _PIP_VALUED:
                value = words[i + 1] if i + 1 < len(words) else ""
                i += 1
            elif not eq and len(name) > 2 and name[1] != "-" and name[:2] in _PIP_VALUED:
                name, value = name[:2], name[2:]  # -rrequirements.txt
            options.append((name, value))
        else:
            reqs.append(w)
        i += 1
    return options, reqs


def conda_arguments(words: list[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """(options with their values, package specs) of ``conda install`` / ``conda create`` words."""
    options: list[tuple[str, str]] = []
    specs: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w.startswith("-"):
            name, eq, value = w.partition("=")
            if not eq and name in _CONDA_VALUED:
                value = words[i + 1] if i + 1 < len(words) else ""
                i += 1
            options.append((name, value))
        else:
            specs.append(w)
        i += 1
    return options, specs
