"""The console's notes on a finished run, from its summary."""
from socsim.report.console import notes, time_budget_note


def _summary(**info):
    return {"scheduler": "min-energy", "scheduler_info": info, "memory": {}, "engine": {}}


def test_a_run_over_its_time_budget_gets_a_note_naming_both_times():
    s = _summary(theta_t_s=7.5554, run_time_s=7.623529, within_budget=False)
    note = time_budget_note(s)
    assert note and "7.555 s" in note and "7.624 s" in note and "theta_t_s" in note
    assert note in notes(s)


def test_no_note_within_the_budget_or_without_one():
    assert time_budget_note(_summary(theta_t_s=8.0, run_time_s=7.9, within_budget=True)) is None
    assert time_budget_note(_summary()) is None
    assert time_budget_note({"scheduler": "x"}) is None
