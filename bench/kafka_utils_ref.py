"""Reference rebalance and decommission: Yelp kafka-utils 4.1.0's kafka-cluster-manager, offline.

Runs in its own venv (kafka-utils pins old dependencies; keep them out of .venv):

    python3 -m venv /work/main/.venv-kafka-utils
    /work/main/.venv-kafka-utils/bin/pip install kafka-utils==4.1.0

(installs as is on Python 3.11: kafka-python 1.4.7, kazoo 2.11.0, paramiko 2.12.0; no pins.)

    /work/main/.venv-kafka-utils/bin/python bench/kafka_utils_ref.py \\
        --inventory INV.json --current CURRENT.json --out OUT.json \\
        [--balancer partition_count|genetic] [--balancer-args "--num-gens 3000"] \\
        [--decommission 4,5] [--leaders]

What it replicates, without ZooKeeper or Kafka:

    kafka-cluster-manager [--partition-count-balancer|--genetic-balancer] \\
        rebalance --replication-groups --brokers [--leaders] --max-partition-movements <inf>
    kafka-cluster-manager decommission 4 5 --max-partition-movements <inf>
        [then: kafka-cluster-manager rebalance --leaders]

kafka_utils.kafka_cluster_manager.cmds.command.ClusterManagerCmd.run reads brokers and the
assignment from ZooKeeper and builds a ClusterTopology(assignment, brokers, partition_measurer,
rg_parser.get_replication_group); RebalanceCmd.run_command then calls balancer.rebalance() and
diffs ClusterTopology.assignment against the old one; DecommissionCmd.run_command calls
balancer.decommission_brokers(ids) instead. Here the brokers come from INV.json (metadata
{"host", "rack"}; the replication group is the rack), the assignment from CURRENT.json, the
measurer is UniformPartitionMeasurer (the CLI default: weight = size = 1), and the balancer
is PartitionCountBalancer (the CLI default) or GeneticBalancer. A broker the assignment names
but INV.json lacks is inactive, as ClusterTopology makes a broker ZooKeeper does not list: a
dead broker, which `--decommission` empties like any other. Leaders are balanced only with
--leaders: rebalance then balances them too; after a decommission they are balanced by the
`rebalance --leaders` a user runs next, on the same topology. The CLI trims the plan to
--max-partition-movements (default 1) partitions and --max-leader-changes leader-only changes
per run; this writes the whole plan, as if both limits were unbounded: every partition whose
replica list changed, moves and leader-only reorders alike.

"seconds" times balancer construction plus rebalance() or the decommission (time.perf_counter),
after the topology is built; the JSON also has the topology build time and the total.

Caveats: PartitionCountBalancer breaks ties by iterating sets of objects hashed by address, so
the plan (not the move count, so far) varies from run to run. Broker.move_partition appends
the new broker at the end of the replica list, so moving the leader's replica changes the
preferred leader (counted in "preferred_leaders_changed"). GeneticBalancer makes at most one
move per generation (--num-gens, default 100), so it needs num-gens >= the moves required.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from kafka_utils.kafka_cluster_manager.cluster_info.broker import Broker
from kafka_utils.kafka_cluster_manager.cluster_info.cluster_topology import ClusterTopology
from kafka_utils.kafka_cluster_manager.cluster_info.genetic_balancer import GeneticBalancer
from kafka_utils.kafka_cluster_manager.cluster_info.partition_count_balancer import (
    PartitionCountBalancer,
)
from kafka_utils.kafka_cluster_manager.cluster_info.partition_measurer import (
    UniformPartitionMeasurer,
)
from kafka_utils.kafka_cluster_manager.cmds.rebalance import DEFAULT_MAX_LEADER_CHANGES
from kafka_utils.util.validation import assignment_to_plan, validate_plan

BALANCERS = {"partition_count": PartitionCountBalancer, "genetic": GeneticBalancer}
UNBOUNDED = 10**9

Assignment = dict[tuple[str, int], list[int]]


def read_inputs(inventory_path: str, current_path: str) -> tuple[dict[int, Any], Assignment]:
    inventory = json.loads(Path(inventory_path).read_text(encoding="utf-8"))
    brokers = {
        int(b["id"]): {"host": f"broker-{b['id']}", "rack": b.get("rack")}
        for b in inventory["brokers"]
    }
    current = json.loads(Path(current_path).read_text(encoding="utf-8"))
    assignment = {
        (p["topic"], int(p["partition"])): [int(r) for r in p["replicas"]]
        for p in current["partitions"]
    }
    return brokers, assignment


def replication_group(broker: Broker) -> str | None:
    """The rack; brokers missing from the inventory are inactive and have no group."""
    return (broker.metadata or {}).get("rack")


def rebalance_args(balancer_args: list[str], leaders: bool = False) -> argparse.Namespace:
    """The namespace `kafka-cluster-manager rebalance --replication-groups --brokers` builds."""
    return argparse.Namespace(
        replication_groups=True,
        brokers=True,
        leaders=leaders,
        max_partition_movements=UNBOUNDED,
        max_leader_changes=DEFAULT_MAX_LEADER_CHANGES,
        max_movement_size=None,
        auto_max_movement_size=False,
        score_improvement_threshold=None,
        balancer_args=balancer_args,
        measurer_args=[],
    )


def run(
    inventory: str,
    current: str,
    balancer_name: str,
    balancer_args: list[str],
    decommission: list[int] | None = None,
    leaders: bool = False,
) -> dict:
    t_start = time.perf_counter()
    brokers, base = read_inputs(inventory, current)
    args = rebalance_args(balancer_args, leaders and not decommission)
    t_read = time.perf_counter()
    measurer = UniformPartitionMeasurer(None, brokers, base, args)
    topology = ClusterTopology(base, brokers, measurer, replication_group)
    t_topology = time.perf_counter()
    balancer = BALANCERS[balancer_name](topology, args)
    if balancer_name == "genetic":
        # Only to silence "num-gens is less than max-partition-movements": the genetic
        # balancer makes at most one move per generation, and never checks this limit.
        args.max_partition_movements = args.num_gens
    t_init = time.perf_counter()
    if decommission:
        balancer.decommission_brokers(decommission)
        if leaders:
            balancer.rebalance_leaders()
    else:
        balancer.rebalance()
    t_done = time.perf_counter()

    new = topology.assignment
    if not validate_plan(assignment_to_plan(new), assignment_to_plan(base)):
        raise SystemExit("kafka-utils produced an invalid assignment")
    moves = 0
    changed = []
    leader_only = 0
    leaders_changed = 0
    for tp, replicas in new.items():
        old = base[tp]
        if replicas == old:
            continue
        leaders_changed += replicas[0] != old[0]
        added = len(set(replicas) - set(old))
        moves += added
        leader_only += not added
        changed.append({"topic": tp[0], "partition": tp[1], "replicas": replicas})
    rack = {b: (m or {}).get("rack") for b, m in brokers.items()}
    broken = sum(
        1
        for tp, replicas in new.items()
        if Counter(rack.get(b) for b in replicas) != Counter(rack.get(b) for b in base[tp])
    )
    load = Counter(b for replicas in new.values() for b in replicas)
    per_broker = {str(b): load.get(b, 0) for b in sorted(set(brokers) | set(load))}
    per_rack: dict[str, list[int]] = {}
    for b in set(brokers) | set(load):
        count, name = load.get(b, 0), str(rack.get(b))
        lo, hi = per_rack.get(name, [count, count])
        per_rack[name] = [min(lo, count), max(hi, count)]
    t_end = time.perf_counter()
    return {
        "seconds": t_done - t_topology,
        "moves": moves,
        "partitions_changed": len(changed) - leader_only,
        "leader_only_changes": leader_only,
        "preferred_leaders_changed": leaders_changed,
        "plan": {"version": 1, "partitions": changed},
        "balancer": f"kafka-utils {BALANCERS[balancer_name].__name__}"
        + (f" decommission {','.join(map(str, decommission))}" if decommission else ""),
        "balancer_args": balancer_args,
        "per_broker_after": per_broker,
        "per_rack_min_max_after": dict(sorted(per_rack.items())),
        "rack_counts_changed": broken,
        "timing": {
            "read_s": t_read - t_start,
            "topology_s": t_topology - t_read,
            "balancer_init_s": t_init - t_topology,
            "rebalance_s": t_done - t_init,
            "total_s": t_end - t_start,
        },
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inventory", required=True, help='{"brokers": [{"id", "rack"}, ...]}')
    ap.add_argument("--current", required=True, help="reassignment JSON (version 1)")
    ap.add_argument("--out", required=True, help="result JSON")
    ap.add_argument("--balancer", choices=sorted(BALANCERS), default="partition_count")
    ap.add_argument(
        "--balancer-args",
        action="append",
        default=[],
        help='passed to the balancer as kafka-cluster-manager does, e.g. "--num-gens 3000"',
    )
    ap.add_argument(
        "--decommission",
        type=lambda text: [int(x) for x in text.split(",")],
        help="broker ids to empty (decommission), e.g. 4,5, instead of a rebalance",
    )
    ap.add_argument("--leaders", action="store_true", help="balance preferred leaders too")
    ap.add_argument("-v", "--verbose", action="store_true", help="kafka-utils INFO logging")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    result = run(
        args.inventory,
        args.current,
        args.balancer,
        args.balancer_args,
        args.decommission,
        args.leaders,
    )
    # the bound of a rebalance; a decommission's is the replicas on the brokers it empties
    result["lower_bound"] = (
        None if args.decommission else _lower_bound(args.inventory, args.current)
    )
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(
        f"{result['balancer']}: moves {result['moves']} (lower bound {result['lower_bound']}), "
        f"partitions changed {result['partitions_changed']}, "
        f"leader-only changes {result['leader_only_changes']}, "
        f"balancing {result['seconds']:.3f} s, total {result['timing']['total_s']:.3f} s; "
        f"per rack min/max after {result['per_rack_min_max_after']}"
    )
    return 0


def _lower_bound(inventory: str, current: str) -> int | None:
    try:
        from make_rebalance_input import lower_bound
    except ImportError:
        return None
    return lower_bound(
        json.loads(Path(inventory).read_text(encoding="utf-8")),
        json.loads(Path(current).read_text(encoding="utf-8")),
    )


if __name__ == "__main__":
    sys.exit(main())
