"""The WSGI entry point for gunicorn: `gunicorn -c deploy/gunicorn.conf.py api.wsgi:app`."""

from __future__ import annotations

from api import create_app

app = create_app()
