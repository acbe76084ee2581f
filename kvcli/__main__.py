"""``python -m kvcli``: the same as the ``kvcli`` command."""

from kvcli.cli.app import main

if __name__ == "__main__":
    main()
