"""Error messages are printed as text, never as Rich markup: a user's '[/x]' or the '[ray]' of an
install hint comes out as typed, and never crashes the error printer."""
from __future__ import annotations

import importlib.util
from pathlib import Path

from click.testing import CliRunner

import socsim.api
from socsim.cli import main

QUICK = str(Path(__file__).resolve().parents[2] / "workloads" / "quickstart.yaml")


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def test_markup_in_user_input_is_printed_verbatim():
    r = invoke("run", "--soc", "[/x]", QUICK, "--quiet")
    assert r.exit_code == 2, r.output
    assert "[/x]" in r.output and "--soc" in r.output
    r = invoke("run", "--soc", "[bold]sd865[/bold]", QUICK, "--quiet")
    assert r.exit_code == 2 and "[bold]sd865[/bold]" in r.output, r.output


def test_markup_in_a_set_value_is_printed_verbatim():
    r = invoke("run", "--soc", "sd865", QUICK, "--set", "cpu.cores=[red]x[/red]", "--quiet")
    assert r.exit_code == 2, r.output
    assert "[red]x[/red]" in r.output or "'[red]x[/red]'" in r.output


def test_internal_error_with_brackets_is_printed_verbatim(monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("broken [/oops] thing")
    monkeypatch.setattr(socsim.api, "run", boom)
    r = invoke("run", "--soc", "sd865", QUICK, "--quiet")
    assert r.exit_code == 1, r.output
    assert "internal error" in r.output and "broken [/oops] thing" in r.output


def test_ray_hint_keeps_the_extra_and_installs_from_the_checkout(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a))
    r = invoke("sweep", "--soc", "sd865", QUICK, "--backend", "ray", "--grid", "batches=5", "--quiet")
    assert r.exit_code == 2, r.output
    assert 'pip install -e ".[ray]"' in r.output
    # an unrelated package owns the name "socsim" on PyPI: never tell users to install it from there
    assert "pip install 'socsim" not in r.output and "pip install socsim" not in r.output


def test_help_of_compare_and_sweep_documents_every_option():
    for cmd, opts in (("compare", ("--soc", "--set", "--json", "--quiet", "--deterministic", "--schedulers")),
                      ("sweep", ("--soc", "--json", "--quiet", "--deterministic", "--schedulers", "--backend"))):
        r = CliRunner().invoke(main, [cmd, "--help"], terminal_width=200)
        assert r.exit_code == 0
        lines = r.output.splitlines()
        for opt in opts:
            line = next(x for x in lines if x.strip().startswith(opt))
            # the option, its metavar (TEXT, KEY=VALUE), "[required]", then the help text
            help_words = [w for w in line.split()[1:] if not w.isupper() and not w.startswith("[")
                          and "=" not in w]
            assert len(help_words) >= 2, (cmd, line)
