// Which HVX instructions LLVM times differently on two Hexagon versions.
//
// For every HVX opcode (V6_*) of LLVM's Hexagon target, compare the itinerary the compiler's
// scheduler uses on CPU A and CPU B: each stage's cycles, functional-unit mask and next-cycle
// offset, and the operand cycles (when each result is ready, when each source is read).  These
// are the tables of llvm/lib/Target/Hexagon/HexagonDepIICHVX.td (DepHVXItinV66_list,
// DepHVXItinV68_list, ...) as compiled into the installed libLLVM, read through the public MC API.
//
// Build and run (LLVM 19's development headers and libLLVM):
//   g++ -std=c++17 -O1 benchmarks/hvx_itineraries.cpp -I/usr/lib/llvm-19/include \
//       -L/usr/lib/llvm-19/lib -lLLVM-19 -o /tmp/hvx_itineraries
//   LD_LIBRARY_PATH=/usr/lib/llvm-19/lib /tmp/hvx_itineraries v66 v68 [NAME-SUBSTRING]
// The differences found are recorded in calibration/hardware.yaml (hexagon.generations.
// hvx_itineraries) and checked against the emulator's catalogue by tests/hw/test_hexagon.py.
#include "llvm/ADT/StringExtras.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCInstrItineraries.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include <memory>
#include <string>

using namespace llvm;

static std::string signature(const InstrItineraryData &itins, unsigned sched_class) {
  std::string s;
  for (const InstrStage *st = itins.beginStage(sched_class); st != itins.endStage(sched_class); ++st)
    s += "stage(cycles " + std::to_string(st->getCycles()) + ", units 0x" + utohexstr(st->getUnits()) +
         ", next " + std::to_string(st->getNextCycles()) + ") ";
  s += "operand cycles [";
  const InstrItinerary &it = itins.Itineraries[sched_class];
  for (unsigned k = it.FirstOperandCycle; k < it.LastOperandCycle; ++k)
    s += std::to_string(itins.OperandCycles[k]) + (k + 1 < it.LastOperandCycle ? " " : "");
  return s + "]";
}

int main(int argc, char **argv) {
  if (argc < 3) {
    errs() << "usage: " << argv[0] << " VERSION_A VERSION_B [NAME-SUBSTRING]   (e.g. v66 v68)\n";
    return 2;
  }
  LLVMInitializeHexagonTargetInfo();
  LLVMInitializeHexagonTargetMC();
  std::string err;
  const Target *target = TargetRegistry::lookupTarget("hexagon", err);
  if (!target) {
    errs() << err << "\n";
    return 2;
  }
  std::unique_ptr<MCInstrInfo> mii(target->createMCInstrInfo());
  const std::string a = argv[1], b = argv[2];
  auto subtarget = [&](const std::string &v) {
    return std::unique_ptr<MCSubtargetInfo>(
        target->createMCSubtargetInfo("hexagon", "hexagon" + v, "+hvx" + v + ",+hvx-length128b"));
  };
  auto sa = subtarget(a), sb = subtarget(b);
  const InstrItineraryData ia = sa->getInstrItineraryForCPU("hexagon" + a);
  const InstrItineraryData ib = sb->getInstrItineraryForCPU("hexagon" + b);
  unsigned n = 0, differ = 0;
  for (unsigned op = 0; op < mii->getNumOpcodes(); ++op) {
    StringRef name = mii->getName(op);
    if (!name.starts_with("V6_"))
      continue;
    const unsigned sc = mii->get(op).getSchedClass();
    const std::string ta = signature(ia, sc), tb = signature(ib, sc);
    ++n;
    if (argc > 3 && name.contains(argv[3]))
      outs() << name << "\n  " << a << ": " << ta << "\n  " << b << ": " << tb << "\n";
    if (ta != tb) {
      ++differ;
      outs() << "DIFF " << name << "\n  " << a << ": " << ta << "\n  " << b << ": " << tb << "\n";
    }
  }
  outs() << n << " HVX opcodes (V6_*), " << differ << " timed differently on " << a << " and " << b << "\n";
  return 0;
}
