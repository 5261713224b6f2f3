"""A tiny pure-Python "training" job: fits y = w*x + b by gradient descent on synthetic data.

Run it as gcloud's image does (working directory /usr/app, config/ copied next to trainer/):
    python trainer/task.py --epochs 5
"""
import argparse
import json
import os
import random
import sys


def load_params(path):
    if not os.path.isabs(path) and not os.path.exists(path):
        # Also works when started from elsewhere: config/ sits next to trainer/ in the package.
        path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), path)
    with open(path, encoding="utf-8") as f:
        return json.load(f), path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3, help="passes over the data (default 3)")
    parser.add_argument("--config", default="config/params.json", help="JSON hyperparameters")
    args = parser.parse_args(argv)
    if args.epochs < 1:
        parser.error("--epochs must be at least 1")

    params, path = load_params(args.config)
    rng = random.Random(params["seed"])
    true_w, true_b = params["true_weight"], params["true_bias"]
    data = [(x, true_w * x + true_b + rng.gauss(0, params["noise"]))
            for x in (rng.uniform(-1, 1) for _ in range(params["samples"]))]
    print(f"loaded {path}: {len(data)} samples, learning_rate={params['learning_rate']}", flush=True)

    w = b = 0.0
    lr = params["learning_rate"]
    for epoch in range(1, args.epochs + 1):
        total = 0.0
        for x, y in data:
            err = (w * x + b) - y
            total += err * err
            w -= lr * 2 * err * x
            b -= lr * 2 * err
        print(f"epoch {epoch}/{args.epochs} loss={total / len(data):.4f}", flush=True)

    print(f"done: w={w:.3f} b={b:.3f} (true w={true_w} b={true_b})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
