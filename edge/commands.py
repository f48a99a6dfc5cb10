"""Commands from the hub: validation of `light/set` (I/O-free)."""

from __future__ import annotations

from devices.contract import ContractError, LightSet, decode_payload


def parse_light_set(payload: bytes, retained: bool) -> LightSet:
    """The command, or ContractError saying why it cannot be obeyed."""
    if retained:
        # A retained command would switch the light again at every reconnect, long after it was meant.
        raise ContractError("light/set arrived retained; commands must never be retained")
    return decode_payload("light_set", payload)
