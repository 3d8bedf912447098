"""`python -m edgelite.cli ...` runs the `edgelite` command."""

from .main import main

if __name__ == "__main__":
    main(prog_name="edgelite")
