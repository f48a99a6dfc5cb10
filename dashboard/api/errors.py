"""Every refusal is a 4xx with {"detail": "<what was wrong>"}; a 500 means a bug in our code.

The domain modules raise their own errors with messages written for staff; this maps each to
an HTTP status once, so routes just call the service and let the error through.
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy import exc as sa

from broker.db.errors import StoreError
from broker.members import MemberError
from broker.members_csv import MemberImportError
from broker.reports import ReportError
from broker.service import NotFound, ServiceError
from broker.users import UserError

log = logging.getLogger("lavos.api")


def _where(loc: tuple) -> str:
    # ("body", "table") → "table"; ("query", "day") → "query day"; the body is what people post.
    parts = [str(p) for p in loc if p != "body"] if loc and loc[0] == "body" else [str(p) for p in loc]
    return ".".join(parts) or "body"


def _validation(request: Request, e: RequestValidationError) -> JSONResponse:
    errors = []
    for err in e.errors():
        msg = err.get("msg", "invalid")
        if err.get("type") == "json_invalid":
            msg = f"the body is not valid JSON ({err.get('ctx', {}).get('error', 'parse error')})"
        errors.append({"field": _where(tuple(err.get("loc", ()))), "message": msg})
    detail = "; ".join(f"{x['field']}: {x['message']}" for x in errors) or "invalid request"
    return JSONResponse({"detail": detail, "errors": errors}, status_code=422)


def _status(code: int):  # type: ignore[no-untyped-def]
    def handler(request: Request, e: Exception) -> JSONResponse:
        return JSONResponse({"detail": str(e)}, status_code=code)

    return handler


def _import_errors(request: Request, e: MemberImportError) -> JSONResponse:
    return JSONResponse({"detail": str(e), "errors": [{"line": x.line, "message": x.message} for x in e.errors]}, status_code=400)


def _integrity(request: Request, e: sa.IntegrityError) -> JSONResponse:
    log.info("integrity conflict on %s %s: %s", request.method, request.url.path, e.orig)
    return JSONResponse({"detail": "this conflicts with a change made at the same moment; reload and try again"}, status_code=409)


def _database_down(request: Request, e: sa.OperationalError) -> JSONResponse:
    log.error("database unavailable on %s %s: %s", request.method, request.url.path, e.orig)
    return JSONResponse({"detail": "the database is unavailable; try again in a moment, and tell the manager if it persists"}, status_code=503)


def _bug(request: Request, e: Exception) -> JSONResponse:
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=e)
    return JSONResponse({"detail": "internal error; it has been logged, tell the manager"}, status_code=500)


def install(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, _validation)  # type: ignore[arg-type]
    # Starlette picks the handler of the nearest class in the MRO, so NotFound beats ServiceError.
    app.add_exception_handler(NotFound, _status(404))
    app.add_exception_handler(ServiceError, _status(409))
    app.add_exception_handler(MemberImportError, _import_errors)  # type: ignore[arg-type]
    for bad_input in (MemberError, UserError, ReportError):
        app.add_exception_handler(bad_input, _status(400))
    app.add_exception_handler(StoreError, _status(409))
    app.add_exception_handler(sa.IntegrityError, _integrity)  # type: ignore[arg-type]
    app.add_exception_handler(sa.OperationalError, _database_down)  # type: ignore[arg-type]
    app.add_exception_handler(Exception, _bug)
