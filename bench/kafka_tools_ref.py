"""Reference planner: LinkedIn kafka-tools 0.1.9's kafka-assigner, run offline (bench_quality).

Runs in its own venv (it pulls kazoo, JPype1 and pex; keep them out of .venv):

    python3 -m venv .venv-kafka-tools
    .venv-kafka-tools/bin/pip install kafka-tools==0.1.9   # builds from the sdist

    .venv-kafka-tools/bin/python bench/kafka_tools_ref.py --inventory INV.json \\
        --current CURRENT.json --out OUT.json (--balance count,rackaware | --remove 4,5)

What it replicates, without ZooKeeper or Kafka: `kafka-assigner -z ZK balance -t count
rackaware` (or `remove -b 4 5`). kafka.tools.assigner.__main__.main builds a Cluster from
ZooKeeper (brokers with their rack, topics with their replica lists), clones it, runs the
action's process_cluster() on the clone and diffs the two. Here the Cluster is built the
same way (Broker(host, id) with .rack, Topic/Partition.add_replica in list order) from the
inventory and a reassignment JSON; every partition has size 1 (the count module sorts by
size; the sizers need JMX or SSH on the brokers). The plan is every partition whose replica
list changed. "seconds" times process_cluster() alone.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from kafka.tools.assigner.actions.balance import ActionBalance
from kafka.tools.assigner.actions.remove import ActionRemove
from kafka.tools.models.broker import Broker
from kafka.tools.models.cluster import Cluster
from kafka.tools.models.topic import Topic


def build(inventory: str, current: str) -> Cluster:
    cluster = Cluster()
    for b in json.loads(Path(inventory).read_text(encoding="utf-8"))["brokers"]:
        broker = Broker(f"broker-{b['id']}", id=int(b["id"]))
        broker.rack = b.get("rack")
        cluster.add_broker(broker)
    by_topic: dict[str, dict[int, list[int]]] = {}
    for p in json.loads(Path(current).read_text(encoding="utf-8"))["partitions"]:
        by_topic.setdefault(p["topic"], {})[int(p["partition"])] = [int(r) for r in p["replicas"]]
    for name, parts in sorted(by_topic.items()):
        topic = Topic(name, max(parts) + 1)
        cluster.add_topic(topic)  # first: set_size reads the cluster's retention
        for num, replicas in parts.items():
            partition = topic.partitions[num]
            partition.set_size(1)
            for i, r in enumerate(replicas):
                if r not in cluster.brokers:  # dead broker, as add_topic_with_replicas does
                    cluster.add_broker(Broker(None, id=r))
                partition.add_replica(cluster.brokers[r], i)
    return cluster


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inventory", required=True)
    ap.add_argument("--current", required=True)
    ap.add_argument("--out", required=True)
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--balance", help="balance module types, comma separated")
    what.add_argument("--remove", help="broker ids to remove, comma separated")
    args = ap.parse_args(argv)
    cluster = build(args.inventory, args.current)
    before = {(p.topic.name, p.num): [b.id for b in p.replicas] for p in cluster.partitions([])}
    new = cluster.clone()
    if args.balance:
        ns = argparse.Namespace(types=args.balance.split(","), exclude_topics=[])
        action = ActionBalance(ns, new)
    else:
        ids = [int(x) for x in args.remove.split(",")]
        ns = argparse.Namespace(brokers=ids, to_brokers=[], exclude_topics=[])
        action = ActionRemove(ns, new)
    started = time.perf_counter()
    action.process_cluster()
    seconds = time.perf_counter() - started
    rows = []
    for p in action.cluster.partitions([]):
        replicas = [b.id for b in p.replicas]
        if replicas != before[(p.topic.name, p.num)]:
            rows.append({"topic": p.topic.name, "partition": p.num, "replicas": replicas})
    out = {"seconds": seconds, "plan": {"version": 1, "partitions": rows}}
    Path(args.out).write_text(json.dumps(out) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
