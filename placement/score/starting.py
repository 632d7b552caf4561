"""The Spark session, started in the background while the driver checks the inputs.

Starting the JVM takes about 3 s, and the checks that must pass before Spark reads
anything (the snapshot's partitions, every plan, read strictly) take as long again on
millions of partitions. Neither needs the other, so `Starting` runs `build_session` on a
thread of its own from the moment the command knows its master, and the stage takes the
session once the checks are done.

When a check fails (or Ctrl-C arrives) first, `cancel` waits for the start to finish and
ends the JVM it launched: no JVM outlives a failed command, and one that was running
before (a test session, `spark-submit`'s) is left alone.
"""

from __future__ import annotations

import threading
from typing import Any


class Starting:
    """`build_session(master, app=app)` on a background thread."""

    def __init__(self, master: str | None, *, app: str) -> None:
        from pyspark import SparkContext

        # only a JVM this start launches is ours to stop
        self._launches = SparkContext._gateway is None
        self._session: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(
            target=self._start, args=(master, app), name="mrc-plan: starting Spark", daemon=True
        )
        self._thread.start()

    def _start(self, master: str | None, app: str) -> None:
        from placement.score.session import build_session

        try:
            self._session = build_session(master, app=app)
        except BaseException as exc:  # handed to the main thread by session()
            self._error = exc

    def session(self) -> Any:
        """The session, once started; the start's own error (a UsageError) if it failed."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._session

    def cancel(self) -> None:
        """The command failed before using the session: end the JVM this start launched."""
        self._thread.join()
        if self._launches:
            from placement.score.session import stop_jvm

            stop_jvm()
