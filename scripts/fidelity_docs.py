"""Regenerate docs/validation.md's fidelity section from ``socsim fidelity`` on the development
set (calibration/dev/); with --record, also write the figures the suite holds the model to
(calibration/dev/fidelity_recorded.json: an error may fall below them, never rise above).

    python scripts/fidelity_docs.py [--record]
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from socsim.fidelity.recorded import DEV_FILES, RECORDED, dev_reports, docs_section, recorded_figures  # noqa: E402
from socsim.api import dump_json  # noqa: E402

DOC = ROOT / "docs" / "validation.md"


def main() -> None:
    reports = dev_reports(ROOT)
    DOC.write_text(docs_section(DOC.read_text(), reports))
    print(f"wrote {DOC.relative_to(ROOT)} (from {', '.join(DEV_FILES)})")
    if "--record" in sys.argv[1:]:
        (ROOT / RECORDED).write_text(dump_json(recorded_figures(reports)))
        print(f"wrote {RECORDED}")


if __name__ == "__main__":
    main()
