"""`python -m referee` runs the `referee` command."""

from referee.cli import main

main()
