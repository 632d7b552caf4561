"""A reference scorer in DuckDB SQL: every figure of `mrc-plan score`'s JSON report, another way.

    .venv-duckdb/bin/python bench/duckdb_ref.py SNAPSHOT [PLAN ...] [--default-min-isr N] \\
        [--threads N] --out REF.json

`bench_engines` times it next to the Spark job over the same Parquet and plans and checks
that both reports agree figure for figure. It is a benchmark yardstick, not part of the
product: it runs in a venv of its own (`make bench` installs DuckDB there) and imports
nothing of mrc-plan. The definitions are docs/definitions.md's, and at their edges it does
what Spark does (placement/score/metrics.py): a topic without a policy, or missing from the
topics table, never violates, takes the default min ISR and never promotes, and still
counts in the rack-failure outcomes; a broker of unknown rack goes down with every rack.

All the work is SQL over the Parquet files and the plan files: the policies are parsed with
DuckDB's JSON functions, each broker's rack code is looked up in a list variable inside
list lambdas, per-broker loads come from unnesting the replica lists, and the statistics,
the score and the order of the plans are queries too. Python lists files, writes the
per-rack columns out (one set per rack with brokers, as Spark's job does), loops over the
plans and shapes the JSON.

A plan is scored as a difference, as Spark does: the partitions it lists count once as they
were (weight -1) and once as the plan leaves them (+1); a state's sums are the snapshot's
plus its plan's (tables ``sums`` and ``loads``, keyed by ``state``: 0 is the snapshot, n
the n-th plan).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import duckdb

# what each plan entry and each topic's policy are parsed as
ENTRY = '{"topic":"VARCHAR","partition":"INTEGER","replicas":["INTEGER"],"observers":["INTEGER"]}'
CONSTRAINTS = '[{"count":"INTEGER","constraints":{"rack":"VARCHAR"}}]'
POLICY = (
    f'{{"version":"INTEGER","replicas":{CONSTRAINTS},"observers":{CONSTRAINTS},'
    '"observerPromotionPolicy":"VARCHAR"}'
)
# the first line of the layout `assign` writes: then one entry a line
OWN_HEADER = b'{"version":1,"partitions":['
# broker ids below this are looked up in a dense list; beyond, in a map
DENSE_IDS = 1 << 20
OUTCOMES = ("offline", "under_min_isr", "promoted")
STATS = ("min", "max", "mean", "stddev")
MOVEMENT = (
    "partitions_changed",
    "replicas_added",
    "replicas_removed",
    "bytes_to_move",
    "cross_rack_bytes",
    "bytes_unknown_partitions",
)
# the partitions columns read; a snapshot may omit the optional ones (they read as NULL)
COLUMNS = {
    "topic": "VARCHAR",
    "partition": "INTEGER",
    "replicas": "INTEGER[]",
    "observers": "INTEGER[]",
    "size_bytes": "BIGINT",
    "leader": "INTEGER",  # the recorded leader: the sending broker of a move
    "isr": "INTEGER[]",  # the recorded ISR (NULL: the sync replicas)
}


def sql_str(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def parquet_files(root: Path, name: str) -> list[str]:
    """The table's Parquet files as the snapshot reader lists them: ``name.parquet``, or the
    part files under ``name/`` (hidden and `_`-prefixed ones skipped)."""
    single = root / f"{name}.parquet"
    if single.is_file():
        return [str(single)]
    folder = root / name
    files = sorted(
        str(p)
        for p in (folder.rglob("*") if folder.is_dir() else [])
        if p.is_file() and not any(s.startswith((".", "_")) for s in p.relative_to(folder).parts)
    )
    if not files:
        raise SystemExit(f"{root}: no Parquet {name} table (the reference reads Parquet only)")
    return files


class Scorer:
    """One DuckDB connection holding the snapshot's small tables and every state's sums."""

    def __init__(self, snapshot: Path, default_min_isr: int, threads: int) -> None:
        self.con = duckdb.connect(config={"threads": threads})
        self.default_min_isr = default_min_isr
        self.load(snapshot)
        self.racks = [
            (int(c), str(n))
            for c, n in self.sql(
                """
                SELECT c, getvariable('rack_names')[c + 1] AS name
                FROM (SELECT unnest(getvariable('inventory')) AS c) ORDER BY name
                """
            ).fetchall()
        ]

    def sql(self, query: str) -> Any:
        return self.con.execute(query)

    def row(self, query: str) -> dict[str, Any]:
        """The query's one row by column name (empty when it has none)."""
        cur = self.sql(query)
        row = cur.fetchone()
        return {} if row is None else dict(zip([d[0] for d in cur.description], row, strict=True))

    def load(self, root: Path) -> None:
        """Views and small tables: ``parts``, ``brokers``, ``pol`` (per topic: the sorted
        rack codes its policy wants for sync replicas and for observers, NULL without a
        policy; its min ISR; whether it promotes observers), and the variables
        ``rack_names`` (code c is the name at c + 1), ``inventory`` (codes of the racks
        with brokers) and ``rack_of`` (broker id -> code)."""
        files = "[" + ", ".join(map(sql_str, parquet_files(root, "partitions"))) + "]"
        self.sql(f"CREATE VIEW raw AS SELECT * FROM read_parquet({files}, union_by_name=true)")
        have = {r[0] for r in self.sql("DESCRIBE raw").fetchall()}
        cols = ", ".join(
            f'"{c}"' if c in have else f'NULL::{kind} AS "{c}"' for c, kind in COLUMNS.items()
        )
        self.sql(f"CREATE VIEW parts AS SELECT {cols} FROM raw")
        self.sql(
            "CREATE TABLE brokers AS SELECT broker_id, rack FROM read_parquet("
            f"{sql_str(parquet_files(root, 'brokers')[0])})"
        )
        self.sql(
            "CREATE TABLE topics AS SELECT topic, placement, min_isr FROM read_parquet("
            f"{sql_str(parquet_files(root, 'topics')[0])})"
        )
        self.sql(
            f"""
            CREATE TABLE policy_racks AS
            WITH t AS (
                SELECT topic, min_isr, from_json(nullif(placement, ''), '{POLICY}') AS p
                FROM topics
            )
            SELECT
                topic,
                -- Spark takes `min_isr or default`: 0 takes the default too
                coalesce(nullif(min_isr, 0), {self.default_min_isr}) AS min_isr,
                -- a rack once per replica it wants
                CASE WHEN p IS NOT NULL THEN flatten(list_transform(
                    p.replicas, c -> list_transform(range(c.count), i -> c.constraints.rack)))
                END AS sync_racks,
                CASE WHEN p IS NOT NULL THEN flatten(list_transform(
                    coalesce(p.observers, []),
                    c -> list_transform(range(c.count), i -> c.constraints.rack)))
                END AS obs_racks,
                -- v1 never promotes; v2 does, unless leader-is-observer (absent: under-min-isr)
                coalesce(
                    p.version = 2 AND coalesce(p.observerPromotionPolicy, 'under-min-isr')
                        IN ('under-min-isr', 'under-replicated'),
                    false
                ) AS promotes
            FROM t
            """
        )
        self.sql(
            """
            SET VARIABLE rack_names = (
                SELECT coalesce(list(name ORDER BY name), []) FROM (
                    SELECT rack AS name FROM brokers WHERE rack IS NOT NULL
                    UNION SELECT unnest(sync_racks || obs_racks) FROM policy_racks
                )
            )
            """
        )
        code = "list_position(getvariable('rack_names'), {}) - 1"
        self.sql(
            f"""
            SET VARIABLE inventory = (
                SELECT coalesce(list(DISTINCT {code.format("rack")}), [])
                FROM brokers WHERE rack IS NOT NULL
            )
            """
        )
        self.sql(
            f"""
            CREATE TABLE pol AS SELECT
                topic, min_isr, promotes,
                list_sort(list_transform(sync_racks, r -> {code.format("r")})) AS want_sync,
                list_sort(list_transform(obs_racks, r -> {code.format("r")})) AS want_obs
            FROM policy_racks
            """
        )
        placed = f"""
            SELECT broker_id, {code.format("rack")} AS code FROM brokers WHERE rack IS NOT NULL
        """
        top = self.sql("SELECT coalesce(max(broker_id), -1) FROM brokers").fetchone()[0]
        self.dense = top < DENSE_IDS
        if self.dense:
            lookup = f"""
                SELECT coalesce(list(c.code ORDER BY r.i), [])
                FROM range(0, {top + 1}) r(i) LEFT JOIN ({placed}) c ON c.broker_id = r.i
            """
        else:
            lookup = f"SELECT map_from_entries(list((broker_id, code))) FROM ({placed})"
        self.sql(f"SET VARIABLE rack_of = ({lookup})")
        # every state's sums and per-broker loads; 0 is the snapshot, n the n-th plan's
        # difference, whose name and movement figures are in ``movement``
        self.sql("CREATE TABLE states (state INTEGER)")
        self.sql(
            "CREATE TABLE loads (state INTEGER, broker INTEGER, replicas HUGEINT, "
            "leaders HUGEINT, bytes HUGEINT)"
        )
        moves = ", ".join(f"{m} HUGEINT" for m in MOVEMENT)
        self.sql(f"CREATE TABLE movement (state INTEGER, plan VARCHAR, {moves})")

    def rack_code(self, b: str) -> str:
        """SQL: the rack code of broker id ``b`` (NULL: not in the brokers table, or without
        a rack)."""
        return f"getvariable('rack_of')[{b} + 1]" if self.dense else f"getvariable('rack_of')[{b}]"

    def state_sums(self, source: str) -> str:
        """SQL: one row of weighted sums over ``source`` (topic, replicas, observers, isr,
        size_bytes, w): partitions, replicas, violations, and per rack with brokers (code
        k) the partitions its failure leaves offline, under min ISR or promoted
        (``k{k}_offline`` ...). The survivors are the replicas in the ISR (the recorded
        one, else the sync replicas; an observer listed there counts) and the observers
        outside it; a recorded ISR already short of min ISR on a promoting policy promotes
        nobody more (its observers outside it are not caught up)."""
        survivors = ",\n".join(
            f"len(list_filter(ic, c -> c IS NOT NULL AND c <> {k})) AS s{k}, "
            f"CASE WHEN stale THEN 0 "
            f"ELSE len(list_filter(xc, c -> c IS NOT NULL AND c <> {k})) END AS o{k}"
            for k, _ in self.racks
        )
        outcomes = []
        for k, _ in self.racks:
            short = f"(s{k} > 0 AND s{k} < min_isr)"
            promoted = f"({short} AND promotes AND s{k} + o{k} >= min_isr)"
            outcomes += [
                f"sum(w * (s{k} = 0)::INT) AS k{k}_offline",
                f"sum(w * ({short} AND NOT {promoted})::INT) AS k{k}_under_min_isr",
                f"sum(w * {promoted}::INT) AS k{k}_promoted",
            ]
        sync = "s.replicas[1:greatest(len(s.replicas) - len(coalesce(s.observers, [])), 0)]"
        code = self.rack_code("b")
        return f"""
            WITH effective AS (
                SELECT *, coalesce(s.isr, {sync}) AS eff FROM ({source}) s
            ),
            coded AS (
                SELECT
                    s.w, s.replicas,
                    list_transform({sync}, b -> {code}) AS sc,
                    list_transform(coalesce(s.observers, []), b -> {code}) AS oc,
                    -- the racks of the replicas in the ISR, of the observers outside it
                    list_transform(list_filter(s.replicas, b -> list_contains(eff, b)),
                        b -> {code}) AS ic,
                    list_transform(list_filter(coalesce(s.observers, []),
                        b -> NOT list_contains(eff, b)), b -> {code}) AS xc,
                    s.isr IS NOT NULL AS recorded,
                    p.want_sync, p.want_obs,
                    -- a topic the topics table lacks: the default min ISR, no promotion
                    coalesce(p.min_isr, {self.default_min_isr}) AS min_isr,
                    coalesce(p.promotes, false) AS promotes
                FROM effective s LEFT JOIN pol p ON p.topic = s.topic
            ),
            judged AS (
                SELECT
                    w, len(replicas) AS n_replicas, min_isr, promotes,
                    recorded AND promotes AND len(ic) > 0 AND len(ic) < min_isr AS stale,
                    -- no policy (or no topics row): never a violation
                    CASE WHEN want_sync IS NULL THEN 0 ELSE (
                        len(list_distinct(replicas)) <> len(replicas)
                        OR len(list_filter(sc, c -> c IS NULL)) > 0
                        OR len(list_filter(oc, c -> c IS NULL)) > 0
                        OR list_sort(sc) <> want_sync
                        OR list_sort(oc) <> want_obs
                    )::INT END AS violation,
                    {survivors}
                FROM coded
            )
            SELECT
                sum(w) AS partitions,
                sum(w * n_replicas) AS replicas,
                sum(w * violation) AS violations,
                {", ".join(outcomes)}
            FROM judged
        """

    def add_state(self, state: int, source: str) -> None:
        """Sums and per-broker loads of ``source`` (see `state_sums`) as ``state``'s."""
        sums = self.state_sums(source)
        if state == 0:
            self.sql(f"CREATE TABLE sums AS SELECT 0 AS state, * FROM ({sums})")
        else:
            self.sql(f"INSERT INTO sums SELECT {state}, * FROM ({sums})")
        self.sql(f"INSERT INTO states VALUES ({state})")
        self.sql(
            f"""
            INSERT INTO loads
            SELECT {state}, b, sum(w), sum(w * (i = 1)::INT), sum(w * coalesce(size_bytes, 0))
            FROM (
                SELECT w, size_bytes, unnest(replicas) AS b, generate_subscripts(replicas, 1) AS i
                FROM ({source})
            )
            GROUP BY b
            """
        )

    def read_plan(self, path: str) -> None:
        """The plan's entries as table ``entries`` (topic, partition, replicas, observers).

        The layout `assign` writes (a header line, then one entry a line) is read as lines
        parsed with from_json, in parallel, as Spark reads it; any other layout is read
        whole with the JSON functions (one thread)."""
        with open(path, "rb") as fh:
            first = fh.readline().strip()
        if first == OWN_HEADER:
            source = f"""
                SELECT unnest(from_json(rtrim(line, ','), '{ENTRY}'))
                FROM read_csv({sql_str(path)}, columns={{'line': 'VARCHAR'}}, header=false,
                    delim='\\x01', quote='', escape='', auto_detect=false)
                WHERE starts_with(line, '{{"topic"')
            """
        else:
            source = f"""
                SELECT unnest(from_json(j->'$.partitions', '[{ENTRY}]'), recursive := true)
                FROM (SELECT content::JSON AS j FROM read_text({sql_str(path)}))
            """
        self.sql("DROP TABLE IF EXISTS entries")
        self.sql(
            f"""
            CREATE TABLE entries AS
            SELECT topic, "partition", replicas, coalesce(observers, []) AS observers
            FROM ({source})
            """
        )
        twice = self.sql(
            'SELECT topic, "partition" FROM entries GROUP BY ALL HAVING count(*) > 1 LIMIT 1'
        ).fetchone()
        if twice:
            raise SystemExit(f"{path}: partition {twice[1]} of topic {twice[0]} is listed twice")

    def add_plan(self, state: int, plan: str) -> None:
        """The difference ``plan`` makes as ``state``, and its movement figures (table
        ``movement``)."""
        self.read_plan(plan)
        self.sql("DROP TABLE IF EXISTS moved")
        self.sql(
            """
            CREATE TABLE moved AS
            SELECT p.topic, p.size_bytes, coalesce(p.leader, p.replicas[1]) AS sender,
                p.replicas AS old, coalesce(p.observers, []) AS old_obs,
                e.replicas AS new, e.observers AS new_obs, p.isr AS old_isr, p.leader
            FROM parts p JOIN entries e ON p.topic = e.topic AND p."partition" = e."partition"
            """
        )
        found, listed = self.sql(
            "SELECT (SELECT count(*) FROM moved), (SELECT count(*) FROM entries)"
        ).fetchone()
        if found != listed:
            raise SystemExit(f"{plan}: {listed - found} entries are not in the snapshot")
        # the ISR once the reassignment completed (`snapshot apply`): a changed partition
        # keeps the new sync replicas its ISR lists and takes those that were no sync
        # replicas when it has a leader; observers drop out; NULL stays NULL
        new_sync = "new[1:greatest(len(new) - len(new_obs), 0)]"
        old_sync = "old[1:greatest(len(old) - len(old_obs), 0)]"
        after = f"""
            CASE WHEN old_isr IS NULL OR (new = old AND new_obs = old_obs) THEN old_isr
            ELSE list_filter({new_sync}, b -> list_contains(old_isr, b)
                OR (leader IS NOT NULL AND NOT list_contains({old_sync}, b))) END
        """
        self.add_state(
            state,
            f"""
            SELECT topic, old AS replicas, old_obs AS observers, old_isr AS isr, size_bytes,
                -1 AS w
            FROM moved
            UNION ALL
            SELECT topic, new, new_obs, {after}, size_bytes, 1 FROM moved
            """,
        )
        code = self.rack_code
        # docs/definitions.md, movement; ``added`` is Spark's array_except(new, old): distinct
        movement = f"""
            WITH m AS (
                SELECT *,
                    list_filter(list_distinct(new), b -> NOT list_contains(old, b)) AS added,
                    list_filter(list_distinct(old), b -> NOT list_contains(new, b)) AS removed
                FROM moved
            )
            SELECT
                {state}, {sql_str(plan)},
                sum((new <> old OR new_obs <> old_obs)::INT) AS partitions_changed,
                sum(len(added)) AS replicas_added,
                sum(len(removed)) AS replicas_removed,
                sum(coalesce(size_bytes, 0) * len(added)) AS bytes_to_move,
                -- added replicas whose rack is not their sending broker's (the recorded
                -- leader, else the first replica); two unknown racks are one
                sum(coalesce(size_bytes, 0) * len(list_filter(added,
                    b -> {code("b")} IS DISTINCT FROM {code("sender")}))) AS cross_rack_bytes,
                sum((size_bytes IS NULL AND len(added) > 0)::INT) AS bytes_unknown_partitions
            FROM m
        """
        self.sql(f"INSERT INTO movement {movement}")

    def finish(self) -> None:
        """Tables ``totals`` (each state's sums: the snapshot's plus its difference),
        ``per_broker`` (every broker of the brokers table in every state, 0 without
        replicas), ``balance`` (min, max, mean, population stddev per state) and ``scores``
        (a plan's score, docs/definitions.md)."""
        counts = [r[0] for r in self.sql("DESCRIBE sums").fetchall() if r[0] != "state"]
        self.sql(
            f"""
            CREATE TABLE totals AS
            SELECT st.state, {", ".join(f"coalesce(sum(s.{c}), 0)::HUGEINT AS {c}" for c in counts)}
            FROM states st JOIN sums s ON s.state IN (0, st.state)
            GROUP BY st.state
            """
        )
        self.sql(
            """
            CREATE TABLE per_broker AS
            SELECT st.state, b.broker_id AS broker, any_value(b.rack) AS rack,
                coalesce(sum(l.replicas), 0) AS replicas, coalesce(sum(l.leaders), 0) AS leaders,
                coalesce(sum(l.bytes), 0) AS bytes
            FROM states st CROSS JOIN brokers b
            LEFT JOIN loads l ON l.broker = b.broker_id AND l.state IN (0, st.state)
            GROUP BY st.state, b.broker_id
            """
        )
        figures = ("replicas", "leaders", "bytes")
        stats = ", ".join(
            f"min({c})::DOUBLE AS {c}_min, max({c})::DOUBLE AS {c}_max, "
            f"avg({c}) AS {c}_mean, sqrt(avg(({c} - m_{c}) ^ 2)) AS {c}_stddev"
            for c in figures
        )
        means = ", ".join(f"avg({c}) OVER (PARTITION BY state) AS m_{c}" for c in figures)
        # the population stddev in two passes (mean first), as its definition reads
        self.sql(
            f"""
            CREATE TABLE balance AS
            SELECT state, {stats} FROM (SELECT *, {means} FROM per_broker) GROUP BY state
            """
        )
        # offline + under min ISR, summed over every rack's failure
        lost = " + ".join(["0", *(f"t.k{k}_offline + t.k{k}_under_min_isr" for k, _ in self.racks)])
        self.sql(
            f"""
            CREATE TABLE scores AS
            SELECT m.state, round(
                100
                - 50 * t.violations / greatest(1, base.partitions)
                - 20 * m.replicas_added / greatest(1, base.replicas)
                - 20 * CASE WHEN coalesce(b.replicas_mean, 0) <> 0
                    THEN least(1.0, b.replicas_stddev / b.replicas_mean) ELSE 0.0 END
                - 10 * ({lost}) / greatest(1, base.partitions * {max(1, len(self.racks))}),
                3) AS score
            FROM movement m
            JOIN totals t ON t.state = m.state
            LEFT JOIN balance b ON b.state = m.state
            JOIN totals base ON base.state = 0
            """
        )

    def state_report(self, state: int) -> dict[str, Any]:
        """A state's violations, balance, rack failures and brokers, as the report has them."""
        totals = self.row(f"SELECT * FROM totals WHERE state = {state}")
        balance = self.row(f"SELECT * FROM balance WHERE state = {state}")
        brokers = self.sql(
            "SELECT broker, rack, replicas, leaders, bytes FROM per_broker"
            f" WHERE state = {state} ORDER BY broker"
        ).fetchall()
        return {
            "violations": int(totals["violations"]),
            "balance": {
                c: {s: float(balance.get(f"{c}_{s}") or 0) for s in STATS}
                for c in ("replicas", "leaders", "bytes")
            },
            "rack_failure": {
                name: {o: int(totals[f"k{k}_{o}"]) for o in OUTCOMES} for k, name in self.racks
            },
            "brokers": [
                {"broker": b, "rack": r, "replicas": int(n), "leaders": int(ld), "bytes": int(s)}
                for b, r, n, ld, s in brokers
            ],
        }

    def report(self) -> dict[str, Any]:
        snapshot = self.sql(
            """
            SELECT (SELECT count(*) FROM brokers), (SELECT count(*) FROM topics),
                t.partitions, t.replicas,
                (SELECT count(*) FROM parts WHERE size_bytes IS NULL)
            FROM totals t WHERE t.state = 0
            """
        ).fetchone()
        keys = ("brokers", "topics", "partitions", "replicas", "partitions_without_size")
        base = self.state_report(0)
        plans = []
        rows = self.sql(
            f"""
            SELECT m.state, m.plan, s.score, {", ".join(f"m.{c}" for c in MOVEMENT)}
            FROM scores s JOIN movement m USING (state)
            ORDER BY s.score DESC, m.plan
            """
        ).fetchall()
        for state, plan, value, *move in rows:
            after = self.state_report(state)
            plans.append(
                {
                    "plan": plan,
                    **{c: int(v) for c, v in zip(MOVEMENT, move, strict=True)},
                    "violations_before": base["violations"],
                    "violations_after": after["violations"],
                    "balance": after["balance"],
                    "rack_failure": after["rack_failure"],
                    "brokers": after["brokers"],
                    "score": float(value),
                }
            )
        return {
            "snapshot": {k: int(v) for k, v in zip(keys, snapshot, strict=True)},
            "baseline": base,
            "plans": plans,
        }


def score(snapshot: Path, plans: list[str], default_min_isr: int, threads: int) -> dict[str, Any]:
    """The report `mrc-plan score --snapshot SNAPSHOT --plan ...` writes, from DuckDB."""
    s = Scorer(snapshot, default_min_isr, threads)
    s.add_state(0, "SELECT topic, replicas, observers, isr, size_bytes, 1 AS w FROM parts")
    for state, plan in enumerate(plans, 1):
        s.add_plan(state, plan)
    s.finish()
    return s.report()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("snapshot", type=Path)
    ap.add_argument("plans", nargs="*", help="reassignment JSON files")
    ap.add_argument("--default-min-isr", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2, help="DuckDB threads (default 2)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    # named as `mrc-plan score` names them: the path as a Path prints it
    plans = [str(Path(p)) for p in args.plans]
    report = score(args.snapshot, plans, args.default_min_isr, args.threads)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
