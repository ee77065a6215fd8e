"""gunicorn settings for the referee API: `gunicorn -c deploy/gunicorn.conf.py api.wsgi:app`.

Run `referee db upgrade` once before starting, and at least one
`referee worker` beside it (with the same DATABASE_URL and REDIS_URL).
"""

import multiprocessing
import os

bind = os.environ.get("REFEREE_BIND", "127.0.0.1:8000")
workers = int(os.environ.get("WEB_CONCURRENCY", multiprocessing.cpu_count() * 2))
# Threads, not processes, for concurrency: a `?wait=` request mostly sleeps.
# Each open `GET .../events` stream holds a thread for as long as it is
# followed, so a process has REFEREE_EVENTS_MAX threads for streams beside
# REFEREE_THREADS for everything else: followers never starve the moves.
# A thread is started only when a request needs it.
events_max = int(os.environ.get("REFEREE_EVENTS_MAX", "100"))
threads = int(os.environ.get("REFEREE_THREADS", "16")) + events_max
# Connections a process keeps open, as `referee serve` counts them: gunicorn has
# no per-client share nor a deadline for a request's head, so the proxy in front
# (deploy/nginx.conf) bounds those (docs/operations.md, "Connections and idle clients").
worker_connections = int(os.environ.get("REFEREE_CONNECTIONS", "1000")) + events_max
worker_class = "gthread"
# `?wait=` holds a request open for up to 30 s.
timeout = 60
graceful_timeout = 35
accesslog = os.environ.get("REFEREE_ACCESS_LOG", "-") or None
