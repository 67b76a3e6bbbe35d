"""Reverse checkpoint (RCP; seed 000 FIG. 28D-E, [0615], [0653], [0655]): the replay of a
kept layer's forward pass from the inputs it stored (mapping/program/recompute.py), run on
one worker PE of a real mapping's program, and its hop of the partial-sum chain. It must
send the forward pass's partial sums bit for bit (the same fused multiply-adds on the same
operands in the same order, then the same chain addition), for the sample's own slot
among several in flight, in fp32 and fp16, without counting a new sample; checked against
the sums the forward pass sent and against once-rounded exact arithmetic in that order.
Then the discarding layers' side ([0651], [0653]): their inputs dropped after the forward
pass, taken back from the replay's stream into the backward slot, the recompute passed on
or ended."""

from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest

import wafersim as ws
from wafersim.mapping import task_ids as T
from wafersim.mapping.program import pe_source

pytestmark = pytest.mark.nosanitize

_NP = {"fp32": np.float32, "fp16": np.float16}


def _round(value: Fraction, t):
    """Round to nearest even of an exact rational to numpy type t (finite values)."""
    guess = t(float(value))
    cands = {guess, np.nextafter(guess, t(np.inf)), np.nextafter(guess, t(-np.inf))}
    bits = np.uint16 if np.dtype(t).itemsize == 2 else np.uint32
    return min(cands, key=lambda c: (abs(Fraction(float(c)) - value),
                                     int(np.array(c).view(bits)) & 1))


def _fmac_order(W, a, t):
    """sums_o = sum over nonzero a_i, i increasing, of W[o, i] * a_i, one rounding per
    fused multiply-add (f_act [0408])."""
    out = []
    for o in range(W.shape[0]):
        acc = t(0)
        for i in np.flatnonzero(a):
            acc = _round(Fraction(float(acc)) + Fraction(float(W[o, i])) * Fraction(float(a[i])), t)
        out.append(acc)
    return np.array(out, dtype=t)


def _worker_spec(dtype, slots, chain_start=True):
    """A worker (not a finalizer) of layer 1 of a 12-10-9-4 mapping, at the start of its
    column's partial-sum chain or not, made a recomputing layer's PE."""
    model = ws.nn.Sequential(ws.nn.Linear(12, 10, seed=1), ws.nn.ReLU(),
                             ws.nn.Linear(10, 9, seed=2), ws.nn.ReLU(),
                             ws.nn.Linear(9, 4, seed=3))
    plan = ws.map(model, blocks=[(3, 3), (3, 3), (3, 1)], dtype=dtype, slots=slots)
    spec = next(s for s in plan.specs.values()
                if s.layer == 1 and not s.final and (s.p_in is None) == chain_start)
    return replace(spec, recomputes=True)


def _word(pe, name):
    return int(pe.read_memory(pe.program.symbols[name].address, 2).view(np.uint16)[0])


def _run(dtype, slots, samples, seed, chain_start=True):
    """Streams ``samples`` samples' inputs into one worker as the forward pass does (and,
    off the chain's start, its neighbour's sums), then replays each slot. Returns the
    spec, W, the inputs, the sums the forward pass sent up the chain, and per replay: the
    sums it sent, its instruction counts, the neighbour's sums it was given."""
    s = _worker_spec(dtype, slots, chain_start)
    t = _NP[dtype]
    rng = np.random.default_rng(seed)
    W = rng.uniform(-1, 1, (s.nout, s.nin)).astype(t)
    pe = ws.pe.LonePE()
    pe.load(pe_source(s))
    blk = np.zeros((s.nin, s.nout + s.slots), dtype=t)
    blk[:, :s.nout] = W.T
    pe.write("w", blk.ravel())
    pe.launch("main")
    pe.launch("config")
    pe.run()
    pe.write("v_mode", np.array([1], np.uint16))          # training: keep the slots
    pe.write("v_k", np.array([slots], np.uint16))
    acts, far, start = [], [], pe.cycle + 1
    for k in range(samples):
        a = rng.uniform(-1, 1, s.nin).astype(t)
        a[rng.random(s.nin) < 0.4] = 0                   # about 40 % zeros, never sent
        a[k % s.nin] = 0
        nz = np.flatnonzero(a)
        pe.inject(s.a_in, a[nz], dtype=dtype, index=s.i0 + nz, start=start)
        pe.close(s.a_in, T.F_CLOSE, start=start + len(nz))
        if not chain_start:                              # the far neighbour's sums
            far.append(rng.uniform(-1, 1, s.nout).astype(t))
            pe.inject(s.p_in, far[-1], dtype=dtype, start=start + len(nz) + 20)
        pe.run()
        start = pe.cycle + 1
        acts.append(a)
    sent = pe.output_values(s.p_out, dtype).reshape(samples, s.nout)
    assert not pe.read("fpsum").any()                    # the chain hop cleared the sums
    assert _word(pe, "v_infl") == samples
    replayed = []
    for k in range(samples):
        # the backward pass's slot (a runtime word the host does not export: by address)
        pe.write_memory(pe.program.symbols["v_bpsl"].address, np.array([k], np.uint16))
        pe.reset_stats()
        pe.launch("r_replay")
        if not chain_start:
            pe.inject(s.p_in, far[k], dtype=dtype, start=pe.cycle + 50)
        pe.run()
        st = pe.stats()
        out = pe.output_values(s.p_out, dtype)[-s.nout:]
        replayed.append((out.astype(t), st["instructions"], st["tasks_started"]))
        assert not pe.read("fpsum").any()                # r_sent cleared the sums
        assert _word(pe, "v_infl") == samples            # no new sample counted
    return s, W, acts, sent, replayed, far


@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_replay_gives_the_forward_sums_bit_for_bit_0653(dtype):
    """[0653]: the kept layer recomputes its forward pass of the sample from its stored
    inputs; [0655] the backward pass then uses what it recomputed: bit for bit the forward
    pass's sums, for each of three samples in flight (its own slot, v_bpsl)."""
    s, W, acts, sent, replayed, _ = _run(dtype, slots=3, samples=3, seed=5)
    t = _NP[dtype]
    for k, a in enumerate(acts):
        got = replayed[k][0]
        assert replayed[k][2].get(T.R_SENT) == 1 and T.F_SENT not in replayed[k][2]
        assert np.array_equal(got.view(np.uint8), sent[k].astype(t).view(np.uint8)), k
        assert np.array_equal(got, _fmac_order(W, a, t)), k
        # and it is the matrix-vector product (float64, to rounding)
        assert np.allclose(got.astype(np.float64), W.astype(np.float64) @ a,
                           atol=1e-5 if dtype == "fp32" else 2e-2)


def test_replay_reads_only_its_slot_and_skips_zeros_0408():
    """The samples differ: replaying slot k gives sample k's sums, not another's; one fused
    multiply-add per nonzero stored input, as f_act ran one per nonzero wavelet [0408]."""
    s, W, acts, sent, replayed, _ = _run("fp32", slots=2, samples=2, seed=7)
    assert not np.array_equal(replayed[0][0], replayed[1][0])
    for k in range(2):
        assert np.array_equal(replayed[k][0], _fmac_order(W, acts[k], np.float32))
        ops = replayed[k][1]
        assert ops["fmacs"] == np.count_nonzero(acts[k]) < s.nin
        assert ops["feqs"] == s.nin


@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_replay_hop_adds_the_far_neighbours_sums_as_the_forward_pass_0411(dtype):
    """Off the chain's start, the replay's hop adds the sums arriving from the far
    neighbour to its own and passes them on [0411], [0412]: bit for bit what the forward
    pass's hop sent, and (own sums + neighbour's, one rounding) by exact arithmetic."""
    s, W, acts, sent, replayed, far = _run(dtype, slots=2, samples=2, seed=11,
                                           chain_start=False)
    t = _NP[dtype]
    for k, a in enumerate(acts):
        got = replayed[k][0]
        assert np.array_equal(got.view(np.uint8), sent[k].astype(t).view(np.uint8)), k
        mine = _fmac_order(W, a, t)
        want = np.array([_round(Fraction(float(x)) + Fraction(float(y)), t)
                         for x, y in zip(far[k], mine)], dtype=t)
        assert np.array_equal(got, want), k


def test_programs_without_a_policy_carry_no_replay():
    """A mapping that does not recompute (every mapping today) carries no replay code."""
    model = ws.nn.Sequential(ws.nn.Linear(4, 3, seed=1), ws.nn.ReLU(), ws.nn.Linear(3, 2, seed=2))
    plan = ws.map(model)
    assert all(not s.recomputes for s in plan.specs.values())
    assert all("r_replay" not in pe_source(s) for s in plan.specs.values())


def test_a_discarding_policy_compiles_the_recompute_pass_where_the_segments_are():
    """checkpoint=2 on a 4-layer mapping: segments (0, [1]) and (2, [3]); layers 0 and 2
    replay, 1 and 3 discard ("end" of their segment); F_0 of layers 1 and 3 send the
    trigger; only those PEs carry the replay or recompute code."""
    model = ws.nn.Sequential(ws.nn.Linear(4, 3, seed=1), ws.nn.ReLU(),
                             ws.nn.Linear(3, 3, seed=2), ws.nn.ReLU(),
                             ws.nn.Linear(3, 3, seed=3), ws.nn.ReLU(), ws.nn.Linear(3, 2, seed=4))
    plan = ws.map(model, checkpoint=2)
    for s in plan.specs.values():
        assert s.recomputes == (s.layer in (0, 2))
        assert s.discards == ("end" if s.layer in (1, 3) else None)
        assert s.rc == plan.colors["RC"]
        assert s.rc_source == (s.layer in (1, 3) and s.row == s.col == 0)
        assert s.slots == plan.slots and s.in_slots == (1 if s.discards else plan.slots)
        assert s.out_slots == (1 if s.final and s.layer in (0, 2) else plan.slots)
        src = pe_source(s)
        assert ("r_replay" in src) == s.recomputes and ("r_mode" in src) == bool(s.discards)


def _finalizer_run(dtype, act, samples, seed, zero_slot=True):
    """Layer 1 of a 6-5-4-3 mapping in 1 x 1 blocks: its one PE is the column's finalizer.
    Streams ``samples`` samples' inputs as the forward pass does, then replays each slot
    (its stored outputs zeroed first, so that they must be recomputed)."""
    model = ws.nn.Sequential(ws.nn.Linear(6, 5, seed=1), act(),
                             ws.nn.Linear(5, 4, seed=2), act(), ws.nn.Linear(4, 3, seed=3))
    plan = ws.map(model, blocks=[(1, 1), (1, 1), (1, 1)], dtype=dtype, slots=samples)
    s = replace(next(s for s in plan.specs.values() if s.layer == 1), recomputes=True)
    assert s.final and s.rows == 1 and s.a_out is not None
    t = _NP[dtype]
    rng = np.random.default_rng(seed)
    W = rng.uniform(-1, 1, (s.nout, s.nin)).astype(t)
    b = rng.uniform(-0.5, 0.5, s.nout).astype(t)
    pe = ws.pe.LonePE()
    pe.load(pe_source(s))
    blk = np.zeros((s.nin, s.nout + s.slots), dtype=t)
    blk[:, :s.nout] = W.T
    pe.write("w", blk.ravel())
    pe.write("bias", b)
    pe.launch("main")
    pe.launch("config")
    pe.run()
    pe.write("v_mode", np.array([1], np.uint16))
    pe.write("v_k", np.array([samples], np.uint16))
    acts, fwd = [], []
    for k in range(samples):
        a = rng.uniform(-1, 1, s.nin).astype(t)
        a[k % s.nin] = 0
        nz = np.flatnonzero(a)
        n0 = len(pe.output(s.a_out)["data"])
        start = pe.cycle + 1
        pe.inject(s.a_in, a[nz], dtype=dtype, index=s.i0 + nz, start=start)
        pe.close(s.a_in, T.F_CLOSE, start=start + len(nz))
        pe.run()
        out = pe.output(s.a_out)
        fwd.append({key: np.asarray(v)[n0:].copy() for key, v in out.items()})
        acts.append(a)
    infl = _word(pe, "v_infl")
    aslots = pe.read("aslots").reshape(samples, s.nout).copy()
    rep = []
    for k in range(samples):
        if zero_slot:
            cur = pe.read("aslots").reshape(samples, s.nout)
            cur[k] = 0
            pe.write("aslots", cur.ravel())
        pe.write_memory(pe.program.symbols["v_bpsl"].address, np.array([k], np.uint16))
        n0 = len(pe.output(s.a_out)["data"])
        pe.reset_stats()
        pe.launch("r_replay")
        pe.run()
        out = pe.output(s.a_out)
        rep.append({key: np.asarray(v)[n0:].copy() for key, v in out.items()})
        assert _word(pe, "v_infl") == infl and _word(pe, "v_rcm") == 0
        assert not pe.read("fpsum").any()
    return s, W, b, acts, fwd, rep, aslots, pe.read("aslots").reshape(samples, s.nout)


@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
@pytest.mark.parametrize("act", [ws.nn.ReLU, ws.nn.Sigmoid])
def test_finalizer_replay_sends_the_forward_activations_again_0653(dtype, act):
    """[0653]: the kept layer's finalizer recomputes z = sums + b and a = f(z) from the
    replayed sums and sends the nonzero activations east again, each with its index,
    bit for bit as in the forward pass, into the sample's backward slot (so they are
    really recomputed: the slot was zeroed first), and ends with a closeout of its own
    (R_CLOSE, not F_CLOSE), counting no new sample."""
    s, W, b, acts, fwd, rep, before, after = _finalizer_run(dtype, act, samples=2, seed=3)
    t = _NP[dtype]
    assert np.array_equal(before.view(np.uint8), after.view(np.uint8))
    for k in range(len(acts)):
        f, r = fwd[k], rep[k]
        fd, rd = ~f["ctrl"].astype(bool), ~r["ctrl"].astype(bool)
        assert np.array_equal(f["data"][fd], r["data"][rd]) and fd.sum() > 0
        assert np.array_equal(f["index"][fd], r["index"][rd])
        assert list(f["index"][~fd]) == [T.F_CLOSE] and list(r["index"][~rd]) == [T.R_CLOSE]
        # z by exact arithmetic in the device's order: the sums, then + b
        z = np.array([_round(Fraction(float(x)) + Fraction(float(y)), t)
                      for x, y in zip(_fmac_order(W, acts[k], t), b)], dtype=t)
        if act is ws.nn.ReLU:
            assert np.array_equal(after[k], np.maximum(z, t(0)))
        else:
            assert np.allclose(after[k].astype(np.float64), 1 / (1 + np.exp(-z.astype(np.float64))),
                               atol=1e-6 if dtype == "fp32" else 2e-3)


# ---- the discarding layers' side ----------------------------------------------------------
def _slot(pe, s, k):
    """The stored inputs of slot k (the column beside W's rows)."""
    return pe.read("w").reshape(s.nin, s.nout + s.slots)[:, s.nout + k].copy()


def _load(s, W, b=None, neglr=None):
    pe = ws.pe.LonePE()
    pe.load(pe_source(s))
    if neglr is not None:
        pe.write("c_neglr", np.array([neglr], W.dtype))
    blk = np.zeros((s.nin, s.nout + s.slots), dtype=W.dtype)
    blk[:, :s.nout] = W.T
    pe.write("w", blk.ravel())
    if b is not None:
        pe.write("bias", b)
    pe.launch("main")
    pe.launch("config")
    pe.run()
    pe.write("v_mode", np.array([1], np.uint16))
    pe.write("v_k", np.array([s.slots], np.uint16))
    return pe


def _stream(pe, s, a, dtype, close):
    nz = np.flatnonzero(a)
    start = pe.cycle + 1
    pe.inject(s.a_in, a[nz], dtype=dtype, index=s.i0 + nz, start=start)
    pe.close(s.a_in, close, start=start + len(nz))
    pe.run()


@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
@pytest.mark.parametrize("mode", ["pass", "end"])
def test_discarding_worker_drops_its_inputs_and_takes_the_recompute_back_0651_0653(dtype, mode):
    """[0651]: a discarding layer's PE drops the sample's inputs once its forward sums
    are sent; [0653]: in recompute mode (r_mode) what the replay sends is stored into the
    sample's backward slot, bit for bit the discarded values; at its closeout (R_CLOSE) a
    layer inside the segment passes the recomputed sums on (bit for bit the forward
    pass's), the segment's last layer only clears them. The forward slot is restored: the
    next sample's inputs are discarded from their own slot, not the recomputed one."""
    t = _NP[dtype]
    s = replace(_worker_spec(dtype, 2), recomputes=False, discards=mode)
    rng = np.random.default_rng(21)
    W = rng.uniform(-1, 1, (s.nout, s.nin)).astype(t)
    pe = _load(s, W)
    a, b = (rng.uniform(-1, 1, s.nin).astype(t) for _ in range(2))
    a[1] = b[2] = 0
    _stream(pe, s, a, dtype, T.F_CLOSE)
    sent = pe.output_values(s.p_out, dtype)
    assert np.array_equal(sent, _fmac_order(W, a, t))
    assert not _slot(pe, s, 0).any()                     # discarded
    pe.launch("r_mode")
    _stream(pe, s, a, dtype, T.R_CLOSE)                  # what layer k's replay sends
    assert np.array_equal(_slot(pe, s, 0).view(np.uint8), a.view(np.uint8))
    out = pe.output_values(s.p_out, dtype)
    if mode == "pass":
        assert np.array_equal(out[s.nout:].view(np.uint8), sent.view(np.uint8))
    else:
        assert len(out) == s.nout
    assert not pe.read("fpsum").any() and _word(pe, "v_infl") == 1
    _stream(pe, s, b, dtype, T.F_CLOSE)                  # the next sample is let in
    assert np.array_equal(pe.output_values(s.p_out, dtype)[-s.nout:], _fmac_order(W, b, t))
    assert not _slot(pe, s, 1).any()
    assert np.array_equal(_slot(pe, s, 0).view(np.uint8), a.view(np.uint8))


@pytest.mark.parametrize("mode", ["pass", "end"])
def test_discarding_finalizer_sends_the_recomputed_activations_on_0653(mode):
    """A discarding layer's finalizer inside the segment ("pass") finalizes the
    recomputed sums and sends the same activations east with an R_CLOSE closeout, into
    its backward slot; the segment's last layer ("end") sends nothing."""
    model = ws.nn.Sequential(ws.nn.Linear(6, 5, seed=1), ws.nn.ReLU(),
                             ws.nn.Linear(5, 4, seed=2), ws.nn.ReLU(), ws.nn.Linear(4, 3, seed=3))
    plan = ws.map(model, blocks=[(1, 1), (1, 1), (1, 1)], slots=2)
    s = replace(next(s for s in plan.specs.values() if s.layer == 1), discards=mode)
    rng = np.random.default_rng(4)
    W = rng.uniform(-1, 1, (s.nout, s.nin)).astype(np.float32)
    bias = rng.uniform(-0.5, 0.5, s.nout).astype(np.float32)
    pe = _load(s, W, bias)
    a = rng.uniform(-1, 1, s.nin).astype(np.float32)
    _stream(pe, s, a, "fp32", T.F_CLOSE)
    fwd = {k: np.asarray(v).copy() for k, v in pe.output(s.a_out).items()}
    kept = pe.read("aslots").reshape(2, s.nout)[0].copy()
    assert not _slot(pe, s, 0).any()
    pe.write("aslots", np.zeros(2 * s.nout, np.float32))
    pe.launch("r_mode")
    _stream(pe, s, a, "fp32", T.R_CLOSE)
    assert np.array_equal(_slot(pe, s, 0).view(np.uint32), a.view(np.uint32))
    out = {k: np.asarray(v)[len(fwd["data"]):] for k, v in pe.output(s.a_out).items()}
    if mode == "pass":
        d0, d1 = ~fwd["ctrl"].astype(bool), ~out["ctrl"].astype(bool)
        assert np.array_equal(fwd["data"][d0], out["data"][d1]) and d0.sum() > 0
        assert np.array_equal(fwd["index"][d0], out["index"][d1])
        assert list(out["index"][~d1]) == [T.R_CLOSE]
        assert np.array_equal(pe.read("aslots").reshape(2, s.nout)[0].view(np.uint32),
                              kept.view(np.uint32))
    else:
        assert len(out["data"]) == 0
    assert not pe.read("fpsum").any() and _word(pe, "v_infl") == 1


def test_discarding_worker_holds_its_deltas_until_the_recompute_and_trains_bit_for_bit():
    """Gating, and [0655]: a discarding worker's deltas wait (D blocked) from the end of
    its forward pass until the recompute's closeout; then its delta pass and in-place
    chain pass run on the recomputed inputs: the delta sums it sends west and its
    weights after the update are bit for bit those of the same PE without RCP."""
    t = np.float32
    base = _worker_spec("fp32", 2)
    s0 = replace(base, recomputes=False)
    rng = np.random.default_rng(9)
    W = rng.uniform(-1, 1, (s0.nout, s0.nin)).astype(t)
    a = rng.uniform(-1, 1, s0.nin).astype(t)
    a[0] = 0
    d = rng.uniform(-1, 1, s0.nout).astype(t)
    d[1] = 0
    results = []
    for s in (s0, replace(s0, discards="end")):
        assert not s.final and s.p_in is None
        pe = _load(s, W, neglr=-0.25)
        _stream(pe, s, a, "fp32", T.F_CLOSE)
        nz = np.flatnonzero(d)
        start = pe.cycle + 1
        pe.inject(s.d_col, d[nz], dtype="fp32", index=s.o0 + nz, start=start)
        pe.close(s.d_col, T.B_CLOSE, start=start + len(nz))
        if s.h_in is not None:
            pe.inject(s.h_in, np.zeros(s.nin, t), dtype="fp32", start=start + 40)
        if not s.discards:
            pe.run()
        else:
            pe.run(cycles=3000)          # (run-until-idle would call the held deltas a deadlock)
            assert pe.stats()["tasks_started"].get(s.d_col, 0) == 0   # held
            assert len(pe.output(s.h_out)["data"]) == 0
            pe.launch("r_mode")
            _stream(pe, s, a, "fp32", T.R_CLOSE)
        results.append((pe.read("w").reshape(s.nin, s.nout + s.slots)[:, :s.nout].copy(),
                        pe.output_values(s.h_out, "fp32").copy()))
    (w0, h0), (w1, h1) = results
    assert len(h0) == s0.nin and np.array_equal(h0.view(np.uint32), h1.view(np.uint32))
    assert np.array_equal(w0.view(np.uint32), w1.view(np.uint32))
    assert not np.array_equal(w0, W.T)                   # the update did run
