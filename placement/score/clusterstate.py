"""What a local Spark cluster leaves in its state directory, read without starting or
stopping anything: the record of a running cluster (`cluster.json`), its secret and the
key of its web UIs' tokens.

Both sides of that directory use it: :mod:`placement.score.localcluster`, which starts and
stops the daemons and writes the record, and :mod:`placement.score.session`, whose driver
reads the secret of the cluster it connects to. Neither imports the other.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from placement.errors import UsageError
from placement.io.private import private_dir, read_private, runtime_dir

LOOPBACK = "127.0.0.1"


@dataclass(frozen=True)
class LocalCluster:
    master_url: str
    web_url: str
    state_dir: Path

    @property
    def secret_file(self) -> Path:
        return self.state_dir / "secret"

    def secret(self) -> str:
        return read_private(self.secret_file).strip()

    def ui_token(self, lifetime: float = 60) -> str:
        """A token the web UIs accept (``Authorization: Bearer TOKEN``) for ``lifetime`` s."""
        key = base64.urlsafe_b64decode(read_private(self.state_dir / "ui-key").strip() + "==")
        return _jws(key, lifetime)


def default_state_dir() -> Path:
    return private_dir(runtime_dir() / "cluster")


def _jws(key: bytes, lifetime: float) -> str:
    """A compact JWS (HS256, RFC 7515) with an expiry ``lifetime`` s ahead, as Spark's
    ``JWSFilter`` checks it against its ``secretKey``."""

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = b64(json.dumps({"sub": "mrc-plan", "exp": int(time.time() + lifetime)}).encode())
    signature = hmac.new(key, f"{header}.{claims}".encode(), hashlib.sha256).digest()
    return f"{header}.{claims}.{b64(signature)}"


def recorded(state_dir: Path) -> LocalCluster | None:
    path = state_dir / "cluster.json"
    if not os.path.lexists(path):
        return None
    try:
        data = json.loads(read_private(path))
        return LocalCluster(str(data["master"]), str(data["web"]), state_dir)
    except (ValueError, KeyError, TypeError):
        raise UsageError(
            f"{path}: not a cluster record", "stop the cluster (spark-local-cluster stop)"
        ) from None
