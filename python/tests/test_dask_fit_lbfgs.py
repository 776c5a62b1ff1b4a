"""multikernel.dask.fit_dask on a SequenceTagger(learner="lbfgs"): the batch CRF, every
partition's CRF losses and gradient sum computed on its worker at each point L-BFGS
evaluates and added on the client in partition order. One partition is the one-process fit
to the byte; more partitions give the model of the same sums added in partition order,
computed here without Dask, whatever the number of workers, with the one process's
objective to its last bits at any point; a worker killed mid-fit changes nothing."""

import numpy as np
import pytest
from treebank import blocks

from multikernel import SequenceTagger, _core

db = pytest.importorskip("dask.bag")
distributed = pytest.importorskip("distributed")

from dask_faults import killing_cluster  # noqa: E402
from test_dask_fit_online import compiled_here, sizes  # noqa: E402
from test_dask_fit_tagger import TEMPLATES, features, words_and_tags  # noqa: E402

from multikernel import _dask_parts  # noqa: E402
from multikernel._estimators import _given_settings  # noqa: E402
from multikernel._inputs import _seed  # noqa: E402
from multikernel._tagger import _TAGGER_SETTINGS  # noqa: E402
from multikernel.dask import fit_dask  # noqa: E402

LBFGS = dict(learner="lbfgs", C=5.0, max_iter=40, random_state=0)


@pytest.fixture(scope="module")
def tagging():
    return [words_and_tags(b) for b in blocks(0)[:60]]


def tagger_here(X, y, parts, est, templates=None):
    """The batch CRF over the parts of ``X`` of sizes ``parts``, their gradients added in
    their order, with no Dask: the model fit_dask must give."""
    featurizer, compiled = compiled_here(X, y, parts, templates)
    tagger, _ = _core.fit_tagger_lbfgs_parts(
        featurizer, len(X), lambda w: [c.crf_gradient(w) for c in compiled], c=est.C,
        settings=_given_settings(est, _TAGGER_SETTINGS), seed=_seed(est.random_state),
    )
    return tagger.to_bytes()


def test_one_partition_of_the_batch_crf_is_the_one_process_tagger(client, tagging):
    X = [features(w) for w, _ in tagging]
    y = [t for _, t in tagging]
    one = SequenceTagger(**LBFGS).fit(X, y)
    stats = {}
    est = _dask_parts.fit_tagger_dask(
        SequenceTagger(**LBFGS), db.from_sequence(X, npartitions=1),
        db.from_sequence(y, npartitions=1), client, stats=stats,
    )
    assert est.tagger_.to_bytes() == one.tagger_.to_bytes()
    assert est.learner_ == "lbfgs" and est.n_iter_ == one.n_iter_ > 5
    assert est.state_features_ == one.state_features_
    assert est.predict_marginals(X[:2]) == one.predict_marginals(X[:2])
    # One evaluation or more an iteration (the line search's), each one point out per
    # worker and the partition's gradient back.
    assert len(stats["evaluation_seconds"]) >= est.n_iter_
    assert len(stats["point_bytes"]) == len(stats["gradient_bytes"])
    assert min(stats["point_bytes"]) > 0 and min(stats["gradient_bytes"]) > 0


def test_partitions_add_to_the_same_tagger_on_any_number_of_workers(client, tagging):
    X = [features(w) for w, _ in tagging]
    y = [t for _, t in tagging]
    Xb, yb = db.from_sequence(X, npartitions=4), db.from_sequence(y, npartitions=4)
    est = fit_dask(SequenceTagger(**LBFGS), Xb, yb, client=client)
    assert est.tagger_.to_bytes() == tagger_here(X, y, sizes(Xb), SequenceTagger(**LBFGS))
    # The optimum of one process: the same tags on the training sentences.
    one = SequenceTagger(**LBFGS).fit(X, y)
    assert est.predict(X) == one.predict(X)


def test_the_parts_objective_is_the_one_process_objective(tagging):
    """At a point that is not the optimum, the partitions' gradient sums added give the
    one process's (a single part's) to the last bits: loss within 1e-12 relative, every
    gradient entry within 1e-12."""
    X = [[(w, w[-3:]) for w in words] for words, _ in tagging]
    y = [tags for _, tags in tagging]
    _, whole = compiled_here(X, y, [len(X)], TEMPLATES)
    _, parts = compiled_here(X, y, [15, 20, 25], TEMPLATES)
    dim = _core.PartFeaturizer(compiled_here(X, y, [len(X)], TEMPLATES)[0]).dim
    w = np.sin(np.arange(dim) * 0.7) * 0.3
    loss, idx, val, n = whole[0].crf_gradient(w)
    assert n == len(X)
    total = sum(p.crf_gradient(w)[0] for p in parts)
    assert abs(total - loss) <= 1e-12 * loss
    dense = np.zeros(dim)
    for p in parts:
        _, i, v, _ = p.crf_gradient(w)
        dense[i] += v
    want = np.zeros(dim)
    want[idx] = val
    assert np.abs(dense - want).max() <= 1e-12 * (1 + np.abs(want).max())


def test_fit_dask_names_lbfgs_among_the_learners(client, tagging):
    X = [features(w) for w, _ in tagging[:20]]
    y = [t for _, t in tagging[:20]]
    bags = db.from_sequence(X, npartitions=2), db.from_sequence(y, npartitions=2)
    with pytest.raises(ValueError, match="learner='lbfgs'"):
        fit_dask(SequenceTagger(), *bags, client=client)


@pytest.mark.slow
def test_a_worker_killed_mid_fit_leaves_the_same_batch_crf(tagging, monkeypatch):
    """Process workers: at the fifth evaluation the worker of partition 0 is killed
    (SIGKILL; its nanny starts a new one); the lost gradients are computed again elsewhere
    at the same point, to the same bytes."""
    X = [[(w, w[-3:]) for w in words] for words, _ in tagging]
    y = [tags for _, tags in tagging]
    settings = dict(LBFGS, templates=TEMPLATES)
    Xb, yb = db.from_sequence(X, npartitions=4), db.from_sequence(y, npartitions=4)
    want = tagger_here(X, y, sizes(Xb), SequenceTagger(**settings), templates=TEMPLATES)
    with killing_cluster(monkeypatch, at=5) as (client, calls):
        est = fit_dask(SequenceTagger(**settings), Xb, yb, client=client)
    assert len(calls) > 5
    assert est.tagger_.to_bytes() == want
