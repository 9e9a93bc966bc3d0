"""Every emulated HVX instruction with a Q6 intrinsic vs qemu-hexagon, byte for byte.

One C program holds a switch over all instructions (immediate forms get one case per
immediate); all test vectors go through a single qemu-hexagon run.  Inputs are random plus edge
cases: 0, 0xFF, 0x80, 0x7F, lane-type extremes, and scalar shift amounts at and past the lane
width.
"""
from __future__ import annotations

import numpy as np
import pytest

import isa.hvx as hvx
from hvx_oracle_harness import RUNTIME, build, run

pytestmark = pytest.mark.oracle

REC = 128 + 6 * 128          # header (op id, 4 scalars) + 6 vector slots
OUT = 256
N_RANDOM = 12

IMMEDIATES = {"valignbi": range(8), "vlalignbi": range(8)}


def _oracle_instructions():
    out = []
    for s in sorted(hvx.table.INSTRUCTIONS.values(), key=lambda s: s.name):
        if s.fn is None or not s.intrinsic.startswith("Q6_") or s.family == "scalar":
            continue
        for imm in IMMEDIATES.get(s.name, [None]):
            out.append((s, imm))
    return out


CASES = _oracle_instructions()


def _edge_vectors():
    def words(x):
        return np.full(32, x, np.uint32).view(np.uint8)

    def halves(x):
        return np.full(64, x, np.uint16).view(np.uint8)
    vs = [np.zeros(128, np.uint8), np.full(128, 0xFF, np.uint8), np.full(128, 0x80, np.uint8),
          np.full(128, 0x7F, np.uint8), np.full(128, 0x01, np.uint8), words(0x80000000), words(0x7FFFFFFF),
          halves(0x8000), halves(0x7FFF), np.tile(np.array([0x80, 0x7F], np.uint8), 64),
          np.arange(128, dtype=np.uint8), words(0x0000FFFF), halves(0x00FF), words(0xFFFF8000)]
    return vs


EDGE_SCALARS = [0, 1, -1, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 127, 128, 0x7FFFFFFF, -0x80000000,
                -0x7F7F7F80, 0x7F7F7F7F, 0x01010101, -0xFFFF, 0x00FF00FF, 25, -4, -2, -1 << 7]


def _inputs(rng, n_edge):
    ev = _edge_vectors()
    n = N_RANDOM + n_edge
    vec = rng.integers(0, 256, size=(n, 6, 128), dtype=np.uint8)
    sc = rng.integers(-2 ** 31, 2 ** 31, size=(n, 4), dtype=np.int64)
    # random small shift amounts are the interesting region for shift instructions
    sc[: N_RANDOM // 2, :] = rng.integers(-40, 40, size=(N_RANDOM // 2, 4))
    for j in range(n_edge):
        for s in range(6):
            vec[N_RANDOM + j, s] = ev[(j + 3 * s) % len(ev)]
        for k in range(4):
            sc[N_RANDOM + j, k] = EDGE_SCALARS[(j * 3 + k * 7) % len(EDGE_SCALARS)]
    return vec, sc


def _c_case(idx: int, s, imm) -> str:
    args, vs, ss = [], 0, 0
    for code in s.operands:
        k, role = code[0], code[1] if len(code) > 1 else ""
        if role == "d":
            continue
        if k == "V":
            args.append(f"vin[{vs}]")
            vs += 1
        elif k == "W":
            args.append(f"Q6_W_vcombine_VV(vin[{vs + 1}], vin[{vs}])")
            vs += 2
        elif k == "Q":
            args.append(f"Q6_Q_vand_VR(vin[{vs}], -1)")
            vs += 1
        elif k == "R":
            args.append(f"sc[{ss}]")
            ss += 1
        else:
            args.append(str(imm))
    out_kind = s.operands[s.writes[0]][0]
    call = f"{s.intrinsic}({', '.join(args)})"
    store = {"V": f"vout[0] = {call};",
             "W": f"{{ HVX_VectorPair r = {call}; vout[0] = Q6_V_lo_W(r); vout[1] = Q6_V_hi_W(r); }}",
             "Q": f"vout[0] = Q6_V_vand_QR({call}, 0x01010101);",
             "R": f"*(int *)vout = {call};"}[out_kind]
    return f"    case {idx}: {store} break;\n"


def _program() -> str:
    body = "".join(_c_case(i, s, imm) for i, (s, imm) in enumerate(CASES))
    return RUNTIME + f"""
#define REC {REC}
#define OUT {OUT}
static unsigned char inbuf[16 << 20] __attribute__((aligned(128)));
static unsigned char outbuf[8 << 20] __attribute__((aligned(128)));
void _start(void) {{
  long n = read_all(inbuf, sizeof inbuf) / REC;
  for (long i = 0; i < n; i++) {{
    const unsigned char *rec = inbuf + i * REC;
    const int *sc = (const int *)(rec + 4);
    const HVX_Vector *vin = (const HVX_Vector *)(rec + 128);
    HVX_Vector *vout = (HVX_Vector *)(outbuf + i * OUT);
    switch (*(const int *)rec) {{
{body}    default: sys_exit(3);
    }}
  }}
  write_all(outbuf, n * OUT);
  sys_exit(0);
}}
"""


def _emulate(s, imm, vec, sc):
    """Emulator output bytes [n, OUT] for the same inputs (cases batched as tiles)."""
    args, vs, ss = [], 0, 0
    for code in s.operands:
        k, role = code[0], code[1] if len(code) > 1 else ""
        if role == "d":
            continue
        if k == "V":
            args.append(vec[:, vs])
            vs += 1
        elif k == "W":
            args.append(np.ascontiguousarray(vec[:, vs:vs + 2]))
            vs += 2
        elif k == "Q":
            args.append(vec[:, vs] != 0)
            vs += 1
        elif k == "R":
            args.append(sc[:, ss].copy())
            ss += 1
        else:
            args.append(imm)
    n = vec.shape[0]
    res = hvx.apply(s.name, *args)
    out = np.zeros((n, OUT), np.uint8)
    kind = s.operands[s.writes[0]][0]
    if kind == "V":
        out[:, :128] = np.broadcast_to(res, (n, 128))
    elif kind == "W":
        out[:, :256] = res.reshape(n, 256)
    elif kind == "Q":
        out[:, :128] = res.astype(np.uint8)
    else:
        out[:, :4] = np.asarray(res, np.int64).astype(np.int32).reshape(n, 1).view(np.uint8)
    return out


@pytest.fixture(scope="module")
def qemu_results(hexagon_toolchain):
    rng = np.random.default_rng(20240601)
    n_edge = 14
    recs, inputs = [], []
    for i, (_s, _imm) in enumerate(CASES):
        vec, sc = _inputs(rng, n_edge)
        rec = np.zeros((vec.shape[0], REC), np.uint8)
        rec[:, 0:4] = np.int32(i).reshape(1, 1).view(np.uint8)
        rec[:, 4:20] = sc.astype(np.int32).view(np.uint8)
        rec[:, 128:] = vec.reshape(vec.shape[0], -1)
        recs.append(rec)
        inputs.append((vec, sc))
    stdin = np.concatenate(recs).tobytes()
    out = np.frombuffer(run(build(_program(), "hvx_instructions"), stdin), np.uint8).reshape(-1, OUT)
    results, row = {}, 0
    for (s, imm), (vec, sc) in zip(CASES, inputs):
        results[(s.name, imm)] = (vec, sc, out[row:row + vec.shape[0]])
        row += vec.shape[0]
    return results


@pytest.mark.parametrize("name,imm", [(s.name, imm) for s, imm in CASES],
                         ids=[f"{s.name}" + ("" if imm is None else f"-{imm}") for s, imm in CASES])
def test_instruction_matches_qemu(qemu_results, name, imm):
    vec, sc, expected = qemu_results[(name, imm)]
    got = _emulate(hvx.spec(name), imm, vec, sc)
    bad = np.nonzero((got != expected).any(axis=1))[0]
    assert bad.size == 0, (f"{name}: {bad.size}/{len(got)} cases differ; first case {bad[0]}: "
                           f"scalars={sc[bad[0]].tolist()}\nqemu={expected[bad[0]][:64].tolist()}\n"
                           f"emu ={got[bad[0]][:64].tolist()}")


def test_every_family_is_covered():
    fams = {s.family for s, _ in CASES}
    required = {"vrmpy", "vdmpy", "vmpy", "vmpye/vmpyo", "vadd/vsub", "vmax/vmin", "vasr-narrow", "vasl/vlsr",
                "vsat", "vpack", "vshuff/vdeal", "valign", "vcl0/vnormamt", "vsplat", "logic", "vcmp", "vmux",
                "vzero"}
    assert required <= fams, required - fams
