"""The staff dashboard's pages (Jinja2, Slovak first), mounted beside the JSON API by mount_web."""

from dashboard.web.app import mount_web

__all__ = ["mount_web"]
