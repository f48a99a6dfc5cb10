"""The dashboard never imports the ORM or sqlalchemy: it writes through the hub's facade
(broker.hall.facade) and reads through the read models (broker.hall.read_models).

Walks every module under dashboard/ with `ast`, so an import inside a function counts too;
`if TYPE_CHECKING:` imports count as well (they are still a dependency on the layer).
"""

from __future__ import annotations

import ast
from pathlib import Path

import dashboard

FORBIDDEN = ("sqlalchemy", "broker.storage")
ROOT = Path(dashboard.__file__).parent
NOT_YET: frozenset[str] = frozenset()  # modules still allowed to; none since lavos server builds through broker.compose


def _imports(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return found


def _forbidden(name: str) -> bool:
    return any(name == f or name.startswith(f + ".") for f in FORBIDDEN)


def offences(root: Path = ROOT, skip: frozenset[str] = frozenset()) -> list[str]:
    out = []
    for path in sorted(root.rglob("*.py")):
        if str(path.relative_to(root.parent)) in skip:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        out += [f"{path.relative_to(root.parent)}:{line}: imports {name}" for line, name in _imports(tree) if _forbidden(name)]
    return out


def test_dashboard_imports_neither_the_orm_nor_sqlalchemy() -> None:
    found = offences(skip=NOT_YET)
    assert found == [], "the dashboard must go through broker.hall.facade / broker.hall.read_models:\n" + "\n".join(found)


def test_the_check_sees_every_kind_of_import(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text(
        "import sqlalchemy\nfrom broker import storage\nfrom broker.storage.models import User\n"
        "def f():\n    from sqlalchemy.orm import Session\n"
        "from broker.hall.facade import HubFacade\nfrom broker.storage import members\n",
        encoding="utf-8",
    )
    found = offences(tmp_path / "pkg")
    assert sorted(x.split(": imports ")[1] for x in found) == [
        "broker.storage",
        "broker.storage",
        "broker.storage.members",
        "broker.storage.models",
        "broker.storage.models.User",
        "sqlalchemy",
        "sqlalchemy.orm",
        "sqlalchemy.orm.Session",
    ], found
