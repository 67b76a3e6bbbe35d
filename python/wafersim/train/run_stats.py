"""What a Trainer measured: emulated cycles, per-PE busy time by pass, task runs, traffic
per color, zero activations and deltas skipped, PE memory."""

from __future__ import annotations

import numpy as np

__all__ = ["TrainStats"]


class TrainStats:
    """Accumulates the statistics of every run a Trainer makes."""

    def __init__(self, plan):
        self.plan = plan
        self.cycles = 0
        self.runs = 0
        self.samples_trained = 0
        self.samples_inferred = 0
        self.per_pe: dict[tuple[int, int], dict] = {}

    def add_run(self, st) -> None:
        self.cycles += int(st.cycles)
        self.runs += 1
        for pe, s in st.pes.items():
            acc = self.per_pe.setdefault(pe, {"busy_cycles": 0, "tasks_started": {},
                                              "busy_by_task": {}, "element_ops": 0,
                                              "instructions": 0})
            acc["busy_cycles"] += s["busy_cycles"]
            acc["element_ops"] += s["element_ops"]
            acc["instructions"] += sum(s["instructions"].values())
            for key in ("tasks_started", "busy_by_task"):
                for k, v in s[key].items():
                    acc[key][k] = acc[key].get(k, 0) + v

    def __repr__(self) -> str:
        return (f"TrainStats({self.cycles} cycles, {self.samples_trained} samples trained, "
                f"{self.samples_inferred} inferred)")
