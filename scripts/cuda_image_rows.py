"""Writes the [[cuda_image]] rows of the matrix from a clone of NVIDIA's CUDA image sources.

    python scripts/cuda_image_rows.py GIT_DIR > rows.toml

GIT_DIR is a clone (bare is fine) of https://gitlab.com/nvidia/container-images/cuda with its history. Every
Dockerfile the history ever held under ``dist/`` names one tag family (CUDA version, OS, flavour, cuDNN
variant); the newest version of each file gives the CUDA (``CUDA_VERSION``) and cuDNN (``NV_CUDNN_VERSION``,
older files ``CUDNN_VERSION``) the tag carried last. A tag is marked deleted when NVIDIA's tag lists at the
newest commit (doc/supported-tags.md, and doc/unsupported-tags.md: 'These tags still exist') do not name it:
EOL tags are deleted six months after EOL (doc/support-policy.md).
"""

from __future__ import annotations

import re
import subprocess
import sys

GITLAB = "https://gitlab.com/nvidia/container-images/cuda/-/blob"
_FLAVOURS = ("base", "runtime", "devel")
# another architecture's image: its NVIDIA_REQUIRE_CUDA differs (ppc64le's named no brands); an x86_64 host pulls amd64
_OTHER_ARCH = re.compile(r"-(?:ppc64le|arm64|aarch64|sbsa)(?:/|$)")
_REQUIRE = re.compile(
    r'^ENV NVIDIA_REQUIRE_CUDA(?:[ =]+"(?P<quoted>[^"]*)"|=(?P<word>\S+)| +(?P<rest>.+))$', re.MULTILINE
)
_OS = re.compile(r"^(ubuntu|centos|ubi|rockylinux|oraclelinux|amzn|azl|cm|opensuse|debian)[\d.]*")


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True, check=True, timeout=600).stdout


def os_name(text: str) -> str | None:
    text = text.split("-")[0]  # centos7-x86_64
    if not _OS.match(text):
        return None
    m = re.fullmatch(r"ubuntu(\d\d)\.?(\d\d)?", text)
    if m:
        return f"ubuntu{m.group(1)}.{m.group(2) or '04'}"
    return text


def family(path: str) -> tuple[str, str, str, str] | None:
    """(tag version, OS, flavour, cuDNN part of the tag) a dist/ Dockerfile builds, or None."""
    parts = path.split("/")[1:-1]
    if parts and parts[0] in ("end-of-life", "deprecated"):
        parts = parts[1:]
    if len(parts) < 3:
        return None
    if re.fullmatch(r"\d+\.\d+(\.\d+)?", parts[0]):
        version, os_dir, rest = parts[0], parts[1], parts[2:]
    elif len(parts) >= 3 and re.fullmatch(r"\d+\.\d+(\.\d+)?", parts[1]):
        os_dir, version, rest = parts[0], parts[1], parts[2:]
    else:
        return None
    os_ = os_name(os_dir)
    if os_ is None or rest[0] not in _FLAVOURS:
        return None
    cudnn = rest[1] if len(rest) > 1 else ""
    if cudnn and not cudnn.startswith("cudnn"):
        return None  # tensorrt and other variants: not a cuDNN tag
    return version, os_, rest[0], cudnn


def requirement(text: str) -> str | None:
    """NVIDIA_REQUIRE_CUDA of the amd64 image a Dockerfile builds (a multi-arch file sets it per architecture)."""
    amd64 = text.split("base-amd64", 1)[-1]
    m = _REQUIRE.search(amd64) or _REQUIRE.search(text)
    if m is None:
        return None
    # ENV NAME "value", ENV NAME=value, and ENV NAME value (the rest of the line is the value)
    value = m.group("quoted") if m.group("quoted") is not None else m.group("word") or m.group("rest")
    return " ".join(value.split())


def main(repo: str) -> None:
    head = git(repo, "rev-parse", "HEAD").strip()
    newest: dict[str, tuple[int, str]] = {}  # path -> (age, the newest commit that holds it); 0 is newest
    commit, age = "", 0
    for line in git(repo, "log", "--format=@%H", "--name-status", "--no-renames", "--", "dist").splitlines():
        if line.startswith("@"):
            commit, age = line[1:], age + 1
        elif line.endswith("Dockerfile"):
            status, path = line.split("\t", 1)
            if status != "D" and path not in newest:
                newest[path] = (age, commit)
    # one file per tag family: several layouts (ubuntu18, ubuntu1804, ubuntu18.04) built the same tags over time
    by_family: dict[tuple[str, str, str, str], tuple[int, str, str]] = {}
    for path, (age, c) in newest.items():
        fam = family(path)
        if fam is not None and (fam not in by_family or age < by_family[fam][0]):
            by_family[fam] = (age, c, path)
    # the condition the container toolkit checks is set by the base image (runtime and devel are built FROM it;
    # CUDA 8.0 had no base image: its runtime's)
    amd64: dict[tuple[str, str, str, str], tuple[int, str, str]] = {}
    for path, (age, c) in newest.items():
        fam = family(path)
        if fam is not None and not _OTHER_ARCH.search(path) and (fam not in amd64 or age < amd64[fam][0]):
            amd64[fam] = (age, c, path)
    required: dict[tuple[str, str], tuple[str, str]] = {}  # (version, OS) -> (NVIDIA_REQUIRE_CUDA, its file)
    for (version, os_, flavour, cudnn_tag), (_, c, path) in sorted(amd64.items()):
        if cudnn_tag or flavour == "devel" or ((version, os_) in required and flavour == "runtime"):
            continue
        req = requirement(git(repo, "show", f"{c}:{path}"))
        if req is not None:
            required[(version, os_)] = (req, f"{GITLAB}/{c}/{path}")
    listed = git(repo, "show", f"{head}:doc/supported-tags.md") + git(repo, "show", f"{head}:doc/unsupported-tags.md")
    exists = set(re.findall(r"`([\w.-]+)`", listed))
    rows: dict[tuple[str, str, str, bool, str], dict[str, set[str] | str]] = {}
    cuda_of: dict[str, str] = {}
    for fam, (_, c, path) in sorted(by_family.items()):
        version, os_, flavour, cudnn_tag = fam
        text = git(repo, "show", f"{c}:{path}")
        m = re.search(r"ENV CUDA_VERSION[ =]+\"?([\d.]+)", text)
        if m and version not in cuda_of:
            cuda_of[version] = m.group(1)
        cudnn = ""
        if cudnn_tag:
            amd64 = text.split("base-amd64", 1)[-1]
            m = re.search(r"(?:NV_)?CUDNN_VERSION[ =]+\"?([\d.]+)", amd64) or re.search(
                r"(?:NV_)?CUDNN_VERSION[ =]+\"?([\d.]+)", text
            )
            if m is None:
                print(f"# no cuDNN version in {path} at {c}", file=sys.stderr)
                continue
            cudnn = m.group(1)
        middle = f"{cudnn_tag}-" if cudnn_tag else ""
        tag = f"{version}-{middle}{flavour}-{os_}"
        deleted = tag not in exists
        req, req_path = required.get((version, os_), ("", ""))
        row = rows.setdefault(
            (version, cudnn_tag, cudnn, deleted, req),
            {"os": set(), "flavours": set(), "paths": set(), "commit": c, "required_in": set()},
        )
        assert isinstance(row["os"], set) and isinstance(row["flavours"], set) and isinstance(row["paths"], set)
        row["os"].add(os_)
        row["flavours"].add(flavour)
        row["paths"].add(f"{GITLAB}/{c}/{path}")
        if req_path:
            assert isinstance(row["required_in"], set)
            row["required_in"].add(req_path)

    def order(key: tuple[str, str, str, bool, str]) -> tuple[object, ...]:
        return (tuple(int(n) for n in key[0].split(".")), key[1], key[2], key[3], key[4])

    print(f"# generated by scripts/cuda_image_rows.py from {head} of gitlab.com/nvidia/container-images/cuda")
    for key in sorted(rows, key=order):
        version, cudnn_tag, cudnn, deleted, req = key
        row = rows[key]
        assert isinstance(row["os"], set) and isinstance(row["flavours"], set) and isinstance(row["paths"], set)
        oses = sorted(row["os"], key=lambda o: [int(n) if n.isdigit() else n for n in re.split(r"(\d+)", o)])
        flavours = [f for f in _FLAVOURS if f in row["flavours"]]
        print("\n[[cuda_image]]")
        print(f'tag = "{version}"')
        print(f'cuda = "{cuda_of.get(version, version)}"')
        if cudnn_tag:
            print(f'cudnn_tag = "{cudnn_tag}"')
            print(f'cudnn = "{cudnn}"')
        print(f"flavours = [{', '.join(repr(f).replace(chr(39), chr(34)) for f in flavours)}]")
        print(f"os = [{', '.join(chr(34) + o + chr(34) for o in oses)}]")
        print(f"deleted = {'true' if deleted else 'false'}")
        example = min(p for p in row["paths"] if "/cudnn" in p or not cudnn_tag)
        print(f'source = "{example}"')
        lists = "supported-tags.md and unsupported-tags.md"
        if deleted:
            note = f"not in NVIDIA's {lists} at {head[:8]}: EOL tags are deleted from Docker Hub and NGC"
        else:
            note = f"listed in NVIDIA's {lists} at {head[:8]}"
        if req:
            print(f'nvidia_require_cuda = "{req}"')
        sources = [f"{GITLAB}/{head}/doc/supported-tags.md", f"{GITLAB}/{head}/doc/unsupported-tags.md"]
        assert isinstance(row["required_in"], set)
        if req and min(row["required_in"]) != example:
            sources.append(min(row["required_in"]))  # the base image's Dockerfile, which sets the condition
        print(f"sources = [{', '.join(chr(34) + x + chr(34) for x in sources)}]")
        print(f'note = "{note}"')


if __name__ == "__main__":
    main(sys.argv[1])
