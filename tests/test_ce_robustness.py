"""Random programs over random descriptors: the compute element either runs them or
raises a wafersim error naming the problem. It never crashes (the sanitizer run checks
memory safety too) and never gets into an inconsistent state."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import wafersim as ws
from ce_bench import random_bench
from wafersim.asm import isa


@st.composite
def _word(draw):
    spec = isa()
    op = draw(st.sampled_from(sorted(spec.ops.values(), key=lambda o: o.mnemonic)))
    fam = spec.families[op.family]
    word = fam.put(fam.put(0, "prefix", int(fam.prefix, 2)), "opcode", op.opcode)
    for name, (hi, lo) in fam.fields.items():
        if name in ("prefix", "opcode", "reserved"):
            continue
        word = fam.put(word, name, draw(st.integers(0, (1 << (hi - lo + 1)) - 1)))
    return word


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(words=st.lists(_word(), min_size=4, max_size=24), seed=st.integers(0, 2**32 - 1))
def test_random_programs_raise_only_wafersim_errors(words, seed):
    rng = np.random.default_rng(seed)
    pe = random_bench(words, rng)
    try:
        pe.run(400)
    except ws.WaferError as e:
        assert e.category != "internal", str(e)
    # The bench stays usable and consistent after an error.
    assert pe.input_queue(3) <= 6 and pe.microthreads_in_use <= 8
    pe.describe_wait()
