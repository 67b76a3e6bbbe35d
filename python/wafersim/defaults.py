"""Default configuration of an emulated wafer: the values ../docs/decisions.md justifies.

Every component reads its defaults from here, so ``wafersim info`` prints what a
``Wafer()`` built without arguments really uses.
"""

from __future__ import annotations

#: Default machine parameters (seed 000 example values unless docs/decisions.md says why not).
DEFAULTS: dict[str, object] = {
    "fabric_colors": 24,          # routable colors; task ids 0..63, the rest are local [0096]
    "task_ids": 64,               # 6-bit color / task id [0096]
    "router_queue_depth": 2,      # per color [0317]; stall threshold depth-1 [0333]
    "ce_input_queue_depth": 6,    # per color [0329]; stall threshold depth-2
    "ce_output_queue_depth": 6,   # per fabric color [0360]
    "microthreads": 8,            # UT State entries [0362]
    "pe_memory_bytes": 48 * 1024, # [0700]
    "pe_code_bytes": 16 * 1024,   # of which instructions [0700]
    "task_start_latency": 2,      # cycles from a pick to the task's first issue
    "gprs": 16,                   # 16 x 16-bit [0359]
    "rng_resources": 4,           # LFSRs for stochastic rounding [0671]
    "stochastic_bits": 3,         # N of [0672]
    "hop_cycles": 1,              # every link kind [0294]
    "diag_hop_cycles": 1,         # diagonal links (seed 003); 2 models a slow sqrt(2) wire
    "router_scheduler": "round_robin",  # per output port [0319]-[0320]
    "priority_split": 8,          # priority scheduler: colors 0..7 first [0320]
    "watchdog_cycles": 10_000,    # cycles without progress before DeadlockError [0306]
    "run_cycle_limit": 100_000_000,  # Wafer.run() without max_cycles stops here (livelock)
    "energy_router_assumed": 1.0,          # per router traversal; ASSUMED, no seed value
    "energy_wire_per_pitch_assumed": 1.0,  # per PE pitch of wire; ASSUMED, no seed value
}
