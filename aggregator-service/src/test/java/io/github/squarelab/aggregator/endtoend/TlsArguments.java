package io.github.squarelab.aggregator.endtoend;

import java.util.ArrayList;
import java.util.List;

/** The Spring arguments that put each service on TLS with a test's certificates (docs/api.md, "TLS and mutual TLS"). */
final class TlsArguments {

    private TlsArguments() {}

    /** The REST square service serving this certificate; with a client authority, requiring a client's it signed. */
    static List<String> restServer(TestCertificates certificate, TestCertificates clientAuthority) {
        List<String> arguments = new ArrayList<>(List.of(
                "--server.ssl.bundle=square",
                "--spring.ssl.bundle.pem.square.keystore.certificate=" + certificate.certificate(),
                "--spring.ssl.bundle.pem.square.keystore.private-key=" + certificate.privateKey()));
        if (clientAuthority != null) {
            arguments.addAll(List.of(
                    "--server.ssl.client-auth=need",
                    "--spring.ssl.bundle.pem.square.truststore.certificate=" + clientAuthority.certificate()));
        }
        return arguments;
    }

    /**
     * The gRPC square service serving this certificate; with a client authority, requiring a client's it signed: as
     * this run's Spring generation names its settings.
     */
    static List<String> grpcServer(TestCertificates certificate, TestCertificates clientAuthority) {
        return SpringGeneration.current().grpcTls(certificate, clientAuthority);
    }

    /** The aggregator's bundle square-client: trusting this authority, and presenting the client's, if given. */
    static List<String> aggregator(TestCertificates trusted, TestCertificates client) {
        List<String> arguments = new ArrayList<>(List.of(
                "--aggregator.tls.bundle=square-client",
                "--spring.ssl.bundle.pem.square-client.truststore.certificate=" + trusted.certificate()));
        if (client != null) {
            arguments.addAll(List.of(
                    "--spring.ssl.bundle.pem.square-client.keystore.certificate=" + client.certificate(),
                    "--spring.ssl.bundle.pem.square-client.keystore.private-key=" + client.privateKey()));
        }
        return arguments;
    }
}
