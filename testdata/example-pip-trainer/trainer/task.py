"""The demo's trainer with requirements: imports what requirements.txt asks for and says which versions pip chose.

Run it as gcloud's image does (working directory /usr/app):
    python trainer/task.py --epochs 2
"""
import argparse
import importlib.metadata
import sys

import tp_gamma  # noqa: F401  (requirements.txt: tp-gamma[fast], which brings tp-delta)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=1, help="how many epochs to pretend to train (default 1)")
    args = parser.parse_args(argv)
    for name in ("tp-gamma", "tp-delta"):
        print(f"{name} {importlib.metadata.version(name)}", flush=True)
    for epoch in range(1, args.epochs + 1):
        print(f"epoch {epoch}/{args.epochs}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
