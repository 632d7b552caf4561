#!/usr/bin/env bash
# The tour behind `make demo`: validate the bundled good and broken placement files, then
# plan a fresh layout, a drain and a rebalance, and simulate a rack failure after the drain.
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

if [[ $good -ne 0 || $broken -ne 1 || $sim -ne 1 || $audit -ne 1 || $risk -ne 1 || $page -ne 1 ]]; then
    echo >&2
    echo "demo: FAILED: expected exit codes 0, 1, 1, 1, 1 and 1, got $good, $broken, $sim, $audit, $risk and $page" >&2
    exit 1
fi
printf '\nNext: mrc-plan rules (all rules), mrc-plan assign --help, mrc-plan simulate --help, README.md.\n'
