"""The synthetic cluster: valid by construction, violations exactly as counted, deterministic."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from placement.io.snapshot import snapshot_policies, write_snapshot
from placement.model.policy import PlacementPolicy
from placement.snapshot.facts import summarize, violation_mask
from placement.snapshot.synth import SynthSpec, synth


def _check_rows_independently(spec: SynthSpec) -> int:
    """Count violations with plain Python, independent of the vectorized checker."""
    result = synth(spec)
    snap = result.snapshot
    rack = {b["broker_id"]: b["rack"] for b in snap.brokers.to_pylist()}
    policy = snapshot_policies(snap.source, snap.topics)
    bad = 0
    for row in snap.partitions.to_pylist():
        p = policy[row["topic"]]
        reps, obs = row["replicas"], row["observers"]
        sync = reps[: len(reps) - len(obs)]
        assert row["isr"] == sync and row["leader"] == reps[0]
        assert reps[len(reps) - len(obs) :] == obs
        want = p.per_rack()
        got: dict[str, list[int]] = {}
        for b in sync:
            got.setdefault(rack[b], [0, 0])[0] += 1
        for b in obs:
            got.setdefault(rack[b], [0, 0])[1] += 1
        ok = len(set(reps)) == len(reps) and {r: tuple(c) for r, c in got.items()} == want
        bad += not ok
    assert bad == result.violations
    assert int(violation_mask(snap).sum()) == bad
    return bad


def test_clean_cluster_has_no_violations() -> None:
    assert _check_rows_independently(SynthSpec(40, 4, 30, 16, seed=1)) == 0


def test_violation_fraction_is_close_and_counted() -> None:
    bad = _check_rows_independently(SynthSpec(60, 3, 50, 40, violations=0.1, seed=2))
    assert 120 <= bad <= 280  # 2,000 partitions x 10 %, minus the few moves that would clash


@settings(max_examples=15, deadline=None)
@given(
    brokers=st.integers(3, 40),
    racks=st.integers(1, 3),
    topics=st.integers(1, 6),
    ppt=st.integers(1, 20),
    seed=st.integers(0, 2**16),
    frac=st.sampled_from([0.0, 0.3]),
)
def test_random_small_clusters(
    brokers: int, racks: int, topics: int, ppt: int, seed: int, frac: float
) -> None:
    racks = min(racks, brokers // 3) or 1
    _check_rows_independently(SynthSpec(brokers, racks, topics, ppt, violations=frac, seed=seed))


def test_custom_policies_name_the_racks() -> None:
    policy = PlacementPolicy.model_validate(
        {
            "version": 2,
            "replicas": [{"count": 2, "constraints": {"rack": "us-west"}}],
            "observers": [{"count": 1, "constraints": {"rack": "us-east"}}],
        }
    )
    snap = synth(SynthSpec(9, 3, 4, 5, (policy,), seed=3)).snapshot
    assert sorted(set(snap.brokers.column("rack").to_pylist())) == ["rack-01", "us-east", "us-west"]
    assert summarize(snap).violations == 0


def test_same_seed_same_files(tmp_path: Path) -> None:
    spec = SynthSpec(30, 3, 10, 10, violations=0.05, seed=42)
    write_snapshot(tmp_path / "a", synth(spec).snapshot)
    write_snapshot(tmp_path / "b", synth(spec).snapshot)
    for f in sorted((tmp_path / "a").rglob("*.parquet")):
        assert f.read_bytes() == (tmp_path / "b" / f.relative_to(tmp_path / "a")).read_bytes()


def test_sizes_are_heavy_tailed() -> None:
    sizes = (
        synth(SynthSpec(30, 3, 200, 10, seed=5)).snapshot.partitions.column("size_bytes").to_numpy()
    )
    assert (sizes > 0).all()
    assert np.percentile(sizes, 99) > 10 * np.median(sizes)
