"""What each subcommand's ``--help`` says beyond its options: a description, examples to copy, and what its exit
status means. Plain data, kept out of cli.py; tests/test_docs_commands.py runs every example offline."""

from __future__ import annotations

from typing import NamedTuple

_USAGE = "bad usage or unreadable input: one line naming the file and line (--debug shows a traceback)"
_INTERNAL = "an internal error of dnnresolve itself: one line; please report it"


class CommandHelp(NamedTuple):
    description: str
    examples: tuple[tuple[str, str], ...]  # (command, what it does)
    exit_statuses: tuple[tuple[int, str], ...]


HELP: dict[str, CommandHelp] = {
    "detect": CommandHelp(
        "Reads what this machine provides (the NVIDIA driver, GPUs and their compute capability, CUDA toolkits, "
        "cuDNN installs, the target Python and its frameworks, the conda environment, environment modules) and "
        "says where each fact was found. --json writes a runtime profile that plan and check read back with "
        "--target on another machine. Nothing is kept between runs.",
        (
            ("dnnresolve detect", "what this machine has, each fact with where it was found"),
            ("dnnresolve detect --json > node.json", "a profile for 'plan --target node.json' elsewhere"),
        ),
        (
            (0, "the machine was read; a probe that failed is a note in the output"),
            (1, "not used: what detection cannot read is a note, not a failure"),
            (2, _USAGE),
            (70, _INTERNAL),
        ),
    ),
    "explain": CommandHelp(
        "Finds every known CUDA, cuDNN and driver error in a text (the arguments, --file LOG, or standard "
        "input), decodes its numbers, names the rule the framework applied and gives ranked fixes with the page "
        "where the message is seen. --gpu, --driver, --cuda, --cudnn and --python describe the machine and make "
        "the fixes concrete. A log of any size is streamed.",
        (
            ('dnnresolve explain "no kernel image is available for execution on the device"', "decode a message"),
            ("dnnresolve explain --file train.log --json", "every known error in a log, as JSON"),
        ),
        (
            (0, 'not used: a text handed to explain is never "all good"'),
            (1, "problems were found, or none that dnnresolve knows (it never guesses)"),
            (2, "the input cannot be read (no such file, a directory, a binary file) or a flag is wrong"),
            (70, _INTERNAL),
        ),
    ),
    "plan": CommandHelp(
        "Checks the release pip would pick for each requirement against the machine (operating system, Python, "
        "driver, GPU architecture, CUDA toolkit, cuDNN) and ranks the ways to get there, least privilege "
        "first: a module to load, a library already on disk, another CUDA build, a new environment, another "
        "release, a manual download, a driver upgrade. The machine is detected, or described by --target and "
        "the flags, which override detection.",
        (
            ('dnnresolve plan tensorflow-gpu==1.0 --driver 375.26 --gpu "Tesla K20m"', "the classic case"),
            ("dnnresolve plan 'torch>=2.1' --target node.json --format sh", "a script for another machine"),
            (
                "dnnresolve plan torch==2.1.0 --driver 470.82.01 --format requirements",
                "a requirements file with the index lines its pins need",
            ),
            (
                "dnnresolve plan tensorflow==2.4.0 --driver 535.104.05 --format dockerfile",
                "a Dockerfile on a published nvidia/cuda image with that CUDA and cuDNN (a python image for "
                "wheels that bring their own), for this host's driver",
            ),
            ("dnnresolve plan torch==2.8.0 --fleet fleet", "a verdict per group of a cluster's alike nodes"),
        ),
        (
            (
                0,
                "the machine already runs every requirement and it is installed; a line its marker excludes on "
                "the target, or one that names no release (a local path, -e ., a VCS or URL), is a note and "
                "counts for nothing; with --format dockerfile: the written Dockerfile runs on the host's driver "
                "and GPUs",
            ),
            (
                1,
                "steps are needed, or nothing in the matrix runs here; with --format dockerfile: the file is "
                "written, but the host's driver or GPU stands in the way (no image changes that)",
            ),
            (
                2,
                _USAGE + "; with --format dockerfile also when no published image fits (NVIDIA deleted every "
                "nvidia/cuda tag before CUDA 11.0) or the build is a download: nothing is written",
            ),
            (70, _INTERNAL),
        ),
    ),
    "check": CommandHelp(
        "Vets requirement files (requirements*.txt, pyproject.toml, environment.yml, Pipfile, or the ones in a "
        "directory) against a target machine and the compatibility matrix, for CI, pre-commit and pull-request "
        "comments. The target comes from the flags, --target, or [tool.dnnresolve] in pyproject.toml; this "
        "machine is never used: without a target only the files' own consistency is checked.",
        (
            ("dnnresolve check requirements.txt --driver 535.104.05 --gpu A100", "one file, for a described machine"),
            ("dnnresolve check . --format sarif > dnnresolve.sarif", "the current directory, for code scanning"),
        ),
        (
            (0, "no errors (warnings and notes do not fail, unless --strict)"),
            (1, "errors were found (warnings too with --strict)"),
            (2, _USAGE),
            (70, _INTERNAL),
        ),
    ),
    "doctor": CommandHelp(
        "Says which Python it read and what it found of the machine (driver, GPUs, CUDA, cuDNN), then checks "
        "each GPU framework installed in that Python against what the machine would load, and reads the GPU "
        "code their own libraries carry (never importing them) to tell whether kernels run on each GPU.",
        (
            ("dnnresolve doctor", "the frameworks of the Python in use, checked against this machine"),
            ("dnnresolve doctor --json", "the same, as JSON"),
        ),
        (
            (0, "every framework installed runs here as installed, or none is installed"),
            (1, "one does not: a missing library, no kernels for the GPU, a CPU-only build beside a GPU"),
            (2, _USAGE),
            (70, _INTERNAL),
        ),
    ),
    "matrix": CommandHelp(
        "Shows rows of the curated compatibility matrix: what each framework release was built with (Python, "
        "CUDA, cuDNN, minimum driver, GPU code) and the public page each fact comes from. With no SPEC, the "
        "packages it knows.",
        (
            ("dnnresolve matrix torch==2.1.0", "every CUDA build of one release"),
            ("dnnresolve matrix tensorflow --cudnn 8.6", "the releases built against cuDNN 8.6"),
            ("dnnresolve matrix --format html --output matrix.html", "the whole matrix as one page, to filter"),
        ),
        (
            (0, "rows were found"),
            (1, "no row matches"),
            (2, _USAGE),
            (70, _INTERNAL),
        ),
    ),
    "update": CommandHelp(
        "Fetches a newer compatibility matrix over https, checks it against its published sha256 and the "
        "schema, and caches it; later commands use it (and say so on stderr) unless --offline. A failed "
        "download leaves the cache as it was.",
        (
            ("dnnresolve update", "from the default URL (or $DNNRESOLVE_UPDATE_URL)"),
            ("dnnresolve update --url https://mirror.example.org/compat_matrix.toml", "from a mirror"),
        ),
        (
            (0, "the matrix was cached, or is already current"),
            (1, "not used"),
            (2, "the download or its checks failed (network, sha256, schema, deadline), or bad usage"),
            (70, _INTERNAL),
        ),
    ),
    "install": CommandHelp(
        "Carries out a plan's first option: shows its steps, asks (or --yes), runs the pip steps with this "
        "Python and prints the conda, module and manual steps for your own shell. A package the matrix does not "
        "know is installed with plain pip.",
        (
            ("dnnresolve install torch==2.1.0 --dry-run", "the steps only; nothing runs"),
            ("dnnresolve install 'tensorflow[and-cuda]==2.15.1' --yes", "run the pip steps without asking"),
        ),
        (
            (0, "every pip step ran (or --dry-run)"),
            (1, "a step failed: it is named, and the steps after it did not run"),
            (2, "bad input, or no confirmation: no terminal to ask on without --yes, or the answer was no"),
            (70, _INTERNAL),
        ),
    ),
    "fleet": CommandHelp(
        "'collect' reads a Slurm cluster: sinfo names its nodes, their partitions, features, GRES and state; "
        "srun runs 'dnnresolve detect --json' once on each node that takes jobs (a few at a time, each with a time "
        "limit), and a node that is down, drained or not responding is listed with Slurm's reason, not waited "
        "for. DIR gets one profile per node and fleet.json, replaced whole. 'plan SPEC --fleet DIR' and 'check "
        "FILE --fleet DIR' then answer per group of alike nodes. --no-jobs runs no job: it estimates each node "
        "from its GPU GRES type and features, and every answer made from it says so.",
        (
            ("dnnresolve fleet collect --out fleet --partition gpu", "a profile per node of partition gpu"),
            ("dnnresolve fleet collect --out fleet --no-jobs", "no job: estimates from sinfo's GRES and features"),
        ),
        (
            (0, "every node listed was read (or estimated)"),
            (1, "a node could not be read: it is listed with the reason"),
            (2, "bad usage, sinfo missing or failing, or an --out that holds something else than a fleet"),
            (70, _INTERNAL),
        ),
    ),
}

TOP_DESCRIPTION = "Which CUDA / cuDNN / driver does this framework need, and what do I do now?"
TOP_EPILOG = (
    "Run 'dnnresolve COMMAND --help' for a command's description, options and examples.\n\n"
    "Exit status:\n"
    "  0   all good\n"
    "  1   problems found\n"
    f"  2   {_USAGE}\n"
    f"  70  {_INTERNAL}"
)


def description(command: str) -> str:
    """What ``command`` does, in sentences; ``"dnnresolve"`` for the whole command line."""
    return TOP_DESCRIPTION if command == "dnnresolve" else HELP[command].description


def epilog(command: str) -> str:
    """The examples and exit statuses, laid out for cli's formatter: commands are kept whole, the rest wraps."""
    if command == "dnnresolve":
        return TOP_EPILOG
    h = HELP[command]
    lines = ["Examples:"]
    for cmd, what in h.examples:
        lines += [f"  {cmd}", f"      {what}"]
    lines += ["", "Exit status:"]
    lines += [f"  {code:<3} {meaning}" for code, meaning in h.exit_statuses]
    return "\n".join(lines)
