"""gunicorn settings for the referee API: `gunicorn -c deploy/gunicorn.conf.py api.wsgi:app`.

Run `referee db upgrade` once before starting, and at least one
`referee worker` beside it (with the same DATABASE_URL and REDIS_URL).
"""

import multiprocessing
import os

bind = os.environ.get("REFEREE_BIND", "127.0.0.1:8000")
workers = int(os.environ.get("WEB_CONCURRENCY", multiprocessing.cpu_count() * 2))
# Threads, not processes, for concurrency: a `?wait=` request mostly sleeps.
threads = int(os.environ.get("REFEREE_THREADS", "16"))
worker_class = "gthread"
# `?wait=` holds a request open for up to 30 s.
timeout = 60
graceful_timeout = 35
accesslog = os.environ.get("REFEREE_ACCESS_LOG", "-") or None
