"""Write a fleet run's files into a directory atomically: rounds.csv, clients.csv, fleet.json
and report.html appear together or not at all."""
from __future__ import annotations

import csv
import io
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from socsim.errors import InputError
from socsim.jsonio import dump_json

#: the files ``socsim fleet --out DIR`` writes; only these are replaced in DIR
FLEET_FILES = ("fleet.json", "rounds.csv", "clients.csv", "report.html")


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.9g}"
    if isinstance(v, bool):
        return "1" if v else "0"
    return "" if v is None else str(v)


def csv_text(rows: list[dict[str, Any]]) -> str:
    """``rows`` as CSV, the columns in the order the first row (then later ones) names them."""
    cols: list[str] = []
    for r in rows:
        cols += [k for k in r if k not in cols]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for r in rows:
        w.writerow([_fmt(r.get(c)) for c in cols])
    return buf.getvalue()


def check_out(out: Path) -> None:
    """InputError (naming --out) unless ``out`` can take the fleet's files."""
    if out.exists() and not out.is_dir():
        raise InputError("exists and is not a directory", field="--out", value=str(out))
    for name in FLEET_FILES:
        p = out / name
        if p.exists() and not p.is_file():
            raise InputError(f"{p} exists and is not a file", field="--out", value=str(out))
    parent = out if out.is_dir() else out.parent
    if not parent.is_dir():
        raise InputError(f"the directory {parent} does not exist", field="--out", value=str(out))
    if not os.access(parent, os.W_OK):
        raise InputError(f"cannot write in {parent}: permission denied", field="--out", value=str(out))


def write_outputs(out: Path, summary: dict[str, Any], rounds: list[dict], clients: list[dict]) -> list[str]:
    """Write the four files into ``out`` (created if missing); returns their names."""
    from socsim.api import dir_mode, file_mode
    from socsim.fleet.html import report_html

    check_out(out)
    parent = out if out.is_dir() else out.parent
    tmp = Path(tempfile.mkdtemp(prefix=".fleet.", dir=parent))
    try:
        texts = {"fleet.json": dump_json(summary), "rounds.csv": csv_text(rounds), "clients.csv": csv_text(clients),
                 "report.html": report_html(summary, rounds, clients)}
        for name, text in texts.items():
            (tmp / name).write_text(text)
            os.chmod(tmp / name, file_mode())
        if not out.exists():
            os.chmod(tmp, dir_mode())
            os.replace(tmp, out)
            return list(FLEET_FILES)
        for name in FLEET_FILES:
            os.replace(tmp / name, out / name)
        return list(FLEET_FILES)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

