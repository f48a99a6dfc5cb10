"""Keep the Slovak and English catalogues in step with the code: no build step at install time.

    python -m dashboard.web.i18n_tools          # extract → update sk, en → compile (.mo)
    python -m dashboard.web.i18n_tools check    # exit 1 when a Slovak translation (or a plural form) is missing or fuzzy

Message ids are English; fill the empty msgstr in translations/sk/LC_MESSAGES/messages.po, run
it again, and commit both the .po and the .mo.
"""

from __future__ import annotations

import sys
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

from dashboard.web.i18n import DOMAIN, LANGS, TRANSLATIONS

HERE = Path(__file__).parent
BROKER = HERE.parents[1] / "broker"
API = HERE.parent / "api"
KEYWORDS = {**DEFAULT_KEYWORDS, "N_": None}


def extract() -> Catalog:
    with open(HERE / "babel.cfg", encoding="utf-8") as f:
        method_map, options_map = parse_mapping_cfg(f, str(HERE / "babel.cfg"))
    template = Catalog(project="Lavos table control", msgid_bugs_address="", charset="utf-8")
    for filename, lineno, message, comments, context in extract_from_dir(HERE, method_map, options_map, keywords=KEYWORDS):
        template.add(message, None, [(filename, lineno)], auto_comments=comments, context=context)
    # The hub's refusals (broker.domain.refusals): only N_-marked literals, shown on pages translated.
    for filename, lineno, message, comments, context in extract_from_dir(BROKER, [("**.py", "python")], keywords={"N_": None}):
        template.add(message, None, [(f"broker/{filename}", lineno)], auto_comments=comments, context=context)
    # The API's own refusals, said in the client's language as the hub's are (dashboard.api.errors).
    for filename, lineno, message, comments, context in extract_from_dir(API, [("**.py", "python")], keywords={"N_": None}):
        template.add(message, None, [(f"dashboard/api/{filename}", lineno)], auto_comments=comments, context=context)
    return template


def _po(lang: str) -> Path:
    return TRANSLATIONS / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


def update(template: Catalog) -> None:
    for lang in LANGS:
        path = _po(lang)
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            with open(path, "rb") as f:
                catalog = read_po(f, locale=lang)
            catalog.update(template, update_header_comment=False)
        else:
            catalog = Catalog(locale=lang, project="Lavos table control", charset="utf-8")
            for m in template:
                if m.id:
                    catalog.add(m.id, None, m.locations, auto_comments=m.auto_comments, context=m.context)
        with open(path, "wb") as f:
            write_po(f, catalog, width=100, omit_header=False, ignore_obsolete=True, sort_output=True)


def compile_all() -> None:
    for lang in LANGS:
        with open(_po(lang), "rb") as f:
            catalog = read_po(f, locale=lang)
        with open(_po(lang).with_suffix(".mo"), "wb") as f:
            write_mo(f, catalog, use_fuzzy=False)


def missing(lang: str = "sk") -> list[str]:
    """Message ids without a usable translation: empty, fuzzy, or a plural with an empty form
    (a plural's msgstr is a tuple, truthy even when every form in it is "")."""
    with open(_po(lang), "rb") as f:
        catalog = read_po(f, locale=lang)
    return [str(m.id) for m in catalog if m.id and (m.fuzzy or not _filled(m.string, catalog.num_plurals))]


def _filled(string: object, plurals: int) -> bool:
    if isinstance(string, (tuple, list)):
        return len(string) == plurals and all(string)
    return bool(string)


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "all"
    if command in ("all", "extract"):
        template = extract()
        print(f"{len(template)} messages")
        update(template)
    if command in ("all", "compile"):
        compile_all()
    if command in ("all", "check"):
        gaps = missing()
        for m in gaps:
            print(f"sk: no translation for {m!r}", file=sys.stderr)
        if gaps:
            return 1
    if command not in ("all", "extract", "compile", "check"):
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
