"""multikernel.dask.predict_dask: a fitted tagger, parser or table estimator over a Dask bag,
array or dataframe gives, partition by partition, what ``predict`` gives on the whole input,
in input order, on a distributed cluster (in-process LocalCluster on the loopback interface,
1 and 2 workers) and on Dask's local scheduler."""

import pickle

import numpy as np
import pytest
from tables import read_table
from treebank import blocks, unparsed

from multikernel import DependencyParser, MKLClassifier, MKLRegressor, SequenceTagger

db = pytest.importorskip("dask.bag")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

from multikernel.dask import predict_dask  # noqa: E402

KERNELS = ["rbf:scale=1,approx=rff,dim=64", "linear"]
TEMPLATES = "U00:%x[0,0]\nU01:%x[-1,0]\nU02:%x[1,0]\nB\n"


def words_and_tags(block):
    rows = [line.split("\t") for line in block.splitlines()]
    rows = [r for r in rows if len(r) == 10 and r[0].isdigit()]
    return [r[1] for r in rows], [r[3] for r in rows]


def features(words):
    return [
        {"w": w.lower(), "suffix": w[-2:], "up": w[:1].isupper(), "len": len(w) / 10}
        for w in words
    ]


@pytest.fixture(scope="module")
def tagging():
    train = [words_and_tags(b) for b in blocks(0)[:150]]
    test = [words_and_tags(b) for b in blocks(9)[:50]]
    return train, test


def test_a_tagger_over_a_bag_of_feature_dicts(client, tagging):
    train, test = tagging
    X = [features(w) for w, _ in train]
    y = [t for _, t in train]
    est = SequenceTagger(epochs=2, loss="crf", random_state=0).fit(X, y)
    Xt = [features(w) for w, _ in test]
    bag = db.from_sequence(Xt, npartitions=4)
    assert predict_dask(est, bag, client=client).compute() == est.predict(Xt)
    marg = predict_dask(est, bag, method="predict_marginals", client=client).compute()
    want = est.predict_marginals(Xt)
    assert len(marg) == len(want)
    for got_s, want_s in zip(marg, want):
        for got, exp in zip(got_s, want_s):
            assert got.keys() == exp.keys()
            assert np.allclose([got[k] for k in exp], [exp[k] for k in exp], rtol=0, atol=0)


def test_a_tagger_over_column_text_with_and_without_labels(client, tagging):
    train, test = tagging
    X = [[(w,) for w in words] for words, _ in train]
    y = [t for _, t in train]
    est = SequenceTagger(templates=TEMPLATES, epochs=2, random_state=0).fit(X, y)
    want = est.predict([[(w,) for w in words] for words, _ in test])
    plain = ["".join(w + "\n" for w in words) for words, _ in test]
    labeled = ["".join(f"{w} {t}\n" for w, t in zip(*s)) for s in test]
    got = predict_dask(est, db.from_sequence(plain, npartitions=3), client=client)
    assert got.compute() == want
    got = predict_dask(
        est, db.from_sequence(labeled, npartitions=3), client=client, labels_column=True
    )
    assert got.compute() == want


def test_a_parser_over_a_bag_of_blocks_and_tokenlists(client):
    est = DependencyParser(epochs=2, random_state=0).fit("".join(blocks(0)[:100]))
    test = [unparsed(b) for b in blocks(9)[:40]]
    want = est.predict(test)
    got = predict_dask(est, db.from_sequence(test, npartitions=3), client=client).compute()
    assert got == want
    conllu = pytest.importorskip("conllu")
    lists = conllu.parse("".join(test))
    # TokenLists made on the workers (Dask's graph rebuilds list subclasses it is given
    # literally, which a TokenList does not survive).
    bag = db.from_sequence(test, npartitions=3).map(lambda b: conllu.parse(b)[0])
    got = predict_dask(est, bag, client=client).compute()
    assert [s.serialize() for s in got] == [s.serialize() for s in est.predict(lists)]


def test_a_classifier_over_an_array_and_a_dataframe(client):
    X, y = read_table("breast-cancer")
    est = MKLClassifier(kernels=KERNELS, C=10.0, loss="logistic", random_state=0)
    est.fit(X[:400], y[:400])
    Xt = X[400:]
    dX = da.from_array(Xt, chunks=(50, 3))  # column chunks are joined
    for method in ("predict", "predict_proba", "decision_function"):
        got = predict_dask(est, dX, method=method, client=client)
        want = getattr(est, method)(Xt)
        assert got.shape == want.shape
        out = got.compute()
        assert out.dtype == want.dtype
        assert np.array_equal(out, want), method
    frame = dd.from_array(Xt, chunksize=60)
    got = predict_dask(est, frame, client=client).compute()
    assert list(got) == list(est.predict(Xt))
    assert list(got.index) == list(range(len(Xt)))
    proba = predict_dask(est, frame, method="predict_proba", client=client).compute()
    assert list(proba.columns) == list(est.classes_)
    assert np.array_equal(proba.to_numpy(), est.predict_proba(Xt))


def test_the_local_scheduler_without_a_client(monkeypatch):
    def no_client():
        raise ValueError("No clients found")

    # As if no distributed client ran (the cluster fixture may still be up).
    monkeypatch.setattr(distributed, "get_client", no_client)
    X, y = read_table("boston-housing", real=True)
    est = MKLRegressor(kernels=KERNELS, C=10.0, random_state=0).fit(X, y)
    got = predict_dask(est, da.from_array(X, chunks=(40, -1)), client=None)
    assert np.array_equal(got.compute(scheduler="sync"), est.predict(X))


def test_wrong_collections_and_methods_are_named():
    X, y = read_table("breast-cancer")
    est = MKLClassifier(kernels=KERNELS, C=1.0, random_state=0).fit(X[:200], y[:200])
    with pytest.raises(TypeError, match="dask array or a dask dataframe"):
        predict_dask(est, db.from_sequence([1, 2]), client=None)
    with pytest.raises(ValueError, match="columns"):
        predict_dask(est, da.from_array(X[:, :3], chunks=(50, -1)), client=None)
    with pytest.raises(ValueError, match="predict_marginals"):
        predict_dask(est, da.from_array(X), method="predict_marginals", client=None)
    tagger = SequenceTagger(epochs=1).fit([features(["a", "b"])], [["X", "Y"]])
    with pytest.raises(TypeError, match="dask.bag"):
        predict_dask(tagger, da.from_array(X), client=None)
    with pytest.raises(AttributeError, match="CRF or logistic"):
        predict_dask(tagger, db.from_sequence([]), method="predict_marginals", client=None)
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        predict_dask(MKLClassifier(), da.from_array(X), client=None)


def test_partitions_gather_whole_and_tasks_predict_on_one_thread(tagging):
    from multikernel import dask as mkdask

    train, test = tagging
    X = [features(w) for w, _ in train]
    est = SequenceTagger(epochs=1, random_state=0).fit(X, [t for _, t in train])
    Xt = [features(w) for w, _ in test]
    part = mkdask._tag_partition(Xt, est, "predict", False)
    # A list subclass: distributed pickles it whole, not element by element; it unpickles
    # as a plain list.
    assert type(part) is not list and isinstance(part, list)
    assert list(part) == est.predict(Xt)
    back = pickle.loads(pickle.dumps(part))
    assert type(back) is list and back == est.predict(Xt)
    # The bag's whole list: in one piece on a worker, a plain list elsewhere.
    assert type(mkdask._finalize_whole([part, part])) is list
    shipped = mkdask._one_thread_per_task(est)
    assert shipped is not est and shipped.n_jobs == 1 and est.n_jobs is None
    assert shipped.predict(Xt) == est.predict(Xt)
    est.set_params(n_jobs=2)
    assert mkdask._one_thread_per_task(est) is est
    # The local scheduler gives the plain list predict gives.
    got = predict_dask(est, db.from_sequence(Xt, npartitions=3)).compute()
    assert type(got) is list and got == est.predict(Xt)


def test_a_bag_computed_on_a_cluster_comes_back_a_plain_list_in_one_piece(client, tagging):
    train, test = tagging
    X = [features(w) for w, _ in train]
    est = SequenceTagger(epochs=1, random_state=0).fit(X, [t for _, t in train])
    Xt = [features(w) for w, _ in test]
    tagged = predict_dask(est, db.from_sequence(Xt, npartitions=4), client=client)
    assert isinstance(tagged, db.Bag)
    got = tagged.compute()
    assert type(got) is list and got == est.predict(Xt)
    # Derived bags keep the same finalize and give what dask.bag gives.
    assert tagged.map(len).compute() == [len(t) for t in est.predict(Xt)]
    assert tagged.map(len).sum().compute() == sum(len(t) for t in est.predict(Xt))
