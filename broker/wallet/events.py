"""The wallet's live events: a member's credit or packages changed (the member's page, the pay page, the floor card)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from broker.core.events import LiveEvent


@dataclass(frozen=True)
class WalletChanged(LiveEvent):
    topic: ClassVar[str] = "wallet"
    member_id: int
