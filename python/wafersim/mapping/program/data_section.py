"""The data section of a mapped PE: descriptors first (the 10-bit immediates of the DSR
loads reach them [0603]), then the runtime words (the first 512 bytes, where ld16 / st16
reach), then the numbers and buffers. Each lowering (activation, loss, optimizer) adds
its own declarations after the common ones."""

from __future__ import annotations

from .. import runtime_words as W
from .. import task_ids as T
from . import cpgd
from .idioms import column, fab_in, stage_dsds
from .recompute import replay_descriptors, trigger_descriptors
from .spec import PeSpec
from .single_weights import single_weight_data
from .sparse_weights import sparse_weight_data

__all__ = ["data_section"]


def _descriptors(s: PeSpec) -> list[str]:
    E, nin, nout, rowb, K, F = s.esize, s.nin, s.nout, s.row_bytes, s.slots, s.final
    # a row of W holds the stored columns (every output, or the kept ones: weight
    # sparsity), then the activation slots
    nc = s.ncols
    runs = s.runs()
    _, p0, n0 = runs[0] if runs else (0, 0, nout)
    L = [f"d_wrow:   .dsd mem1d, base=w{f' + {p0 * E}' if p0 else ''}, length={n0 if runs else 1}, "
         f"stride={E}, wli=1",
         f"d_fpsum:  .dsd mem1d, base=fpsum, length={nout}, stride={E}",
         f"d_actst:  .dsd mem1d, base=w + {nc * E}, length=1, stride={E}, wli=1",
         column(s, "d_wcol", "w", rowb, True, 3),
         column(s, "d_actz", f"w + {nc * E}", rowb, True, 3)]
    L += [column(s, f"d_actc{k}", f"w + {(nc + min(k, s.in_slots - 1)) * E}", rowb, False, 3)
          for k in range(K)]
    L += [column(s, "d_gcol", "g", nc * E, True, 4),
          f"x_col:    .xdsd mem4d, dims=({nin},), strides=({rowb},)",
          f"x_gcol:   .xdsd mem4d, dims=({nin},), strides=({nc * E},)",
          f"d_gall:   .dsd mem1d, base=g, length={nin * nc}, stride={E}",
          f"x_wall:   .xdsd mem4d, dims=({nc}, {nin}), strides=(unit, {rowb})",
          f"d_wall:   .dsd mem4d, base=w, dims=({nc}, {nin}), xdsr=2"]
    if not F:
        L.append(f"d_pout:   .dsd fabric_out, color={s.p_out}, length={nout}, sw=1, ue=1, "
                 f"utid={T.UT_PCHAIN}, ac={T.F_SENT}")
        if s.p_in is not None:
            L.append(fab_in("d_pin", s.p_in, nout))
        if s.recomputes or s.discards == "pass":
            L += replay_descriptors(s)
    if s.has_dp:
        L.append(f"d_dpsum:  .dsd mem1d, base=dpsum, length={nin}, stride={E}")
        L.append(f"d_hout:   .dsd fabric_out, color={s.h_out}, length={nin}, sw=1, ue=1, "
                 f"utid={T.UT_HCHAIN}, ac={T.H_SENT}")
        if s.h_in is not None:
            L.append(fab_in("d_hin", s.h_in, nin))
    if F:
        L += _finalizer_descriptors(s)
    if s.skip_grad_in is not None:
        L.append(fab_in("d_bin", s.skip_grad_in, nin))
    return L + trigger_descriptors(s)


def _finalizer_descriptors(s: PeSpec) -> list[str]:
    E, nout = s.esize, s.nout
    L = [f"d_z:      .dsd mem1d, base=z, length={nout}, stride={E}"]
    if s.row > 0:
        L.append(fab_in("d_plow", s.p_low, nout, ue=1, ac=T.FIN2))
    if s.row < s.rows - 1:
        L.append(fab_in("d_phigh", s.p_high, nout, ue=1, ac=T.FIN3))
    if s.bias:
        L += [f"d_bias:   .dsd mem1d, base=bias, length={nout}, stride={E}",
              f"d_gb:     .dsd mem1d, base=gb, length={nout}, stride={E}"]
    L += [f"d_aw:     .dsd mem1d, base=aslots, length={nout}, stride={E}, wli=1",
          "d_flagw:  .dsd mem1d, base=v_flags, length=1, stride=2, wli=1"]
    # staged sparse sends (sender.py): a local queue, and one forwarding operation per
    # round from it to the fabric
    if s.a_out is not None:
        L += stage_dsds(s, "d_txq", T.STAGE_TX, s.a_out, T.UT_TX, T.TX, (T.F_CLOSE, T.F_CLOSE_END))
        if s.sends_replay:
            L += replay_descriptors(s)
    L += [f"d_tot0:   .dsd mem1d, base=tot, length=1, stride={E}",
          f"d_totr:   .dsd mem1d, base=tot + {E}, length={nout - 1}, stride={E}",
          fab_in("d_jin", s.j_in, nout - 1, ue=1, ac=T.DFIN),
          f"d_tot:    .dsd mem1d, base=tot, length={nout}, stride={E}",
          f"d_fpr:    .dsd mem1d, base=fpr, length={nout}, stride={E}",
          f"d_delta:  .dsd mem1d, base=delta, length={nout}, stride={E}"]
    if s.d_send:
        L += stage_dsds(s, "d_dxq", T.STAGE_DTX, s.d_col, T.UT_DTX, T.DTX, (T.B_CLOSE, T.B_CLOSE_END))
    if s.last:
        L.append(f"d_lout:   .dsd fabric_out, color={s.a_out}, length=1, sw=1, wli=1")
    if s.skip_out is not None:
        L.append(f"d_sko:    .dsd fabric_out, color={s.skip_out}, length={nout}, sw=1, ue=1, "
                 f"utid={T.UT_TX}, ac={T.SK_SENT}")
    if s.join:
        L += [f"d_skf:    .dsd mem1d, base=skf, length={nout}, stride={E}, wli=1",
              f"d_skf0:   .dsd mem1d, base=skf, length=1, stride={E}, wli=1"]
        if nout > 1:
            L += [f"d_skfr:   .dsd mem1d, base=skf + {E}, length={nout - 1}, stride={E}, wli=1",
                  fab_in("d_sin", s.skip_in, nout - 1, ue=1, ac=T.SK_IN)]
        L += [f"d_y:      .dsd mem1d, base=ybuf, length={nout}, stride={E}",
              f"d_bo:     .dsd fabric_out, color={s.skip_back}, length={nout}, sw=1, ue=1, "
              f"utid={T.UT_DTX}, ac={T.B_SENT}"]
    return L


def _words(s: PeSpec) -> list[str]:
    """The u16 runtime words (the first 512 bytes, where ld16 / st16 reach [0603])."""
    L = [W.declare(w) for w in (W.V_MODE, W.V_CPM, W.V_K, W.V_INFL, W.V_FPBUSY, W.V_BFULL,
                                W.V_FLAG, W.V_BFLAG, W.V_GCNT, W.V_FPSL, W.V_BPSL, W.V_N1,
                                W.V_FPC, W.V_SEED)]
    L += [W.declare(W.C_I0, init=s.i0), W.declare(W.C_ROWB, init=s.row_bytes),
          W.declare(W.C_O0, init=s.o0), W.declare(W.C_OEND, init=s.o0 + s.nout)]
    L += cpgd.words(s)
    if s.sends_replay:
        L.append(W.declare(W.V_RCM))
    if s.rc_gate:
        L += [W.declare(W.V_RCD), W.declare(W.V_RCW)]
    if s.rc is not None:
        L += [W.declare(W.V_RCQ), W.declare(W.V_RCB)]
    if s.final:
        L.append(W.declare(W.V_FLAGS, count=s.slots))
        L += [W.declare(w) for w in (W.V_JCNT, W.V_TXP, W.V_TXPC, W.V_TXS, W.V_DXP, W.V_DXPC,
                                     W.V_DXS, W.V_DFLAG, W.V_DPBUSY)]
    if s.join:
        L += [W.declare(w) for w in (W.V_SKN, W.V_SKW, W.V_SKIDLE, W.V_SKRD, W.V_SKWR, W.V_BBUSY)]
    return L


def _numbers(s: PeSpec) -> tuple[list[str], list[str]]:
    """(declarations, exported names) of the numbers and buffers."""
    TY, nin, nout = s.dtype, s.nin, s.nout
    L = [".align 4"] + [W.declare(w, value_type=TY) for w in (W.C_NEGLR, W.C_S1, W.C_S2)]
    if s.athr:
        L.append(W.declare(W.C_ATHR, value_type=TY))
    exports = ["w", "g", "fpsum", "v_mode", "v_cpm", "v_k", "v_infl", "v_gcnt", "v_n1", "v_fpc",
               "v_seed", "c_neglr", "c_s1", "c_s2"]
    if s.final and s.last:
        words, names = s.loss.constants(s)
        L += words
        exports_last = names
    else:
        exports_last = []
    L += [W.declare(W.W, value_type=TY, count=nin * s.row_bytes // s.esize),
          W.declare(W.G, value_type=TY, count=nin * s.ncols),
          W.declare(W.FPSUM, value_type=TY, count=nout)]
    if s.has_dp:
        L.append(W.declare(W.DPSUM, value_type=TY, count=nin))
        exports.append("dpsum")
    if s.final:
        L.append(W.declare(W.Z, value_type=TY, count=nout))
        if s.bias:
            L += [W.declare(W.BIAS, value_type=TY, count=nout), W.declare(W.GB, value_type=TY, count=nout)]
        L += [W.declare(W.ASLOTS, value_type=TY, count=s.out_slots * nout),
              W.declare(W.TOT, value_type=TY, count=nout),
              W.declare(W.FPR, value_type=TY, count=nout),
              W.declare(W.DELTA, value_type=TY, count=nout)]
        exports += ["aslots", "tot", "delta", "z"]
        if s.athr:
            exports.append("c_athr")
        if s.bias:
            exports += ["bias", "gb"]
        exports += exports_last
        if s.join:
            L += [W.declare(W.SKF, value_type=TY, count=s.skip_depth * nout),
                  W.declare(W.YBUF, value_type=TY, count=nout)]
            exports += ["skf", "ybuf"]
    return L, exports


_DESCRIPTOR_BYTES = {".dsd": 6, ".xdsd": 8, ".stride": 2}
LD16_REACH = 512      # ld16 / st16 immediates reach the first 512 bytes [0603]


def _low_bytes(lines: list[str], words: list[str]) -> int:
    """Bytes the assembler lays out from address 0 up to the end of the u16 runtime
    ``words``: every descriptor outside ``.descriptors high`` (they are laid out first,
    wherever they are declared), then the words."""
    total, high = 0, False
    for line in lines:
        tokens = line.split(";")[0].replace(":", " ").split()
        if tokens[:1] == [".descriptors"]:
            high = tokens[1] == "high"
        elif not high:
            total += sum(size for op, size in _DESCRIPTOR_BYTES.items() if op in tokens)
    for line in words:
        tokens = line.split(";")[0].replace(",", " ").split()
        total += 2 * (int(tokens[-1]) if ".space" in tokens else 1)
    return total


def _slots_high(lines: list[str]) -> list[str]:
    """The per-slot column descriptors moved after ``.descriptors high``: with many slots
    they push the u16 runtime words out of ld16 / st16 reach. Only then, so that the
    layout (and the cycles, through memory banks) of every program that fits stays as it
    was."""
    per_slot = ("d_actc", "d_snapw", "d_snapc", "d_scat")     # (d_snap*: cpgd_snapshot.py)
    slot = [ln for ln in lines if ln.startswith(per_slot)]
    rest = [ln for ln in lines if not ln.startswith(per_slot)]
    return rest[:2] + [".descriptors high"] + slot + [".descriptors low"] + rest[2:]


def data_section(s: PeSpec) -> list[str]:
    """Header comment, ``.data``, every declaration of the PE, and ``.export``."""
    head = (f"; layer {s.layer} PE ({s.row}, {s.col}) of {s.rows} x {s.cols}: inputs "
            f"[{s.i0}, {s.i0 + s.nin}), outputs [{s.o0}, {s.o0 + s.nout}), {s.dtype}, "
            f"{s.slots} slot(s)" + ("; finalizer of its column" if s.final else ""))
    numbers, exports = _numbers(s)
    extra_data, extra_exports = cpgd.buffers(s)
    for part in s.lowerings():
        d, e = part.data(s)
        extra_data += d
        extra_exports += e
    # (the assembler lays every descriptor out from address 0, wherever it is declared)
    athr = [f"d_athr:   .dsd mem1d, base=c_athr, length=1, stride={s.esize}"] if s.athr else []
    words = _words(s)
    single, single_exports = single_weight_data(s)
    extra_exports += single_exports
    lines = ([head, ".data"] + _descriptors(s) + words + athr + cpgd.descriptors(s)
             + sparse_weight_data(s) + single + numbers + extra_data
             + [".export " + ", ".join(exports + extra_exports)])
    return _slots_high(lines) if _low_bytes(lines, words) > LD16_REACH else lines
