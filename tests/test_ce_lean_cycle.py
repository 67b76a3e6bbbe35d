"""The lean CE cycle keeps behaviour: the stall bits toward the router, which the input
queues now keep as they fill and drain instead of being counted each cycle, and the
instructions routed once at decode (a register comparison without a vector operation;
addi, jmp and branches by an immediate offset without the scalar dispatch). Each check is
against an expectation computed here, or against the same comparison taking the vector
path (a memory operand)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import wafersim as ws


# ---- stall bits toward the router --------------------------------------------------------

def _drain_program(colors, work):
    lines = []
    for c in colors:
        body = "".join(f"        addi r{8 + c}, 1\n" for _ in range(work))  # r0, r1, r4: the pick
        lines.append(f".task t{c}, {c}\nt{c}:\n{body}        term\n")
    return "".join(lines)


@settings(deadline=None, max_examples=25)
@given(depth=st.integers(2, 7), work=st.integers(0, 6), n=st.integers(1, 18),
       colors=st.sets(st.integers(0, 5), min_size=1, max_size=3),
       interval=st.integers(1, 3), block=st.tuples(st.integers(0, 40), st.integers(0, 60)))
def test_stall_bits_toward_the_router_follow_the_input_queues_every_cycle(
        depth, work, n, colors, interval, block):
    colors = sorted(colors)
    pe = ws.pe.LonePE(input_queue_depth=depth)
    pe.load(_drain_program(colors, work))
    for c in colors:
        pe.inject_wavelets(c, np.arange(n), start=c, interval=interval)
    block_at, blocked_for = block
    seen = 0
    for cycle in range(400):
        if cycle == block_at:  # the host holds the first color's task: its queue fills
            pe._ce.block(colors[0])
        if cycle == block_at + blocked_for:
            pe._ce.unblock(colors[0])
        pe.run(1)
        sizes = [pe._ce.input_queue_size(c) for c in range(pe.config.fabric_colors)]
        assert max(sizes) <= depth
        expected = sum(1 << c for c, k in enumerate(sizes) if k > depth - 2)  # [0329]
        assert pe._ce.stall_to_router == expected, (cycle, sizes)
        seen |= expected
    pe._ce.unblock(colors[0])
    pe.run()
    # Every wavelet arrived and started its task, whatever the stalls held back.
    for c in colors:
        assert pe.gpr(8 + c) == n * work
    assert pe._ce.stall_to_router == 0
    if interval == 1 and work >= depth and n >= 2 * depth:
        assert seen  # the tasks are slower than the wavelets: a queue reached the level


def test_a_queue_that_drains_below_the_level_releases_its_stall_bit():
    depth = 4
    pe = ws.pe.LonePE(input_queue_depth=depth)
    pe.load(_drain_program([2], 3))
    pe._ce.block(2)
    pe.inject_wavelets(2, np.arange(6))
    pe.run(20)
    assert pe._ce.input_queue_size(2) == depth - 1  # above the level: the bench holds back
    assert pe._ce.stall_to_router == 1 << 2
    pe._ce.unblock(2)
    bits = []
    for _ in range(40):
        pe.run(1)
        bits.append((pe._ce.input_queue_size(2), pe._ce.stall_to_router))
    assert all((size > depth - 2) == (stall == 1 << 2) for size, stall in bits)
    assert (0, 0) in bits and any(stall for _, stall in bits)


def test_local_colors_never_stall_toward_the_router():
    pe = ws.pe.LonePE(fabric_colors=8, input_queue_depth=2)
    pe.load("""
    .data
    v: .space fp16, 4
    dv: .dsd mem1d, base=v, length=4, stride=2
    dout: .dsd fabric_out, color=40, length=4
    .code
    .task t, 1
    t:  block 40
        lds1wds S1[0], dv
        lddwds D[0], dout
        mov16.t D[0], S1[0]
    """)
    pe.launch("t")
    for _ in range(30):
        pe.run(1)
        assert pe._ce.stall_to_router == 0
    assert pe._ce.input_queue_size(40) == 2  # the local queue is full, and stalls nothing


# ---- comparisons routed without a vector operation --------------------------------------

INT_IMM = [0, 1, 2, 3, 4, 5, 6, 7, None, -1, 8, 15, 16, 255, 32767, -32768]  # docs/isa.md
FP_IMM = [0.0, 1.0, -1.0, np.inf, -np.inf, 2.0**-14, 65504.0, -(2.0**-14), None, -65504.0,
          0.5, 2.0, -0.0, np.nan, -0.5, 0.25]
OPS = {"lt16": "lt", "le16": "le", "eq16": "eq", "ltu16": "ltu",
       "flth": "flt", "fleh": "fle", "feqh": "feq"}
ADDR = 0x100


def _expected(op, a, b):
    """a, b: 16-bit patterns."""
    kind = OPS[op]
    if kind in ("flt", "fle", "feq"):
        x, y = (float(np.array([v], np.uint16).view(np.float16)[0]) for v in (a, b))
        return {"flt": x < y, "fle": x <= y, "feq": x == y}[kind]
    sa, sb = (v - 65536 if v >= 32768 else v for v in (a, b))
    return {"lt": sa < sb, "le": sa <= sb, "eq": a == b, "ltu": a < b}[kind]


def _compare(op, a, src, b=None):
    """Runs `op r1, src` with r1 = a (r2 = b, memory [r6] = b) and a branch on the flag."""
    pe = ws.pe.LonePE()
    pe.load(f"""
    .task t, 1
    t:  li r1, {a}
        li r2, {b or 0}
        li r6, {ADDR}
        {op} r1, {src}
        bt yes
        li r3, 2
        term
    yes: li r3, 1
        term
    """)
    pe.write_memory(ADDR, np.array([b or 0], np.uint16).view(np.uint8))
    pe.launch("t")
    s = pe.run()
    counts = (s["iterations"], s["element_ops"], s["cycles"], sum(s["instructions"].values()))
    return pe._ce.flag, pe.gpr(3), counts


@settings(deadline=None, max_examples=60)
@given(op=st.sampled_from(sorted(OPS)), a=st.integers(0, 0xFFFF), b=st.integers(0, 0xFFFF),
       same=st.booleans())
def test_a_register_comparison_sets_the_flag_as_the_memory_operand_path_does(op, a, b, same):
    if same:
        b = a
    flag, branch, counts = _compare(op, a, "r2", b)
    mem_flag, mem_branch, mem_counts = _compare(op, a, "[r6]", b)
    want = _expected(op, a, b)
    assert flag == mem_flag == want
    assert branch == mem_branch == (1 if want else 2)  # bt follows the flag
    assert counts == mem_counts  # one iteration of one element, the same cycles


FP_SPELLED = ["0.0", "1.0", "-1.0", "inf", "-inf", "min_normal", "max_normal", "-min_normal",
              None, "-max_normal", "0.5", "2.0", "-0.0", "nan", "-0.5", "0.25"]


@settings(deadline=None, max_examples=20)
@given(op=st.sampled_from(sorted(OPS)), a=st.integers(0, 0xFFFF))
def test_a_comparison_with_each_immediate_matches_the_table(op, a):
    fp = OPS[op].startswith("f")
    for code in range(16):
        if code == 8:
            continue  # the LFSR draw (a vector-path operand)
        v = FP_IMM[code] if fp else INT_IMM[code]
        b = int(np.array([v], np.float16).view(np.uint16)[0]) if fp else v & 0xFFFF
        flag, branch, counts = _compare(op, a, f"#{FP_SPELLED[code] if fp else v}", b)
        mem_flag, mem_branch, mem_counts = _compare(op, a, "[r6]", b)
        want = _expected(op, a, b)
        assert flag == mem_flag == want, (code, v)
        assert branch == mem_branch == (1 if want else 2)
        assert counts == mem_counts


# ---- addi, jmp and branches by an immediate offset ---------------------------------------

@settings(deadline=None, max_examples=25)
@given(n=st.integers(1, 300), step=st.integers(-512, 511), start=st.integers(0, 0xFFFF))
def test_a_counted_loop_runs_its_iterations_and_ends_on_the_untaken_terminating_branch(
        n, step, start):
    pe = ws.pe.LonePE()
    pe.load(f"""
    .task t, 1
    t:  li r1, {n}
        li r2, {start}
        jmp loop
        li r2, 7          ; skipped by the jump
    loop: addi r2, {step}
        addi r1, -1
        eq16 r1, #0
        bf.t loop
    """)
    pe.launch("t")
    s = pe.run()
    assert not pe._ce.task_running
    assert pe.gpr(1) == 0
    assert pe.gpr(2) == (start + n * step) % 65536  # addi wraps mod 2^16
    ins = s["instructions"]
    assert ins["addi"] == 2 * n and ins["eq16"] == n and ins["bf"] == n
    assert ins["jmp"] == 2  # the task entry's jump to t, and ours
    assert s["iterations"] == s["element_ops"] == n  # each comparison: one element


def test_a_forward_branch_skips_and_a_taken_terminating_branch_does_not_end_the_task():
    pe = ws.pe.LonePE()
    pe.load("""
    .task t, 1
    t:  li r1, 0
        eq16 r1, #0
        bt.t ahead        ; taken: the task goes on [0600]
        li r3, 9
    ahead: li r4, 5
        lt16 r4, #1       ; false
        bt over
        li r5, 6
    over: term
    """)
    pe.launch("t")
    pe.run()
    assert (pe.gpr(3), pe.gpr(4), pe.gpr(5)) == (0, 5, 6)


def test_code_rewritten_under_a_running_loop_takes_effect_at_once():
    loop = """
    .task t, 1
    t:  li r1, 0
    loop: addi r1, {k}
        jmp loop
    """
    pe = ws.pe.LonePE()
    pe.load(loop.format(k=1))
    pe.launch("t")
    pe.run(101)
    before = pe.gpr(1)
    assert 45 <= before <= 51
    pe.load(loop.format(k=3))  # the same slots, a new immediate; the task keeps running
    pe.run(100)
    assert pe.gpr(1) - before in (3 * 49, 3 * 50, 3 * 51)


LOOP = """
.task t, 1
t:  li r1, 0
loop: addi r1, {k}
    jmp loop
"""


def _code_image(k):
    """The bytes of code memory holding LOOP with increment k (from a lone PE)."""
    pe = ws.pe.LonePE()
    pe.load(LOOP.format(k=k))
    cfg = pe.config
    return cfg.data_bytes, pe.read_memory(cfg.data_bytes, cfg.code_bytes)


def test_a_code_write_into_one_pe_leaves_the_pes_that_loaded_the_same_code_unchanged():
    """PEs loaded with the same program share one decoded copy of it; a host write into one
    PE's code memory, under its running loop, changes that PE's code at once and no other's
    (each keeps adding its own increment every two cycles)."""
    w = ws.Wafer(1, 4)
    w.load(LOOP.format(k=1))
    w.launch("t")
    w.run(max_cycles=101)
    before = [w.pe(0, c).gpr(1) for c in range(4)]
    assert len(set(before)) == 1 and 45 <= before[0] <= 51
    addr, image = _code_image(3)
    w.pe(0, 2).write_memory(addr, image)
    w.run(max_cycles=100)
    gains = [w.pe(0, c).gpr(1) - before[c] for c in range(4)]
    assert gains[0] == gains[1] == gains[3] and 49 <= gains[0] <= 51
    assert gains[2] == 3 * gains[0]


def test_lone_pes_with_the_same_program_keep_their_own_code_when_one_is_rewritten():
    pes = [ws.pe.LonePE() for _ in range(3)]
    for pe in pes:
        pe.load(LOOP.format(k=1))
        pe.launch("t")
        pe.run(101)
    addr, image = _code_image(5)
    pes[1].write_memory(addr, image)
    for pe in pes:
        pe.run(100)
    assert [pe.gpr(1) for pe in pes] == [pes[0].gpr(1), pes[0].gpr(1) + 4 * 50,
                                         pes[0].gpr(1)]


# ---- one-element operations on registers --------------------------------------------------

TWO_SOURCE = ["add16", "sub16", "mul16", "and16", "or16", "xor16", "shl16", "shr16", "sar16",
              "faddh", "fsubh", "fmulh", "fmaxh", "fminh"]
ONE_SOURCE = ["mov16", "neg16", "not16", "fabsh", "fnegh"]


def _alu(op, a, src, b, fpc=0):
    """`op r1, r1, src` (or `op r1, src`) with r1 = a, r2 = b, memory [r6] = b, under FP
    control `fpc`: r1 after it and the counts."""
    args = f"r1, {src}" if op in ONE_SOURCE else f"r1, r1, {src}"
    pe = ws.pe.LonePE()
    pe.load(f"""
    .task t, 1
    t:  li r7, {fpc}
        setfpc r7
        li r1, {a}
        li r2, {b}
        li r6, {ADDR}
        {op} {args}
        term
    """)
    pe.write_memory(ADDR, np.array([b], np.uint16).view(np.uint8))
    pe.launch("t")
    s = pe.run()
    counts = (s["iterations"], s["element_ops"], s["cycles"], sum(s["instructions"].values()))
    return pe.gpr(1), counts


@settings(deadline=None, max_examples=80)
@given(op=st.sampled_from(TWO_SOURCE + ONE_SOURCE), a=st.integers(0, 0xFFFF),
       b=st.integers(0, 0xFFFF), fpc=st.sampled_from([0, 1, 2053]))
def test_a_register_operation_writes_what_the_memory_operand_path_writes(op, a, b, fpc):
    """Register operations run without a vector operation (Route::alu): the register they
    write and every count must be those of the same operation with its source 1 in memory
    (the vector path), also under directed and stochastic rounding."""
    reg, counts = _alu(op, a, "r2", b, fpc)
    mem, mem_counts = _alu(op, a, "[r6]", b, fpc)
    assert reg == mem and counts == mem_counts


@settings(deadline=None, max_examples=30)
@given(a=st.integers(0, 0xFFFF), b=st.integers(0, 0xFFFF))
def test_register_add_sub_mul_wrap_as_16_bit_integers_and_faddh_rounds_as_numpy(a, b):
    assert _alu("add16", a, "r2", b)[0] == (a + b) & 0xFFFF
    assert _alu("sub16", a, "r2", b)[0] == (a - b) & 0xFFFF
    assert _alu("mul16", a, "r2", b)[0] == (a * b) & 0xFFFF
    x, y = np.array([a, b], np.uint16).view(np.float16)
    if not (np.isnan(x) or np.isnan(y)):
        with np.errstate(all="ignore"):
            want = int(np.array([x + y], np.float16).view(np.uint16)[0])
        got = _alu("faddh", a, "r2", b)[0]
        assert got == want or np.isnan(np.array([got], np.uint16).view(np.float16)[0])


def test_a_register_operation_with_each_immediate_matches_the_memory_path():
    for op in ("add16", "and16", "faddh", "fmulh", "mov16"):
        fp = op.startswith("f")
        for code in range(16):
            if code == 8:
                continue  # the LFSR draw (a vector-path operand)
            v = FP_IMM[code] if fp else INT_IMM[code]
            b = int(np.array([v], np.float16).view(np.uint16)[0]) if fp else v & 0xFFFF
            spelled = f"#{FP_SPELLED[code] if fp else v}"
            assert _alu(op, 0x3C00, spelled, b) == _alu(op, 0x3C00, "[r6]", b), (op, code)
