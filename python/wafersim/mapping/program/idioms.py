"""Idioms the program parts repeat: descriptors of fabric inputs and staged sends, column
views of W, one hop of a partial-sum chain, counters in memory."""

from __future__ import annotations

from .spec import PeSpec

__all__ = ["fab_in", "stage_dsds", "column", "chain_hop", "bump", "fp_one"]


def fab_in(name: str, color: int, length: int, *, ue: int = 0, ac: int = 0) -> str:
    """A fabric input descriptor that names its color with SC (microthread entry color & 7)."""
    return (f"{name}: .dsd fabric_in, length={length}, sw=1, sc=1, ch={color >> 3}, "
            f"utid={color & 7}, ue={ue}, ac={ac}")


def stage_dsds(s: PeSpec, q: str, stage: int, color: int, utid: int, ac: int,
               closes: tuple[int, int]) -> list[str]:
    """A staged sender's descriptors: the local staging queue ``stage`` (written one
    sparse wavelet at a time), the forwarder's input (sparse, ends at a control wavelet:
    Term activates ``ac``) and output on ``color``, and the two closeouts (fixed indices)."""
    return [
        f"{q}s: .dsd fabric_out, color={stage}, length=1, sw=1, wli=1",
        f"{q}:  .dsd fabric_in, length={s.qcap}, sw=1, sc=1, ch={stage >> 3}, utid={stage & 7}, "
        f"us=1, term=1, ue=1, ac={ac}",
        f"{q}o: .dsd fabric_out, color={color}, length={s.qcap}, sw=1, wli=1, utid={utid}",
        f"{q}c: .dsd fabric_out, color={color}, length=1, sw=1, c=1, index={closes[0]}, ue=1, "
        f"utid={utid}, ac={ac}",
        f"{q}e: .dsd fabric_out, color={color}, length=1, sw=1, c=1, index={closes[1]}, ue=1, "
        f"utid={utid}, ac={ac}"]


def column(s: PeSpec, name: str, base: str, stride: int, wli: bool, xdsr: int) -> str:
    """A column view of W (or of the activation slots beside it): ``nin`` elements a whole
    row apart. A 1D descriptor's stride has 9 signed bits [0523], so wider rows use a 4D
    descriptor with one dimension and the XDSD's 15-bit stride [0550]."""
    w_ = ", wli=1" if wli else ""
    if stride <= 255:
        return f"{name}: .dsd mem1d, base={base}, length={s.nin}, stride={stride}{w_}"
    return f"{name}: .dsd mem4d, base={base}, dims=({s.nin},), xdsr={xdsr}{w_}"


def chain_hop(s: PeSpec, sums: str, out: str, inp: str | None, *, reg: int, sums_reg: int,
              sent: str) -> list[str]:
    """One hop of a partial-sum chain [0411], [0412]: an asynchronous operation sends this
    PE's sums (at the chain's start) or adds them to those arriving from the neighbour and
    passes the result on; its completion starts task ``sent``, which clears the sums."""
    L = [f"        lds1wds S1[{sums_reg}], {sums}", f"        lddwds  D[{reg}], {out}"]
    if inp is None:
        L.append(f"        {s.MV}.t D[{reg}], S1[{sums_reg}]              ; chain start: send my sums")
    else:
        L += [f"        lds0wds S0[{reg}], {inp}",
              f"        fadd{s.FX}.t D[{reg}], S0[{reg}], S1[{sums_reg}]     ; add mine and pass them on"]
    L += [f"{sent}: lddwds  D[{reg}], {sums}",
          f"        {s.MV} D[{reg}], #0                    ; clear the sums"]
    return L


def bump(var: str, by: int) -> list[str]:
    """var += by, a 16-bit counter in memory (through r5)."""
    return [f"        ld16 r5, {var}", f"        addi r5, {by}", f"        st16 r5, {var}"]


def fp_one(dtype: str) -> list[str]:
    """r2(:r3) = 1.0 (a type-3 operand 0 pairs r2 with D[2] [0585])."""
    if dtype == "fp32":
        return ["        movi r2, 0", "        li r3, 0x3F80"]
    return ["        li r2, 0x3C00"]
