"""The steady-state loop extraction of isa.arm.armk on hand-written assembly (no tools needed)."""
import pytest

from isa.arm.armk import LOOPS, inner_loop, marks

ASM = """\
\t.globl\tk
k:
\tmov\tx8, xzr
.LBB0_1:
\tldr\tq0, [x0], #16
\tfmla\tv1.4s, v0.4s, v2.s[0]
\tfmla\tv3.4s, v0.4s, v2.s[1]
\tstp\tq1, q3, [x1], #32
\tsubs\tx2, x2, #2
\tb.ne\t.LBB0_1          // the unrolled loop
// %bb.2:
\tcbz\tx3, .LBB0_4
.LBB0_3:
\tfmla\tv1.4s, v0.4s, v2.s[0]
\tsubs\tx3, x3, #1
\tb.ne\t.LBB0_3
.LBB0_4:
\tret
.Lfunc_end0:
"""


def test_the_loop_with_most_units_is_taken_remainder_ignored():
    body = inner_loop(ASM, "k", "fmla")
    assert body[0].startswith("ldr") and body[-1].startswith("b.ne") and len(body) == 6
    assert marks(body, "fmla") == 2
    assert marks(body, "str|st1|stp") == 2   # an STP stores two vectors


def test_a_function_without_a_loop_is_an_error():
    with pytest.raises(ValueError):
        inner_loop("f:\n\tret\n.Lfunc_end1:\n", "f", "fmla")
    with pytest.raises(ValueError):
        inner_loop(ASM, "missing", "fmla")


def test_every_costed_function_is_in_its_source():
    for lp in LOOPS.values():
        from isa.arm.armk import KERNEL_DIR
        assert f"void {lp.function}(" in (KERNEL_DIR / f"{lp.kernel}.c").read_text()
