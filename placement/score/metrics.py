"""Scoring transforms (docs/definitions.md): pure ``DataFrame -> DataFrame`` functions and
column expressions (the score's as SQL text, simulate's as Columns); no action, no I/O
(those are in `run.py`).

Racks are small integers (`RackCodes`). Per partition, the racks of its sync replicas, of
its observers, of its sync replicas outside its ISR and of its observers in it are counted
into a `Packing`: a few bits per rack, packed into longs, built by one `aggregate` over each
list with a literal broker -> rack-code array shipped with the plan (no join). Those words,
the topic's policy class (`policy_classes`: the distinct policies, min ISRs and promotion
rules, numbered on the driver), a flag for a broker listed twice, one for a recorded ISR
and what a plan moves are the partition's `Key`. `summarise` counts the partitions
per key and the replicas, leaders and bytes per broker in one group-by; the driver then
judges each distinct key once (`Key.totals`: does it meet its policy, what does each
rack's failure leave), so Spark's code holds no rule of the policy or of a failure.

Every row has a weight ``w`` and a ``plan`` (-1: none). The snapshot as it stands is
scored with ``w = 1``. A plan is scored as a *difference*: `with_plans` gives each
partition it lists twice more, as it was (``w = -1``) and as the plan leaves it
(``w = 1``), so the state after the plan is the baseline plus that difference; the
partitions are read once for the snapshot and every plan, and the work per plan is
proportional to the plan, not to the cluster.

Measured on 5M partitions with a 500k-entry plan, local[2]: an array lookup by broker id is
~3.5x faster than a literal map (Spark searches map literals linearly); scoring the states
before and after a plan as two column sets of one row made the generated code too large
for whole-stage codegen (15x slower), hence two rows. Summing a dozen per-partition
columns in the group-by, and deciding violations and failure outcomes in Spark, made one
generated method of 137 kB of machine code that the JIT compiled about two dozen times:
with the key, the job's JVM CPU went from 87 s to 36 s, the totals unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from placement.model.policy import PlacementPolicy

# pyspark is imported inside the functions (tests/test_architecture.py says why)
DataFrame = Any
Column = Any

# broker ids up to this are looked up in a dense literal array; beyond, a literal map
DENSE_IDS = 1 << 16


def int_array(values: Sequence[int]) -> Column:
    """A literal ``array<int>`` of ``values`` (at least one), made by one call into the
    JVM: `F.lit` of a list or numpy array makes two calls per element (0.2 s for 300
    brokers, 29 s for 65,536 ids). The split of one string is constant, so Spark's
    optimiser folds it into a literal before the job runs."""
    from pyspark.sql import functions as F  # noqa: N812

    return F.split(F.lit(",".join(map(str, values))), ",").cast("array<int>")


def int_array_sql(values: Sequence[int]) -> str:
    """`int_array` as SQL text: one string literal, however many values."""
    return f"CAST(split('{','.join(map(str, values))}', ',') AS ARRAY<INT>)"


# the scoring query (`with_plans`, `with_histograms`, `with_state_key`, `summarise`) is SQL
# text: about 200 calls into the JVM where building it from Column objects took 4,000
# (most of the 1.5 s of building it is Spark analysing it, which text does not change)
EMPTY_IDS = "CAST(array() AS ARRAY<INT>)"
OBSERVERS = f"coalesce(observers, {EMPTY_IDS})"
SYNC_REPLICAS = f"slice(replicas, 1, greatest(size(replicas) - size({OBSERVERS}), 0))"


def flag_sql(cond: str) -> str:
    return f"CASE WHEN {cond} THEN 1 ELSE 0 END"


@dataclass(frozen=True)
class RackCodes:
    """Racks as small integers: ``names[c]`` is rack ``c``; ``of[b]`` the code of broker b's
    rack (brokers without a rack are absent); ``inventory``: codes of racks with brokers."""

    names: tuple[str, ...]
    of: Mapping[int, int]
    inventory: tuple[int, ...]

    @classmethod
    def build(cls, brokers: Mapping[int, str | None], policy_racks: Iterable[str]) -> RackCodes:
        placed = {r for r in brokers.values() if r is not None}
        names = tuple(sorted(placed | set(policy_racks)))
        code = {n: i for i, n in enumerate(names)}
        of = {b: code[r] for b, r in brokers.items() if r is not None}
        return cls(names, of, tuple(code[n] for n in sorted(placed)))

    def _lookup(self) -> tuple[list[int] | None, Sequence[int], Sequence[int]]:
        """How a broker's rack code is found: an array by broker id (-1 where no rack is
        known; ids beyond it read null) when every id is small and non-negative, else a
        map of the sorted ids to their codes. (array or None, map keys, map values)"""
        if min(self.of) >= 0 and max(self.of) < DENSE_IDS:
            codes = [-1] * (max(self.of) + 1)
            for b, c in self.of.items():
                codes[b] = c
            return codes, (), ()
        ids, values = zip(*sorted(self.of.items()), strict=True)
        return None, ids, values

    def code(self) -> Any:
        """A function broker-id column -> rack-code column (null: no known rack)."""
        from pyspark.sql import functions as F  # noqa: N812

        if not self.of:
            return lambda b: F.lit(None).cast("int")
        codes, ids, values = self._lookup()
        if codes is not None:
            dense = int_array(codes)
            return lambda b: F.nullif(F.get(dense, b), F.lit(-1))
        sparse = F.map_from_arrays(int_array(ids), int_array(values))
        return lambda b: F.element_at(sparse, b)

    @property
    def unknown(self) -> int:
        """The slot of a `Packing` that counts brokers of no known rack."""
        return len(self.names)

    def slot(self) -> Any:
        """A function broker-id column -> its rack code, or `unknown` (never null)."""
        from pyspark.sql import functions as F  # noqa: N812

        code = self.code()
        return lambda b: F.coalesce(code(b), F.lit(self.unknown))

    def code_sql(self) -> Callable[[str], str]:
        """`code` as SQL text: broker-id expression -> rack-code expression."""
        if not self.of:
            return lambda b: "CAST(NULL AS INT)"
        codes, ids, values = self._lookup()
        if codes is not None:
            dense = int_array_sql(codes)
            return lambda b: f"nullif(get({dense}, {b}), -1)"
        sparse = f"map_from_arrays({int_array_sql(ids)}, {int_array_sql(values)})"
        return lambda b: f"element_at({sparse}, {b})"

    def slot_sql(self) -> Callable[[str], str]:
        """`slot` as SQL text."""
        code = self.code_sql()
        return lambda b: f"coalesce({code(b)}, {self.unknown})"


@dataclass(frozen=True)
class Packing:
    """How many brokers of a list sit in each rack, as longs: ``bits`` per rack code, and a
    last slot for brokers of no known rack. ``bits`` holds the longest list of the input
    (`for_lists`), so a count never spills into its neighbour; the racks fill as many
    longs as they need (4 racks and lists up to 1,023 brokers: one)."""

    bits: int
    slots: int

    @classmethod
    def for_lists(cls, racks: RackCodes, longest: int) -> Packing:
        """Wide enough for lists of up to ``longest`` brokers over ``racks``."""
        return cls(max(1, longest.bit_length()), racks.unknown + 1)

    @property
    def per_word(self) -> int:
        return 63 // self.bits  # the sign bit stays clear: a packed count is never negative

    @property
    def words(self) -> int:
        return -(-self.slots // self.per_word)

    @property
    def mask(self) -> int:
        return (1 << self.bits) - 1

    def pack(self, counts: Mapping[int, int]) -> list[int]:
        """``counts`` (slot -> how many) packed; a count too large for ``bits`` cannot be
        met by any list of the input: -1 in every word, which no packed list equals."""
        if any(n > self.mask for n in counts.values()):
            return [-1] * self.words
        words = [0] * self.words
        for slot, n in counts.items():
            words[slot // self.per_word] += n << (self.bits * (slot % self.per_word))
        return words

    def histogram(self, brokers: str, slot: Callable[[str], str]) -> list[str]:
        """The words of the brokers' racks, as SQL text (``brokers``: an array expression;
        ``slot``: broker expression -> slot expression), one `aggregate` per word."""
        words = []
        for w in range(self.words):
            s, first = slot("b"), w * self.per_word
            add = f"shiftleft(1L, ({s} - {first}) * {self.bits})"
            if self.words > 1:
                inside = f"{s} >= {first} AND {s} < {first + self.per_word}"
                add = f"CASE WHEN {inside} THEN {add} ELSE 0L END"
            words.append(f"aggregate({brokers}, 0L, (acc, b) -> acc + {add})")
        return words

    def counts(self, words: Sequence[int]) -> list[int]:
        """How many brokers of packed ``words`` are in each slot (on the driver)."""
        return [
            (words[slot // self.per_word] >> (self.bits * (slot % self.per_word))) & self.mask
            for slot in range(self.slots)
        ]


def _words(prefix: str, packing: Packing) -> list[str]:
    return [f"{prefix}{w}" for w in range(packing.words)]


PolicyRow = tuple[str, list[int] | None, list[int] | None, int, bool]


@dataclass(frozen=True)
class PolicyClass:
    """What scoring needs of a topic's policy: its sync replicas and its observers per
    rack, packed (None: the topic has no policy), its min ISR and whether it promotes
    observers. Topics alike share a class; a partition's key holds its class's number."""

    want_sync: tuple[int, ...] | None
    want_obs: tuple[int, ...] | None
    min_isr: int
    promotes: bool


def policy_rows(
    topics: Iterable[tuple[str, PlacementPolicy | None, int | None]],
    default_min_isr: int,
    codes: Mapping[str, int],
    packing: Packing,
) -> list[PolicyRow]:
    """(topic, its sync replicas per rack and its observers per rack, packed, min ISR,
    promotes observers); the packed words are None for a topic without a policy."""
    rows: list[PolicyRow] = []
    for topic, policy, min_isr in topics:
        sync = obs = None
        promotes = False
        if policy is not None:
            per = policy.per_rack()
            sync = packing.pack({codes[r]: s for r, (s, _) in per.items() if s})
            obs = packing.pack({codes[r]: o for r, (_, o) in per.items() if o})
            promotes = policy.promotes_observers
        rows.append((topic, sync, obs, min_isr or default_min_isr, promotes))
    return rows


def policy_classes(
    rows: Sequence[PolicyRow], default_min_isr: int
) -> tuple[list[int], tuple[PolicyClass, ...]]:
    """Each row's class number, and the classes; the last is that of a topic the topics
    table lacks (no policy, the default min ISR, no promotion)."""
    number: dict[PolicyClass, int] = {}

    def of(c: PolicyClass) -> int:
        return number.setdefault(c, len(number))

    def packed(words: list[int] | None) -> tuple[int, ...] | None:
        return None if words is None else tuple(words)

    ids = [of(PolicyClass(packed(r[1]), packed(r[2]), r[3], r[4])) for r in rows]
    missing = PolicyClass(None, None, default_min_isr, False)
    classes = list(number)
    classes.append(missing)  # last, even when a listed topic has the same class
    return ids, tuple(classes)


def policy_table(rows: Sequence[PolicyRow], ids: Sequence[int]) -> Any:
    """`policy_rows` as an Arrow table (topic, ``cls``: its class number from
    `policy_classes`, ``min_isr``, ``promotes``): Spark takes it in one transfer (a list
    of tuples goes row by row through pickling: 2.5 s for 10,000 topics)."""
    import pyarrow as pa

    columns = [[r[0] for r in rows], list(ids), [r[3] for r in rows], [r[4] for r in rows]]
    schema = pa.schema(
        [
            pa.field("topic", pa.string(), nullable=False),
            pa.field("cls", pa.int32(), nullable=False),
            pa.field("min_isr", pa.int32(), nullable=False),
            pa.field("promotes", pa.bool_(), nullable=False),
        ]
    )
    return pa.table(columns, schema=schema)


def with_policy(policies: DataFrame, default_min_isr: int, missing: int = -1) -> Any:
    """Attach each partition's policy (a broadcast join: topics are few); a topic the
    topics table lacks gets the default min ISR and no promotion, like one without a
    policy, and the class number ``missing``."""
    from pyspark.sql import functions as F  # noqa: N812

    def transform(parts: DataFrame) -> DataFrame:
        joined = parts.join(F.broadcast(policies), "topic", "left")
        return joined.withColumns(
            {
                "cls": F.coalesce("cls", F.lit(missing)),
                "min_isr": F.coalesce("min_isr", F.lit(default_min_isr)),
                "promotes": F.coalesce("promotes", F.lit(False)),
            }
        )

    return transform


def isr_after_sql(new: str, new_obs: str) -> str:
    """SQL: the ISR once a reassignment to ``new`` replicas, ``new_obs`` observers (never
    null) completed, over the columns ``replicas``, ``observers``, ``isr`` and ``leader`` of
    the partition as it is: `snapshot apply`'s rule (`placement.snapshot.apply.after`). An
    entry that changes nothing, or a null ISR, leaves the ISR as it is; else the new sync
    replicas that were in the ISR keep their membership and those that were not sync
    replicas before are in it when the partition has a leader (nobody to copy from
    otherwise); observers drop out. `applied` and `with_plans` both use it."""
    changed = f"({new} != replicas OR {new_obs} != {OBSERVERS})"
    new_sync = f"slice({new}, 1, greatest(size({new}) - size({new_obs}), 0))"
    kept = (
        f"filter({new_sync}, y -> array_contains(isr, y) OR "
        f"(leader IS NOT NULL AND NOT array_contains({SYNC_REPLICAS}, y)))"
    )
    # a full ISR with a leader keeps every new sync replica: no lambda for the common case
    return (
        f"CASE WHEN isr IS NULL OR NOT {changed} THEN isr "
        f"WHEN leader IS NOT NULL AND isr = {SYNC_REPLICAS} THEN {new_sync} "
        f"ELSE {kept} END"
    )


# the ISR a row is judged by: the recorded one, else (null) the sync replicas
EFFECTIVE_ISR = f"coalesce(isr, {SYNC_REPLICAS})"
# the ISR is the sync replicas: none of them lags, and only an observer listed among the
# sync replicas too (a broker listed twice) can be in it
FULL_ISR = f"(isr IS NULL OR isr = {SYNC_REPLICAS})"


def with_histograms(racks: RackCodes, packing: Packing) -> Any:
    """Add ``sync_hist0``... and ``obs_hist0``...: the racks of the sync replicas (the first
    ``replicas - observers`` of ``replicas``) and of the observers, packed by ``packing``;
    and, against the row's ISR (``isr``; null: the sync replicas), ``lag_hist0``...: the
    racks of the sync replicas outside it, and ``prom_hist0``...: of the observers in it
    (promoted). The ISR's racks are then sync - lag + prom, the observers' outside it
    obs - prom (`Key.totals`); both are 0 where the ISR is the sync replicas, the common
    case, which skips the lambdas."""
    slot = racks.slot_sql()

    def histogram(brokers: str) -> list[str]:
        return packing.histogram(brokers, slot)

    def transform(parts: DataFrame) -> DataFrame:
        sync, obs = histogram(SYNC_REPLICAS), histogram(OBSERVERS)
        lagging = f"filter({SYNC_REPLICAS}, y -> NOT array_contains({EFFECTIVE_ISR}, y))"
        promoted = f"filter({OBSERVERS}, y -> array_contains({EFFECTIVE_ISR}, y))"
        none = (
            f"size({OBSERVERS}) = 0 OR ({FULL_ISR} AND NOT "
            f"arrays_overlap({SYNC_REPLICAS}, {OBSERVERS}))"
        )
        lag = [f"CASE WHEN {FULL_ISR} THEN 0L ELSE {e} END" for e in histogram(lagging)]
        prom = [f"CASE WHEN {none} THEN 0L ELSE {e} END" for e in histogram(promoted)]
        names = [
            *_words("sync_hist", packing),
            *_words("obs_hist", packing),
            *_words("lag_hist", packing),
            *_words("prom_hist", packing),
        ]
        named = zip([*sync, *obs, *lag, *prom], names, strict=True)
        return parts.selectExpr("*", *(f"{e} AS {n}" for e, n in named))

    return transform


def _flag(cond: Column) -> Column:
    from pyspark.sql import functions as F  # noqa: N812

    return F.when(cond, 1).otherwise(0)


def failure_flags(s: Column, o: Column) -> dict[str, Column]:
    """The outcome of a failure (docs/definitions.md, rack-failure outcomes), from ``s``
    surviving sync replicas and ``o`` surviving observers, with the ``min_isr`` and
    ``promotes`` columns: a boolean column each for ``offline``, ``under_min_isr`` and
    ``promoted`` (available: none of them). The same rules as
    `placement.simulate.failure.classify`; a test holds the two together. Every
    partition counts, with a policy or not (`with_policy` gives one without a policy the
    default min ISR and no promotion): `score` and `simulate` share this definition."""
    from pyspark.sql import functions as F  # noqa: N812

    m = F.col("min_isr")
    short = (s > 0) & (s < m)
    promoted = short & F.col("promotes") & (s + o >= m)
    return {"offline": s == 0, "under_min_isr": short & ~promoted, "promoted": promoted}


def survives_rack_loss(code: int) -> Any:
    """Rack code column -> does the replica survive the loss of rack ``code``: only when
    its broker's rack is known and is another one. A broker of unknown rack (not in the
    inventory, or listed without a rack) may sit in the failed rack: it counts as lost
    (`placement.simulate.failure.Failure.down` says the same in-process)."""
    from pyspark.sql import functions as F  # noqa: N812

    # a closure, not a default argument: Spark reads a second parameter as the index
    return lambda c: c.isNotNull() & (c != F.lit(code))


def sync_replicas() -> Column:
    """The first ``replicas - observers`` of ``replicas``."""
    from pyspark.sql import functions as F  # noqa: N812

    observers = F.coalesce("observers", F.array().cast("array<int>"))
    return F.slice("replicas", 1, F.greatest(F.size("replicas") - F.size(observers), F.lit(0)))


# what a plan changes in a partition, small counts each: `with_plans` adds them to every row
# (0 where no plan applies); the byte figures are sizes times the counts (`Key.totals`)
MOVES = (
    "partitions_changed",
    "replicas_added",
    "replicas_removed",
    "replicas_across_racks",  # added replicas in another rack than the sending broker's
    "bytes_unknown_partitions",
    "in_snapshot",
)

# the racks `with_histograms` packs: of the sync replicas, the observers, the sync replicas
# outside the ISR (lagging) and the observers in it (promoted)
HISTOGRAMS = ("sync", "obs", "lag", "prom")

MOVEMENT = (
    "partitions_changed",
    "replicas_added",
    "replicas_removed",
    "bytes_to_move",
    "cross_rack_bytes",
    "bytes_unknown_partitions",
)


@dataclass(frozen=True)
class Key:
    """What a state row is judged by, as the group-by key of its header row (`summarise`):
    its racks as counted by `with_histograms` (the packed words as they are), and a few
    bit fields packed into longs: its policy class (`policy_classes`), whether a broker is
    listed twice, its replica count and what the plan changes in it (`MOVES`).

    Spark only counts and packs; the partitions that share a key are counted together, and
    the driver judges each key once (`totals`: the policy, every rack's failure). Summing
    a dozen figures per row was most of the job, and their expressions made one generated
    method of 137 kB of machine code that the JIT compiled two dozen times.

    ``fields``: (name, word, shift, width); a field never straddles two words and the sign
    bit stays clear. Counts of a list take ``packing.bits`` (it holds the longest list)."""

    fields: tuple[tuple[str, int, int, int], ...]
    words: int
    packing: Packing

    @classmethod
    def of(cls, widths: Sequence[tuple[str, int]], packing: Packing) -> Key:
        placed: list[tuple[str, int, int, int]] = []
        word = used = 0
        for name, width in widths:
            if used + width > 63:
                word, used = word + 1, 0
            placed.append((name, word, used, width))
            used += width
        return cls(tuple(placed), word + 1, packing)

    @classmethod
    def for_states(cls, packing: Packing, classes: int) -> Key:
        """The key of a state row, for ``classes`` policy classes."""
        count = packing.bits
        widths = [("class", max(1, (classes - 1).bit_length())), ("duplicates", 1)]
        widths += [("n_replicas", count)]
        flags = {"partitions_changed", "bytes_unknown_partitions", "in_snapshot"}
        widths += [(m, 1 if m in flags else count) for m in MOVES]
        widths += [("recorded", 1)]  # the ISR is recorded (not null)
        # the histograms' words as they are, each as wide as the slots it holds (4 racks and
        # lists of up to 7 brokers: 15 bits each)
        for w in range(packing.words):
            used = count * min(packing.per_word, packing.slots - w * packing.per_word)
            widths += [(f"{h}_hist{w}", used) for h in HISTOGRAMS]
        return cls.of(widths, packing)

    @property
    def names(self) -> list[str]:
        """The key's columns: the words its fields are packed into."""
        return [f"state_key{w}" for w in range(self.words)]

    def columns(self, values: Mapping[str, str]) -> list[str]:
        """The packed fields' words as SQL text, from an expression per field (each within
        its width)."""
        words: list[list[str]] = [[] for _ in range(self.words)]
        for name, word, shift, _ in self.fields:
            value = f"CAST({values[name]} AS BIGINT)"
            words[word].append(f"shiftleft({value}, {shift})" if shift else value)
        return [" | ".join(w) for w in words]

    def decode(self, words: Sequence[int]) -> dict[str, int]:
        return {n: (words[w] >> at) & ((1 << width) - 1) for n, w, at, width in self.fields}

    def totals(
        self,
        racks: RackCodes,
        classes: Sequence[PolicyClass],
        groups: Iterable[tuple[Sequence[int], int, int]],
    ) -> dict[str, int]:
        """A state's sums from its header groups, each (the key's values, partitions,
        bytes): ``partitions``, `state_count_names`, `MOVEMENT` and ``in_snapshot``. A key
        breaks its policy when a broker is listed twice or its racks' counts differ from
        the policy's. A rack's failure leaves it what `placement.simulate.failure.judge`
        says, as `with_failure` counts it: ``s``, the replicas in the row's ISR, and ``o``,
        the observers outside it, on known racks other than that one
        (`survives_rack_loss`); a recorded ISR already short of min ISR on a promoting
        policy promotes nobody more (no observer outside it is caught up)."""
        from placement.simulate.failure import Outcome, classify

        out = dict.fromkeys(["partitions", *state_count_names(racks), *MOVEMENT, "in_snapshot"], 0)
        p, w = self.packing, self.packing.words
        for values, n, size in groups:
            f = self.decode(values)
            sync = tuple(f[f"sync_hist{i}"] for i in range(w))
            obs = tuple(f[f"obs_hist{i}"] for i in range(w))
            lag = p.counts([f[f"lag_hist{i}"] for i in range(w)])
            prom = p.counts([f[f"prom_hist{i}"] for i in range(w)])
            policy = classes[f["class"]]
            out["partitions"] += n
            out["n_replicas"] += n * f["n_replicas"]
            if policy.want_sync is not None:
                broken = f["duplicates"] or sync != policy.want_sync or obs != policy.want_obs
                out["violations"] += n if broken else 0
            for name in ("partitions_changed", "replicas_added", "replicas_removed"):
                out[name] += n * f[name]
            out["bytes_unknown_partitions"] += n * f["bytes_unknown_partitions"]
            out["in_snapshot"] += n * f["in_snapshot"]
            out["bytes_to_move"] += size * f["replicas_added"]
            out["cross_rack_bytes"] += size * f["replicas_across_racks"]
            # per slot: the replicas in the ISR, the observers outside it
            s_in = [s - g + q for s, g, q in zip(p.counts(sync), lag, prom, strict=True)]
            o_in = [o - q for o, q in zip(p.counts(obs), prom, strict=True)]
            s0 = sum(s_in)  # with no broker down (brokers of unknown rack included)
            s_known, o_known = s0 - s_in[racks.unknown], sum(o_in) - o_in[racks.unknown]
            stale = f["recorded"] and policy.promotes and 0 < s0 < policy.min_isr
            for code in racks.inventory:
                o = 0 if stale else o_known - o_in[code]
                outcome = classify(s_known - s_in[code], o, policy.min_isr, policy.promotes)
                if outcome is not Outcome.AVAILABLE:
                    out[f"{racks.names[code]}\x00{outcome.value}"] += n
        return out


OUTCOMES = ("offline", "under_min_isr", "promoted")  # a rack failure's, besides available


def state_count_names(racks: RackCodes) -> list[str]:
    """A state's per-partition sums besides the movement: ``n_replicas``, ``violations``
    and, per rack R with brokers, ``R\x00offline``, ``R\x00under_min_isr``,
    ``R\x00promoted``."""
    names = ["n_replicas", "violations"]
    for code in racks.inventory:
        names += [f"{racks.names[code]}\x00{outcome}" for outcome in OUTCOMES]
    return names


def with_state_key(key: Key) -> Any:
    """After `with_policy`, `with_histograms` and `with_plans`: the rows as `summarise`
    reads them, their figures replaced by their `Key` columns."""
    histograms = [w for h in HISTOGRAMS for w in _words(f"{h}_hist", key.packing)]
    values = {
        "class": "cls",
        "duplicates": flag_sql("size(array_distinct(replicas)) != size(replicas)"),
        "n_replicas": "size(replicas)",
        "recorded": flag_sql("isr IS NOT NULL"),
        **{m: m for m in MOVES},
        **{h: h for h in histograms},
    }
    words = [f"{e} AS {n}" for e, n in zip(key.columns(values), key.names, strict=True)]

    def transform(parts: DataFrame) -> DataFrame:
        return parts.selectExpr("plan", "replicas", "w", "size_bytes", *words)

    return transform


def summarise(parts: DataFrame, key: Key) -> DataFrame:
    """One pass, one shuffle: per ``plan`` (-1: the snapshot as it stands), the weighted
    count (``n``) and bytes of the rows of each (broker, key). Each row explodes into a
    header entry (null broker, the row's `Key` columns) and one entry per replica (its
    broker, and a first key column of 1 for the preferred leader, else 0, the others 0);
    the sizes are weighted by ``w`` as the counts are. Per broker, the replicas are its
    ``n``, the leaders its ``n`` of first column 1, the bytes its bytes; the headers'
    groups are judged by `Key.totals`."""
    from pyspark.sql import functions as F  # noqa: N812

    # position 0 the header, 1 the preferred leader: codegen'd, no lambda per replica
    size = "coalesce(size_bytes, 0L)"
    exploded = parts.selectExpr(
        "plan",
        "posexplode(concat(array(CAST(NULL AS INT)), replicas)) AS (entry, broker)",
        "w AS n",
        f"CASE WHEN w < 0 THEN -{size} ELSE {size} END AS bytes",
        *key.names,
    )
    first = "CASE WHEN entry = 1 THEN 1L ELSE 0L END"
    columns = [
        f"CASE WHEN entry = 0 THEN {name} ELSE {first if i == 0 else '0L'} END AS {name}"
        for i, name in enumerate(key.names)
    ]
    rows = exploded.selectExpr("plan", "broker", *columns, "n", "bytes")
    sums = (F.expr("sum(n) AS n"), F.expr("sum(bytes) AS bytes"))
    return rows.groupBy("plan", "broker", *key.names).agg(*sums)


def plan_changes(plans: Sequence[DataFrame]) -> DataFrame:
    """Every plan's entries as one small table: a row per partition some plan lists, with
    ``changes``, an array of (``plan``: its index in ``plans``, ``new_replicas``,
    ``new_observers``, ``listed``: 1). A plan lists a partition at most once (the strict
    reader refuses one listed twice, as Kafka does), so one plan needs no grouping."""
    from pyspark.sql import functions as F  # noqa: N812

    per_plan = [
        plan.selectExpr(
            "topic",
            "`partition`",
            f"named_struct('plan', {i}, 'new_replicas', replicas, 'new_observers', "
            f"{OBSERVERS}, 'listed', 1) AS change",
        )
        for i, plan in enumerate(plans)
    ]
    union = per_plan[0]
    for more in per_plan[1:]:
        union = union.unionByName(more)
    if len(plans) == 1:
        return union.selectExpr("topic", "`partition`", "array(change) AS changes")
    return union.groupBy("topic", "partition").agg(F.expr("collect_list(change) AS changes"))


def with_plans(plans: Sequence[DataFrame], racks: RackCodes) -> Any:
    """Partitions -> the rows every state is scored from, in one pass over the partitions:
    each partition as it stands (``plan = -1``, ``w = 1``) and, for each plan listing it,
    twice more: as it is (``plan = i``, ``w = -1``) and as plan ``i`` leaves it (``w = 1``,
    with what it moves, as the counts `MOVES` (docs/definitions.md): ``partitions_changed``
    0/1, ``replicas_added``, ``replicas_removed``, ``replicas_across_racks`` (the added
    replicas whose rack is not their sending broker's: the recorded ``leader``, else the
    first replica, as `placement.plan.batches.sender`; two unknown racks are one, as in
    `placement.plan.summary.crosses_racks`; times the size, the cross-rack bytes),
    ``bytes_unknown_partitions``: 1 where the partition gains replicas and its size is
    unknown (the byte counts leave it out), and ``in_snapshot``: how many
    of the plan's entries found the partition; 0 each in the other rows). Each row carries
    its ``isr``: the recorded one, and after a plan the one `isr_after_sql` gives (the
    rule of `applied` and `snapshot apply`). Summed per plan,
    the rows of plan ``i`` are the difference it makes, so the state after it is the
    snapshot plus that difference.

    The plans reach the scan as a broadcast table (their entries only, a few per cent of
    the cluster), so the partitions are read once however many plans there are. Plan
    entries for partitions the snapshot lacks join nothing: the caller compares the sum of
    ``in_snapshot`` with the plan's length."""
    from pyspark.sql import functions as F  # noqa: N812

    code = racks.code_sql()

    def state(
        plan: str, replicas: str, observers: str, isr: str, w: int, moves: Sequence[str]
    ) -> str:
        fields = [
            ("topic", "topic"),
            ("partition", "`partition`"),
            ("size_bytes", "size_bytes"),
            ("plan", plan),
            ("replicas", replicas),
            ("observers", observers),
            ("isr", isr),
            ("w", str(w)),
            *zip(MOVES, moves, strict=True),
        ]
        return "named_struct(" + ", ".join(f"'{n}', {v}" for n, v in fields) + ")"

    nothing = ["0"] * len(MOVES)

    def after(c: str) -> str:
        new, new_obs = f"{c}.new_replicas", f"{c}.new_observers"
        added = f"array_except({new}, replicas)"
        source = code("coalesce(leader, element_at(replicas, 1))")  # the sending broker's
        moves = [
            flag_sql(f"{new} != replicas OR {new_obs} != {OBSERVERS}"),
            f"size({added})",
            f"size(array_except(replicas, {new}))",
            f"size(filter({added}, y -> NOT ({code('y')} <=> {source})))",
            flag_sql(f"size_bytes IS NULL AND size({added}) > 0"),
            f"{c}.listed",
        ]
        return state(f"{c}.plan", new, new_obs, isr_after_sql(new, new_obs), 1, moves)

    def both(c: str) -> str:
        was = state(f"{c}.plan", "replicas", OBSERVERS, "isr", -1, nothing)
        return f"array({was}, {after(c)})"

    stands = f"array({state('-1', 'replicas', 'observers', 'isr', 1, nothing)})"

    def transform(parts: DataFrame) -> DataFrame:
        rows = stands
        if plans:
            listed = F.broadcast(plan_changes(plans))
            parts = parts.join(listed, ["topic", "partition"], "left")
            if len(plans) == 1:  # its one change, without a lambda over the array
                states = both("changes[0]")
            else:
                states = f"flatten(transform(changes, c -> {both('c')}))"
            rows = f"CASE WHEN changes IS NULL THEN {stands} ELSE concat({stands}, {states}) END"
        # the key and size inside the struct, so the explode outputs the struct alone: then
        # the code after it is generated as a method of its own (Spark splits an operator off
        # when its parent reads every input more than once), and neither method is near the
        # JVM's 8,000-byte limit for compiling (one method of 10,573 bytes -> 6,116 at most)
        return parts.selectExpr(f"explode({rows}) AS s").selectExpr("s.*")

    return transform


def applied(plan: DataFrame) -> Any:
    """Partitions -> the partitions after ``plan``: a listed partition takes the plan's
    replicas and observers, the others keep theirs; ``listed`` counts the plan's entries
    for the partition (0: not in the plan; more than 1: Kafka would reject the plan).
    Entries for partitions the snapshot lacks are ignored, as in `with_plans`.

    ``isr`` follows `snapshot apply`'s rule (`placement.snapshot.apply.after`): a listed
    partition whose replicas or observers change keeps the sync replicas that were in its
    ISR and gains the sync replicas that were not sync replicas before, unless it has no
    leader; a null ISR stays null. ``leader`` is carried as it is (`with_failure` does not
    read it)."""
    from pyspark.sql import functions as F  # noqa: N812

    empty = F.array().cast("array<int>")
    entries = plan.groupBy("topic", "partition").agg(
        F.first("replicas").alias("new_replicas"),
        F.first("observers").alias("new_observers"),
        F.count("*").alias("listed"),
    )

    def transform(parts: DataFrame) -> DataFrame:
        joined = parts.join(entries, ["topic", "partition"], "left")
        new_obs = F.coalesce("new_observers", empty)
        new = F.col("new_replicas")
        listed = F.col("listed").isNotNull()
        isr = F.expr(isr_after_sql("new_replicas", f"coalesce(new_observers, {EMPTY_IDS})"))
        # the ISR first, from the old replicas: in one select Spark would read "replicas"
        # in the lambda as the new column aliased so (a lateral column alias)
        with_isr = joined.withColumn("\x00isr", F.when(listed, isr).otherwise(F.col("isr")))
        return with_isr.select(
            "topic",
            "partition",
            F.when(listed, new).otherwise(F.col("replicas")).alias("replicas"),
            F.when(listed, new_obs).otherwise(F.col("observers")).alias("observers"),
            F.col("\x00isr").alias("isr"),
            "leader",
            "size_bytes",
            F.coalesce("listed", F.lit(0)).alias("listed"),
        )

    return transform


def with_failure(
    down: Iterable[int], racks: RackCodes, rack: str | None = None, assume_in_sync: bool = False
) -> Any:
    """After `with_policy`: the outcome of a failure, per partition: the loss of ``rack``
    (its brokers, and every broker of unknown rack: `survives_rack_loss`), else of the
    brokers ``down``; and the outcome before it, with no broker down.

    The replicas in sync are those of the ``isr`` column (an observer listed there counts);
    where it is null, or with ``assume_in_sync``, the sync replicas. Adds ``survivors`` (the
    surviving observers outside the ISR, in order), ``lagging`` (the surviving sync
    replicas outside it), the 0/1 columns ``offline``, ``under_min_isr``, ``promoted``,
    ``available``, of the offline ones ``unclean`` (a replica outside the ISR survives: an
    unclean election can bring it back) and ``lost`` (nothing survives), ``offline_before``
    and ``under_min_isr_before`` (so already with no broker down), ``broken`` (offline or
    under min ISR only after the failure), ``isr_unknown`` (no ISR recorded; 0 with
    ``assume_in_sync``), and
    ``unknown_rack``: the partition's brokers of unknown rack. Every partition counts, with
    a policy or not (none: no promotion). The same rules as
    `placement.simulate.failure.judge`: a recorded ISR shows any promotion already."""
    from pyspark.sql import functions as F  # noqa: N812

    code = racks.code()
    failed = F.array(*[F.lit(b) for b in sorted(down)]).cast("array<int>")

    def alive(b: Column) -> Column:
        if rack is not None:
            return survives_rack_loss(racks.names.index(rack))(code(b))
        return ~F.array_contains(failed, b)

    def transform(parts: DataFrame) -> DataFrame:
        observers = F.coalesce("observers", F.array().cast("array<int>"))
        isr = sync_replicas() if assume_in_sync else F.coalesce("isr", sync_replicas())
        with_isr = parts.withColumn("\x00isr", isr)
        ins = F.col("\x00isr")

        def out(b: Column) -> Column:
            return ~F.array_contains(ins, b)

        with_survivors = with_isr.withColumns(
            {
                "\x00s": F.size(F.filter("replicas", lambda b: alive(b) & ~out(b))),
                "\x00s0": F.size(F.filter("replicas", lambda b: ~out(b))),
                "\x00o0": F.size(F.filter(observers, out)),
                "survivors": F.filter(observers, lambda b: alive(b) & out(b)),
                "lagging": F.filter(sync_replicas(), lambda b: alive(b) & out(b)),
                "unknown_rack": F.filter("replicas", lambda b: code(b).isNull()),
            }
        )
        s, o, s0 = F.col("\x00s"), F.size("survivors"), F.col("\x00s0")
        # a recorded ISR shows any promotion: short of min ISR, it is under min ISR before
        # the failure and the observers it leaves out promote on no failure (`judge`)
        recorded = F.lit(False) if assume_in_sync else F.col("isr").isNotNull()
        stale = recorded & F.col("promotes") & (s0 > 0) & (s0 < F.col("min_isr"))
        flags = failure_flags(s, F.when(stale, 0).otherwise(o))
        before = failure_flags(s0, F.when(recorded, 0).otherwise(F.col("\x00o0")))
        offline = flags["offline"]
        failing = offline | flags["under_min_isr"]
        failing_before = before["offline"] | before["under_min_isr"]
        return with_survivors.withColumns(
            {
                **{k: _flag(v) for k, v in flags.items()},
                "available": _flag(~offline & ~flags["under_min_isr"] & ~flags["promoted"]),
                "unclean": _flag(offline & (o + F.size("lagging") > 0)),
                "lost": _flag(offline & (o + F.size("lagging") == 0)),
                "offline_before": _flag(before["offline"]),
                "under_min_isr_before": _flag(before["under_min_isr"]),
                "broken": _flag(failing & ~failing_before),
                "isr_unknown": F.lit(0) if assume_in_sync else _flag(F.col("isr").isNull()),
            }
        ).drop("\x00s", "\x00s0", "\x00o0", "\x00isr")

    return transform
