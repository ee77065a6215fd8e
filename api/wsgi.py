"""The WSGI entry point for gunicorn: `gunicorn -c deploy/gunicorn.conf.py api.wsgi:app`.

Each gunicorn process reads its settings from the environment once, here.
"""

from __future__ import annotations

from api import create_app
from referee.settings import Settings

app = create_app(Settings.from_environ())
