"""The hub's refusals: what the pages and the API show (NotFound: 404, ServiceError: 409).

Each part of the hub refuses with its own Refusal (broker.domain.refusals: an English message id
and named parameters, translated where shown); `Hub.execute` turns the parts' own refusals into
these (broker.hall.hub `_PUBLIC`), so a caller of the hub meets only these two and the registry's
own (MemberError, users.UserError), whatever part refused.
"""

from __future__ import annotations

from broker.domain.refusals import N_, Name, Refusal


class ServiceError(Refusal):
    """A request the hub refuses; the message says what to do instead."""


class NotFound(ServiceError):
    pass


class CardInUse(ServiceError):
    """A member's club card is already on another open game: one card, one table.

    Carries who and where, so a page can say it in the staff's language; str() is English.
    """

    def __init__(self, member: str, table: str, table_name: str, game_id: int, table_name_en: str | None = None) -> None:
        self.member, self.table, self.table_name, self.game_id = member, table, table_name, game_id
        super().__init__(
            N_("The club card of %(member)s is already on %(table)s (game no. %(game)d): take the card off that game or stop it first."),
            member=member,
            table=Name(table_name, table_name_en),
            game=game_id,
        )
