"""Real data: an MLP 64-32-10 trained entirely on the wafer reaches 95% on the digits test
set, within a point of the same model trained by numpy (and by torch when installed)
from the same initial weights in the same sample order."""

import numpy as np
import pytest

import wafersim as ws
from wafersim.reference.training import mlp_forward, train_numpy
from wafersim.train.datasets import digits

pytestmark = pytest.mark.nosanitize

EPOCHS, LR, SEED = 6, 0.1, 0


@pytest.fixture(scope="module")
def trained():
    Xtr, ytr, Xte, yte = digits()
    ws.nn.manual_seed(SEED)
    model = ws.nn.Sequential(ws.nn.Linear(64, 32), ws.nn.ReLU(), ws.nn.Linear(32, 10))
    start = [(d.linear.weight.copy(), d.linear.bias.copy()) for d in model.dense_layers()]
    tr = ws.Trainer(ws.map(model), algo="sgd", lr=LR, seed=SEED, progress=False)
    hist = tr.fit(Xtr, ytr, epochs=EPOCHS)
    acc = tr.evaluate(Xte, yte)["accuracy"]
    rng = np.random.default_rng(SEED)            # the Trainer's shuffling, epoch by epoch
    order = [rng.permutation(len(Xtr)) for _ in range(EPOCHS)]
    return dict(Xtr=Xtr, ytr=ytr, Xte=Xte, yte=yte, start=start, hist=hist, acc=acc,
                order=order, trainer=tr)


def test_digits_reach_95_percent_on_the_wafer(trained):
    assert trained["acc"] >= 0.95
    assert trained["hist"].loss[-1] < trained["hist"].loss[0]


def test_digits_within_a_point_of_numpy(trained):
    t = trained
    P = train_numpy(t["start"], ["relu", "identity"], t["Xtr"], np.eye(10)[t["ytr"]], LR,
                    epochs=EPOCHS, order=t["order"])
    acc = float(np.mean(mlp_forward(P, ["relu", "identity"], t["Xte"]).argmax(1) == t["yte"]))
    assert abs(t["acc"] - acc) <= 0.01


def test_digits_within_a_point_of_torch(trained):
    torch = pytest.importorskip("torch", reason="torch is an optional extra (pip install 'wafersim[torch]')")
    t = trained
    net = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10))
    with torch.no_grad():
        for lin, (W, b) in zip((net[0], net[2]), t["start"]):
            lin.weight.copy_(torch.from_numpy(W))
            lin.bias.copy_(torch.from_numpy(b))
    opt = torch.optim.SGD(net.parameters(), lr=LR)
    loss = torch.nn.MSELoss()
    X = torch.from_numpy(t["Xtr"])
    Y = torch.from_numpy(np.eye(10, dtype=np.float32)[t["ytr"]])
    for order in t["order"]:
        for k in order:
            opt.zero_grad()
            loss(net(X[k:k + 1]), Y[k:k + 1]).backward()
            opt.step()
    with torch.no_grad():
        acc = float((net(torch.from_numpy(t["Xte"])).argmax(1).numpy() == t["yte"]).mean())
    assert abs(t["acc"] - acc) <= 0.01


def test_digits_statistics(trained):
    st = trained["trainer"].stats()
    n = len(trained["Xtr"]) * EPOCHS
    assert st.samples_trained == n
    assert st.cycles_per_sample > st.bound()["cycles"] > 0
    busy = st.busy_by_pass()
    assert busy["forward"] > 0 and busy["delta"] > 0 and busy["chain"] > 0
    sk = st.skipped()
    assert sk[0]["activations_skipped"] == int((trained["Xtr"] == 0).sum()) * EPOCHS + \
        int((trained["Xte"] == 0).sum())          # the evaluation's forward pass too
    assert sk[1]["deltas_skipped"] == 0           # a linear output: no zero deltas
