"""The program of one PE of a mapped layer: assembly text for the CE ISA (docs/isa.md),
assembled from parts, each in its own module (docs/training.md describes the dataflow;
docs/architecture.md says where to add what):

==================  ==========================================================================
part                what it emits
==================  ==========================================================================
data_section        descriptors, runtime words (runtime_words.py), numbers and buffers
setup               the task table, ``main``, ``config``, ``setup``
worker_forward      ``f_act`` and the activation closeout; a worker's partial-sum hop
finalizer_forward   the column's sums at F_c, a = f(z), the sparse sends of the activations
control             samples in flight: ``fp_count``, ``fp_end`` / ``admit``, ``bp_end``
worker_backward     ``b_delta`` (DP, then the optimizer's CP) and the delta closeout
finalizer_backward  F_c's backward pass: delta (the loss's at the output), sends, own block
join                forks and joins of residual and two-branch blocks
sender              the round-based sparse sender of a finalizer
update              the update task (the optimizer's lowering inside)
recompute           reverse checkpoint: a kept layer's replay, a discarding layer's mode
==================  ==========================================================================

Every PE of layer l's block is a *worker*; PE (c, c) is also the *finalizer* F_c of column
c. Register roles: ``registers.py``; task ids: ``task_ids.py``.
"""

from __future__ import annotations

from . import cpgd
from .control import bp_end, fp_count, fp_end
from .data_section import data_section
from .finalizer_backward import finalize_backward, finalize_later
from .finalizer_forward import column_sums, finalize_forward
from .recompute import discard_table, recompute_mode, replay_table, replay_task
from .setup import config_and_setup, main_task, task_table
from .spec import PeSpec
from .update import update_task
from .worker_backward import delta_closeout, delta_task
from .worker_forward import activation_task, closeout_task, worker_chain

__all__ = ["PeSpec", "pe_source", "PASSES"]

#: The passes an instruction can belong to (``Plan.pass_of_pc``; statistics per pass).
PASSES = ("forward", "delta", "chain", "control")


def pe_source(s: PeSpec) -> str:
    """Assembly text of the PE described by ``s``."""
    F = s.final
    L = data_section(s)
    L += [".code"] + task_table(s) + main_task(s) + config_and_setup(s)
    L += activation_task(s) + closeout_task(s)
    if not F:
        L += worker_chain(s)
    else:
        L += column_sums(s) + finalize_forward(s)
    L += fp_count(s) + fp_end(s)
    L += delta_task(s) + delta_closeout(s)
    if F:
        L += finalize_later(s)
    L += bp_end(s) + update_task(s)
    if F:
        L += finalize_backward(s)
    L += cpgd.bodies(s)
    if s.recomputes:
        L += replay_table(s) + replay_task(s)
    if s.discards:
        L += discard_table(s) + recompute_mode(s)
    return _pass_labels(L)


def _pass_labels(lines: list[str]) -> str:
    """Turns ";@pass NAME" markers into labels ``_pass_<k>_<NAME>`` (they occupy no code):
    the instructions after one, up to the next, belong to that pass (Plan.pass_of_pc)."""
    out = []
    for line in lines:
        if line.startswith(";@pass "):
            name = line.split()[1]
            assert name in PASSES, name
            out.append(f"_pass_{len(out)}_{name}:")
        else:
            out.append(line)
    return "\n".join(out) + "\n"
