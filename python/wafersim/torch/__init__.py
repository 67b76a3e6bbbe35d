"""A torch front end, shaped like PopTorch: a ``torch.nn.Sequential``, a
``torch.optim.SGD`` and a torch loss, trained on the emulated wafer with a few lines
changed from a plain torch loop (docs/torch_frontend.md).

    train = ws.torch.training_model(model, optimizer, torch.nn.CrossEntropyLoss())
    for x, y in loader:
        output, loss = train(x, y)        # one optimizer step on the wafer; model updated
    infer = ws.torch.inference_model(model)
    logits = infer(x_test)

torch is an optional extra: importing this package does not import it; the calls raise
ConfigError when it is missing.
"""

from .inference import InferenceModel, inference_model
from .training import TrainingModel, training_model

__all__ = ["training_model", "inference_model", "TrainingModel", "InferenceModel"]
