"""Property tests: any input either builds or fails with ModelError; work scales with batch."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from socsim.workload import ModelError, build_model, list_models, training_graph, translate

image = st.tuples(st.integers(1, 4), st.integers(1, 160), st.integers(1, 160))
sequence = st.one_of(st.tuples(st.integers(1, 600)),
                     st.tuples(st.integers(1, 600), st.sampled_from([64, 128, 100, 512])))


@st.composite
def jobs(draw):
    name = draw(st.sampled_from(list_models()))
    shape = draw(sequence if name == "bert-small" else st.one_of(image, sequence))
    return name, shape, draw(st.integers(-1, 50)), draw(st.integers(1, 8))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs(), st.sampled_from(["fp32", "niti", "octo", "mnn-int8", "qat"]))
def test_builds_or_raises_model_error(job, precision) -> None:
    name, shape, classes, batch = job
    try:
        model = build_model(name, shape, classes)
    except ModelError as err:
        assert err.field in ("input", "num_classes")
        return
    one = translate(training_graph(model, 1), precision)
    g = one.with_batch(batch)
    assert g.total_macs == batch * one.total_macs  # MACs are linear in the batch
    assert g.forward_macs == batch * one.forward_macs
    assert g.param_count == one.param_count
    assert g.peak_memory_bytes >= one.peak_memory_bytes
    assert len(g.live_bytes()) == len(g.ops)
