"""Completion actions (docs/compute_element.md, "Completion actions"; docs/isa.md, CA):
when a microthreaded fabric operation completes (or a fabric input ends on Term), its AC id
is activated [0503], [0504], unblocked, or left alone, as the DSD's CA field says. The
assembler refuses a microthreaded DSD that does not say which."""

import pytest

import wafersim as ws
from wafersim.asm import pack_dsd, unpack_dsd

SEND = """
.data
buf:  .u16 1, 2, 3, 4
dbuf: .dsd mem1d, base=buf, length=4, stride=2
dout: .dsd fabric_out, color=7, length=4, sw=1, ue=1, utid=1, {action}
.code
.task main, 40
.task after, 50
main: block 50
      lds1wds S1[0], dbuf
      lddwds D[0], dout
      mov16.t D[0], S1[0]
after: addi r8, 1
      term
"""


def _send(action: str):
    pe = ws.pe.LonePE(trace=True)
    pe.load(SEND.format(action=action))
    pe.launch("main")
    pe.run(100)  # an activated but blocked id never lets run() see an idle PE
    assert pe.output_values(7, "u16").tolist() == [1, 2, 3, 4]
    return pe


def test_completion_activate_activates_ac_but_a_blocked_id_waits_0503():
    pe = _send("ac=50")
    assert pe.active == {50} and pe.blocked == {50} and pe.gpr(8) == 0


def test_completion_unblock_unblocks_ac_without_activating_it_0503():
    pe = _send("unblock=50")
    assert pe.blocked == set() and pe.active == set() and pe.gpr(8) == 0
    completion = [e for e in pe.stats()["id_events"] if e[3] == "completion"]
    assert completion == [("unblock", 1 << 50, completion[0][2], "completion")]


def test_completion_none_leaves_every_id_alone_0503():
    pe = _send("ac=none")
    assert pe.blocked == {50} and pe.active == set() and pe.gpr(8) == 0
    assert pe.stats()["tasks_started"] == {40: 1}


def test_without_an_explicit_completion_action_the_assembler_refuses_a_microthreaded_dsd():
    with pytest.raises(ws.ProgramError, match=r"a microthreaded fabric DSD \(ue=1\) must say what "
                                              r"its completion does: ac=ID \(activate\), "
                                              r"unblock=ID, or ac=none \[0503\]"):
        ws.asm.assemble(SEND.format(action="sw=1"))
    with pytest.raises(ws.ProgramError, match="a fabric input with term=1 must say"):
        ws.asm.assemble(".data\nd: .dsd fabric_in, length=4, term=1\n.code\n.task t, 40\nt: term")
    with pytest.raises(ws.ProgramError, match="give one completion action: ac, unblock"):
        ws.asm.assemble(SEND.format(action="ac=3, unblock=4"))
    # Without UE and Term nothing completes asynchronously: no action needed.
    ws.asm.assemble(".data\nd: .dsd fabric_out, color=3, length=4\n.code\n.task t, 40\nt: term")


def test_completion_action_round_trips_through_the_descriptor_fields():
    assert unpack_dsd(pack_dsd("fabric_out", color=1, length=2, ue=1, unblock=9),
                      role="dest")["completion"] == "unblock"
    d = unpack_dsd(pack_dsd("fabric_in", length=2, ue=1, ac="none"))
    assert d["completion"] == "none" and d["ca"] == 2
    assert unpack_dsd(pack_dsd("fabric_in", length=2, ue=1, ac=7))["completion"] == "activate"


def test_reserved_completion_action_is_a_program_error_at_issue():
    pe = ws.pe.LonePE()
    pe.load(SEND.format(action="ac=50"))
    raw = pack_dsd("fabric_out", color=7, length=4, sw=1, ue=1, utid=1, ac=50) | (3 << 43)
    pe.write_memory(pe.program.symbols["dout"].address, raw.to_bytes(6, "little"))
    pe.launch("main")
    with pytest.raises(ws.ProgramError, match=r"completion action \(CA\) 3 is reserved"):
        pe.run()


def test_term_on_a_fabric_input_takes_its_completion_action_0504():
    src = """
.data
buf:  .space u16, 8
din:  .dsd fabric_in, length=8, sw=1, sc=1, utid=3, term=1, unblock=41
dbuf: .dsd mem1d, base=buf, length=8, stride=2
.code
.task main, 40
.task t41, 41
main: block 41
      lds1wds S1[0], din
      lddwds D[0], dbuf
      mov16.t D[0], S1[0]
t41:  term
"""
    pe = ws.pe.LonePE()
    pe.load(src)
    pe.launch("main")
    pe.inject(3, [5, 6], dtype="u16")
    pe.close(3, 1, start=5)
    pe.run()
    assert pe.blocked == set() and pe.active == set()
