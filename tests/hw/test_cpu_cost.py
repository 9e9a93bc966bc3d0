"""CPU cost model: compute scaling, slowest core, memory-bound behaviour and thread contention."""
import pytest
from hypothesis import given, settings, strategies as st

from socsim.hw import forkjoin
from socsim.hw.cost import CpuConfig
from socsim.hw.cpu import CpuCostModel
from socsim.spec import load_soc
from socsim.spec.coretypes import kernel_power
from socsim.workload.ops import Op, make_params


@pytest.fixture(scope="module")
def soc():
    return load_soc("sd865")


@pytest.fixture(scope="module")
def model(soc):
    return CpuCostModel(soc)


def _cfg(soc, cores, scale=1.0):
    return CpuConfig(tuple(cores), tuple(sorted((c.name, c.max_mhz * scale) for c in soc.cpu.clusters)))


CONV = Op("c", "conv2d", "forward", "l", "fp32", make_params(batch=8, cin=64, h=32, w=32, cout=64, kh=3, kw=3,
                                                              stride=1, pad=1, groups=1, oh=32, ow=32))
DW = Op("d", "dwconv2d", "forward", "l", "fp32", make_params(batch=16, cin=96, h=112, w=112, cout=96, kh=3, kw=3,
                                                              stride=1, pad=1, groups=96, oh=112, ow=112))


def test_conv_scales_with_cores(soc, model, monkeypatch):
    t1 = model.cost(CONV, _cfg(soc, [4])).time_s
    t4 = model.cost(CONV, _cfg(soc, [4, 5, 6, 7])).time_s
    # with the fork-join mechanisms (socsim.hw.forkjoin: serial part, background preemption of
    # the full big domain, fitted since MNN's Express training step is costed) four big cores
    # are well short of 4x (phones ~2.1-2.3x on whole steps, where the fully connected layers'
    # two MatMul threads and MNN's SGD chain take more: tests/hw/test_mnn_matmul_split.py)
    ratio = t1 / t4
    # without them the compute-bound op scales near-linearly: the mechanisms, not the compute
    # or memory side, take the rest
    monkeypatch.setattr(forkjoin, "SERIAL_FRACTION", 0.0)
    monkeypatch.setattr(forkjoin, "BACKGROUND_UTIL_TOP", {"little": 0.0, "big": 0.0})
    bare = CpuCostModel(soc)
    bare_ratio = bare.cost(CONV, _cfg(soc, [4])).time_s / bare.cost(CONV, _cfg(soc, [4, 5, 6, 7])).time_s
    assert 3.3 < bare_ratio <= 4.1
    assert 2.0 < ratio < 0.9 * bare_ratio


def test_depthwise_does_not_scale(soc, model):
    # memory-bound: 4 big cores are slower than 2 (shared DRAM + row-buffer interference)
    t2 = model.cost(DW, _cfg(soc, [4, 5])).time_s
    t4 = model.cost(DW, _cfg(soc, [4, 5, 6, 7])).time_s
    t1 = model.cost(DW, _cfg(soc, [4])).time_s
    assert t4 > t2
    assert t1 / t4 < 2.0


def test_slowest_core_sets_pace(soc, model):
    big = model.cost(CONV, _cfg(soc, [4, 5])).time_s
    mixed = model.cost(CONV, _cfg(soc, [0, 4])).time_s
    assert mixed > 1.5 * big


def test_memory_bound_op_less_sensitive_to_frequency(soc, model):
    relu = Op("r", "relu", "forward", "l", "fp32", make_params(n=8 << 20), flops=8 << 20,
              bytes_read=32 << 20, bytes_written=32 << 20)
    r_conv = model.cost(CONV, _cfg(soc, [4], 0.5)).time_s / model.cost(CONV, _cfg(soc, [4])).time_s
    r_relu = model.cost(relu, _cfg(soc, [4], 0.5)).time_s / model.cost(relu, _cfg(soc, [4])).time_s
    assert r_conv > 1.8 and r_relu < 1.3


def test_int8_faster_than_fp32(soc, model):
    g32 = Op("g", "gemm", "forward", "l", "fp32", make_params(m=512, k=512, n=512))
    g8 = Op("g", "gemm", "forward", "l", "int8", make_params(m=512, k=512, n=512))
    assert model.cost(g8, _cfg(soc, [7])).time_s < 0.6 * model.cost(g32, _cfg(soc, [7])).time_s


def test_fields_filled(soc, model):
    c = model.cost(CONV, _cfg(soc, [0, 1, 4]))
    d = dict(c.detail)
    assert dict(c.busy) == {"little": 2, "mid": 1}
    # activity is relative to the EAS reference load; dense kernels may exceed it, up to the
    # highest KERNEL_POWER of the cores used (socsim.spec.coretypes)
    top = max(kernel_power(soc.cpu.cluster_of(i).core_type) for i in (0, 1, 4))
    assert 0 < c.activity <= top and c.cycles > 0 and c.dram_bytes > 0
    assert c.time_s == pytest.approx(c.cycles / (c.freq_mhz * 1e6) + c.stall_s, rel=1e-6)
    assert 0 <= d["hit_rate_L1D"] <= 1 and "hit_rate_L3" in d


def test_memoised(soc, model):
    assert model.cost(CONV, _cfg(soc, [4])) is model.cost(CONV, _cfg(soc, [4]))


def test_swan_memory_bound_depthwise_slower_on_four_cores(soc):
    # pub: Swan (docs/seeds.md 3): threads of a cluster share L3/SLC and DRAM, so a memory-bound
    # depthwise conv runs slower on 4 big cores than on 1 while a 3x3 conv scales
    m = CpuCostModel(soc)
    freqs = tuple(sorted((c.name, c.max_mhz) for c in soc.cpu.clusters))

    def t(kind, cores):
        p = make_params(batch=16, cin=96, h=112, w=112, cout=96, kh=3, kw=3, stride=1, pad=1,
                        groups=96 if kind == "dwconv2d" else 1, oh=112, ow=112)
        return m.cost(Op("x", kind, "forward", "l", "fp32", p), CpuConfig(cores, freqs)).time_s

    dw = {n: t("dwconv2d", cores) for n, cores in ((1, (4,)), (2, (4, 5)), (4, (4, 5, 6, 7)))}
    conv = {n: t("conv2d", cores) for n, cores in ((1, (4,)), (2, (4, 5)), (4, (4, 5, 6, 7)))}
    assert dw[2] < dw[1] and dw[4] > dw[1]                 # contention wins from 2 to 4 threads
    assert conv[4] < 0.45 * conv[1] and conv[2] < 0.6 * conv[1]   # (fork-join costs included)


def test_out_of_order_cores_get_the_big_core_memory_values():
    """The 3-wide out-of-order Cortex-A75 (sd845 big cluster) overlaps misses like the other
    out-of-order cores, not like the in-order A55."""
    from socsim.hw.cpu import _ls_ports, _mlp
    from socsim.spec import load_soc

    sd845 = load_soc("sd845")
    a55, a75 = (sd845.cluster(c.name) for c in sd845.cpu.clusters)
    assert a55.core_type == "cortex-a55" and a75.core_type == "cortex-a75"
    assert (_ls_ports(a75), _mlp(a75)) == (2.0, 8.0)
    assert (_ls_ports(a55), _mlp(a55)) == (1.0, 2.0)


WGRAD = Op("w", "conv2d_wgrad", "weight_grad", "l", "int8", make_params(batch=64, cin=512, h=4, w=4, cout=512, kh=3,
                                                                     kw=3, stride=1, pad=1, groups=1, oh=4, ow=4))


def test_wgrad_dw_stays_on_chip_and_scales_with_cores(soc, model):
    """A 512x512 3x3 weight gradient (VGG-16's late layers): dW (9.4 MB of int32) is written once
    by MNN's blocked GEMM, so the op moves megabytes, not the ~1.6 GB of a dW read-modify-write
    per pixel tile, and four big cores are faster than two (they were 2x slower)."""
    c2 = model.cost(WGRAD, _cfg(soc, [4, 5]))
    c4 = model.cost(WGRAD, _cfg(soc, [4, 5, 6, 7]))
    dw = 512 * 512 * 9 * 4
    assert c4.dram_bytes < 2 * dw
    assert c4.time_s < c2.time_s


# AlexNet's second convolution's weight gradient at batch 64 (the development set's workload):
# its im2col buffer, 1600 x 46656 FP32 (~300 MB), is far larger than sd865's L3 + SLC
WG_BIG = Op("wb", "conv2d_wgrad", "weight_grad", "l", "fp32", make_params(batch=64, cin=64, h=27, w=27, cout=192,
                                                                       kh=5, kw=5, stride=1, pad=2, groups=1, oh=27,
                                                                       ow=27))


def test_wgrad_im2col_buffer_spills_to_dram(soc):
    from socsim.hw import cpu
    buf = (64 * 25 + 192) * 64 * 27 * 27 * 4               # im2col and dY transposed
    assert cpu.im2col_buffer_bytes(WG_BIG) == buf
    llc = (soc.cpu.l3.size_kb + soc.cpu.slc.size_kb) * 1024
    # the Raster writes it; CPUMatMul's one-thread packing of A reads it back (serial_dram_bytes)
    assert cpu.im2col_spill_bytes(WG_BIG, soc) == pytest.approx(buf - llc)
    assert cpu.im2col_buffer_bytes(CONV) == 0.0            # forward convolutions run im2col per tile
    # an im2col that fits in the last-level caches does not reach DRAM
    assert cpu.im2col_spill_bytes(WGRAD, soc) == 0.0
    # at batch 1 dY's transpose is an identity: only the im2col is materialised
    b1 = Op("w1", "conv2d_wgrad", "weight_grad", "l", "fp32", make_params(batch=1, cin=64, h=27, w=27, cout=192,
                                                                       kh=5, kw=5, stride=1, pad=2, groups=1,
                                                                       oh=27, ow=27))
    assert cpu.im2col_buffer_bytes(b1) == 64 * 25 * 27 * 27 * 4
    c = cpu.cpu_cost(soc, WG_BIG, _cfg(soc, [4, 5, 6, 7]))
    assert c.dram_bytes >= 2 * (buf - llc)


def test_wgrad_dy_panel_packs_on_one_thread(soc):
    """CPUMatMul packs the whole dY panel (cout x n*oh*ow), the im2col (A) and unpacks dW (C) on
    one thread: that part of the op takes the same time on one core as on three (the gold cores;
    sd865's fourth big core is the prime one, where the calling thread would pack)."""
    from socsim.hw import cpu
    n, k = 64 * 27 * 27, 64 * 25
    assert cpu.serial_pack_elements(WG_BIG) == 192 * n + k * n + k * 192
    assert cpu.serial_pack_elements(CONV) == 0.0
    cl = soc.cpu.cluster_of(4)
    assert cpu.serial_cycles(WG_BIG, cl) > 0
    one = cpu.cpu_cost(soc, WG_BIG, _cfg(soc, [4]))
    three = cpu.cpu_cost(soc, WG_BIG, _cfg(soc, [4, 5, 6]))
    ser_s = cpu.serial_cycles(WG_BIG, cl) / (cl.max_mhz * 1e6)
    split1 = dict(one.detail)["compute_s"] - ser_s
    split3 = dict(three.detail)["compute_s"] - ser_s
    assert split3 == pytest.approx(split1 * cpu.split_share(WG_BIG, 3), rel=1e-6)
    assert cpu.split_share(WG_BIG, 3) == pytest.approx(45 / 134)


def test_wgrad_row_tiles_dealt_round_robin():
    from socsim.hw import cpu
    # 1600 im2col rows -> 134 tiles of 12: the busiest of 4 threads does 34
    assert cpu.split_share(WG_BIG, 4) == pytest.approx(34 / 134)
    assert cpu.split_share(WG_BIG, 1) == 1.0
    assert cpu.split_share(CONV, 4) == 0.25
    # 4608 rows -> 384 tiles: an even split
    assert cpu.split_share(WGRAD, 4) == pytest.approx(0.25)


# AlexNet's first fully connected layer's gradients at batch 16: MatMuls whose B (error
# gradient: the weights) or C (weight gradient: dW) is the 9216 x 4096 weight matrix, 151 MB
FC_DGRAD = Op("fd", "gemm", "error_grad", "l", "fp32", make_params(batch=16, count=1, m=16, k=4096, n=9216))
FC_WGRAD = Op("fw", "gemm", "weight_grad", "l", "fp32", make_params(batch=16, count=1, m=4096, k=16, n=9216))
FC_FWD = Op("ff", "gemm", "forward", "l", "fp32", make_params(batch=16, count=1, m=16, k=9216, n=4096))
DG_BIG = Op("db", "conv2d_dgrad", "error_grad", "l", "fp32", make_params(batch=64, cin=64, h=27, w=27, cout=192,
                                                                      kh=5, kw=5, stride=1, pad=2, groups=1,
                                                                      oh=27, ow=27))


def test_matmul_operands_follow_mnns_geometry():
    """A, B and C of the CPUMatMul that MNN's geometry makes of each gradient (GeometryConv2D's
    ConvTranspose2D: C[k, n] = W^T dY; GeometryConv2DBackPropFilter: C[k, cout] = im2col dY^T;
    a fully connected layer's MatMul: C[m, n] = A[m, k] B[k, n])."""
    from socsim.hw import cpu
    n, k = 64 * 27 * 27, 64 * 25
    assert cpu.matmul_operands(DG_BIG) == {"A": k * 192, "B": 192 * n, "C": k * n}
    assert cpu.matmul_operands(WG_BIG) == {"A": k * n, "B": 192 * n, "C": k * 192}
    assert cpu.matmul_operands(FC_DGRAD) == {"A": 16 * 4096, "B": 4096 * 9216, "C": 16 * 9216}
    assert cpu.matmul_operands(FC_WGRAD) == {"A": 4096 * 16, "B": 16 * 9216, "C": 4096 * 9216}
    # inference forward ops (no TRAIN_STEP_ATTR: weights packed at load time; a training step's
    # are tests/hw/test_cpu_train_forward.py's) and grouped or depthwise convolutions (another
    # path in MNN) have none
    assert cpu.matmul_operands(FC_FWD) == {} and cpu.matmul_operands(CONV) == {}
    assert cpu.matmul_operands(DW) == {}


def test_matmul_one_thread_release_switch(monkeypatch):
    """MNN 1.2-2.7 (the default) packs A and B and unpacks C on one thread; from 2.8 only B.
    What leaves the one thread is packed by the split threads instead (gemm_data_movement), so
    a one-core run does the same packing either way."""
    from socsim.hw import cpu
    n, k = 64 * 27 * 27, 64 * 25
    packed_old, _ = cpu.gemm_data_movement(WG_BIG)
    ser_old = cpu.serial_pack_elements(WG_BIG)
    monkeypatch.setattr(cpu, "MNN_MATMUL_ONE_THREAD", ("B",))
    assert cpu.serial_pack_elements(WG_BIG) == 192 * n
    assert cpu.serial_pack_elements(DG_BIG) == 192 * n
    assert cpu.serial_pack_elements(FC_DGRAD) == 4096 * 9216
    packed_new, _ = cpu.gemm_data_movement(WG_BIG)
    # the im2col's A pass moves between the split and the one thread; C's unpacking exists
    # only in the older releases
    assert packed_new - packed_old == k * n
    assert ser_old - cpu.serial_pack_elements(WG_BIG) == k * n + k * 192
    for op in (DG_BIG, FC_DGRAD):
        monkeypatch.setattr(cpu, "MNN_MATMUL_ONE_THREAD", ("A", "B", "C"))
        tot_abc = cpu.gemm_data_movement(op)[0] + cpu.serial_pack_elements(op)
        monkeypatch.setattr(cpu, "MNN_MATMUL_ONE_THREAD", ("B",))
        tot_b = cpu.gemm_data_movement(op)[0] + cpu.serial_pack_elements(op)
        assert tot_abc - tot_b == pytest.approx(cpu.matmul_operands(op)["C"])


def test_one_thread_passes_read_and_write_dram_beyond_the_llc(soc):
    """An operand larger than L3 + SLC is read and its packed copy written in DRAM by the one
    thread; a small one stays in the caches."""
    from socsim.hw import cpu
    llc = (soc.cpu.l3.size_kb + soc.cpu.slc.size_kb) * 1024
    w = 4096 * 9216 * 4                                      # fc1's weights, 151 MB
    small = 16 * 4096 * 4
    assert small < llc
    assert cpu.serial_dram_bytes(FC_DGRAD, soc) == pytest.approx(2 * (w - llc))
    assert cpu.serial_dram_bytes(FC_FWD, soc) == 0.0
    assert cpu.cpu_cost(soc, FC_DGRAD, _cfg(soc, [4, 5, 6, 7])).dram_bytes >= 2 * (w - llc)


def test_one_thread_pass_bounds_the_speed_up(soc, monkeypatch):
    """The one-thread passes do not shrink with the threads: fc1's error gradient (its 151 MB
    weight matrix packed on one thread) gains less from three big cores than it would with every
    pass split (a counterfactual, MNN_MATMUL_ONE_THREAD empty), and takes longer."""
    from socsim.hw import cpu
    t1 = cpu.cpu_cost(soc, FC_DGRAD, _cfg(soc, [4])).time_s
    t4 = cpu.cpu_cost(soc, FC_DGRAD, _cfg(soc, [4, 5, 6])).time_s
    monkeypatch.setattr(cpu, "MNN_MATMUL_ONE_THREAD", ())
    s1 = cpu.cpu_cost(soc, FC_DGRAD, _cfg(soc, [4])).time_s
    s4 = cpu.cpu_cost(soc, FC_DGRAD, _cfg(soc, [4, 5, 6])).time_s
    assert t1 / t4 < s1 / s4
    assert t4 > s4



@settings(max_examples=40, deadline=None)
@given(kind=st.sampled_from(["conv2d_dgrad", "conv2d_wgrad"]), batch=st.integers(1, 32),
       cin=st.integers(1, 512), cout=st.integers(1, 512), kk=st.sampled_from([1, 3, 5]),
       o=st.integers(1, 56), stride=st.sampled_from([1, 2]))
def test_one_thread_passes_conserve_the_packing(kind, batch, cin, cout, kk, o, stride):
    """Whatever the release, a gradient's packing is done once: the passes that leave the one
    thread are packed by the split threads, and only the C unpacking (MNN 1.2-2.7) is extra."""
    from socsim.hw import cpu
    op = Op("g", kind, "weight_grad" if kind == "conv2d_wgrad" else "error_grad", "l", "fp32",
            make_params(batch=batch, cin=cin, h=o * stride, w=o * stride, cout=cout, kh=kk, kw=kk,
                        stride=stride, pad=kk // 2, groups=1, oh=o, ow=o))
    ops = cpu.matmul_operands(op)
    saved = cpu.MNN_MATMUL_ONE_THREAD
    try:
        cpu.MNN_MATMUL_ONE_THREAD = ("A", "B", "C")
        abc = cpu.gemm_data_movement(op)[0] + cpu.serial_pack_elements(op)
        cpu.MNN_MATMUL_ONE_THREAD = ("B",)
        b = cpu.gemm_data_movement(op)[0] + cpu.serial_pack_elements(op)
    finally:
        cpu.MNN_MATMUL_ONE_THREAD = saved
    assert abc - b == pytest.approx(ops["C"])
    assert cpu.serial_pack_elements(op) == pytest.approx(ops["A"] + ops["B"] + ops["C"])
