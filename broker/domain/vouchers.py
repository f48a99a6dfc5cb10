"""Vouchers and VAT (zákon 222/2004 Z. z. o DPH, § 9a): what of a voucher's money is revenue, and when. Pure.

The members' money (broker.wallet) is two kinds of voucher, and the till counts each as the act says:
- **Credit in euros** ("kredit"), usable for table time and for the bar at different VAT rates, is a
  multi-purpose voucher (viacúčelový poukaz, § 9a ods. 1 písm. c): when it is issued neither the
  supply nor the VAT due is known. Its sale is no supply: its line (category CREDIT_SALE, 0 % and
  outside VAT) is money in the drawer but not revenue of the day; the Z report shows it as voucher
  sales. Paying a bill from it (the method CREDIT) is the supply: revenue with VAT per the goods,
  as any other payment.
- **A package** of table hours or lessons at a known rate is a single-purpose voucher (jednoúčelový
  poukaz, § 9a ods. 1 písm. b: the place of supply, the hall, and the VAT due are known when it is
  sold). Its sale is the supply (§ 9a ods. 2, first sentence): a line of category PACKAGE_SALE at
  the service's VAT rate, revenue of the day. The table time it later covers (the method PACKAGE)
  is no separate transaction (§ 9a ods. 2, second sentence): not revenue again, no VAT again.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

__all__ = ["CREDIT", "CREDIT_SALE", "PACKAGE", "PACKAGE_SALE", "WALLET_METHODS", "is_fiscal", "is_revenue"]

CREDIT = "credit"  # the payment method "Z kreditu": a multi-purpose voucher redeemed (revenue, VAT per the goods)
PACKAGE = "package"  # the payment method "Z balíka": a single-purpose voucher redeemed (taxed when sold: not revenue)
CREDIT_SALE = "credit_sale"  # the category of a line selling (or refunding) credit: not revenue, no VAT
PACKAGE_SALE = "package"  # the category of a line selling a package: revenue, VAT at the service's rate

# (id, Slovak name, English name): the wallet's payment methods, named on receipts and in the Z report.
WALLET_METHODS = ((CREDIT, "Z kreditu", "From credit"), (PACKAGE, "Z balíka", "From a package"))


def is_revenue(method: str, category: str) -> bool:
    """Whether money a payment by `method` paid for `category` is revenue (and bears VAT) on its day."""
    return method != PACKAGE and category != CREDIT_SALE


class _Line(Protocol):
    @property
    def category(self) -> str: ...


def is_fiscal(lines: Iterable[_Line]) -> bool:
    """Whether a payment with these frozen lines is a sale eKasa registers: not one that only sells
    (or gives back) credit, a multi-purpose voucher, which is no supply."""
    lines = list(lines)
    return not lines or any(x.category != CREDIT_SALE for x in lines)
