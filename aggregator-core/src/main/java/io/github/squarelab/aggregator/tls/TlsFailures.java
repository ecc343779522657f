package io.github.squarelab.aggregator.tls;

import io.github.squarelab.tls.TlsWords;
import java.net.ConnectException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.util.Optional;
import javax.net.ssl.SSLException;

/** What a failed call's error says about TLS, in the words a 503's detail gives it. */
public final class TlsFailures {

    private TlsFailures() {}

    /**
     * Why the TLS handshake failed, if the error comes from one: the deepest cause's message (an untrusted or
     * expired certificate, a host name it does not name, an alert the other side sent), else empty.
     */
    public static Optional<String> handshake(Throwable error) {
        boolean tls = false;
        Throwable root = error;
        for (Throwable cause = error; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            tls |= cause instanceof SSLException;
            root = cause;
            if (cause instanceof CertificateExpiredException) {
                return Optional.of("the certificate has expired (" + cause.getMessage() + ")");
            }
            if (cause instanceof CertificateNotYetValidException) {
                return Optional.of("the certificate is not valid yet (" + cause.getMessage() + ")");
            }
        }
        if (!tls) {
            return Optional.empty();
        }
        return Optional.of(
                root.getMessage() != null
                        ? TlsWords.alert(root.getMessage())
                        : root.getClass().getSimpleName());
    }

    /** Whether the connection was refused: nothing listens there, so it is no TLS port either. */
    public static boolean refused(Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            if (cause instanceof ConnectException) {
                return true;
            }
        }
        return false;
    }

    /** What to add when a replica that never answered closes a plaintext connection: a TLS port does so. */
    public static final String PLAINTEXT_HINT =
            " (it has not answered yet: if it serves TLS, the aggregator needs aggregator.tls.bundle and https:// base"
                    + " URLs)";
}
