"""Neuron smearing (seed 000, FIG. 17-20, [0468]-[0494]; seed 001, EC412): a layer's
neurons split into equal or unequal fan-in portions over the PE rows of its block, their
partial sums combined along the column, the deltas back along the same paths.

References: the device-order fp32 reference given the same portions (bit for bit), the
unsmeared mapping (fp32 tolerance: the portions change the summation order), and a
hand count of the FIG. 18A/18B loads."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import wafersim as ws
from wafersim.mapping.smear import balanced_portions, portion_sizes

from train_refs import assert_params_close, assert_trains_like, device_reference

pytestmark = pytest.mark.nosanitize  # whole training runs: minutes under AddressSanitizer

N_IN, N_HID, N_OUT = 16, 12, 4
UNEQUAL = [0.5, 0.25, 0.25]
#: name -> (smear, blocks, the reference's shapes with the group sizes)
SPLITS = {
    "halves": ({0: 2, 1: 2}, [(2, 2), (2, 2)], [(2, 2), (2, 2)]),
    "quarters": ({0: 4, 1: 4}, [(4, 4), (4, 2)], [(4, 4), (4, 2)]),
    "unequal": ({0: UNEQUAL, 1: UNEQUAL}, [(3, 3), (3, 2)],
                [((8, 4, 4), (6, 3, 3)), ((6, 3, 3), 2)]),
}


def make_model(seed=5):
    return ws.nn.Sequential(ws.nn.Linear(N_IN, N_HID, seed=seed), ws.nn.ReLU(),
                            ws.nn.Linear(N_HID, N_OUT, seed=seed + 1))


def data(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, N_IN)).astype(np.float32)
    X[X < 0] = 0
    Y = rng.uniform(-1, 1, (n, N_OUT)).astype(np.float32)
    return X, Y


def train(model, X, Y, algo, **map_args):
    plan = ws.map(model.copy(), **map_args)
    tr = ws.Trainer(plan, algo=algo, lr=0.05, batch_size=1 if algo == "sgd" else 8,
                    progress=False)
    hist = tr.fit(X, Y, epochs=1, shuffle=False)
    return tr, hist


def test_portion_sizes_round_by_largest_remainder_0488():
    """Unequal portions [0488]: 1/2, 1/4, 1/4 of 16 and 12 inputs are exact; 1/3 each of
    10 gives 4, 3, 3 (the remainder to the lowest portion on a tie); 0.7, 0.3 of 5 gives
    3.5, 1.5 -> 4, 1 (equal remainders: the lower portion first)."""
    assert portion_sizes(UNEQUAL, 16) == (8, 4, 4)
    assert portion_sizes(UNEQUAL, 12) == (6, 3, 3)
    assert portion_sizes([1 / 3] * 3, 10) == (4, 3, 3)
    assert portion_sizes([0.7, 0.3], 5) == (4, 1)
    assert portion_sizes([0.1, 0.2, 0.7], 20) == (2, 4, 14)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(weights=st.lists(st.integers(1, 1000), min_size=1, max_size=12),
       n=st.integers(1, 300))
def test_portion_sizes_are_whole_inputs_within_one_of_each_share_0488(weights, n):
    """Arbitrary portions [0488] become whole inputs: the sizes sum to n and each differs
    from its exact share p n by less than one (largest remainders)."""
    p = [w / sum(weights) for w in weights]
    sizes = portion_sizes(p, n)
    assert sum(sizes) == n and len(sizes) == len(p)
    assert all(abs(s - q * n) < 1 for s, q in zip(sizes, p))


def test_balanced_portions_minimize_the_largest_load_like_brute_force_0490():
    """Portions from measured loads [0490]: the largest portion's load equals the minimum
    over every way to cut the inputs into k consecutive nonempty portions (brute force),
    and the fractions sum to 1 and round back to the cut sizes."""
    rng = np.random.default_rng(4)
    for n, k in [(8, 3), (9, 2), (7, 4), (6, 1), (5, 5)]:
        w = rng.uniform(0, 1, n) * (rng.uniform(0, 1, n) > 0.3)
        brute = min(max(w[a:b].sum() for a, b in zip((0,) + cuts, cuts + (n,)))
                    for cuts in itertools.combinations(range(1, n), k - 1))
        p = balanced_portions(w, k)
        sizes = portion_sizes(p, n)
        assert len(p) == k and abs(sum(p) - 1) < 1e-12 and min(sizes) >= 1
        bounds = np.concatenate([[0], np.cumsum(sizes)])
        assert max(w[a:b].sum() for a, b in zip(bounds[:-1], bounds[1:])) == pytest.approx(brute)
    with pytest.raises(ws.ConfigError, match="1 <= k <= 3"):
        balanced_portions([1, 1, 1], 4)
    with pytest.raises(ws.ConfigError, match="non-negative"):
        balanced_portions([1, -1, 1], 2)


@pytest.mark.parametrize("name", list(SPLITS))
def test_plan_places_the_portions_on_the_rows_0476(name):
    """Each PE (r, c) holds the fan-in portion I_r of the neurons O_c [0476]: the smeared
    layer's input groups have the portions' sizes, and the layer before it has as many
    columns with output groups of the same sizes (row c receives column c)."""
    smear, blocks, ref_shapes = SPLITS[name]
    plan = ws.map(make_model(), smear=smear)
    assert [(b.rows, b.cols) for b in plan.layers] == blocks
    for b, (R, _) in zip(plan.layers, ref_shapes):
        sizes = [n for _, n in b.in_groups]
        want = list(R) if isinstance(R, tuple) else [len(g) for g in np.array_split(
            np.arange(b.dense.n_in), R)]
        assert sizes == want
        for r in range(b.rows):
            for c in range(b.cols):
                spec = plan.specs[b.at(r, c)]
                assert (spec.i0, spec.nin) == b.in_groups[r]
    assert [n for _, n in plan.layers[0].out_groups] == [n for _, n in plan.layers[1].in_groups]
    if name == "unequal":
        assert "fan-in portions of [6, 3, 3] inputs" in plan.describe()


@pytest.mark.parametrize("algo", ["sgd", "minibatch"])
@pytest.mark.parametrize("name", list(SPLITS))
def test_smeared_training_equals_reference_bit_for_bit_and_unsmeared_to_fp32_0477(name, algo):
    """Halves, quarters and an unequal 1/2, 1/4, 1/4 split [0488] train, under SGD and
    mini-batches of 8, exactly as the device-order reference with the same portions (the
    partial sums of the portions combined along the column toward the finalizer [0477],
    [0492]; the deltas back along rows and columns [0491]), and equal the unsmeared
    mapping (every neuron whole on one PE: blocks 1 x 1) to fp32 tolerance."""
    smear, blocks, ref_shapes = SPLITS[name]
    X, Y = data(48)
    ref = device_reference(make_model(), ref_shapes)
    assert_trains_like(ref, make_model(), X, Y, None, algo, smear=smear)
    smeared, h1 = train(make_model(), X, Y, algo, smear=smear)
    whole, h0 = train(make_model(), X, Y, algo, blocks=[(1, 1), (1, 1)])
    assert_params_close(smeared.weights(), whole.weights(), rtol=1e-5, atol=1e-6)
    assert h1.loss[0] == pytest.approx(h0.loss[0], rel=1e-5)
    assert np.allclose(smeared.predict(X), whole.predict(X), rtol=1e-5, atol=1e-6)
    # not trivially equal: the portions change the summation order somewhere
    assert len(smeared.plan.pes()) > len(whole.plan.pes())


def test_smeared_output_layer_with_softmax_head_equals_reference_0488():
    """Unequal portions on both layers (1/4, 1/4, 1/2 and 1/2, 1/4, 1/4) with
    CrossEntropyLoss's head column: the same weights and loss as the device-order
    reference given those portions, bit for bit."""
    from wafersim.reference.training import DeviceOrderMLP

    X, Y = data(30)
    labels = np.argmax(Y, axis=1)
    model = make_model()
    plan = ws.map(model.copy(), smear={0: [0.25, 0.25, 0.5], 1: UNEQUAL},
                  loss=ws.nn.CrossEntropyLoss())
    tr = ws.Trainer(plan, algo="sgd", lr=0.05, progress=False)
    hist = tr.fit(X, labels, epochs=1, shuffle=False)
    dense = model.dense_layers()
    ref = DeviceOrderMLP([(d.linear.weight, d.linear.bias) for d in dense],
                         [d.activation for d in dense],
                         [((4, 4, 8), (6, 3, 3)), ((6, 3, 3), plan.layers[1].cols)],
                         loss="cross_entropy")
    _, losses = ref.fit(X, np.eye(N_OUT, dtype=np.float32)[labels], 0.05, "sgd", 1)
    assert hist.loss[0] == losses.mean()
    for (W, b), (Wr, br) in zip(tr.weights(), ref.params(), strict=True):
        assert np.array_equal(W, Wr) and np.array_equal(b, br)


def test_equal_portions_are_the_blocks_with_as_many_rows_bit_for_bit_0488():
    """smear={l: k} is k equal portions: the same plan and the same training, bit for bit,
    as blocks with k rows (the mapping's array_split groups)."""
    X, Y = data(24)
    a, ha = train(make_model(), X, Y, "sgd", smear={0: 4, 1: 2}, blocks=[(4, 2), (2, 2)])
    b, hb = train(make_model(), X, Y, "sgd", blocks=[(4, 2), (2, 2)])
    assert ha.loss[0] == hb.loss[0]
    for (W, bb), (W1, b1) in zip(a.weights(), b.weights(), strict=True):
        assert np.array_equal(W, W1) and np.array_equal(bb, b1)
    assert a.stats().cycles == b.stats().cycles


def _fig18_inputs(n, seed=1):
    """FIG. 18's loads on a layer of 12 inputs: inputs 10 and 11 are always 0 (never sent
    [0408]), the others never, so a row holding 4 live inputs does M work, one holding 2
    M/2."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.1, 1.0, (n, 12)).astype(np.float32)
    X[:, 10:] = 0
    Y = rng.uniform(-1, 1, (n, 2)).astype(np.float32)
    return X, Y


def _mac_busy(tr):
    """Per PE of the layer: busy cycles of its multiply-accumulate task (f_act: a
    received activation times its weight row, the neuron portions' local compute [0476])."""
    st = tr.stats()
    b = tr.plan.layers[0]
    return np.array([[st.mac_busy()[b.at(r, c)] for c in range(b.cols)]
                     for r in range(b.rows)], dtype=float)


def test_fig18_six_pes_four_full_two_half_against_four_equally_loaded_0471_0474():
    """FIG. 18A [0471]-[0472]: six PEs, four fully and two half subscribed; FIG. 18B
    [0474]: the same neurons smeared over four PEs, equally loaded, two PEs free.

    Linear(12, 2) with inputs 10 and 11 always zero. Unsmeared (3 x 2 PEs, inputs 0-3,
    4-7, 8-11 per row): rows 0 and 1 receive 4 activations per sample, row 2 only 2, so
    four PEs do M multiply-accumulate work and two M/2 (busy cycles of the receiving
    task, measured). Smeared in unequal portions 5/12, 7/12 (2 x 2 PEs: inputs 0-4 and
    5-11, 5 live inputs each): four PEs each do 1.25 M, the same total 5 M, and the
    results stay those of the device-order reference. Equal halves (inputs 0-5, 6-11)
    would load the rows 1.5 M and M: the unequal portions are what balances them."""
    X, Y = _fig18_inputs(40)
    model = ws.nn.Sequential(ws.nn.Linear(12, 2, seed=7))
    six, _ = train(model, X, Y, "sgd", blocks=[(3, 2)])
    portions = balanced_portions((X != 0).mean(axis=0), 2)   # from the measured load [0490]
    assert portions == [5 / 12, 7 / 12]
    four, _ = train(model, X, Y, "sgd", smear={0: portions})
    assert len(six.plan.pes()) == 6 and len(four.plan.pes()) == 4
    m6, m4 = _mac_busy(six), _mac_busy(four)
    M = m6[0, 0]
    assert M > 0
    assert np.array_equal(m6[:2], np.full((2, 2), M))        # four fully subscribed
    assert np.array_equal(m6[2], np.full(2, M / 2))          # two half subscribed
    assert np.array_equal(m4, np.full((2, 2), 1.25 * M))     # four equally, 1.25 M each
    assert m4.sum() == m6.sum()                              # the same work, 2 PEs freed
    halves, _ = train(model, X, Y, "sgd", smear={0: 2})      # equal halves: 6 and 4 live
    assert np.array_equal(_mac_busy(halves), [[1.5 * M] * 2, [M] * 2])
    ref = device_reference(model, [((5, 7), 2)])
    ref.fit(X, Y, 0.05, "sgd", 1)
    for (W, b), (Wr, br) in zip(four.weights(), ref.params(), strict=True):
        assert np.array_equal(W, Wr) and np.array_equal(b, br)


def test_combining_costs_partial_sum_traffic_per_extra_portion_0477_0478():
    """The additional communication of smearing [0477], [0478], [0484]: every portion but
    the finalizer's sends its |O_c| partial sums one hop along the column chain, so a
    sample's forward partial-sum traffic is (R - 1) x n_out hops whatever the portions'
    sizes; in the backward pass [0491] each row's delta sums travel west (C - 1) hops,
    (C - 1) x n_in per sample. ``traffic()`` counts router outputs: each hop is the link
    out of one router and the off-ramp of the next (2 per wavelet and hop)."""
    X, Y = data(10)
    for smear in [{0: 1, 1: 1}, {0: 2, 1: 2}, {0: UNEQUAL, 1: UNEQUAL}]:
        tr, _ = train(make_model(), X, Y, "sgd", smear=smear)
        t = tr.stats().traffic()
        b0, b1 = tr.plan.layers
        fwd = t["P0"] + t["P1"]
        want = 2 * len(X) * sum((b.rows - 1) * b.dense.n_out for b in (b0, b1))
        assert fwd == want, (smear, fwd, want)
        back = t["H0"] + t["H1"]
        assert back == 2 * len(X) * (b1.cols - 1) * b1.dense.n_in, (smear, back)


@pytest.mark.parametrize("smear,match", [
    ("2", "must be a {layer: portions} dict"),
    ({2: 2}, "layer 2; this model's mapped layers are 0..1"),
    ({True: 2}, "layer True"),
    ({0: 0}, r"smear\[0\] \(layer 0, Linear\(16, 12\)\) is 0; a neuron is split into at least 1"),
    ({0: -3}, "is -3"),
    ({0: 17}, "17 portions, but the layer has only 16 inputs"),
    ({1: 2.5}, "must be an integer k >= 1"),
    ({0: [0.5, 0.25]}, r"sum to 0.75; they must sum to 1"),
    ({0: [0.5, 0.6]}, "sum to 1.1"),
    ({0: [1.5, -0.5]}, "portion 1 is -0.5; every portion must be a finite number > 0"),
    ({0: [0.5, 0.0, 0.5]}, "portion 1 is 0.0"),
    ({0: [0.5, float("nan"), 0.5]}, "portion 1 is nan"),
    ({0: []}, "empty list"),
    ({0: [1 / 17] * 17}, "17 portions, but the layer has only 16 inputs"),
    ({0: [0.97, 0.01, 0.02]}, r"portion 1 \(0.01\) is 0.16 of the layer's 16 inputs"),
    ({0: 2, 1: 3}, r"smear\[1\] asks for 3 portions, but layer 0 is smeared into 2: rows "
                   "never grow"),
    ({1: 13}, "13 portions, but the layer has only 12 inputs"),
])
def test_impossible_split_raises_naming_the_layer_and_limit_before_any_cycle(smear, match):
    """An impossible smearing split (portions that do not sum to 1, more portions than
    inputs or PE rows, zero or negative portions, no block that can hold the portions)
    raises ws.ConfigError naming the layer and the limit, before anything is loaded."""
    with pytest.raises(ws.ConfigError, match=match):
        ws.map(make_model(), smear=smear)


def test_smear_conflicts_and_limits_are_refused():
    """Portions and blocks must agree (a layer's portions are its rows); more portions
    than the wafer's rows; more portions than an earlier layer can pass on (rows never
    grow eastward); portions whose block does not fit PE memory; Residual and TwoBranch
    models are refused."""
    with pytest.raises(ws.ConfigError, match="layer 1: smear splits its neurons into 3 "
                                             "portions, one per PE row, but blocks gives it 2"):
        ws.map(make_model(), smear={1: UNEQUAL}, blocks=[(2, 2), (2, 2)])
    with pytest.raises(ws.ConfigError, match="only 2 PE rows are available"):
        ws.map(make_model(), ws.Wafer(2, 8), smear={0: 4})
    deep = ws.nn.Sequential(ws.nn.Linear(16, 3), ws.nn.ReLU(), ws.nn.Linear(3, 8), ws.nn.ReLU(),
                            ws.nn.Linear(8, 2))
    with pytest.raises(ws.ConfigError, match=r"smear\[2\] asks for 4 portions, but layer 0 "
                                             r"\(Linear\(16, 3\)\) has only 3 outputs"):
        ws.map(deep, smear={2: 4})
    with pytest.raises(ws.ConfigError, match=r"no block shapes fit the smear \(layer 0: 1 "
                                             "portions.*32768 data bytes"):
        ws.map(ws.nn.Sequential(ws.nn.Linear(100, 100)), smear={0: 1})
    res = ws.nn.Sequential(ws.nn.Linear(8, 4), ws.nn.ReLU(),
                           ws.nn.Residual(ws.nn.Sequential(ws.nn.Linear(4, 4), ws.nn.ReLU())),
                           ws.nn.Linear(4, 2))
    with pytest.raises(ws.ConfigError, match="not supported with Residual or TwoBranch"):
        ws.map(res, smear={0: 2})
