"""Names from a workload reach the terminal without control characters (no cursor moves, no
recolouring)."""
from __future__ import annotations

import unicodedata

from hypothesis import given, strategies as st

from socsim.report.console import printable

from tests.e2e.cli_helpers import invoke, write_workload


@given(st.text())
def test_printable_has_no_control_characters_and_keeps_the_rest(text):
    out = printable(text)
    assert not any(unicodedata.category(c).startswith("C") for c in out)
    if not any(unicodedata.category(c).startswith("C") for c in text):
        assert out == text


def test_a_name_with_a_newline_and_esc_is_shown_escaped(tmp_path):
    r = invoke("run", "--soc", "sd865", str(write_workload(tmp_path, name="evil\n\x1b[31mred")))
    assert r.exit_code == 0, r.output
    assert "\x1b" not in r.output and "evil\\n\\x1b[31mred" in r.output
