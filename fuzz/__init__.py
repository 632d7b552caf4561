"""A bounded, deterministic mutation fuzzer over every reader of mrc-plan (`make fuzz`).

Seeds come from examples/, tests/fixtures/ and fuzz/seeds/; see fuzz/engine.py for the
loop and the outcome classes, fuzz/targets.py for the readers, fuzz/mutate.py for the
mutations.
"""
