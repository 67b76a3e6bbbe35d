"""The update task ``apply`` (also entered as ``ap`` at the end of a mini-batch, with r1 =
where to return): picks the scale of this batch (c_s1 for batches of v_n1 samples, c_s2
for the last, shorter one) into r2(:r3), runs the optimizer's update, and resets the
count of accumulated samples."""

from __future__ import annotations

from .cpgd import applied
from .spec import PeSpec

__all__ = ["update_task"]


def update_task(s: PeSpec) -> list[str]:
    return ([";@pass chain",
             "apply:  li r1, idle",
             "ap:     ld16 r5, v_gcnt",
             "        ld16 r0, v_n1",
             "        li r6, c_s1",
             "        eq16 r5, r0",
             "        bt ap1",
             "        li r6, c_s2",
             f"ap1:    {s.MV} r2, [r6]"]
            + s.optimizer.update(s)
            + applied(s)
            + ["        movi r5, 0",
               "        st16 r5, v_gcnt",
               "        jr r1",
               ";@pass control",
               "idle:   term"])
