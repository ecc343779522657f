package io.github.squarelab.floor;

import java.io.File;
import java.util.Optional;

/**
 * TLS for a bare transport, from PEM files, as the lab gives the services: a server's certificate and key and, for
 * mutual TLS, the CA its clients' certificates must come from; a client's CA and, for mutual TLS, its certificate and
 * key. Which engine encrypts is Netty's choice, as in the services: BoringSSL through netty-tcnative where it loads,
 * the JDK's SSLEngine where {@code -Dio.netty.handler.ssl.noOpenSsl=true} (and its grpc-netty-shaded name) says so.
 *
 * @param ca the server: the CA of the client certificates it requires (null without mutual TLS); the client: the CA
 *     it trusts
 * @param certificate the side's own certificate chain (for a client, null without mutual TLS)
 * @param key the side's own PKCS #8 private key (for a client, null without mutual TLS)
 */
public record FloorTls(File ca, File certificate, File key) {

    /** The server's {@code --tls-cert}, {@code --tls-key} and, for mutual TLS, {@code --tls-client-ca}; or none. */
    static Optional<FloorTls> server(Arguments arguments) {
        String certificate = arguments.text("tls-cert", null);
        String key = arguments.text("tls-key", null);
        String clientCa = arguments.text("tls-client-ca", null);
        if (certificate == null && key == null && clientCa == null) {
            return Optional.empty();
        }
        if (certificate == null || key == null) {
            throw new IllegalArgumentException("a TLS server needs both --tls-cert and --tls-key");
        }
        return Optional.of(new FloorTls(
                clientCa == null ? null : readable("tls-client-ca", clientCa),
                readable("tls-cert", certificate),
                readable("tls-key", key)));
    }

    /** The client's {@code --tls-ca} and, for mutual TLS, {@code --tls-cert} and {@code --tls-key}; or none. */
    static Optional<FloorTls> client(Arguments arguments) {
        String ca = arguments.text("tls-ca", null);
        String certificate = arguments.text("tls-cert", null);
        String key = arguments.text("tls-key", null);
        if (ca == null && certificate == null && key == null) {
            return Optional.empty();
        }
        if (ca == null) {
            throw new IllegalArgumentException("a TLS client needs --tls-ca, the CA it trusts");
        }
        if ((certificate == null) != (key == null)) {
            throw new IllegalArgumentException("a client certificate needs both --tls-cert and --tls-key");
        }
        return Optional.of(new FloorTls(
                readable("tls-ca", ca),
                certificate == null ? null : readable("tls-cert", certificate),
                key == null ? null : readable("tls-key", key)));
    }

    /** {@code on}, or {@code mtls} when the server requires a client certificate and the client presents one. */
    public String mode() {
        return isMutual() ? "mtls" : "on";
    }

    /** For a server, whether it requires a client certificate; for a client, whether it presents one. */
    public boolean isMutual() {
        return certificate != null && ca != null;
    }

    private static File readable(String option, String path) {
        File file = new File(path);
        if (!file.isFile() || !file.canRead()) {
            // The file's name, not its folder: a lab run's certificates' folder must not reach its results.
            throw new IllegalArgumentException(
                    "--" + option + " " + file.getName() + " is not a file this process can read");
        }
        return file;
    }
}
