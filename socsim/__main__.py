"""``python -m socsim``: the same command line as the ``socsim`` script."""
from socsim.cli import main

if __name__ == "__main__":
    main(prog_name="socsim")
