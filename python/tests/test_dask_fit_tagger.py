"""multikernel.dask.fit_dask on a SequenceTagger(learner="mtl"): the cutting plane over a
bag of sentences kept on the workers gives the model one process trains, byte for byte with
string and boolean features or CRF++ templates (integer cut sums), within round-off with
real-valued features; a worker killed mid-fit changes nothing; what is refused is named."""

import numpy as np
import pytest
from treebank import blocks

from multikernel import SequenceTagger

db = pytest.importorskip("dask.bag")
distributed = pytest.importorskip("distributed")

from dask_faults import forget_replicas_at, killing_cluster  # noqa: E402

from multikernel import _dask_parts  # noqa: E402
from multikernel.dask import fit_dask  # noqa: E402

TEMPLATES = "U00:%x[0,0]\nU01:%x[-1,0]\nU02:%x[1,0]\nU03:%x[0,1]\nB\n"


def words_and_tags(block):
    rows = [line.split("\t") for line in block.splitlines()]
    rows = [r for r in rows if len(r) == 10 and r[0].isdigit()]
    return [r[1] for r in rows], [r[3] for r in rows]


def features(words, real=False):
    out = []
    for i, w in enumerate(words):
        f = {"w": w.lower(), "suffix": w[-2:], "up": w[:1].isupper()}
        if i > 0:
            f["-1:w"] = words[i - 1].lower()
        if real:
            f["len"] = len(w) / 7
        out.append(f)
    return out


@pytest.fixture(scope="module")
def tagging():
    return [words_and_tags(b) for b in blocks(0)[:60]]


MTL = dict(learner="mtl", C=5.0, max_iter=12)


def bags(X, y, n=4):
    return db.from_sequence(X, npartitions=n), db.from_sequence(y, npartitions=n)


def test_feature_dicts_on_dask_train_the_one_process_model(client, tagging):
    X = [features(w) for w, _ in tagging]
    y = [t for _, t in tagging]
    one = SequenceTagger(**MTL).fit(X, y)
    Xb, yb = bags(X, y)
    est = fit_dask(SequenceTagger(**MTL), Xb, yb, client=client)
    assert est.tagger_.to_bytes() == one.tagger_.to_bytes()
    assert est.n_iter_ == one.n_iter_ and est.n_iter_ > 3
    assert est.classes_ == one.classes_ and est.learner_ == "mtl"
    assert est.state_features_ == one.state_features_
    assert est.predict(X[:20]) == one.predict(X[:20])


def test_columns_and_templates_on_dask_train_the_one_process_model(client, tagging):
    X = [[(w, w[-3:]) for w in words] for words, _ in tagging]
    y = [[{"NOUN": 1, "VERB": 2}.get(t, 0) for t in tags] for _, tags in tagging]
    one = SequenceTagger(templates=TEMPLATES, q=2, **MTL).fit(X, y)
    Xb, yb = bags(X, y, n=3)
    est = fit_dask(SequenceTagger(templates=TEMPLATES, q=2, **MTL), Xb, yb, client=client)
    assert est.tagger_.to_bytes() == one.tagger_.to_bytes()
    # Integer labels come back as integers, as from fit.
    assert est.predict(X[:5]) == one.predict(X[:5])
    assert all(isinstance(t, int) for s in est.predict(X[:5]) for t in s)


@pytest.mark.slow
def test_real_valued_features_train_a_model_as_good_to_the_tolerance(client, tagging):
    """Real-valued features: the parts' sums add in another grouping than one process's,
    so cuts differ in their last bits and the loops can part at a near tie; both converge
    to the tolerance, to models that tag alike."""
    X = [features(w, real=True) for w, _ in tagging]
    y = [t for _, t in tagging]
    settings = dict(learner="mtl", C=5.0, eps=0.05)
    one = SequenceTagger(**settings).fit(X, y)
    stats = {}
    est = _dask_parts.fit_tagger_dask(
        SequenceTagger(**settings), *bags(X, y, n=5), client, stats=stats
    )
    assert est.fit_status_ == one.fit_status_ == "converged"
    # Real sums do not merge on the workers: every partition's come back, added in order.
    assert set(stats["sums_count"]) == {5}, stats["sums_count"]
    got, want = est.predict(X), one.predict(X)
    same = sum(a == b for s, t in zip(got, want) for a, b in zip(s, t))
    assert same / sum(map(len, want)) >= 0.99
    a, b = est.template_weights_, one.template_weights_
    assert a.keys() == b.keys()
    np.testing.assert_allclose([a[k] for k in b], [b[k] for k in b], atol=0.02)


def test_fit_dask_refuses_what_it_cannot_train_exactly(client, tagging):
    X = [features(w) for w, _ in tagging[:20]]
    y = [t for _, t in tagging[:20]]
    with pytest.raises(ValueError, match="learner='mtl'"):
        fit_dask(SequenceTagger(), *bags(X, y), client=client)
    with pytest.raises(ValueError, match="partitioned alike"):
        fit_dask(SequenceTagger(**MTL), db.from_sequence(X, npartitions=2),
                 db.from_sequence(y, npartitions=3), client=client)
    with pytest.raises(TypeError, match="dask.bag.Bag"):
        fit_dask(SequenceTagger(**MTL), X, y, client=client)
    with pytest.raises(ValueError, match="epochs and classes"):
        fit_dask(SequenceTagger(**MTL), *bags(X, y), client=client, epochs=3)


@pytest.mark.slow
def test_a_worker_killed_mid_fit_leaves_the_same_model(tagging, monkeypatch):
    """Process workers: at the third separation the worker of partition 0 is killed
    (SIGKILL; its nanny starts a new one); its tasks run again elsewhere, compile their partitions again and
    start from the loop's state."""
    X = [features(w) for w, _ in tagging]
    y = [t for _, t in tagging]
    one = SequenceTagger(**MTL).fit(X, y)
    with killing_cluster(monkeypatch, at=3) as (client, calls):
        stats = {}
        Xb, yb = bags(X, y)
        est = _dask_parts.fit_tagger_dask(SequenceTagger(**MTL), Xb, yb, client, stats=stats)
    assert len(calls) > 3
    assert est.tagger_.to_bytes() == one.tagger_.to_bytes()


def test_a_worker_that_missed_steps_starts_from_the_loop_s_state(client, tagging, monkeypatch):
    """A worker whose replica of the point is gone at the third separation (as a worker
    that joined mid-fit has none) is sent the loop's state, and the model is the same."""
    X = [features(w) for w, _ in tagging]
    y = [t for _, t in tagging]
    one = SequenceTagger(**MTL).fit(X, y)
    forget_replicas_at(monkeypatch, 2)
    stats = {}
    est = _dask_parts.fit_tagger_dask(SequenceTagger(**MTL), *bags(X, y), client, stats=stats)
    assert stats["resyncs"] == 4, stats["resyncs"]
    assert est.tagger_.to_bytes() == one.tagger_.to_bytes()


@pytest.mark.slow
@pytest.mark.parametrize("client", [2], indirect=True)
def test_a_partition_moved_to_another_worker_starts_it_from_the_loop_s_state(
    client, tagging, monkeypatch
):
    """From the third separation on, the partitions prefer the other worker (as after a
    worker is lost or work is stolen): the worker's replica holds only the weights of the
    partitions it served, and cuts have dropped the others, so it is sent the loop's state,
    and the model is the same."""
    X = [features(w) for w, _ in tagging]
    y = [t for _, t in tagging]
    one = SequenceTagger(**MTL).fit(X, y)
    homes = _dask_parts._homes
    calls = []

    def swapped(c, n):
        calls.append(n)
        h = homes(c, n)
        return h if len(calls) < 3 else h[1:] + h[:1]

    monkeypatch.setattr(_dask_parts, "_homes", swapped)
    monkeypatch.setattr(_dask_parts, "_POINTS", False)
    stats = {}
    est = _dask_parts.fit_tagger_dask(SequenceTagger(**MTL), *bags(X, y), client, stats=stats)
    assert stats["resyncs"] >= 1, stats["resyncs"]
    assert est.tagger_.to_bytes() == one.tagger_.to_bytes()
    # Every partition separated once per cut, counted by the workers that did it.
    tasks = sum(s[2] for s in stats["worker_seconds"].values())
    assert tasks == 4 * len(stats["separate_seconds"]), (tasks, stats["worker_seconds"])
    # The workers forgot the fit: no compiled partition, replica or count left behind.
    left = client.run(lambda dask_worker: len(_dask_parts._run_cache(dask_worker)))
    assert set(left.values()) == {0}, left


@pytest.mark.parametrize("points", [True, False])
def test_the_point_sent_or_rebuilt_trains_the_same_model(client, tagging, monkeypatch, points):
    """The loop's point sent to the workers instead of the step their replicas follow (or
    never sent), whatever the first step would decide: the same model."""
    X = [features(w) for w, _ in tagging[:30]]
    y = [t for _, t in tagging[:30]]
    one = SequenceTagger(**MTL).fit(X, y)
    monkeypatch.setattr(_dask_parts, "_POINTS", points)
    stats = {}
    est = _dask_parts.fit_tagger_dask(SequenceTagger(**MTL), *bags(X, y), client, stats=stats)
    assert est.tagger_.to_bytes() == one.tagger_.to_bytes()
    assert stats["points"] == (len(stats["separate_seconds"]) if points else 0)


def test_sums_narrowed_for_the_network_come_back_the_same():
    """A worker's sums cross the network in 32 bits where they fit (indices; values that
    are integers) and come back to the core's 64 bits unchanged."""
    indices = np.array([0, 5, 2**32 - 1], dtype=np.uint64)
    values = np.array([3.0, -2.0, 7.0])
    narrow = _dask_parts._narrow((indices, values, 4.0, 3, 11), integers=True)
    assert narrow[0].dtype == np.uint32 and narrow[1].dtype == np.int32
    back = _dask_parts._wide(narrow)
    assert back[0].dtype == np.uint64 and back[1].dtype == np.float64
    assert back[0].tolist() == indices.tolist() and back[1].tolist() == values.tolist()
    assert back[2:] == (4.0, 3, 11)
    # What does not fit, or real values, stays 64-bit.
    wide = (np.array([1, 2**32], dtype=np.uint64), np.array([0.5, 2.0**40]), 0.0, 1, 0)
    kept = _dask_parts._narrow(wide, integers=False)
    assert kept[0].dtype == np.uint64 and kept[1].dtype == np.float64
    big = _dask_parts._narrow((wide[0][:1], np.array([2.0**40]), 0.0, 1, 0), integers=True)
    assert big[1].dtype == np.float64 and _dask_parts._wide(big)[1][0] == 2.0**40
