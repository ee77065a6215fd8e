"""The REST API's request and answer schemas, one module per resource (named as in api/rest/)."""
