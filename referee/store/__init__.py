"""The database layer: tables, migrations, and the only code that writes them (`ops`)."""
