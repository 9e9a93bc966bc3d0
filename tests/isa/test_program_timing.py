"""Builder packing rules, the instruction table and the packet timing rules."""
import numpy as np
import pytest

import isa.hvx as hvx
from isa.hvx import Builder, R, V, W, TimingConfig, analyze
from isa.hvx.resources import fits


def test_list_instructions_contract():
    rows = hvx.list_instructions()
    assert len(rows) > 150
    for r in rows:
        assert {"name", "intrinsic", "resources", "latency"} <= set(r)
    names = {r["name"] for r in rows}
    assert {"vrmpybus_acc", "vdmpybus", "vmpybus", "vmpyewuh", "vasrwhrndsat", "vshuffvdd", "vdealvdd",
            "valignb", "vlalignb", "vcl0w", "vnormamtw", "lvsplatw", "vmux", "vd0", "vL32Ub_ai"} <= names


def test_slot_and_resource_rules():
    assert fits(("VX", "VX", "LD", "S_LD"))          # GEMM packet: two vrmpy + vector load + scalar load
    assert not fits(("VX", "VX", "VX"))              # only two multiply halves
    assert not fits(("VX_DV", "VX"))                 # double-width takes both halves
    assert not fits(("VS", "VS"))                    # one shift unit
    assert not fits(("VP_VS", "VP"))
    assert not fits(("LD", "LD"))                    # one HVX load per packet
    assert not fits(("ST", "ST"))
    assert not fits(("LDU", "S_LD"))                 # vmemu keeps slot 1 empty
    assert not fits(("VA",) * 5)


def test_builder_splits_dependent_instructions():
    b = Builder("t")
    b.A2_tfrsi(R(1), 0)
    b.vaddw(V(0), V(1), V(2))
    b.vaddw(V(3), V(0), V(2))     # reads v0 written just before -> new packet
    p = b.build()
    assert p.static_packets() == 2
    with pytest.raises(ValueError):
        with b.packet():
            b.vrmpybus(V(0), V(1), R(1))
            b.vrmpybus(V(2), V(1), R(1))
            b.vrmpybus(V(4), V(1), R(1))
    with pytest.raises(TypeError):
        b.vaddw(V(0), R(1), V(2))
    with pytest.raises(ValueError):
        W(3)


def _prog(body):
    b = Builder("t")
    body(b)
    return b.build()


def test_multiply_result_next_packet_stalls_but_chained_accumulator_does_not():
    stall = _prog(lambda b: (b.vrmpybus(V(0), V(1), R(1)), b.vaddw(V(2), V(0), V(3))))
    t = analyze(stall)
    assert t.packets == 2 and t.cycles == 3 and t.stalls["mpy_result"] == 1
    chain = _prog(lambda b: (b.vrmpybus_acc(V(0), V(1), R(1)), b.barrier(), b.vrmpybus_acc(V(0), V(2), R(1))))
    t = analyze(chain)
    assert t.packets == 2 and t.cycles == 2 and not t.stalls
    alu = _prog(lambda b: (b.vaddw(V(0), V(1), V(2)), b.vaddw(V(3), V(0), V(2))))
    assert analyze(alu).cycles == 2


def test_paired_threads_issue_every_other_cycle_hiding_single_stalls():
    p = _prog(lambda b: (b.vrmpybus(V(0), V(1), R(1)), b.vaddw(V(2), V(0), V(3))))
    t = analyze(p, TimingConfig(paired=True))
    assert t.cycles == 4 and "mpy_result" not in t.stalls and t.stalls["thread_pairing"] == 1


def test_loop_cost_is_first_plus_steady_iterations():
    def body(b):
        with b.loop(10):
            b.vrmpybus_acc(V(0), V(1), R(1))
            b.barrier()
            b.vaddw(V(5), V(0), V(3))         # stalls on the multiply (1 cycle per iteration)
    t = analyze(_prog(body))
    assert t.packets == 1 + 20 and t.stalls["mpy_result"] == 10
    assert t.class_counts["VX"] == 10


def test_scalar_read_of_hvx_written_data_pays_l2_latency_and_bytes_per_level():
    def body(b):
        o = b.buffer("S", 128)
        v = b.buffer("T", 128, level="vtcm")
        b.A2_tfrsi(R(1), o)
        b.A2_tfrsi(R(3), v)
        b.vS32b_ai(R(1), 0, V(0), buf="S")
        b.L2_loadri_io(R(2), R(1), 0, buf="S")
        b.vL32b_ai(V(1), R(3), 0, buf="T")
    t = analyze(_prog(body), TimingConfig(l2_read_thread_cycles=6))
    assert t.stalls["l2_scalar_read"] == 6
    assert t.bytes_stored["l2"] == 128 and t.bytes_loaded["vtcm"] == 128 and t.bytes_loaded["l2:scalar"] == 4


def test_ddr_buffers_pay_latency_once_and_bandwidth_per_vector():
    def body(b):
        o = b.buffer("D", 4 * 128, level="ddr")
        b.A2_tfrsi(R(1), o)
        with b.loop(4):
            b.vL32b_pi(V(0), R(1), 1, buf="D")
    cfg = TimingConfig(ddr_access_ns=100, clock_mhz=1000, ddr_bytes_per_cycle=32)
    t = analyze(_prog(body), cfg)
    assert t.stalls["ddr_latency"] == 100 and t.stalls["ddr_bandwidth"] == 4 * 3


def test_executor_runs_loops_and_rejects_out_of_range_access():
    def body(b):
        o = b.buffer("X", 256)
        b.A2_tfrsi(R(1), o)
        with b.loop(4):               # the 4th vector is past the buffer and its guard vector
            b.vL32b_pi(V(0), R(1), 1, buf="X")
    p = _prog(body)
    st = hvx.HvxState(2, p.mem_bytes)
    with pytest.raises(hvx.MemoryFault):
        hvx.run(p, st)
    st = hvx.HvxState(2, p.mem_bytes)
    st.R[1, 1] = 5
    p2 = _prog(lambda b: (b.buffer("X", 128), b.vL32b_ai(V(0), R(1), 0, buf="X")))
    with pytest.raises(hvx.MemoryFault):
        hvx.run(p2, st)           # address registers must agree across tiles


def test_scalar_ops():
    rs = np.array([5, -7, 2 ** 31 - 1, -2 ** 31])
    assert hvx.apply("A2_addi", rs, 1).tolist() == [6, -6, -2 ** 31, -2 ** 31 + 1]
    assert hvx.apply("S2_cl0", np.array([0, 1, -1, 255])).tolist() == [32, 31, 0, 24]
    assert hvx.apply("S2_asl_r_r", np.array([1, 1, -8]), np.array([3, -1, -2])).tolist() == [8, 0, -2]
    assert hvx.apply("S2_lsr_r_r", np.array([-1, 1]), np.array([28, -4])).tolist() == [15, 16]
    assert hvx.apply("A2_sub", np.array([10]), np.array([3])).tolist() == [7]
