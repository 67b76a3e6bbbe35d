"""torch is an optional extra: `import wafersim` (and `wafersim.torch`) does not import it,
and the front end's calls say how to install it when it is missing."""

import subprocess
import sys

import pytest

import wafersim as ws


def test_importing_the_front_end_does_not_import_torch():
    code = ("import sys, wafersim as ws, wafersim.torch; ws.torch.training_model; "
            "assert 'torch' not in sys.modules, 'torch was imported'")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]


@pytest.mark.parametrize("call", [lambda: ws.torch.training_model(object(), object(), object()),
                                  lambda: ws.torch.inference_model(object())],
                         ids=["training_model", "inference_model"])
def test_without_torch_the_calls_say_how_to_install_it(call, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)      # `import torch` raises ImportError
    with pytest.raises(ws.ConfigError, match=r"pip install 'wafersim\[torch\]'"):
        call()
