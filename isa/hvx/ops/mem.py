"""HVX and scalar memory instructions.  Their effect needs the tile memories, so the executor
implements them (isa.hvx.executor); the table holds their syntax, operands and resources.

Aligned vmem ignores the low 7 address bits (fLOADMMV/fSTOREMMV); vmemu does not.  Immediate
offsets of vector accesses count vectors (#s4 * 128 bytes), of memw accesses bytes.
"""
from __future__ import annotations

from ..table import SOURCE_SCALAR, defop

_MEM = [
    ("vL32b_ai", "Q6 (HVX_Vector*) load", "Vd32=vmem(Rt32+#s4)", "Vd,Rt,I", "LD"),
    ("vL32b_pi", "", "Vd32=vmem(Rx32++#s3)", "Vd,Rx,I", "LD"),
    ("vL32Ub_ai", "Q6 (HVX_UVector*) load", "Vd32=vmemu(Rt32+#s4)", "Vd,Rt,I", "LDU"),
    ("vL32Ub_pi", "", "Vd32=vmemu(Rx32++#s3)", "Vd,Rx,I", "LDU"),
    ("vS32b_ai", "Q6 (HVX_Vector*) store", "vmem(Rt32+#s4)=Vs32", "Rt,I,Vs", "ST"),
    ("vS32b_pi", "", "vmem(Rx32++#s3)=Vs32", "Rx,I,Vs", "ST"),
    ("vS32Ub_ai", "Q6 (HVX_UVector*) store", "vmemu(Rt32+#s4)=Vs32", "Rt,I,Vs", "STU"),
    ("vS32Ub_pi", "", "vmemu(Rx32++#s3)=Vs32", "Rx,I,Vs", "STU"),
    ("vS32b_qpred_ai", "Q6_vmem_QRIV", "if (Qv4) vmem(Rt32+#s4)=Vs32", "Qv,Rt,I,Vs", "ST"),
    ("vS32b_nqpred_ai", "Q6_vmem_QnRIV", "if (!Qv4) vmem(Rt32+#s4)=Vs32", "Qv,Rt,I,Vs", "ST"),
]
for _n, _i, _s, _o, _r in _MEM:
    defop(_n, _i, _s, _o, _r, "vmem")(None)

_SMEM = [
    ("L2_loadri_io", "Rd32=memw(Rs32+#s11:2)", "Rd,Rs,I", "S_LD"),
    ("L2_loadri_pi", "Rd32=memw(Rx32++#s4:2)", "Rd,Rx,I", "S_LD"),
    ("S2_storeri_io", "memw(Rs32+#s11:2)=Rt32", "Rs,I,Rt", "S_ST"),
    ("S2_storeri_pi", "memw(Rx32++#s4:2)=Rt32", "Rx,I,Rt", "S_ST"),
]
for _n, _s, _o, _r in _SMEM:
    defop(_n, "", _s, _o, _r, "scalar-mem", SOURCE_SCALAR)(None)

VECTOR_LOADS = frozenset({"vL32b_ai", "vL32b_pi", "vL32Ub_ai", "vL32Ub_pi"})
VECTOR_STORES = frozenset({"vS32b_ai", "vS32b_pi", "vS32Ub_ai", "vS32Ub_pi", "vS32b_qpred_ai", "vS32b_nqpred_ai"})
SCALAR_LOADS = frozenset({"L2_loadri_io", "L2_loadri_pi"})
SCALAR_STORES = frozenset({"S2_storeri_io", "S2_storeri_pi"})
MEMORY_OPS = VECTOR_LOADS | VECTOR_STORES | SCALAR_LOADS | SCALAR_STORES
