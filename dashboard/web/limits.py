"""How large a page's form may be, and which page forms anybody may post (dashboard.api.limits does the work).

The messages are msgids: the pages' error handler shows them in the visitor's language.
"""

from __future__ import annotations

from starlette.formparsers import MultiPartParser

from broker.domain.people.membership import MAX_IMPORT_BYTES
from dashboard.api.limits import API_PREFIX, KIB, Cap
from dashboard.web.i18n import N_

# Page forms: the longest field is 2000 characters, 24 kB percent-encoded at worst (4-byte UTF-8).
PAGE_FORM_BYTES = 64 * KIB
# Username (64), password (1024 characters) and the page to go back to, percent-encoded: any
# password a person types fits; and nothing this small is ever spooled to a temporary file.
LOGIN_FORM_BYTES = 16 * KIB
# The import is multipart: the file, its part headers, the boundary and the CSRF field.
MULTIPART_OVERHEAD_BYTES = 64 * KIB

# Logging in, out and choosing the language need no login; every other page form does.
PUBLIC_PAGES = frozenset({"/login", "/logout", "/lang"})
_TOO_LARGE = N_("What was sent is too large for this form.")
PAGE_CAPS = (
    Cap("/members/import", MAX_IMPORT_BYTES + MULTIPART_OVERHEAD_BYTES, N_("The file is too large; split it into smaller files.")),
    Cap("/login", LOGIN_FORM_BYTES, _TOO_LARGE),
    Cap("/", PAGE_FORM_BYTES, _TOO_LARGE),
)
PAGE_STALLED = N_("The upload stopped arriving; try again.")
SKIP = (API_PREFIX,)  # an unknown /api path falls through to the pages app; the API's limits already applied

# Starlette spools an uploaded file to a temporary file past 1 MB. Every page body is capped above
# (the import at about 2 MB), so keep a whole upload in memory instead: nothing a visitor sends, a
# huge chunked upload cut at the cap included, ever lands in the server's TMPDIR
# (tests/security/test_http_bodies.py watches it while the body is in flight).
MultiPartParser.spool_max_size = MAX_IMPORT_BYTES + MULTIPART_OVERHEAD_BYTES
