"""multikernel.dask.fit_dask on a SequenceTagger(learner="online") or a
DependencyParser(learner="online"): the online learner's passes over the partitions, mixed
each epoch (iterative parameter mixing). One partition is the one-process fit to the byte;
more partitions give the model of their passes mixed in partition order, computed here
without Dask, whatever the number of workers; a worker killed mid-fit changes nothing."""

import pytest
from treebank import blocks

from multikernel import DependencyParser, SequenceTagger, _core

db = pytest.importorskip("dask.bag")
distributed = pytest.importorskip("distributed")

from dask_faults import killing_cluster  # noqa: E402
from test_dask_fit_tagger import TEMPLATES, features, words_and_tags  # noqa: E402

from multikernel import _dask_parts  # noqa: E402
from multikernel._estimators import _given_settings, _template_text  # noqa: E402
from multikernel._inputs import _seed  # noqa: E402
from multikernel._parser import _PARSER_SETTINGS  # noqa: E402
from multikernel._tagger import _TAGGER_SETTINGS  # noqa: E402
from multikernel.dask import fit_dask  # noqa: E402

ONLINE = dict(learner="online", C=5.0, epochs=4, random_state=2)


@pytest.fixture(scope="module")
def tagging():
    return [words_and_tags(b) for b in blocks(0)[:60]]


def sizes(bag):
    return bag.map_partitions(lambda p: [len(list(p))]).compute()


def passes_here(compiled, plan):
    """The partitions' passes of an epoch, in this process."""
    return lambda state, epoch: [
        c.online_pass(plan, state, epoch, k) for k, c in enumerate(compiled)
    ]


def plan_here(task, n, est, settings, compiled):
    plan = _core.online_plan(
        task, n, c=est.C, settings=_given_settings(est, settings), seed=_seed(est.random_state)
    )
    return _core.online_plan_with_zero(plan, [c.loss_at_zero_total(plan) for c in compiled])


def compiled_here(X, y, parts, templates=None):
    """The parts of ``X`` of sizes ``parts`` compiled in this process against their merged
    featurizer, as fit_dask's workers compile them: (featurizer bytes, compiled parts)."""
    bounds, at = [], 0
    for k in parts:
        bounds.append((at, at + k))
        at += k
    keys = None
    if templates is None:
        keys = _core.merge_part_keys([_dask_parts._part_keys(X[a:b]) for a, b in bounds])
    fmt = (_dask_parts.TAGGER, *_template_text(templates), keys)
    tag_parts = [_dask_parts._tag_part(X[a:b], y[a:b], fmt) for a, b in bounds]
    featurizer, _ = _core.merge_tag_counts([p.counts() for p in tag_parts])
    f = _core.PartFeaturizer(featurizer)
    return featurizer, [p.compile(f) for p in tag_parts]


def tagger_here(X, y, parts, est, templates=None):
    """The tagger of the online learner's passes over the parts of ``X`` of sizes
    ``parts``, mixed in their order, with no Dask: the model fit_dask must give."""
    featurizer, compiled = compiled_here(X, y, parts, templates)
    plan = plan_here("sequence", len(X), est, _TAGGER_SETTINGS, compiled)
    tagger, _ = _core.fit_tagger_passes(
        featurizer, plan, passes_here(compiled, plan), c=est.C,
        settings=_given_settings(est, _TAGGER_SETTINGS), seed=_seed(est.random_state),
    )
    return tagger.to_bytes()


def test_one_partition_of_online_passes_is_the_one_process_tagger(client, tagging):
    X = [features(w) for w, _ in tagging]
    y = [t for _, t in tagging]
    one = SequenceTagger(**ONLINE).fit(X, y)
    stats = {}
    est = _dask_parts.fit_tagger_dask(
        SequenceTagger(**ONLINE), db.from_sequence(X, npartitions=1),
        db.from_sequence(y, npartitions=1), client, stats=stats,
    )
    assert est.tagger_.to_bytes() == one.tagger_.to_bytes()
    assert est.learner_ == "online" and est.n_iter_ == 4
    assert est.state_features_ == one.state_features_
    # The first epoch starts from zeros: no state goes out; then one state a worker.
    assert len(stats["state_bytes"]) == len(stats["pass_bytes"]) == 4
    assert stats["state_bytes"][0] == 0 and min(stats["state_bytes"][1:]) > 0
    assert min(stats["pass_bytes"]) > 0


def test_partitions_mix_to_the_same_tagger_on_any_number_of_workers(client, tagging):
    X = [features(w) for w, _ in tagging]
    y = [t for _, t in tagging]
    Xb, yb = db.from_sequence(X, npartitions=4), db.from_sequence(y, npartitions=4)
    est = fit_dask(SequenceTagger(**ONLINE), Xb, yb, client=client)
    want = tagger_here(X, y, sizes(Xb), SequenceTagger(**ONLINE))
    assert est.tagger_.to_bytes() == want
    assert want != SequenceTagger(**ONLINE).fit(X, y).tagger_.to_bytes()
    # Mixed, the model still tags its training sentences.
    got = est.predict(X)
    right = sum(a == b for s, t in zip(got, y) for a, b in zip(s, t))
    assert right / sum(map(len, y)) > 0.8


def test_columns_and_templates_with_the_crf_loss(client, tagging):
    X = [[(w, w[-3:]) for w in words] for words, _ in tagging[:40]]
    y = [tags for _, tags in tagging[:40]]
    settings = dict(ONLINE, loss="crf", epochs=3)
    Xb, yb = db.from_sequence(X, npartitions=3), db.from_sequence(y, npartitions=3)
    est = fit_dask(SequenceTagger(templates=TEMPLATES, **settings), Xb, yb, client=client)
    want = tagger_here(X, y, sizes(Xb), SequenceTagger(templates=TEMPLATES, **settings),
                       templates=TEMPLATES)
    assert est.tagger_.to_bytes() == want


def test_fit_dask_names_the_learners_it_runs(client, tagging):
    X = [features(w) for w, _ in tagging[:20]]
    y = [t for _, t in tagging[:20]]
    bags = db.from_sequence(X, npartitions=2), db.from_sequence(y, npartitions=2)
    with pytest.raises(ValueError, match="learner='online'"):
        fit_dask(SequenceTagger(), *bags, client=client)
    with pytest.raises(ValueError, match="name one"):
        fit_dask(SequenceTagger(learner="auto", C=1.0), *bags, client=client)


@pytest.mark.slow
def test_a_worker_killed_mid_fit_leaves_the_same_online_tagger(tagging, monkeypatch):
    """Process workers: during the third epoch's passes the worker of partition 0 is
    killed (SIGKILL; its nanny starts a new one); the lost passes run again elsewhere from
    the same state, to the same bytes."""
    X = [features(w) for w, _ in tagging]
    y = [t for _, t in tagging]
    Xb, yb = db.from_sequence(X, npartitions=4), db.from_sequence(y, npartitions=4)
    want = tagger_here(X, y, sizes(Xb), SequenceTagger(**ONLINE))
    with killing_cluster(monkeypatch, at=3) as (client, calls):
        est = fit_dask(SequenceTagger(**ONLINE), Xb, yb, client=client)
    assert len(calls) > 3
    assert est.tagger_.to_bytes() == want


@pytest.mark.slow
def test_online_parsers_on_dask_one_partition_and_several(client):
    treebank = blocks(0)[:40]
    settings = dict(learner="online", C=1.0, epochs=3, random_state=3)
    one = DependencyParser(**settings).fit(treebank)
    est = fit_dask(DependencyParser(**settings), db.from_sequence(treebank, npartitions=1),
                   client=client)
    assert est.parser_.to_bytes() == one.parser_.to_bytes()
    # Three partitions: the passes mixed in partition order, here without Dask.
    bag = db.from_sequence(treebank, npartitions=3)
    est = fit_dask(DependencyParser(**settings), bag, client=client)
    fmt = (_dask_parts.PARSER, None, None, False)
    bounds, at = [], 0
    for k in sizes(bag):
        bounds.append((at, at + k))
        at += k
    values = _core.merge_parse_values(
        [_dask_parts._parse_values(treebank[a:b], fmt) for a, b in bounds]
    )
    keys = _core.merge_parse_keys(
        [_dask_parts._parse_keys(treebank[a:b], fmt, values) for a, b in bounds]
    )
    featurizer, _ = _core.parse_featurizer(values, keys, templates=None,
                                           templates_origin=None, projective=False)
    f = _core.ParseFeaturizer(featurizer)
    parse_parts = [_dask_parts._parse_part(treebank[a:b], fmt) for a, b in bounds]
    compiled = [p.compile(f) for p in parse_parts]
    arcs = [p.gold_arcs(f) for p in parse_parts]
    ref = DependencyParser(**settings)
    plan = plan_here("parsing", len(treebank), ref, _PARSER_SETTINGS, compiled)
    parser, _ = _core.fit_parser_passes(
        featurizer, plan, passes_here(compiled, plan), arcs=arcs, c=ref.C,
        settings=_given_settings(ref, _PARSER_SETTINGS), seed=_seed(ref.random_state),
    )
    assert est.parser_.to_bytes() == parser.to_bytes()
    assert est.parser_.to_bytes() != one.parser_.to_bytes()
