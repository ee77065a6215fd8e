"""The REST API of docs/api.md: one blueprint per resource, each mounted at its own prefix."""
