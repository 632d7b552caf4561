"""`--command-config FILE`: the Kafka client properties a user already has for kafka-topics
(`security.protocol`, `sasl.mechanism`, `sasl.jaas.config`, `ssl.*`), translated for
librdkafka (confluent-kafka). No value of the file is ever shown: a message names a key, a
line, and at most `SHOWN_MAX` characters of a value that is not a secret.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from placement.errors import InputError, UsageError
from placement.io.limits import PROPERTIES_BYTES
from placement.io.properties import PropertiesSyntaxError, Property, parse_properties
from placement.io.textfile import read_text, short, starts_with

WHAT = "the client properties (--command-config)"
PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
# the mechanisms whose JAAS login module carries a user name and a password
PASSWORD_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
# keys librdkafka takes as they are (same name, same meaning)
PASSED = frozenset(
    (
        "client.id",
        "sasl.username",
        "sasl.password",
        "ssl.ca.location",
        "ssl.certificate.location",
        "ssl.key.location",
        "ssl.key.password",
        "ssl.crl.location",
        "ssl.cipher.suites",
        "ssl.endpoint.identification.algorithm",
    )
)
# keys whose value must never be shown nor written
SECRET_KEYS = frozenset(("sasl.password", "ssl.key.password", "sasl.jaas.config"))
# Java client settings with no bearing on reading a cluster's metadata once: ignored
IGNORED = frozenset(
    (
        "request.timeout.ms",
        "default.api.timeout.ms",
        "retries",
        "retry.backoff.ms",
        "retry.backoff.max.ms",
        "reconnect.backoff.ms",
        "reconnect.backoff.max.ms",
        "connections.max.idle.ms",
        "metadata.max.age.ms",
        "socket.connection.setup.timeout.ms",
        "socket.connection.setup.timeout.max.ms",
        "ssl.protocol",
        "ssl.enabled.protocols",
        "ssl.truststore.type",
        "ssl.keystore.type",
        "ssl.secure.random.implementation",
        "ssl.trustmanager.algorithm",
        "ssl.keymanager.algorithm",
    )
)
_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")  # what a client setting's key looks like
_JAAS = re.compile(
    r"^\s*(?P<module>[A-Za-z0-9_.$]+)\s+(?:required|requisite|sufficient|optional)"
    r"(?P<options>.*?);?\s*$",
    re.DOTALL,
)
_OPTION = re.compile(r'([A-Za-z_][A-Za-z0-9_.]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s";]+))')
_PASSWORD_MODULES = (
    "org.apache.kafka.common.security.plain.PlainLoginModule",
    "org.apache.kafka.common.security.scram.ScramLoginModule",
)


@dataclass(frozen=True)
class ClientSettings:
    """librdkafka settings; ``secrets``: the values no output may hold (`redact`)."""

    settings: dict[str, str] = field(default_factory=dict, repr=False)
    secrets: tuple[str, ...] = field(default=(), repr=False)
    ignored: tuple[str, ...] = ()  # keys of the file that have no effect here

    def redact(self, text: str) -> str:
        """``text`` (a message of the client library) with every secret replaced."""
        for secret in sorted(self.secrets, key=len, reverse=True):
            if secret:
                text = text.replace(secret, "***")
        return text


def _fail(path: str, p: Property | None, message: str, hint: str = "") -> InputError:
    if p is None:
        return InputError(path, message, hint)
    return InputError(path, message, hint, line=p.line, column=p.column)


def _jaas(path: str, p: Property, mechanism: str | None) -> tuple[str, str]:
    """(user name, password) of a PlainLoginModule or ScramLoginModule `sasl.jaas.config`."""
    found = _JAAS.match(p.value)
    if found is None:
        raise _fail(
            path,
            p,
            "sasl.jaas.config is not a JAAS login line (MODULE required OPTIONS;)",
            "write it as kafka-topics takes it, e.g. org.apache.kafka.common.security.plain."
            'PlainLoginModule required username="..." password="...";',
        )
    module = found.group("module")
    if module not in _PASSWORD_MODULES:
        raise _fail(
            path,
            p,
            f"sasl.jaas.config: the login module {short(module.rpartition('.')[2])} is not "
            "translated (only PlainLoginModule and ScramLoginModule are)",
            "for Kerberos or OAuth, give librdkafka's own settings (sasl.kerberos.*, "
            "sasl.oauthbearer.*) to a client of your own and describe the cluster with "
            "kafka-topics instead",
        )
    if mechanism is not None and mechanism not in PASSWORD_MECHANISMS:
        raise _fail(
            path, p, f"sasl.jaas.config holds a password, but sasl.mechanism is {mechanism}"
        )
    options: dict[str, str] = {}
    for key, quoted, bare in _OPTION.findall(found.group("options")):
        options[key] = re.sub(r"\\(.)", r"\1", quoted) if quoted or not bare else bare
    missing = [k for k in ("username", "password") if k not in options]
    if missing:
        raise _fail(path, p, f"sasl.jaas.config has no {' and no '.join(missing)} option")
    return options["username"], options["password"]


def _pem_store(path: str, p: Property, latest: dict[str, Property]) -> str:
    """The file of ``p``, a ``ssl.truststore.location`` of type PEM (librdkafka's
    ``ssl.ca.location``); a Java truststore or keystore (JKS, PKCS12) is refused."""
    key = p.key
    kind = "truststore" if "trust" in key else "keystore"
    store_type = latest.get(f"ssl.{kind}.type")
    if kind == "truststore" and store_type and store_type.value.strip().upper() == "PEM":
        return p.value.strip()
    instead = (
        "ssl.ca.location=FILE (the CA certificates, PEM)"
        if kind == "truststore"
        else "ssl.certificate.location and ssl.key.location (PEM files)"
    )
    raise _fail(
        path,
        p,
        f"{key}: a Java {kind} (JKS or PKCS12) cannot be read by librdkafka",
        f"export it to PEM (keytool -exportcert -rfc, or openssl) and give {instead}",
    )


def translate(props: list[Property], path: str) -> ClientSettings:
    """Kafka (Java) client properties -> librdkafka settings."""
    latest = {p.key: p for p in props}  # as java.util.Properties: the last one wins
    settings: dict[str, str] = {}
    secrets: list[str] = []
    ignored: list[str] = []
    protocol = latest.get("security.protocol")
    if protocol is not None:
        value = protocol.value.strip().upper()
        if value not in PROTOCOLS:
            raise _fail(
                path,
                protocol,
                f"security.protocol {short(protocol.value.strip())} is not one of "
                + ", ".join(PROTOCOLS),
            )
        settings["security.protocol"] = value
    mech = latest.get("sasl.mechanism")
    mechanism = mech.value.strip().upper() if mech is not None else None
    if mech is not None and mechanism is not None:
        if mechanism not in (*PASSWORD_MECHANISMS, "GSSAPI", "OAUTHBEARER"):
            raise _fail(path, mech, f"sasl.mechanism {short(mech.value.strip())} is not known")
        settings["sasl.mechanism"] = mechanism
    for key, p in latest.items():
        if key in ("security.protocol", "sasl.mechanism"):
            continue
        if key in SECRET_KEYS:
            secrets.append(p.value)
        if key == "sasl.jaas.config":
            user, password = _jaas(path, p, mechanism)
            settings["sasl.username"] = user
            settings["sasl.password"] = password
            secrets.append(password)
            settings.setdefault("sasl.mechanism", "PLAIN")
        elif key in ("ssl.truststore.location", "ssl.keystore.location"):
            settings["ssl.ca.location"] = _pem_store(path, p, latest)
        elif key in (
            "ssl.truststore.password",
            "ssl.keystore.password",
            "ssl.truststore.certificates",
        ):
            secrets.append(p.value)
            ignored.append(key)
        elif key in PASSED:
            value = p.value.strip()
            if key == "ssl.endpoint.identification.algorithm" and not value:
                value = "none"  # Java's empty value: no host name check
            settings[key] = value
        elif key in IGNORED:
            ignored.append(key)
        else:
            raise _fail(
                path,
                p,
                f"the key {short(key)} is not a Kafka client setting mrc-plan translates",
                "give security.protocol, sasl.mechanism, sasl.jaas.config and ssl.* as for "
                "kafka-topics --command-config (docs: reading a live cluster)",
            )
    uses_sasl = settings.get("security.protocol", "").startswith("SASL")
    has_password = "sasl.username" in settings and "sasl.password" in settings
    if uses_sasl and settings.get("sasl.mechanism") in PASSWORD_MECHANISMS and not has_password:
        raise _fail(
            path,
            None,
            "security.protocol is SASL but the file gives no user name and password",
            "add sasl.jaas.config with PlainLoginModule or ScramLoginModule",
        )
    return ClientSettings(settings, tuple(secrets), tuple(ignored))


def load_command_config(path: str | Path) -> ClientSettings:
    """Read and translate a `--command-config` file (capped like every .properties file)."""
    p = Path(path)
    text = read_text(p, WHAT, PROPERTIES_BYTES)
    try:
        props = parse_properties(text)
    except PropertiesSyntaxError as exc:
        line = text.count("\n", 0, exc.offset) + 1
        raise InputError(str(p), exc.message, exc.hint, line=line) from None
    if not props:
        raise InputError(
            str(p),
            "no Kafka client setting found",
            "a --command-config file holds key=value lines such as security.protocol=SASL_SSL",
        )
    lines = text.splitlines()
    for prop in props:
        raw = lines[prop.line - 1] if prop.line <= len(lines) else ""
        if _KEY.fullmatch(prop.key) is None or not any(c in raw for c in "=:"):
            # not a setting: a file of another kind (a key, a token); nothing of it shown
            raise InputError(
                str(p),
                "not a Kafka client properties file: this line is not a key=value setting "
                f"(it starts with {starts_with(raw)})",
                "a --command-config file holds key=value lines such as security.protocol=SASL_SSL",
                line=prop.line,
            )
    return translate(props, str(p))


def check_bootstrap(servers: str) -> str:
    """``servers`` (HOST:PORT[,HOST:PORT...]) as librdkafka takes it, or UsageError."""
    parts = [s.strip() for s in servers.split(",")]
    for s in parts:
        host, sep, port = s.rpartition(":")
        if not sep or not host or not port.isascii() or not port.isdigit():
            raise UsageError(
                f"--bootstrap-server {short(s)} is not HOST:PORT",
                "e.g. --bootstrap-server kafka-1.example.com:9092 (a comma-separated list works)",
            )
        if not 0 < int(port) < 65536:
            raise UsageError(f"--bootstrap-server {short(s)}: the port is not in 1..65535")
    return ",".join(parts)
