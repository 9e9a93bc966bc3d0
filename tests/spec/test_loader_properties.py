"""Property tests of the spec/workload loader: random mutations are accepted or rejected cleanly.

A mutation of a valid SoC spec or workload (delete a key, add an unknown key, a wrong type, a
negative number, a random string, a zero batch size) must either validate or raise
:class:`socsim.errors.InputError` whose ``field`` names the mutated path (the path itself, a
part of it or a key below it) -- never any other exception.  Malformed YAML text must give an
InputError with a line number.
"""
from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from socsim.errors import InputError
from socsim.spec import list_socs, soc_specs_dir, workload_from_dict, workloads_dir
from socsim.spec.loader import parse_yaml, validate
from socsim.spec.soc import SocSpec
from socsim.spec.workload import Workload

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=20)


def _load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


SPECS = {name: _load(soc_specs_dir() / f"{name}.yaml") for name in list_socs()}
QUICKSTART = _load(workloads_dir() / "quickstart.yaml")


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, prefix + (i,))
    return out


def _get(data: Any, path: tuple) -> Any:
    for k in path:
        data = data[k]
    return data


def _wrong_type(value: Any, draw_text: str) -> Any:
    if isinstance(value, bool):
        return [value]
    if isinstance(value, (int, float)):
        return draw_text or "x"
    if isinstance(value, str):
        return {"not": "a string"}
    if isinstance(value, list):
        return draw_text or "x"
    if isinstance(value, dict):
        return [1, 2, 3]
    return {"was": "null"}


@st.composite
def mutations(draw, base: dict, extra_ops: tuple[str, ...] = ()):
    """(mutated dict, mutated path, op)."""
    data = copy.deepcopy(base)
    path = draw(st.sampled_from(_paths(data)))
    op = draw(st.sampled_from(("delete", "add_key", "wrong_type", "negative", "random_string",
                               "random_number") + extra_ops))
    parent = _get(data, path[:-1])
    key = path[-1]
    if op == "delete":
        del parent[key]
        if isinstance(parent, list):  # later items shift: the list as a whole is what changed
            path = path[:-1]
    elif op == "add_key":
        while not isinstance(_get(data, path), dict):  # the nearest enclosing mapping
            path = path[:-1]
        target = _get(data, path)
        new = "zz_" + draw(st.text(alphabet="abcdefghij_", min_size=1, max_size=8))
        target[new] = draw(st.one_of(st.integers(), TEXT, st.none()))
        path = path + (new,)
    elif op == "wrong_type":
        parent[key] = _wrong_type(parent[key], draw(TEXT))
    elif op == "negative":
        v = parent[key]
        parent[key] = -abs(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v else -1
    elif op == "random_string":
        parent[key] = draw(TEXT)
    elif op == "random_number":
        parent[key] = draw(st.one_of(st.integers(-10**6, 10**6),
                                     st.floats(allow_nan=False, allow_infinity=False)))
    elif op == "zero_batch":
        data["batch_size"] = 0
        path = ("batch_size",)
    return data, path, op


def _check_names_path(err: InputError, path: tuple) -> None:
    """The error's field is the mutated path, a part of it, or lies below it.

    Compared as dotted strings: mapping keys may themselves contain dots (``cpu.little`` rails).
    """
    assert err.field, f"InputError without a field: {err}"
    want = ".".join(str(p) for p in path)
    got = err.field
    if got == "(top level)":  # a whole-document check: its message must name the key
        assert str(path[0]) in err.message, f"top-level error does not name {path[0]!r}: {err}"
        return
    # a cross-field check may blame the other field of a pair in the same section, as long as
    # its message names the mutated one (dsp.opps removed -> "training_clock_mhz ... below the
    # lowest operating point ... OPPs 1171, 1402")
    cross = (got.split(".")[0] == want.split(".")[0]
             and any(isinstance(p, str) and p.lower() in err.message.lower() for p in path[1:]))
    assert got == want or want.startswith(got + ".") or got.startswith(want + ".") or cross, (
        f"error names {got!r}, mutated {want!r}: {err}")


def _accept_or_clean(fn, path: tuple) -> None:
    try:
        fn()
    except InputError as e:
        _check_names_path(e, path)


@SETTINGS
@given(st.sampled_from(sorted(SPECS)), st.data())
def test_soc_spec_mutations_accept_or_reject_cleanly(name, data):
    mutated, path, _ = data.draw(mutations(SPECS[name]))
    _accept_or_clean(lambda: validate(SocSpec, mutated, f"{name}.yaml"), path)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(SPECS)), st.data())
def test_soc_spec_mutations_through_yaml_text(name, data):
    mutated, path, _ = data.draw(mutations(SPECS[name]))
    text = yaml.safe_dump(mutated, sort_keys=False, allow_unicode=True)

    def go():
        parsed, lines = parse_yaml(text, f"{name}.yaml")
        try:
            validate(SocSpec, parsed, f"{name}.yaml", lines)
        except InputError as e:
            assert e.file == f"{name}.yaml"
            assert e.line is None or 1 <= e.line <= text.count("\n") + 1
            raise

    _accept_or_clean(go, path)


@SETTINGS
@given(st.data())
def test_workload_mutations_accept_or_reject_cleanly(data):
    mutated, path, op = data.draw(mutations(QUICKSTART, extra_ops=("zero_batch",)))
    _accept_or_clean(lambda: workload_from_dict(mutated, "quickstart.yaml"), path)
    text = yaml.safe_dump(mutated, sort_keys=False, allow_unicode=True)

    def via_text():
        parsed, lines = parse_yaml(text, "quickstart.yaml")
        validate(Workload, parsed, "quickstart.yaml", lines)

    _accept_or_clean(via_text, path)
    if op == "zero_batch":
        with pytest.raises(InputError) as ei:
            workload_from_dict(mutated, "quickstart.yaml")
        assert ei.value.field == "batch_size" and ei.value.value == 0


@pytest.mark.parametrize("bad", [0, -1, -64, "many", 2.5, None])
def test_bad_batch_size_names_field_and_value(bad):
    data = dict(QUICKSTART, batch_size=bad)
    with pytest.raises(InputError) as ei:
        workload_from_dict(data, "quickstart.yaml")
    assert ei.value.field == "batch_size"
    if bad is not None:
        assert ei.value.value == bad


# -- malformed YAML -----------------------------------------------------------------------------

QUICKSTART_TEXT = (workloads_dir() / "quickstart.yaml").read_text()
BAD_TOKENS = ["\t", ": :", "[", "]", "{", "}", '"', "'", "&a", "*a", "%", "@", "`", "- ", ": ", "\n  x", "!!",
              "|", ">", "#", ",", "?"]

# Regression examples below: a flow collection used as a mapping key, a recursive alias and a
# control character (a reader error, which carries a position but no mark) all give InputErrors
# with a line.


def _parse_or_line(text: str) -> None:
    try:
        parse_yaml(text, "w.yaml")
    except InputError as e:
        assert e.file == "w.yaml"
        assert e.line is not None and 1 <= e.line <= text.count("\n") + 2, e


@settings(max_examples=200, deadline=None)
@given(st.integers(0, len(QUICKSTART_TEXT)), st.lists(st.sampled_from(BAD_TOKENS), min_size=1, max_size=3))
def test_malformed_yaml_gives_input_error_with_line(pos, tokens):
    _parse_or_line(QUICKSTART_TEXT[:pos] + "".join(tokens) + QUICKSTART_TEXT[pos:])


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200))
def test_random_text_parses_or_gives_line(text):
    _parse_or_line(text)


@pytest.mark.parametrize("text", ["a: [1, 2\n", "a: b\n\tc: d\n", "a: 1\na: 2\n", "- a\nb: c\n",
                                  "a: *nope\n", "x: {a: 1\n", 'x: "unterminated\n'])
def test_malformed_yaml_examples(text):
    with pytest.raises(InputError) as ei:
        parse_yaml(text, "w.yaml")
    assert ei.value.line is not None and ei.value.file == "w.yaml"


@pytest.mark.parametrize("text", ["{[1]: 2}\n", "? [a]\n: b\n", "{? {a: 1}: 2}\n"])
def test_unhashable_key_is_input_error(text):
    with pytest.raises(InputError):
        parse_yaml(text, "w.yaml")


def test_merge_key_is_named():
    with pytest.raises(InputError) as ei:
        parse_yaml("base: &b {a: 1}\nx:\n  <<: *b\n", "w.yaml")
    assert "merge keys ('<<')" in ei.value.message and ei.value.line == 3


def test_recursive_alias_is_input_error():
    with pytest.raises(InputError):
        parse_yaml("a: &x [*x]\n", "w.yaml")


def test_control_character_error_has_line():
    with pytest.raises(InputError) as ei:
        parse_yaml("name: x\nmodel: \x00\n", "w.yaml")
    assert ei.value.line == 2


def test_aliases_of_aliases_are_refused_before_they_expand():
    """"Billion laughs": 9 lines that expand to 10^8 values; refused at the cap, not after
    minutes and gigabytes."""
    text = "a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + "".join(
        f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 9))
    with pytest.raises(InputError) as ei:
        parse_yaml(text, "w.yaml")
    assert "once its aliases are expanded" in ei.value.message and ei.value.line is not None


@pytest.mark.parametrize("depth", [1000, 5000])
def test_nesting_too_deep_for_the_parser_is_input_error(depth):
    with pytest.raises(InputError) as ei:
        parse_yaml("input: " + "[" * depth + "1" + "]" * depth + "\n", "w.yaml")
    assert "nesting" in ei.value.message and ei.value.file == "w.yaml"
