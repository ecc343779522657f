"""TLS between the aggregator and the square services (TLS): the certificates the lab makes for a run, the arguments
that start each service with them, and what a handshake with a square service negotiates.

The certificates are a throwaway CA's, made by tls/make-certificates.sh (openssl) in a folder of the lab's own,
readable by its owner only: the square services' server certificate (for 127.0.0.1 and localhost) and, for mutual
TLS, the aggregator's client certificate. The CA's key is never kept, and the folder is deleted when the run ends,
whatever ended it; results.json names the mode and what was negotiated, never a key or a path to one.

The services take them as ordinary Spring properties: an SSL bundle for the REST square service (its actuator stays in
plaintext on its own port, where the lab reads health and metrics) and for the aggregator's clients, net.devh's
grpc.server.security.* for the gRPC square service.
"""

import contextlib
import os
import shutil
import socket
import ssl
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional, Sequence

from ..core import catalogue
from ..core.catalogue import AGGREGATOR, PLAINTEXT, SQUARE_GRPC, SQUARE_REST
from ..core.errors import LabError

# The run's certificates' folder begins with it (and check_results looks for it in results.json).
FOLDER_PREFIX = catalogue.TLS_FOLDER_PREFIX
# The SSL bundle's name in the services' spring.ssl.bundle.pem.<name>.
BUNDLE = "lab"
# Each transport of the aggregator's (its /actuator/info names their providers so): the square service it calls, and
# what its client offers by ALPN.
TRANSPORTS = {"rest": SQUARE_REST, "rest-h2c": SQUARE_REST, "grpc": SQUARE_GRPC}
OFFERED = {"rest": ["http/1.1"], "rest-h2c": ["h2"], "grpc": ["h2"]}


transport_of = catalogue.transport_of


@dataclass(frozen=True)
class Certificates:
    """The PEM files of one run's CA, in a folder only the lab's user can read."""

    folder: str

    def path(self, name: str) -> str:
        return os.path.join(self.folder, name)


@contextlib.contextmanager
def certificates(repo: str, needed: bool, hosts: Sequence[str] = ()) -> Iterator[Optional[Certificates]]:
    """A fresh CA and its certificates while the run lasts (None when no stack uses TLS), deleted after it; the
    server certificate names 127.0.0.1, localhost and the hosts given (NETWORK=hosts: the square services' own)."""
    if not needed:
        yield None
        return
    if shutil.which("openssl") is None:
        raise LabError("TLS needs openssl to make the run's certificates (Debian: apt-get install -y openssl)")
    folder = tempfile.mkdtemp(prefix=FOLDER_PREFIX)
    try:
        try:
            done = subprocess.run(
                ["bash", os.path.join(repo, "tls", "make-certificates.sh"), folder, *hosts],
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=60,
            )
        except subprocess.TimeoutExpired:
            raise LabError("tls/make-certificates.sh made no certificates within 60 s") from None
        if done.returncode != 0:
            raise LabError("could not make the run's TLS certificates:\n" + done.stdout.strip())
        yield Certificates(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def square_arguments(mode: str, module: str, found: Optional[Certificates]) -> List[str]:
    """The Spring arguments that make a square service serve TLS (and, for mtls, require a client certificate)."""
    if mode == PLAINTEXT:
        return []
    if found is None:
        raise LabError("TLS mode %s without certificates" % mode)
    if module == SQUARE_REST:
        bundle = "--spring.ssl.bundle.pem.%s." % BUNDLE
        arguments = [
            "--server.ssl.bundle=" + BUNDLE,
            bundle + "keystore.certificate=" + found.path("server.pem"),
            bundle + "keystore.private-key=" + found.path("server.key"),
        ]
        if mode == "mtls":
            arguments += ["--server.ssl.client-auth=need", bundle + "truststore.certificate=" + found.path("ca.pem")]
        return arguments
    if module == SQUARE_GRPC:
        security = "--grpc.server.security."
        arguments = [
            security + "enabled=true",
            security + "certificate-chain=file:" + found.path("server.pem"),
            security + "private-key=file:" + found.path("server.key"),
        ]
        if mode == "mtls":
            arguments += [
                security + "client-auth=REQUIRE",
                security + "trust-cert-collection=file:" + found.path("ca.pem"),
            ]
        return arguments
    raise ValueError("not a square service: %s" % module)


def aggregator_arguments(mode: str, found: Optional[Certificates]) -> List[str]:
    """The Spring arguments that make the aggregator's clients trust the run's CA and, for mtls, present its client
    certificate. Its REST base URLs are https (lab.stage.services.aggregator)."""
    if mode == PLAINTEXT:
        return []
    if found is None:
        raise LabError("TLS mode %s without certificates" % mode)
    bundle = "--spring.ssl.bundle.pem.%s." % BUNDLE
    arguments = ["--aggregator.tls.bundle=" + BUNDLE, bundle + "truststore.certificate=" + found.path("ca.pem")]
    if mode == "mtls":
        arguments += [
            bundle + "keystore.certificate=" + found.path("client.pem"),
            bundle + "keystore.private-key=" + found.path("client.key"),
        ]
    return arguments


# Netty's own switch that keeps it off OpenSSL (netty-tcnative) and on the JDK's SSLEngine; grpc-netty-shaded's Netty
# reads it under its shaded name.
NO_OPENSSL = {
    AGGREGATOR: "-Dio.netty.handler.ssl.noOpenSsl=true",
    SQUARE_REST: "-Dio.netty.handler.ssl.noOpenSsl=true",
    SQUARE_GRPC: "-Dio.grpc.netty.shaded.io.netty.handler.ssl.noOpenSsl=true",
}
# Spring Boot 4.1's gRPC square service runs on the unshaded grpc-netty.
NO_OPENSSL_UNSHADED = NO_OPENSSL[AGGREGATOR]


def jvm_options(mode: str, provider: str, module: str) -> List[str]:
    """The JVM options that make a service's Netty encrypt with the TLS_PROVIDER asked for: none for openssl, which
    Netty prefers wherever netty-tcnative loads; both names of the switch for the gRPC square service, whose Netty is
    grpc-netty-shaded's on one Spring generation and the unshaded one on the other."""
    if mode == PLAINTEXT or provider != "jdk":
        return []
    return sorted({NO_OPENSSL[module], NO_OPENSSL_UNSHADED})


def arguments(mode: str, module: str, found: Optional[Certificates]) -> List[str]:
    """A service's TLS arguments in a mode: a square service's server side, or the aggregator's clients."""
    if module == AGGREGATOR:
        return aggregator_arguments(mode, found)
    return square_arguments(mode, module, found)


def negotiated(mode: str, transport: str, port: int, found: Optional[Certificates], timeout_s: float = 10) -> Dict:
    """What a square service on 127.0.0.1:port negotiates with a client that offers what the aggregator's client of a
    transport offers (the client certificate too, under mtls): TLS version, cipher suite, ALPN protocol. Read with
    the lab's own handshake (Python's ssl, OpenSSL), so the cipher is the server's choice among what OpenSSL offers;
    an error is recorded, not raised: the figures do not depend on it."""
    if mode == PLAINTEXT or found is None:
        return {}
    try:
        context = ssl.create_default_context(cafile=found.path("ca.pem"))
        if mode == "mtls":
            context.load_cert_chain(found.path("client.pem"), found.path("client.key"))
        context.set_alpn_protocols(OFFERED[transport])
        with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as raw:
            with context.wrap_socket(raw, server_hostname="127.0.0.1") as secured:
                cipher = secured.cipher()
                return {
                    "protocol": secured.version(),
                    "cipher": cipher[0] if cipher else None,
                    "alpn": secured.selected_alpn_protocol(),
                    "how": "the lab's own handshake with 127.0.0.1:%d, offering ALPN %s"
                    % (port, ", ".join(OFFERED[transport])),
                }
    except (OSError, ssl.SSLError) as error:
        return {"error": "no handshake with 127.0.0.1:%d: %s" % (port, error)}
