"""The database layer: tables, migrations, and the only code that writes them.

One module per concern: `creation` (a game and its seats), `submissions`
(recording a move from any source), `deciding` (judging it under the
game's lock), `appending` (the log, the game's row, the news), `reads` and
`records` (states, logs, records), `keys` (tokens and secrets), `notices`
(what a seat is to be told, with a delivery per channel reaching it),
`delivery` (each channel's claims, leases and retries), `webhooks` (a
seat's webhook and its health), `deadlines` (reminders and timeouts),
`clock` and `db`.
"""
