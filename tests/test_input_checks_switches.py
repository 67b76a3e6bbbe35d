"""The switch helpers check their input: a wrong command list, word, flag or position
raises a ConfigError (a ValueError) naming the parameter and the value, before a wavelet
is queued (docs/fabric.md, "Switches")."""

import numpy as np
import pytest

import wafersim as ws
from wafersim import switches

C = 3


def _wafer():
    w = ws.Wafer(2, 2)
    w.router(0, 0).set_route(C, rx=["RAMP"], tx=["E"])
    return w


def _raises(call, *needles):
    with pytest.raises(ws.ConfigError) as e:
        call()
    for n in needles:
        assert n in str(e.value), (n, str(e.value))
    assert isinstance(e.value, ValueError) and e.value.category == "usage"
    return e.value


@pytest.mark.parametrize("commands,shown", [
    (5, "5"), (None, "None"), ({"advance": 1}, "{'advance': 1}"), ({"advance"}, "{'advance'}"),
    (b"advance", "b'advance'"), (np.array("advance"), "array('advance'"),
])
def test_send_control_refuses_commands_that_are_not_a_list_and_queues_nothing(commands, shown):
    w = _wafer()
    _raises(lambda: w.send_control((0, 0), C, commands), "commands must be a list", shown)
    assert w.pending_injections == 0 and w.cycle == 0


@pytest.mark.parametrize("call,param,shown", [
    (lambda: switches.control_data(None), "commands", "None"),
    (lambda: switches.control_data(["advance"], arg=-1), "arg", "-1"),
    (lambda: switches.control_data(["advance"], arg="7"), "arg", "'7'"),
    (lambda: switches.commands_word(7), "commands", "7"),
    (lambda: switches.commands_word([7]), "commands[0]", "7"),
    (lambda: switches.commands_word(["advance"], switch_only="yes"), "switch_only", "'yes'"),
    (lambda: switches.commands_word(["nop"] * 8), "commands", "at most 7 hops, got 8"),
    (lambda: switches.decode(None), "data", "None"),
    (lambda: switches.decode(-1), "data", "-1"),
    (lambda: switches.decode(2**32), "data", "4294967296"),
    (lambda: switches.decode(65536.0), "data", "65536.0"),
    (lambda: switches.decode("65536"), "data", "'65536'"),
])
def test_switch_words_name_the_parameter_and_value(call, param, shown):
    _raises(call, param, shown)


@pytest.mark.parametrize("positions,param,shown", [
    ([{"tx": 5}], "positions[0].tx", "5"),
    ([{"tx": None}], "positions[0].tx", "None"),
    ([{"rx": ["N"]}, {"tx": [7]}], "positions[1].tx", "7"),
    ([{"tx": {"N": 1}}], "positions[0].tx", "{'N': 1}"),
    ([5], "positions[0]", "5"),
    ([(np.array(["tx"]), ["N"])], "positions[0]", "array"),
    (None, "positions", "None"),
    ({"tx": ["N"]}, "positions", "{'tx': ['N']}"),
])
def test_set_switch_names_the_position_at_fault(positions, param, shown):
    w = _wafer()
    _raises(lambda: w.router(0, 0).set_switch(C, positions), param, shown)
    assert w.router(0, 0).switch(C) is None


@pytest.mark.parametrize("kw,param,shown", [
    ({"ring": "yes"}, "ring", "'yes'"), ({"start": 1.0}, "start", "1.0"),
    ({"color": None}, "color", "None"), ({"color": 64}, "color", "64"),
])
def test_set_switch_checks_its_other_parameters(kw, param, shown):
    w = _wafer()
    args = {"color": C, "positions": [{"tx": ["N"]}], **kw}
    _raises(lambda: w.router(0, 0).set_switch(**args), param, shown)


def test_set_route_names_a_direction_list_that_is_not_one():
    w = _wafer()
    _raises(lambda: w.router(0, 0).set_route(C, rx=5, tx=["E"]), "rx must be a list", "5")
    _raises(lambda: w.router(0, 0).set_route(C, rx=["W"], tx=None), "tx must be a list", "None")
    assert w.router(0, 0).route(C) == (["RAMP"], ["E"])   # unchanged


def test_numpy_values_work_as_python_ones():
    # bits 17:16 hop 0 = advance (1), bits 19:18 hop 1 = reset (2), bit 31 switch-only
    word = (1 << 31) | (2 << 18) | (1 << 16) | 7
    assert switches.control_data(np.array(["advance", "reset"]), np.uint16(7),
                                 switch_only=np.bool_(True)) == word
    assert switches.decode(np.uint32(word)) == switches.decode(word) == \
        (["advance", "reset"], True, 7)
    assert switches.commands_word(("adv",), switch_only=False) == 1
