"""A CE's queue bank (pe/queue_bank.hpp): one FIFO per color [0341], [0360] of a fixed
capacity, storage given to a queue on its first push (two queues at first, eight more at
each growth). Checked against a model of deques: order, sizes, the nonempty and crowded
masks [0329], across the growths of the storage with wavelets in flight."""
from collections import deque

import pytest
from hypothesis import given, settings, strategies as st

import wafersim as ws
from wafersim import _core


def model_run(queues, capacity, crowded_above, wanted):
    """The legal ops among `wanted` (a push into a full queue and a pop from an empty one
    are dropped) and what the bank must report after each."""
    fifo = [deque() for _ in range(queues)]
    ops, want, value = [], [], 0
    for q, is_push in wanted:
        q %= queues
        if is_push and len(fifo[q]) < capacity:
            value += 1
            fifo[q].append(value)
            ops.append((q, value))
            popped = -1
        elif not is_push and fifo[q]:
            ops.append((q, -1))
            popped = fifo[q].popleft()
        else:
            continue
        nonempty = sum(1 << i for i, f in enumerate(fifo) if f)
        crowded = sum(1 << i for i, f in enumerate(fifo) if len(f) > crowded_above)
        want.append((popped, nonempty, crowded, len(fifo[q]), fifo[q][0] if fifo[q] else -1))
    return ops, want


@settings(deadline=None, max_examples=300)
@given(queues=st.sampled_from([1, 2, 3, 8, 24, 64]), capacity=st.integers(1, 8),
       crowded=st.integers(-1, 8),
       wanted=st.lists(st.tuples(st.integers(0, 63), st.booleans()), max_size=80))
def test_the_bank_behaves_as_one_deque_per_color(queues, capacity, crowded, wanted):
    crowded_above = capacity if crowded < 0 else crowded
    ops, want = model_run(queues, capacity, crowded_above, wanted)
    got = _core.pe.queue_bank_ops(queues, capacity, crowded, ops)
    assert [tuple(g) for g in got] == want


def test_a_third_and_an_eleventh_color_keep_what_the_others_hold():
    # Colors 63 and 0 fill the first storage; color 7 grows it with both queues full, and
    # the eleventh color (20) grows it again.
    ops = [(63, 1), (63, 2), (0, 3), (0, 4), (7, 5)]
    ops += [(c, 10 + c) for c in range(8, 16)] + [(20, 99)]
    ops += [(63, -1), (0, -1), (7, -1), (63, -1), (15, -1), (20, -1)]
    got = _core.pe.queue_bank_ops(64, 2, 2, ops)
    assert [g[0] for g in got[-6:]] == [1, 3, 5, 2, 25, 99]
    assert got[4][1] == (1 << 63) | 1 | (1 << 7)
    assert got[13][1] == (1 << 63) | 1 | (1 << 7) | sum(1 << c for c in range(8, 16)) | (1 << 20)


def test_misuse_of_the_bank_is_refused():
    with pytest.raises(ws.ConfigError, match="full"):
        _core.pe.queue_bank_ops(4, 1, -1, [(2, 5), (2, 6)])
    with pytest.raises(ws.ConfigError, match="empty"):
        _core.pe.queue_bank_ops(4, 1, -1, [(2, -1)])
