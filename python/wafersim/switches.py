"""Runtime route switches: the commands a control wavelet carries (docs/fabric.md).

A control wavelet on a color with switches carries, in its 32-bit data:

* bits 15:0: a 16-bit argument (``r2`` of the control task it starts at the receiving
  CE; its command word arrives in ``r3`` and its index in ``r4``);
* bits 17+2h:16+2h, h = 0..6: the command for the router h hops from the sender (hop 0 is
  the sender's own router): 0 no-op, 1 advance, 2 reset to position 0 (3 is reserved: a
  router with a switch raises ``RouteError``);
* bit 30: reserved (0);
* bit 31: switch-only: the routers act on the commands and no endpoint receives it.

Its index names the control task (low six bits [0371]), as for any control wavelet.

    data = ws.switches.control_data(["advance", "nop", "advance"], arg=7)
    word = ws.switches.commands_word(["advance"], switch_only=True)   # bits 31:16
"""

from __future__ import annotations

from ._args import bool_arg, int_arg, items_arg, show
from .errors import ConfigError

__all__ = ["COMMANDS", "HOPS", "SWITCH_ONLY", "commands_word", "control_data", "decode"]

#: Command names (and short aliases) -> 2-bit code.
COMMANDS = {"nop": 0, "advance": 1, "adv": 1, "reset": 2, "rst": 2}
_NAMES = {0: "nop", 1: "advance", 2: "reset", 3: "reserved"}
#: Hops a control wavelet carries commands for.
HOPS = 7
#: The switch-only flag in the command word (data bit 31).
SWITCH_ONLY = 1 << 15


def _code(cmd, i: int) -> int:
    if isinstance(cmd, str) and cmd.strip().lower() in COMMANDS:
        return COMMANDS[cmd.strip().lower()]
    raise ConfigError(f"commands[{i}] must be one of 'advance', 'reset', 'nop' (or 'adv', "
                      f"'rst'), got {show(cmd)}")


def commands_word(commands=(), *, switch_only: bool = False) -> int:
    """The 16-bit command word (data bits 31:16): ``commands[h]`` for the router h hops
    from the sender, at most 7 (one name alone: hop 0); unnamed hops get no-op."""
    if isinstance(commands, str):
        commands = [commands]
    commands = items_arg("commands", commands,
                         f"at most {HOPS} command names ('advance', 'reset', 'nop')")
    switch_only = bool_arg("switch_only", switch_only)
    if len(commands) > HOPS:
        raise ConfigError(f"commands: a control wavelet carries commands for at most {HOPS} hops, "
                          f"got {len(commands)}")
    word = 0
    for h, cmd in enumerate(commands):
        word |= _code(cmd, h) << (2 * h)
    return word | (SWITCH_ONLY if switch_only else 0)


def control_data(commands=(), arg: int = 0, *, switch_only: bool = False) -> int:
    """The 32-bit data of a control wavelet: the command word above the 16-bit ``arg``."""
    arg = int_arg("arg", arg, 0, 0xFFFF)
    return commands_word(commands, switch_only=switch_only) << 16 | arg


def decode(data: int) -> tuple[list[str], bool, int]:
    """(commands per hop, trailing no-ops dropped; switch_only; arg) of control data (the
    32-bit data word of a control wavelet)."""
    data = int_arg("data", data, 0, 0xFFFFFFFF)
    word, arg = data >> 16 & 0xFFFF, data & 0xFFFF
    cmds = [_NAMES[word >> (2 * h) & 3] for h in range(HOPS)]
    while cmds and cmds[-1] == "nop":
        cmds.pop()
    return cmds, bool(word & SWITCH_ONLY), arg
