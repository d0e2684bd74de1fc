"""A release whose install step pip refuses (issue #21, Deliver 5): the plan offers, each as its own option, the
release asked in the form that installs (the plain wheel on the system's CUDA and cuDNN), one of the same series,
and the newest; every pip step it gives is one pip resolves (tests/data/pip_installs.json, pip 26.3 --dry-run
against https://pypi.org/simple, 2026-12-01)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

RunCli = Callable[..., CompletedProcess[str]]

RECORDED = json.loads((Path(__file__).parents[1] / "data" / "pip_installs.json").read_text(encoding="utf-8"))
RESOLVES = {i["asked"]: i["resolves"] for i in RECORDED["installs"]}
MACHINE = ("--no-detect", "--cuda", "12.2", "--cudnn", "8.9", "--driver", "535", "--python", "3.11")


def _options(run_cli: RunCli, spec: str) -> list[dict[str, Any]]:
    r = run_cli("plan", spec, *MACHINE, "--json")
    assert r.returncode in (0, 1), r.stderr
    options: list[dict[str, Any]] = json.loads(r.stdout)["requirements"][0]["options"]
    return options


def _pip_pins(option: dict[str, Any]) -> list[str]:
    return [s["argv"][-1] for s in option["steps"] if s["kind"] == "pip"]


def test_tf_2_15_0_offers_the_plain_wheel_and_the_same_series(run_cli: RunCli) -> None:
    options = _options(run_cli, "tensorflow==2.15.0")
    pins = [_pip_pins(o) for o in options]
    assert ["tensorflow==2.15.0"] in pins, [o["title"] for o in options]  # the release asked, as pip installs it
    plain = options[pins.index(["tensorflow==2.15.0"])]
    assert "CUDA 12.2" in plain["title"] and "cuDNN" in plain["title"], plain["title"]
    assert ["tensorflow[and-cuda]==2.15.1"] in pins, [o["title"] for o in options]  # one of the same series
    assert pins.index(["tensorflow==2.15.0"]) == 0  # the least change first: the release asked


def test_every_pip_step_offered_is_one_pip_resolves(run_cli: RunCli) -> None:
    for spec in ("tensorflow==2.15.0", "tensorflow[and-cuda]==2.15.0"):
        for option in _options(run_cli, spec):
            for pin in _pip_pins(option):
                assert RESOLVES.get(pin, True), (spec, option["title"], pin)


def test_an_offer_installs_the_release_its_title_names(run_cli: RunCli) -> None:
    for option in _options(run_cli, "tensorflow==2.15.0"):
        named = re.match(r"use (\S+) (\S+) instead", option["title"])
        if named is None:
            continue
        assert any(pin.endswith(f"=={named.group(2)}") for pin in _pip_pins(option)), option


def test_a_system_cudnn_that_does_not_fit_still_gets_the_same_series(run_cli: RunCli) -> None:
    # cuDNN 8.6 in use: the plain wheel (built against 8.9) would need another; the and-cuda form brings its own
    r = run_cli("plan", "tensorflow==2.15.0", *MACHINE[:4], "8.6", *MACHINE[5:], "--json")
    options = json.loads(r.stdout)["requirements"][0]["options"]
    pins = [_pip_pins(o) for o in options]
    assert ["tensorflow[and-cuda]==2.15.1"] in pins, [o["title"] for o in options]
