"""multikernel.dask.fit_dask on a DependencyParser(learner="mtl"): the cutting plane over a
bag of sentences kept on the workers gives the model one process trains, byte for byte (arc
features are counts, so the cut sums are integers), with CoNLL-U blocks or TokenLists, any
trees or projective ones; a worker killed mid-fit (the point sent, no replica) or whose
replica missed steps changes nothing; what is refused is named."""

import pytest
from treebank import blocks

from multikernel import DependencyParser

db = pytest.importorskip("dask.bag")
distributed = pytest.importorskip("distributed")

from dask_faults import forget_replicas_at, killing_cluster  # noqa: E402

from multikernel import _dask_parts  # noqa: E402
from multikernel.dask import fit_dask  # noqa: E402

MTL = dict(learner="mtl", C=1.0, eps=0.02, random_state=3)


@pytest.fixture(scope="module")
def treebank():
    return blocks(0)[:60]


@pytest.mark.slow
def test_blocks_on_dask_train_the_one_process_parser(client, treebank):
    for projective in (False, True):
        one = DependencyParser(projective=projective, **MTL).fit(treebank)
        stats = {}
        est = _dask_parts.fit_parser_dask(
            DependencyParser(projective=projective, **MTL),
            db.from_sequence(treebank, npartitions=4),
            client,
            stats=stats,
        )
        assert est.parser_.to_bytes() == one.parser_.to_bytes(), projective
        assert est.classes_ == one.classes_ and est.classes_
        assert est.template_weights_ == one.template_weights_
        assert len(stats["separate_seconds"]) == est.n_iter_ > 3
        # A parser's cuts are nearly dense: from the first step on, the loop sends its
        # point rather than the step.
        assert stats["points"] == est.n_iter_ - 1
        assert stats["arcs_bytes"] > 0 and stats["dim"] > 0
        # Each worker's partitions' sums (counts) come back merged: one a worker.
        assert set(stats["sums_count"]) == {len(client.nthreads())}, stats["sums_count"]
    # The workers forgot the fit.
    left = client.run(lambda dask_worker: len(_dask_parts._run_cache(dask_worker)))
    assert set(left.values()) == {0}, left


@pytest.mark.slow
def test_tokenlists_and_a_partition_with_no_sentence(client, treebank):
    conllu = pytest.importorskip("conllu")
    one = DependencyParser(**MTL).fit(conllu.parse("".join(treebank[:30])))
    # TokenLists made on the workers, and an empty partition among the others.
    bag = db.from_sequence(treebank[:30], npartitions=3).map(lambda b: conllu.parse(b)[0])
    empty = db.from_sequence([], npartitions=1)
    est = fit_dask(DependencyParser(**MTL), db.concat([bag, empty]), client=client)
    assert est.parser_.to_bytes() == one.parser_.to_bytes()


@pytest.mark.slow
def test_a_worker_that_missed_steps_starts_from_the_loop_s_state(client, treebank, monkeypatch):
    one = DependencyParser(**MTL).fit(treebank)
    forget_replicas_at(monkeypatch, 2)
    stats = {}
    est = _dask_parts.fit_parser_dask(
        DependencyParser(**MTL), db.from_sequence(treebank, npartitions=3), client, stats=stats
    )
    assert stats["resyncs"] == 3, stats["resyncs"]
    assert est.parser_.to_bytes() == one.parser_.to_bytes()


def test_fit_dask_refuses_what_it_cannot_train_exactly(client, treebank):
    bag = db.from_sequence(treebank[:10], npartitions=2)
    with pytest.raises(ValueError, match="learner='mtl'"):
        fit_dask(DependencyParser(), bag, client=client)
    with pytest.raises(TypeError, match="dask.bag.Bag"):
        fit_dask(DependencyParser(**MTL), treebank[:10], client=client)
    with pytest.raises(ValueError, match="y=None"):
        fit_dask(DependencyParser(**MTL), bag, bag, client=client)
    with pytest.raises(ValueError, match="no sentences"):
        fit_dask(DependencyParser(**MTL), db.from_sequence([], npartitions=1), client=client)
    # A sentence without its tree is named, as fit names it.
    broken = [b.replace("\t0\t", "\t_\t", 1) for b in treebank[:4]]
    with pytest.raises(ValueError, match="X\\[0\\]"):
        fit_dask(DependencyParser(**MTL), db.from_sequence(broken, npartitions=2),
                 client=client)


@pytest.mark.slow
def test_a_worker_killed_mid_fit_leaves_the_same_parser(treebank, monkeypatch):
    """Process workers: at the fourth separation (the point sent since the second) the
    worker of partition 0 is killed (SIGKILL; its nanny starts a new one); its tasks run
    again elsewhere, compile their partitions again and separate at the point sent."""
    one = DependencyParser(**MTL).fit(treebank)
    with killing_cluster(monkeypatch, at=4) as (client, calls):
        stats = {}
        est = _dask_parts.fit_parser_dask(
            DependencyParser(**MTL), db.from_sequence(treebank, npartitions=4), client,
            stats=stats,
        )
    assert len(calls) > 4 and stats["points"] > 3
    assert est.parser_.to_bytes() == one.parser_.to_bytes()
