"""The round model: select clients, gate them on battery and temperature, run each one's local
training through the engine (deduplicated: identical inputs and starting state run once), add
the model's download and upload (socsim.fleet.network), and carry each client's battery and
temperature to its next round (docs/fleets.md, Rounds)."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

import numpy as np

from socsim.fleet.jobs import Job, make_job
from socsim.fleet.network import LINKS, Transfer, transfer
from socsim.fleet.population import Client
from socsim.fleet.spec import FleetSpec
from socsim.spec import SocSpec, load_soc

#: the generator's stream tag for a round's selection (clients use socsim.fleet.population's)
ROUND_STREAM = 2


class Runner(Protocol):
    def map(self, work: list[Job], progress: Callable[[int, int], None] | None = None) -> list[dict[str, Any]]: ...


@dataclass
class State:
    """A client's battery and temperature, and the fleet time the temperature was read."""

    soc: float
    temp_c: float
    at_s: float


@dataclass
class FleetRun:
    """Everything a fleet simulation produced: per-round and per-client rows, run counts."""

    rounds: list[dict[str, Any]] = field(default_factory=list)
    clients: list[dict[str, Any]] = field(default_factory=list)
    baselines: list[str] = field(default_factory=list)
    engine_runs: int = 0
    job_lookups: int = 0
    failures: list[dict[str, Any]] = field(default_factory=list)


def quantise(x: float, step: float) -> float:
    """``x`` rounded to a multiple of ``step`` (at most 9 significant digits, so keys are stable)."""
    return float(f"{round(x / step) * step:.9g}")


def sched_label(name: str, options: dict[str, Any]) -> str:
    """``min-energy(config=big4@high,mode=fixed)``: a scheduler with its options, as a column name."""
    if not options:
        return name
    return f"{name}(" + ",".join(f"{k}={json.dumps(v, sort_keys=True).strip(chr(34))}"
                                 for k, v in sorted(options.items())) + ")"


class Fleet:
    """A fleet spec and its clients, simulated round by round on a runner."""

    def __init__(self, spec: FleetSpec, clients: list[Client]) -> None:
        from socsim.engine.context import build_graph
        from socsim.hw.thermal import ThermalNetwork

        self.spec = spec
        self.clients = clients
        base = {"name": spec.name, **spec.workload, "batches": 1}
        from socsim.spec import workload_from_dict_located
        self.wl, _ = workload_from_dict_located(base, spec.name)
        self.env = self.wl.environment.model_dump()
        g = build_graph(self.wl.model, tuple(self.wl.input), self.wl.num_classes, self.wl.batch_size,
                        self.wl.precision)
        self.model_bytes = int(g.param_bytes)
        self.socs: dict[str, SocSpec] = {c.soc: load_soc(c.soc) for c in clients}
        amb = self.wl.environment.ambient_c
        # cooling between rounds: the slowest finite mode of each phone's RC network
        self.tau_s = {n: float(max(t for t in ThermalNetwork(s.thermal, amb).time_constants_s if math.isfinite(t)))
                      for n, s in self.socs.items()}
        # the pack's energy at full charge, to turn radio energy into charge drawn
        self.pack_j = {n: s.battery.capacity_mah * 3.6 * s.battery.nominal_voltage_v for n, s in self.socs.items()}
        self.transfers: dict[str, Transfer] = {k: transfer(v, self.model_bytes) for k, v in LINKS.items()}
        self.baselines = [(sched_label(b.name, b.options), b.name, dict(b.options)) for b in spec.baselines]
        self.cache: dict[str, dict[str, Any]] = {}

    # ------------------------------------------------------------------ one client's job
    def batches(self, c: Client) -> int:
        p = self.spec.plan
        if p.local_steps is not None:
            return p.local_steps
        return -(-c.samples // self.wl.batch_size) * (p.local_epochs or 1)

    def job(self, c: Client, st: State, charging: bool, name: str, options: dict[str, Any]) -> Job:
        """The engine run of client ``c`` in state ``st`` under scheduler ``name``."""
        q = self.spec.plan.quantise
        tr = self.transfers[c.link]
        opts = dict(options)
        budget = self.spec.plan.deadline_s - tr.down_s - tr.up_s
        if name == "min-energy" and opts.get("mode", "dp") == "dp" and "time_budget_s" not in opts and budget > 0:
            # Min-Energy's theta_t: the round deadline less the client's transfers
            opts["time_budget_s"] = float(f"{budget:.6g}")
        env = {**self.env, "initial_soc": min(1.0, quantise(st.soc, q.soc)),
               "initial_temp_c": quantise(st.temp_c, q.temp_c), "charging": charging}
        wl = {**self.spec.workload, "name": self.spec.name, "batches": self.batches(c),
              "scheduler": {"name": name, "options": opts}, "environment": env}
        return make_job(self.socs[c.soc], wl)

    # ------------------------------------------------------------------ the rounds
    def simulate(self, runner: Runner, progress: Callable[[int, int, int], None] | None = None) -> FleetRun:
        """Every round in order; ``progress(round, done, total)`` as a round's runs finish."""
        plan = self.spec.plan
        amb = self.wl.environment.ambient_c
        state = {c.id: State(c.initial_soc, amb, 0.0) for c in self.clients}
        out = FleetRun(baselines=[b[0] for b in self.baselines])
        now = 0.0
        for r in range(plan.rounds):
            hour = (plan.start_h + now / 3600.0) % 24.0
            avail = [(c, w) for c in self.clients if (w := c.available(hour)) is not None]
            chosen = self._select(avail, r)
            rows, runs = [], []
            for c, w in chosen:
                st = state[c.id]
                st.temp_c = amb + (st.temp_c - amb) * math.exp(-max(0.0, now - st.at_s) / self.tau_s[c.soc])
                st.at_s = now
                row = {"round": r, "client": c.id, "phone": c.soc, "scheduler": c.scheduler, "link": c.link,
                       "charging": w.charging, "batches": self.batches(c), "soc_start": st.soc,
                       "temp_start_c": st.temp_c}
                if st.soc < plan.min_battery and not w.charging:
                    row["status"] = "battery"
                elif st.temp_c > plan.max_temp_c:
                    row["status"] = "temperature"
                else:
                    jobs = [self.job(c, st, w.charging, c.scheduler, json.loads(c.options_json))]
                    jobs += [self.job(c, st, w.charging, n, o) for _, n, o in self.baselines]
                    runs.append((row, c, jobs))
                rows.append(row)
            self._run(runner, [j for _, _, js in runs for j in js], out,
                      (lambda d, t, _r=r: progress(_r, d, t)) if progress else None)
            for row, c, jobs in runs:
                self._settle(row, c, [self.cache[j.key] for j in jobs], state[c.id], now, out)
            for row in rows:
                if row.get("status") in ("battery", "temperature"):
                    self._idle(row)
            wall = self._wall(rows)
            for row in rows:
                if row["status"] in ("completed", "straggler", "deadline"):
                    state[row["client"]].at_s = now + min(row["total_s"], wall)
            out.rounds.append(self._round_row(r, now, hour, len(avail), rows, wall))
            out.clients.extend(rows)
            now += wall + plan.interval_s
        return out

    def _select(self, avail: list, r: int) -> list:
        k = min(self.spec.plan.clients_per_round, len(avail))
        if self.spec.plan.selection == "random":
            rng = np.random.default_rng([self.spec.seed, ROUND_STREAM, r])
            idx = sorted(rng.choice(len(avail), size=k, replace=False).tolist()) if k else []
            return [avail[i] for i in idx]
        n = len(self.clients)
        start = (r * self.spec.plan.clients_per_round) % n
        return sorted(avail, key=lambda cw: (cw[0].id - start) % n)[:k]

    def _run(self, runner: Runner, jobs: list[Job], out: FleetRun, progress) -> None:
        """Run the jobs not run before (each distinct key once), filling the cache."""
        out.job_lookups += len(jobs)
        todo: dict[str, Job] = {}
        for j in jobs:
            if j.key not in self.cache and j.key not in todo:
                todo[j.key] = j
        work = list(todo.values())
        for j, res in zip(work, runner.map(work, progress)):
            self.cache[j.key] = res
        out.engine_runs += len(work)

    def _settle(self, row: dict, c: Client, results: list[dict], st: State, now: float, out: FleetRun) -> None:
        """The client's outcome from its run: times, energies, the state it ends in."""
        plan = self.spec.plan
        tr = self.transfers[c.link]
        res = results[0]
        for (label, _, _), b in zip(self.baselines, results[1:]):
            row[f"energy_j[{label}]"] = None if "error" in b else b["training_j"]
            row[f"compute_s[{label}]"] = None if "error" in b else b["sim_time_s"]
        if "error" in res:
            row.update(status="failed", error=res["error"])
            out.failures.append({"round": row["round"], "client": c.id, "error": res["error"]})
            self._idle(row)
            return
        compute = res["sim_time_s"]
        total = tr.down_s + compute + tr.up_s
        frac, radio = 1.0, tr.energy_j
        status = "completed"
        if total > plan.deadline_s:
            if plan.stragglers == "drop":
                # stopped at the deadline: the training's energy up to it, no upload
                status = "deadline"
                frac = min(1.0, max(0.0, (plan.deadline_s - tr.down_s) / compute)) if compute > 0 else 1.0
                radio = tr.down_j * min(1.0, plan.deadline_s / tr.down_s) if tr.down_s > 0 else 0.0
                total = plan.deadline_s
            else:
                status = "straggler"
        drain = (res["soc_start"] - res["soc_end"]) * frac
        radio_drain = 0.0 if row["charging"] else radio / self.pack_j[c.soc]
        st.soc = min(1.0, max(0.0, st.soc - drain - radio_drain))
        st.temp_c = res["final_c"]
        row.update(status=status, download_s=tr.down_s, compute_s=compute * frac, upload_s=tr.up_s if status != "deadline" else 0.0,
                   total_s=total, phone_energy_j=res["energy_j"] * frac, train_energy_j=res["training_j"] * frac,
                   radio_energy_j=radio, energy_j=res["training_j"] * frac + radio, soc_end=st.soc,
                   peak_c=res["peak_c"],
                   error="")

    @staticmethod
    def _idle(row: dict) -> None:
        row.update(download_s=0.0, compute_s=0.0, upload_s=0.0, total_s=0.0, phone_energy_j=0.0, train_energy_j=0.0,
                   radio_energy_j=0.0, energy_j=0.0, soc_end=row["soc_start"], peak_c=row["temp_start_c"])
        row.setdefault("error", "")

    def _wall(self, rows: list[dict]) -> float:
        """A round lasts until its last client finishes, or its deadline when clients are dropped
        at it."""
        times = [r["total_s"] for r in rows if r["status"] in ("completed", "straggler", "deadline")]
        return max(times, default=0.0)

    def _round_row(self, r: int, now: float, hour: float, avail: int, rows: list[dict], wall: float) -> dict:
        count = {s: sum(1 for x in rows if x["status"] == s)
                 for s in ("completed", "straggler", "deadline", "battery", "temperature", "failed")}
        return {"round": r, "start_s": now, "hour": hour, "available": avail, "selected": len(rows),
                **count, "wall_s": wall, "energy_j": sum(x["energy_j"] for x in rows),
                "train_energy_j": sum(x["train_energy_j"] for x in rows),
                "radio_energy_j": sum(x["radio_energy_j"] for x in rows)}
