"""The database layer: tables, migrations, and the only code that writes them.

One module per kind of row, named for the rows it holds (`reads`, `records`,
`decision_rows`, `vacation_rows`, ...; docs/design.md lists them all). The
store keeps data: it decides no policy and replays nothing, which the
service (`referee.service`) does.
"""
