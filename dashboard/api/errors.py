"""Every refusal is a 4xx with {"detail": "<what was wrong>"}; a 500 means a bug in our code.

`detail` is English unless the client's Accept-Language asks for Slovak, which gets the staff's
wording from the catalogues (Content-Language says which); field validation stays English, but
for a value a hall's rule refused (`value_refused`: a date or time the hall's parser refused,
broker.domain.dates; text with a control character, broker.domain.plain_text), which says it as a
refusal does.

The domain modules raise their own errors with messages written for staff; this maps each to
an HTTP status once, so routes just call the hub and let the error through.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel
from pydantic_core import PydanticCustomError

from broker.accounts.users import UserError
from broker.domain.dates import DateRefused
from broker.domain.refusals import Refusal
from broker.hall.facade import MemberError, MemberImportError, NotFound, ServiceError, StoreUnavailable
from broker.reports.reports import ReportError

_E = TypeVar("_E", bound=Exception)
log = logging.getLogger("lavos.api")


class ErrorItem(BaseModel):
    message: str
    field: str | None = None  # a validation error: which input
    line: int | None = None  # a CSV import error: which line of the file


class ErrorOut(BaseModel):
    """The body of every refusal."""

    detail: str
    errors: list[ErrorItem] = []


def _documented(**codes: str) -> dict[int | str, dict[str, Any]]:
    return {int(code.removeprefix("e")): {"model": ErrorOut, "description": text} for code, text in codes.items()}


# The refusals every logged-in route can give, in the OpenAPI document: without them a client
# (or schemathesis) sees FastAPI's default 422 body, which is not the one this module sends.
RESPONSES = _documented(
    e400="Bad input the schema cannot express (a card UID, a date range, a name taken)",
    e401="Not logged in: HTTP Basic or a bearer token",
    e403="The user's role does not allow this, or a cookie write without X-CSRF-Token",
    e404="No such table, game, member, alert or card",
    e409="Not possible in the current state (e.g. the game is already stopped)",
    e422="Invalid request: `errors` names each field",
    e423="Locked out after repeated failed logins (Retry-After says for how long)",
    e503="The database is unavailable",
)
TOO_LARGE = _documented(e413="The request body is larger than the route accepts")


VALUE_REFUSED = "value_refused"  # a validation error's type for a value a hall's rule refused: its ctx["refusal"]


def value_refused(refusal: Refusal) -> PydanticCustomError:
    """What a field's validator raises for a value one of the hall's rules refused: the 422 (and a
    page's 400) says it in the client's language, as the hub's refusals are."""
    return PydanticCustomError(VALUE_REFUSED, "{text}", {"text": str(refusal), "refusal": refusal})


def _where(loc: tuple[int | str, ...]) -> str:
    # ("body", "table") → "table"; ("query", "day") → "query day"; the body is what people post.
    parts = [str(p) for p in loc if p != "body"] if loc and loc[0] == "body" else [str(p) for p in loc]
    return ".".join(parts) or "body"


def _validation(request: Request, e: RequestValidationError) -> JSONResponse:
    errors = []
    for err in e.errors():
        msg = err.get("msg", "invalid")
        refused = (err.get("ctx") or {}).get("refusal")
        if isinstance(refused, Refusal):  # a value a hall's rule refused (value_refused): its words
            msg = refusal_detail(request, refused)[0]
        if err.get("type") == "json_invalid":
            msg = f"the body is not valid JSON ({err.get('ctx', {}).get('error', 'parse error')})"
        errors.append({"field": _where(tuple(err.get("loc", ()))), "message": msg})
    detail = "; ".join(f"{x['field']}: {x['message']}" for x in errors) or "invalid request"
    return JSONResponse({"detail": detail, "errors": errors}, status_code=422)


# Set by the dashboard's pages when they are mounted (dashboard.web.app): (refusal, lang) → text
# from the staff's catalogues. The API does not import the pages; without them it answers in English.
REFUSAL_TEXT = "refusal_text"
LANGUAGES = ("en", "sk")


def language(request: Request) -> str:
    """The client's language for a refusal: the best of LANGUAGES its Accept-Language asks for (English if none)."""
    best, weight = "en", 0.0
    for part in request.headers.get("accept-language", "")[:200].split(","):
        tag, _, q = part.strip().partition(";")
        try:
            w = float(q.strip().removeprefix("q=")) if q else 1.0
        except ValueError:
            continue
        lang = tag.strip().lower().split("-")[0]
        if lang in LANGUAGES and w > weight:
            best, weight = lang, w
    return best


def say_in(request: Request, lang: str) -> Callable[[str, Mapping[str, object]], str]:
    """A message id with its parameters in `lang`, from the staff's catalogues when the pages are
    mounted (as refusals are), else in English: for what the API writes for a person (a file)."""
    translate = getattr(request.app.state, REFUSAL_TEXT, None)

    def say(msgid: str, params: Mapping[str, object]) -> str:
        text = Refusal(msgid, **params)
        return str(text) if translate is None or lang == "en" else str(translate(text, lang))

    return say


def refusal_detail(request: Request, e: Exception) -> tuple[str, str]:
    """(the refusal's text in the client's language, that language): an integration that asks for
    Slovak gets what the pages say; everything else, and any non-refusal, in English."""
    lang = language(request)
    translate = getattr(request.app.state, REFUSAL_TEXT, None)
    if lang == "en" or translate is None or not isinstance(e, Refusal):
        return str(e), "en"
    return translate(e, lang), lang


def _status(code: int) -> Callable[[Request, Exception], JSONResponse]:
    def handler(request: Request, e: Exception) -> JSONResponse:
        detail, lang = refusal_detail(request, e)
        return JSONResponse({"detail": detail}, status_code=code, headers={"Content-Language": lang})

    return handler


def _import_errors(request: Request, e: MemberImportError) -> JSONResponse:
    return JSONResponse({"detail": str(e), "errors": [{"line": x.line, "message": x.message} for x in e.errors]}, status_code=400)


def _route(request: Request) -> str:
    """The route template, not the path: /api/members/cards/{uid} must not put a card UID in the log."""
    route = request.scope.get("route")
    return getattr(route, "path", None) or request.url.path


def _database_down(request: Request, e: StoreUnavailable) -> JSONResponse:
    # The facade and read models logged the cause; this says which route met it.
    log.error("database unavailable on %s %s", request.method, _route(request))
    return JSONResponse({"detail": str(e)}, status_code=503)


def _bug(request: Request, e: Exception) -> JSONResponse:
    log.exception("unhandled error on %s %s", request.method, _route(request), exc_info=e)
    return JSONResponse({"detail": "internal error; it has been logged, tell the manager"}, status_code=500)


def on_error(app: FastAPI, kind: type[_E], handler: Callable[[Request, _E], Response]) -> None:
    """app.add_exception_handler for a handler of one kind of error: Starlette calls it only with
    that kind (the nearest class in the error's MRO), which its hint (any Exception) cannot say."""
    app.add_exception_handler(kind, cast("Callable[[Request, Exception], Response]", handler))


def install(app: FastAPI) -> None:
    on_error(app, RequestValidationError, _validation)
    # Starlette picks the handler of the nearest class in the MRO, so NotFound beats ServiceError.
    # Store failures arrive translated by the facade and read models (broker.core.store_errors):
    # a conflicting concurrent change is a Conflict, a ServiceError (409).
    app.add_exception_handler(NotFound, _status(404))
    app.add_exception_handler(ServiceError, _status(409))
    on_error(app, MemberImportError, _import_errors)
    for bad_input in (MemberError, UserError, ReportError):
        app.add_exception_handler(bad_input, _status(400))
    app.add_exception_handler(DateRefused, _status(422))  # a date or time no field type caught (broker.domain.dates)
    on_error(app, StoreUnavailable, _database_down)
    app.add_exception_handler(Exception, _bug)
