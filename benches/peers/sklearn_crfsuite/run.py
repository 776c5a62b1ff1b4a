"""sklearn-crfsuite's tutorial on TWT UPOS (folds 0-7 train, 8 dev, 9 test), side by side with
multikernel.SequenceTagger on the same feature dicts. Each learner's regularization is chosen
on the dev fold; the test fold is scored once. Prints one JSON line per learner.

    python run.py WORK ours     # in a venv with multikernel (maturin develop --release)
    python run.py WORK ours-eta [ETA0,...]  # the online CRF with eta0 chosen on dev too
                                  # (default grid 0.1,0.3,1,3,10)
    python run.py WORK ours-lbfgs  # the batch CRF (L-BFGS, 100 iterations, as theirs) with
                                  # C = 1 / (2 c2) over their c2 grid
    python run.py WORK theirs   # in the venv of requirements.txt (run.sh makes both)
"""
import json
import sys
import time

from features import load


def accuracy(y, pred):
    pairs = [(a, b) for s, p in zip(y, pred) for a, b in zip(s, p)]
    return sum(a == b for a, b in pairs) / len(pairs)


def choose(make, grid, train, dev, test):
    """Fits one model per setting on train, keeps the best on dev, scores it on test."""
    rows = []
    best = None
    for setting in grid:
        t0 = time.perf_counter()
        model = make(setting).fit(*train)
        seconds = time.perf_counter() - t0
        dev_acc = accuracy(dev[1], model.predict(dev[0]))
        rows.append({"setting": setting, "dev": round(100 * dev_acc, 2), "seconds": round(seconds, 1)})
        if best is None or dev_acc > best[0]:
            best = (dev_acc, setting, model, seconds)
    dev_acc, setting, model, seconds = best
    test_acc = accuracy(test[1], model.predict(test[0]))
    return model, {
        "chosen": setting,
        "dev": round(100 * dev_acc, 2),
        "test": round(100 * test_acc, 2),
        "fit_seconds": round(seconds, 1),
        "grid": rows,
    }


def ours(train, dev, test):
    from multikernel import SequenceTagger

    for name, make in [
        ("multikernel online crf", lambda c: SequenceTagger(C=c, loss="crf", random_state=0)),
        ("multikernel mtl q=1", lambda c: SequenceTagger(learner="mtl", C=c)),
    ]:
        model, row = choose(make, [0.1, 1.0, 10.0, 100.0], train, dev, test)
        row["learner"] = name
        row["template_weights"] = {k: round(v, 4) for k, v in model.template_weights_.items()}
        print(json.dumps(row), flush=True)


def ours_eta(train, dev, test):
    """The online CRF with its step size eta0 chosen on dev as well (the tagging-mtl page's
    SPOM rows choose it so)."""
    from multikernel import SequenceTagger

    etas = [float(e) for e in sys.argv[3].split(",")] if len(sys.argv) > 3 else [0.1, 0.3, 1, 3, 10]
    grid = [(c, e) for c in (0.1, 1.0, 10.0, 100.0) for e in etas]
    model, row = choose(
        lambda s: SequenceTagger(C=s[0], eta0=s[1], loss="crf", random_state=0),
        grid, train, dev, test,
    )
    row["learner"] = "multikernel online crf (C, eta0)"
    row["template_weights"] = {k: round(v, 4) for k, v in model.template_weights_.items()}
    print(json.dumps(row), flush=True)


def ours_lbfgs(train, dev, test):
    """The l2 CRF trained in batch by L-BFGS, as sklearn-crfsuite's ``algorithm="lbfgs"``
    with ``c1 = 0``: ``C = 1 / (2 c2)`` over their ``c2`` grid, their 100 iterations."""
    from multikernel import SequenceTagger

    grid = [1 / (2 * c2) for c2 in (0.001, 0.01, 0.1, 1.0)]
    model, row = choose(
        lambda c: SequenceTagger(learner="lbfgs", C=c, max_iter=100), grid, train, dev, test,
    )
    row["learner"] = "multikernel lbfgs (C = 1 / (2 c2))"
    print(json.dumps(row), flush=True)


def ours_auto(train, dev, test):
    """``SequenceTagger()`` with no settings: the built-in selection chooses the learner, C
    and q on a seeded 10 % of the training sentences held out, then refits on all of them
    (the dev fold is not used)."""
    import time

    from multikernel import SequenceTagger

    start = time.perf_counter()
    model = SequenceTagger(random_state=0).fit(train[0], train[1])
    seconds = time.perf_counter() - start
    print(json.dumps({
        "learner": "multikernel SequenceTagger() (built-in selection)",
        "chosen": model.selection_["headline"],
        "dev": round(100 * accuracy(dev[1], model.predict(dev[0])), 2),
        "test": round(100 * accuracy(test[1], model.predict(test[0])), 2),
        "fit_seconds": round(seconds, 1),
        "lines": model.selection_["lines"],
    }), flush=True)


def theirs(train, dev, test):
    import sklearn_crfsuite

    grid = [(c1, c2) for c1 in (0.0, 0.1, 1.0) for c2 in (0.001, 0.01, 0.1, 1.0)]
    model, row = choose(
        lambda s: sklearn_crfsuite.CRF(
            algorithm="lbfgs", c1=s[0], c2=s[1], max_iterations=100,
            all_possible_transitions=True,
        ),
        grid, train, dev, test,
    )
    row["learner"] = "sklearn-crfsuite lbfgs (c1, c2)"
    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    work, side = sys.argv[1], sys.argv[2]
    train, dev, test = load(work)
    {"ours": ours, "ours-eta": ours_eta, "ours-lbfgs": ours_lbfgs, "ours-auto": ours_auto,
     "theirs": theirs}[side](train, dev, test)
