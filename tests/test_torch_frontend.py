"""ws.torch, the torch front end shaped like PopTorch: batches trained on the wafer against
the same torch model, optimizer and loss stepped on the CPU (torch is the independent
reference), the parameters written back into the torch model, the refusals when
wrapping, and forward passes against torch's."""

import copy

import numpy as np
import pytest

import wafersim as ws
from wafersim.mapping.lowering import ACTIVATIONS as LOWERED_ACTIVATIONS
from wafersim.mapping.lowering import LOSSES

torch = pytest.importorskip("torch", reason="torch is an optional extra (pip install 'wafersim[torch]')")
nn = torch.nn

pytestmark = pytest.mark.nosanitize  # whole training runs

needs_ce = pytest.mark.skipif("cross_entropy" not in LOSSES,
                              reason="cross-entropy lowering not merged yet")
BLOCKS = [(3, 2), (2, 2), (2, 1)]
SIZES = [8, 8, 5, 1, 8, 3, 8, 8, 2, 8]      # ten steps, batches of several sizes


needs_new_activations = pytest.mark.skipif(
    not {"leaky_relu", "gelu"} <= set(LOWERED_ACTIVATIONS),
    reason="LeakyReLU / GELU lowerings not merged yet")


def make_model(n_out=4, seed=0, acts=(nn.ReLU, nn.Sigmoid)):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(12, 7), acts[0](), nn.Linear(7, 5), acts[1](),
                         nn.Linear(5, n_out))


def batches(sizes, classes=None, n_out=4, seed=1):
    g = torch.Generator().manual_seed(seed)
    for b in sizes:
        x = torch.rand(b, 12, generator=g) * 2 - 1
        x[x < 0] = 0                                    # zeros the wafer never sends
        y = (torch.randint(0, classes, (b,), generator=g) if classes
             else torch.rand(b, n_out, generator=g) * 2 - 1)
        yield x, y


def cpu_step(model, opt, loss_fn, x, y):
    opt.zero_grad()
    out = model(x)
    loss = loss_fn(out, y)
    loss.backward()
    opt.step()
    return out.detach(), loss.detach()


def max_rel(model, ref):
    """Per parameter, max |wafer - torch| / max |torch|; the worst over the model."""
    with torch.no_grad():
        return max(float((p - q).abs().max() / q.abs().max())
                   for p, q in zip(model.parameters(), ref.parameters()))


def train_both(opt_kw, loss_fn, sizes, classes=None, n_out=4, scheduler=None, acts=None):
    """The same model trained on the wafer and on the CPU; (wafer model, torch model,
    [(wafer output, wafer loss, torch output, torch loss)] per step)."""
    model = make_model(n_out, acts=acts) if acts else make_model(n_out)
    ref = copy.deepcopy(model)
    opt = torch.optim.SGD(model.parameters(), **opt_kw)
    ropt = torch.optim.SGD(ref.parameters(), **opt_kw)
    scheds = [scheduler(o) for o in (opt, ropt)] if scheduler else []
    wafer = ws.torch.training_model(model, opt, loss_fn, blocks=BLOCKS)
    steps = []
    for x, y in batches(sizes, classes, n_out):
        out, loss = wafer(x, y)
        steps.append((out, loss) + cpu_step(ref, ropt, loss_fn, x, y))
        for s in scheds:
            s.step()
    return model, ref, steps


# ---- training against torch on the CPU -----------------------------------------------------
@pytest.mark.parametrize("batch", [8, 1], ids=["batch8", "one-sample"])
def test_one_step_equals_torch(batch):
    """One call = one optimizer step over the batch (one sample: one SGD step): every
    parameter within 1e-5 of torch's (relative to the largest of its tensor); the output
    of the step's forward pass and the mean loss as torch computes them."""
    model, ref, [(out, loss, rout, rloss)] = train_both(dict(lr=0.1), nn.MSELoss(), [batch])
    assert max_rel(model, ref) <= 1e-5
    assert out.shape == rout.shape and out.dtype == torch.float32
    assert float((out - rout).abs().max()) <= 1e-6 * float(rout.abs().max())
    assert loss.shape == () and abs(float(loss) - float(rloss)) <= 1e-6 * float(rloss)
    assert max_rel(model, make_model()) > 1e-3          # the step moved the weights


def test_ten_steps_stay_within_1e4_of_torch():
    model, ref, steps = train_both(dict(lr=0.1), nn.MSELoss(), SIZES)
    assert max_rel(model, ref) <= 1e-4
    for out, loss, rout, rloss in steps:
        assert float((out - rout).abs().max()) <= 1e-4 * float(rout.abs().max())
        assert abs(float(loss) - float(rloss)) <= 1e-4 * float(rloss)


@pytest.mark.parametrize("opt_kw", [dict(momentum=0.9), dict(momentum=0.8, nesterov=True),
                                    dict(weight_decay=0.05),
                                    dict(momentum=0.9, nesterov=True, weight_decay=0.01)],
                         ids=["momentum", "nesterov", "weight-decay", "all"])
def test_momentum_nesterov_weight_decay_follow_torch(opt_kw):
    """Ten steps of torch.optim.SGD's rule: the velocities stay in PE memory from call to
    call, as in torch's optimizer state (with a velocity reset per call the result would
    be plain SGD's, which the last line shows is far from this)."""
    model, ref, _ = train_both(dict(lr=0.05, **opt_kw), nn.MSELoss(), SIZES)
    assert max_rel(model, ref) <= 1e-4
    plain = make_model()
    popt = torch.optim.SGD(plain.parameters(), lr=0.05)
    for x, y in batches(SIZES):
        cpu_step(plain, popt, nn.MSELoss(), x, y)
    assert max_rel(plain, ref) > 1e-3


@pytest.mark.filterwarnings("ignore:Detected call of `lr_scheduler.step:UserWarning")
def test_lr_scheduler_changes_the_learning_rate():
    """The lr is read from the optimizer at every call: a StepLR halving it every third
    step gives torch's weights. (torch warns that the wrapped optimizer's step() was never
    called: the wafer takes the steps.)"""
    model, ref, _ = train_both(dict(lr=0.2, momentum=0.5), nn.MSELoss(), SIZES,
                               scheduler=lambda o: torch.optim.lr_scheduler.StepLR(o, 3, 0.5))
    assert max_rel(model, ref) <= 1e-4


@needs_ce
@pytest.mark.parametrize("sizes", [[8], SIZES], ids=["one-step", "ten-steps"])
def test_cross_entropy_follows_torch(sizes):
    """Softmax cross-entropy on class indices: one step within 1e-5, ten within 1e-4."""
    tol = 1e-5 if len(sizes) == 1 else 1e-4
    model, ref, steps = train_both(dict(lr=0.1, momentum=0.9), nn.CrossEntropyLoss(), sizes,
                                   classes=6, n_out=6)
    assert max_rel(model, ref) <= tol
    for out, loss, rout, rloss in steps:
        assert float((out - rout).abs().max()) <= tol * float(rout.abs().max())
        assert abs(float(loss) - float(rloss)) <= tol * float(rloss)


@needs_new_activations
def test_leaky_relu_and_tanh_gelu_follow_torch():
    acts = (lambda: nn.LeakyReLU(0.1), lambda: nn.GELU(approximate="tanh"))
    model, ref, steps = train_both(dict(lr=0.1, momentum=0.9), nn.MSELoss(), SIZES, acts=acts)
    assert max_rel(model, ref) <= 1e-4
    for out, loss, rout, rloss in steps:
        assert float((out - rout).abs().max()) <= 1e-4 * float(rout.abs().max())


# ---- the parameters of the torch model ---------------------------------------------------------
def test_parameters_written_back_after_every_call():
    model = make_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    wafer = ws.torch.training_model(model, opt, nn.MSELoss(), blocks=BLOCKS)
    for x, y in batches([4, 4]):
        wafer(x, y)
        held = wafer.plan.read_weights()
        for m, (W, b) in zip([model[0], model[2], model[4]], held):
            assert np.array_equal(m.weight.detach().numpy(), W)
            assert np.array_equal(m.bias.detach().numpy(), b)
    assert wafer.steps == 2 and wafer.last_cycles > 0
    assert wafer.stats().samples_trained == 8


def test_deferred_sync_copies_on_request_and_trains_the_same():
    """sync=False leaves the torch model as it was until copy_weights_to_host(); the
    training itself is the same as with sync=True."""
    models = []
    for sync in (True, False):
        model = make_model()
        before = copy.deepcopy(model)
        wafer = ws.torch.training_model(model, torch.optim.SGD(model.parameters(), lr=0.1,
                                                               momentum=0.9),
                                        nn.MSELoss(), blocks=BLOCKS, sync=sync)
        for x, y in batches([4, 4, 4]):
            wafer(x, y)
        if not sync:
            assert max_rel(model, before) == 0
            wafer.copy_weights_to_host()
        models.append(model)
    assert max_rel(models[1], models[0]) == 0


def test_parameters_changed_by_the_user_go_onto_the_wafer():
    """The torch model's parameters are the truth between calls: set by hand, they are
    copied onto the wafer before the next step (torch steps from them too)."""
    model, ref = make_model(), make_model()
    wafer = ws.torch.training_model(model, torch.optim.SGD(model.parameters(), lr=0.1),
                                    nn.MSELoss(), blocks=BLOCKS)
    ropt = torch.optim.SGD(ref.parameters(), lr=0.1)
    (x1, y1), (x2, y2) = batches([4, 4])
    wafer(x1, y1)
    cpu_step(ref, ropt, nn.MSELoss(), x1, y1)
    with torch.no_grad():
        for m in (model, ref):
            m[2].weight.mul_(-0.5)
    wafer(x2, y2)
    cpu_step(ref, ropt, nn.MSELoss(), x2, y2)
    assert max_rel(model, ref) <= 1e-5


# ---- forward passes ----------------------------------------------------------------------------
def test_inference_model_equals_torch_forward():
    model = make_model()
    infer = ws.torch.inference_model(model, blocks=BLOCKS)
    x, _ = next(batches([16]))
    want = model(x).detach()
    got = infer(x)
    assert got.shape == want.shape and got.dtype == torch.float32
    assert float((got - want).abs().max()) <= 1e-6 * float(want.abs().max())
    one = infer(x[3])
    assert one.shape == (4,) and torch.equal(one, got[3])
    assert infer.last_cycles > 0


def test_inference_model_follows_training():
    """An inference model of the model a training model trains computes with the trained
    parameters (copied onto its wafer when they change), as torch's model(x) would."""
    model = make_model()
    train = ws.torch.training_model(model, torch.optim.SGD(model.parameters(), lr=0.1),
                                    nn.MSELoss(), blocks=BLOCKS)
    infer = ws.torch.inference_model(model, blocks=BLOCKS)
    x, y = next(batches([8]))
    before = infer(x)
    train(x, y)
    after, want = infer(x), model(x).detach()
    assert not torch.equal(before, after)
    assert float((after - want).abs().max()) <= 1e-6 * float(want.abs().max())


# ---- refusals when wrapping, never during a call -------------------------------------------------
def refused(match, model=None, optimizer=None, loss_fn=None, **kw):
    """Wrapping raises ConfigError with every string of ``match`` in its message, before
    anything is placed on the wafer."""
    model = make_model() if model is None else model
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1) if optimizer is None else optimizer
    wafer = ws.Wafer(6, 8)
    with pytest.raises(ws.ConfigError) as e:
        ws.torch.training_model(model, optimizer, loss_fn or nn.MSELoss(), wafer=wafer, **kw)
    for m in match:
        assert m in str(e.value), str(e.value)
    assert wafer.cycle == 0
    assert not any(wafer.pe(r, c).loaded for r in range(6) for c in range(8))


def _residual_with(module):
    f = ws.nn.Residual(ws.nn.Sequential(ws.nn.Linear(5, 5), ws.nn.ReLU())).to_torch()
    f.f[1] = module
    return nn.Sequential(nn.Linear(12, 5), f, nn.Linear(5, 4))


MODULES = {
    "conv": (lambda: nn.Sequential(nn.Linear(12, 8), nn.Conv1d(1, 1, 3), nn.Linear(6, 4)),
             ["model[1]", "Conv1d", "not supported", "supported: Linear, "]),
    "dropout-in-a-block": (lambda: _residual_with(nn.Dropout(0.1)),
                           ["model[1].f[1]", "Dropout", "supported"]),
    "nested-sequential": (lambda: nn.Sequential(nn.Sequential(nn.Linear(12, 4))),
                          ["model[0]", "Sequential", "not supported"]),
    "softmax-at-the-end": (lambda: nn.Sequential(nn.Linear(12, 4), nn.Softmax(dim=1)),
                           ["model[1]", "Softmax", "CrossEntropyLoss applies the softmax"]),
    "not-a-sequential": (lambda: nn.Linear(12, 4), ["torch.nn.Sequential", "Linear"]),
    "frozen-parameter": (lambda: _frozen(), ["model[2].weight", "requires_grad=False"]),
    "float64": (lambda: make_model().double(), ["model[0].weight", "torch.float64",
                                                "float32"]),
}


def _frozen():
    m = make_model()
    m[2].weight.requires_grad_(False)
    return m


@pytest.mark.parametrize("case", list(MODULES))
def test_refuses_modules(case):
    make, match = MODULES[case]
    model = make()
    refused(match, model=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1))


ACTIVATIONS = {
    "elu": (nn.ELU(), ["model[1]", "ELU", "not supported", "ReLU", "Sigmoid", "Tanh"]),
    "gelu-exact": (nn.GELU(), ["model[1]", "approximate='none'", "approximate='tanh'"]),
    "softplus": (nn.Softplus(), ["model[1]", "Softplus"]),
}


@pytest.mark.parametrize("case", list(ACTIVATIONS))
def test_refuses_activations(case):
    act, match = ACTIVATIONS[case]
    model = nn.Sequential(nn.Linear(12, 5), act, nn.Linear(5, 4))
    refused(match, model=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1))


def _opt(**kw):
    def make(model):
        return torch.optim.SGD(model.parameters(), lr=0.1, **kw)
    return make


def _groups(model):
    return torch.optim.SGD([{"params": model[0].parameters(), "lr": 0.01},
                            {"params": list(model[2].parameters()) + list(model[4].parameters())}],
                           lr=0.1)


def _stateful(model):
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = next(batches([2]))
    cpu_step(model, opt, nn.MSELoss(), x, y)
    return opt


OPTIMIZERS = {
    "adam": (lambda m: torch.optim.Adam(m.parameters()), ["torch.optim.Adam", "not supported",
                                                           "torch.optim.SGD"]),
    "dampening": (_opt(momentum=0.9, dampening=0.1), ["param_groups[0]", "dampening=0.1"]),
    "maximize": (_opt(maximize=True), ["maximize=True", "not mapped"]),
    "differentiable": (_opt(differentiable=True), ["differentiable=True"]),
    "groups-differ": (_groups, ["param_groups[1]", "lr=0.1", "per-group"]),
    "not-the-models": (lambda m: torch.optim.SGD(nn.Linear(2, 2).parameters(), lr=0.1),
                       ["shape (2, 2)", "not the model's"]),
    "missing-parameter": (lambda m: torch.optim.SGD(m[0].parameters(), lr=0.1),
                          ["model[2].weight", "not in the optimizer"]),
    "momentum-too-large": (_opt(momentum=1.5), ["optimizer", "momentum", "1.5"]),
    "has-state": (_stateful, ["already holds state", "momentum_buffer"]),
}


@pytest.mark.parametrize("case", list(OPTIMIZERS))
def test_refuses_optimizer_options(case):
    make, match = OPTIMIZERS[case]
    model = make_model()
    refused(match, model=model, optimizer=make(model))


def test_foreach_and_fused_are_implementation_choices():
    """foreach / fused pick how torch runs the same rule on its own device: accepted."""
    for kw in (dict(foreach=True), dict(foreach=False)):
        model = make_model()
        ws.torch.training_model(model, torch.optim.SGD(model.parameters(), lr=0.1, **kw),
                                nn.MSELoss(), blocks=BLOCKS)


LOSS_CASES = {
    "l1": (nn.L1Loss(), ["loss_fn", "torch.nn.L1Loss", "not supported", "MSELoss"]),
    "sum": (nn.MSELoss(reduction="sum"), ["MSELoss(reduction='sum')", "'mean'"]),
    "weight": (nn.CrossEntropyLoss(weight=torch.ones(4)), ["weight=a tensor", "None"]),
    "label-smoothing": (nn.CrossEntropyLoss(label_smoothing=0.1), ["label_smoothing=0.1"]),
    "ignore-index": (nn.CrossEntropyLoss(ignore_index=0), ["ignore_index=0", "-100"]),
    "a-function": (torch.nn.functional.mse_loss, ["loss_fn", "not supported"]),
}


@pytest.mark.parametrize("case", list(LOSS_CASES))
def test_refuses_loss_options(case):
    loss_fn, match = LOSS_CASES[case]
    refused(match, loss_fn=loss_fn)


@needs_ce
def test_refuses_an_activation_before_cross_entropy():
    model = nn.Sequential(nn.Linear(12, 5), nn.ReLU(), nn.Linear(5, 4), nn.ReLU())
    refused(["model[3]", "ReLU", "logits"], model=model,
            optimizer=torch.optim.SGD(model.parameters(), lr=0.1), loss_fn=nn.CrossEntropyLoss())


def test_refuses_bad_options_of_its_own():
    refused(["numerics", "fp64"], numerics="fp64")
    refused(["sync", "'yes'"], sync="yes")


def test_bad_batches_and_changed_settings_are_refused_before_any_cycle():
    model = make_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    wafer = ws.torch.training_model(model, opt, nn.MSELoss(), blocks=BLOCKS)
    x, y = next(batches([4]))
    start = wafer.wafer.cycle
    cases = [((x, torch.zeros(4, dtype=torch.long)), "floating-point targets"),
             ((x, y[:, :3]), "(4, 4)"),
             ((x[:, :10], y), "(batch, 12)"),
             ((x.numpy(), y), "torch tensor"),
             ((x.long(), y), "floating-point numbers")]
    for args, match in cases:
        with pytest.raises(ws.ConfigError, match=match.replace("(", r"\(").replace(")", r"\)")):
            wafer(*args)
    opt.param_groups[0]["momentum"] = 0.5
    with pytest.raises(ws.ConfigError, match="momentum changed from 0.9 to 0.5"):
        wafer(x, y)
    assert wafer.wafer.cycle == start and wafer.steps == 0
