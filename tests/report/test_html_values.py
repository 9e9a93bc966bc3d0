"""How report.html shows summary values: JSON spellings, numbers to 6 significant digits, long
lists cut with a note (summary.json holds them whole)."""
from socsim.report.html import _MAX_VALUE_CHARS, _format


def test_values_are_shown_as_json_with_enough_digits():
    assert _format(None) == ("null", False) and _format(True) == ("true", False)
    assert _format(2419.2) == ("2419.2", True)
    assert _format(12345) == ("12,345", True)
    assert _format(["a", None]) == ('["a", null]', False)


def test_a_long_list_is_cut_saying_so():
    text, _ = _format(["x" * 50] * 100)
    assert len(text) < _MAX_VALUE_CHARS + 80 and "more characters in summary.json" in text


def test_regenerating_reports_is_all_or_nothing(tmp_path):
    """A directory where report.html goes stops the regeneration before any report is replaced."""
    import pytest

    import socsim
    from socsim.report.writers import write_reports
    d = tmp_path / "run"
    socsim.run("sd865", dict(name="t", model="lenet", input=[1, 28, 28], batch_size=16, batches=2), out=d)
    (d / "report.html").unlink()
    (d / "report.html").mkdir()
    trace = (d / "trace.perfetto-trace").read_bytes()
    (d / "trace.perfetto-trace").write_bytes(b"old")
    with pytest.raises(IsADirectoryError):
        write_reports(d)
    assert (d / "trace.perfetto-trace").read_bytes() == b"old" and trace != b"old"
    assert not list(d.glob(".*.tmp*")) and not list(d.glob("*.tmp"))
