"""`python -m edgelite ...` runs the `edgelite` command."""

from edgelite.cli.main import main

if __name__ == "__main__":
    main(prog_name="edgelite")
