"""Packet-level timing model of one V66 HVX thread, computed from the program structure.

Rules (sources in docs/hvx.md; the numbers are hardware.yaml ``hexagon:`` facts, except the two
DDR streaming parameters ``clock_mhz`` and ``ddr_bytes_per_cycle`` of :class:`TimingConfig`,
which are assumptions and currently inert):

* A packet issues in one cycle.  A lone thread issues every cycle; when threads pair up on a
  cluster, a thread issues at most every other cycle (``paired=True``), which hides 1-cycle stalls.
* Latency: a multiply (VX, VX_DV), shift (VS) or permute (VP, VP_VS) result read by the next packet
  stalls one cycle, except a multiply whose result is read by the next packet's multiply only as
  its accumulator (chained accumulation).  ALU results and loads are ready in the next packet.
  vextract (vector -> scalar) results take two extra cycles.
* Memory: VTCM and L2-resident vectors stream through the vector FIFO with no stall; HVX traffic
  above the L2 port width (128 B/cycle) in one packet costs extra cycles; a scalar load of data
  that HVX stores wrote goes to L2 (HVX stores bypass L1) and costs ``l2_read_thread_cycles``;
  DDR-resident buffers pay the DDR latency once per buffer stream and then stream at
  ``ddr_bytes_per_cycle``.
* Hardware loops (two levels, loop0/loop1) add no per-iteration packets; deeper nests are
  software loops and add one packet (compare+jump) per iteration.

Control flow is static, so timing follows from the program alone: a loop costs its first
iteration plus (count - 1) steady-state iterations, each evaluated with the one-packet history
that the latency rule needs.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

from .ops.mem import SCALAR_LOADS, VECTOR_LOADS, VECTOR_STORES
from .program import Packet, Program

_LONG = {"VX": "mpy_result", "VX_DV": "mpy_result", "VS": "shift_result", "VP": "permute_result",
         "VP_VS": "permute_result", "VEXT": "vextract_result"}
_MPY = ("VX", "VX_DV")


@dataclass(frozen=True)
class TimingConfig:
    paired: bool = False                 # thread shares its cluster with another issuing thread
    l2_read_thread_cycles: int = 6       # hw:hexagon.memory.l2_read_thread_cycles
    l2_bytes_per_cycle: int = 128        # hw:hexagon.memory.l2_bandwidth_bytes_per_cycle
    ddr_access_ns: float = 250.0         # hw:hexagon.memory.ddr_access_ns
    # clock_mhz and ddr_bytes_per_cycle apply only to buffers declared at level "ddr", which no
    # kernel in isa/kernels declares (only tests/isa/test_program_timing.py does): inert for
    # socsim, whose DSP model costs DRAM traffic itself (socsim.hw.dsp).  Both assumptions:
    # clock_mhz 1000 only converts ddr_access_ns into cycles, a round figure inside the cDSP
    # clock plan (hw:hexagon.clock_mhz, 500-1497 MHz); ddr_bytes_per_cycle 16 = 16 GB/s per
    # thread at 1 GHz, about half an LPDDR5 channel's achievable rate (hw:dram.sd865.lpddr5_gbs
    # x 0.65 = 28.6 GB/s), plausible 4-32 (docs/hvx.md, timing model).
    clock_mhz: float = 1000.0            # only converts the DDR latency into cycles
    ddr_bytes_per_cycle: float = 16.0    # assumed per-thread DDR streaming rate (docs/hvx.md)
    hw_loop_levels: int = 2


@dataclass
class Timing:
    cycles: int = 0
    packets: int = 0
    instructions: int = 0
    stalls: Counter = field(default_factory=Counter)
    bytes_loaded: Counter = field(default_factory=Counter)   # level -> HVX bytes; "level:scalar" -> scalar bytes
    bytes_stored: Counter = field(default_factory=Counter)
    class_counts: Counter = field(default_factory=Counter)   # resource class -> instructions

    def add(self, other: "Timing", times: int = 1) -> None:
        self.cycles += other.cycles * times
        self.packets += other.packets * times
        self.instructions += other.instructions * times
        for mine, theirs in ((self.stalls, other.stalls), (self.bytes_loaded, other.bytes_loaded),
                             (self.bytes_stored, other.bytes_stored), (self.class_counts, other.class_counts)):
            for k, v in theirs.items():
                mine[k] += v * times

    def scaled(self, times: int) -> "Timing":
        t = Timing()
        t.add(self, times)
        return t

    @property
    def vector_bytes_loaded(self) -> int:
        return sum(v for k, v in self.bytes_loaded.items() if ":" not in k)

    @property
    def vector_bytes_stored(self) -> int:
        return sum(v for k, v in self.bytes_stored.items() if ":" not in k)


class _PacketInfo:
    """Static facts about one packet that the timing rules need."""

    def __init__(self, pkt: Packet, program: Program, hvx_written: frozenset):
        self.long = {}          # reg -> (cause, extra stall cycles, produced by a multiply-accumulate)
        self.reads = set()
        self.acc_only = set()   # regs this packet reads only as a multiply accumulator
        self.classes = Counter()
        self.load = Counter()
        self.store = Counter()
        self.l2_vec_bytes = 0
        self.ddr_vectors = 0
        self.scalar_l2 = 0
        self.ddr_bufs = set()
        non_acc = set()
        for ins in pkt.instrs:
            s = ins.spec
            self.classes[s.resources] += 1
            rd = ins.reads()
            self.reads |= rd
            acc_regs = set()
            if s.resources in _MPY:
                for i, code in enumerate(s.operands):
                    if code[1] == "x":
                        acc_regs |= set(ins.args[i].units())
            self.acc_only |= acc_regs
            non_acc |= rd - acc_regs
            if s.resources in _LONG:
                lat = 2 if s.resources == "VEXT" else 1
                for r in ins.writes():
                    self.long[r] = (_LONG[s.resources], lat, s.resources in _MPY and r in acc_regs)
            if ins.buf is not None:
                level = program.buffer(ins.buf).level
                size = 128 if (ins.op in VECTOR_LOADS or ins.op in VECTOR_STORES) else 4
                key = level if size == 128 else f"{level}:scalar"
                (self.load if (ins.op in VECTOR_LOADS or ins.op in SCALAR_LOADS) else self.store)[key] += size
                if size == 128 and level == "l2":
                    self.l2_vec_bytes += 128
                if size == 128 and level == "ddr":
                    self.ddr_vectors += 1
                    self.ddr_bufs.add(ins.buf)
                if ins.op in SCALAR_LOADS and ins.buf in hvx_written and level != "vtcm":
                    self.scalar_l2 += 1
        self.acc_only -= non_acc
        self.n = len(pkt.instrs)


def _stall(prev: "_PacketInfo", cur: "_PacketInfo"):
    if prev is None:
        return 0, None
    best, cause = 0, None
    for r in cur.reads:
        hit = prev.long.get(r)
        if hit is None:
            continue
        c, lat, chained = hit
        if chained and r in cur.acc_only:
            continue
        if lat > best:
            best, cause = lat, c
    return best, cause


def analyze(program: Program, config: TimingConfig = TimingConfig()) -> Timing:
    """Cycles, packets, stalls by cause and bytes per memory level for one run of ``program``."""
    return _analyze(program, config)


@lru_cache(maxsize=256)
def _analyze(program: Program, config: TimingConfig) -> Timing:
    hvx_written = frozenset(ins.buf for ins in _walk(program.body) if ins.op in VECTOR_STORES)
    infos = {}
    ddr_seen = set()

    def info(pkt):
        i = infos.get(id(pkt))
        if i is None:
            i = infos[id(pkt)] = _PacketInfo(pkt, program, hvx_written)
        return i

    def packet_cost(p: _PacketInfo, prev):
        t = Timing(packets=1, instructions=p.n)
        lat, cause = _stall(prev, p)
        issue = 1 + lat
        if config.paired:
            if issue < 2:
                t.stalls["thread_pairing"] += 2 - issue
            issue = max(2, issue)
        if lat and (not config.paired or lat > 1):
            t.stalls[cause] += lat if not config.paired else lat - 1
        extra = 0
        if p.l2_vec_bytes > config.l2_bytes_per_cycle:
            e = -(-p.l2_vec_bytes // config.l2_bytes_per_cycle) - 1
            t.stalls["l2_bandwidth"] += e
            extra += e
        if p.ddr_vectors:
            e = int(round(p.ddr_vectors * 128 / config.ddr_bytes_per_cycle)) - 1
            if e > 0:
                t.stalls["ddr_bandwidth"] += e
                extra += e
        if p.scalar_l2:
            e = config.l2_read_thread_cycles * p.scalar_l2
            t.stalls["l2_scalar_read"] += e
            extra += e
        t.cycles = issue + extra
        t.class_counts.update(p.classes)
        t.bytes_loaded.update(p.load)
        t.bytes_stored.update(p.store)
        return t

    memo = {}

    def block_cost(items, prev, depth):
        key = (id(items), id(prev))
        hit = memo.get(key)
        if hit is not None:
            return hit
        total = Timing()
        last = prev
        for x in items:
            if isinstance(x, Packet):
                p = info(x)
                total.add(packet_cost(p, last))
                for b in p.ddr_bufs:
                    if b not in ddr_seen:
                        ddr_seen.add(b)
                        e = int(config.ddr_access_ns * config.clock_mhz / 1000.0)
                        total.stalls["ddr_latency"] += e
                        total.cycles += e
                last = p
            else:
                first, last1 = block_cost(x.body, last, depth + 1)
                total.add(first)
                if x.count > 1:
                    steady, last2 = block_cost(x.body, last1, depth + 1)
                    total.add(steady, x.count - 1)
                    last1 = last2
                if depth + 1 > config.hw_loop_levels:
                    total.cycles += x.count
                    total.packets += x.count
                    total.stalls["software_loop"] += x.count
                last = last1
        memo[key] = (total, last)
        return total, last

    t, _ = block_cost(program.body, None, 0)
    return t


def _walk(items):
    for x in items:
        if isinstance(x, Packet):
            yield from x.instrs
        else:
            yield from _walk(x.body)
