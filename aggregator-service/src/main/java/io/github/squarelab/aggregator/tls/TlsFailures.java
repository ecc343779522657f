package io.github.squarelab.aggregator.tls;

import java.net.ConnectException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLException;

/** What a failed call's error says about TLS, in the words a 503's detail gives it. */
public final class TlsFailures {

    /** An alert the other side sent, as BoringSSL's reason code names it: TLSV1_ALERT_CERTIFICATE_REQUIRED. */
    private static final Pattern OPENSSL_ALERT = Pattern.compile("(?:SSLV3|TLSV1)_ALERT_([A-Z_]+)");

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
                        ? inWords(root.getMessage())
                        : root.getClass().getSimpleName());
    }

    /**
     * An alert in the JDK's words whichever engine received it: OpenSSL's engine reports one as a reason code
     * ("error:1000045c:SSL routines:OPENSSL_internal:TLSV1_ALERT_CERTIFICATE_REQUIRED"), the JDK's as "Received
     * fatal alert: certificate_required"; OpenSSL's own text is kept after it.
     */
    static String inWords(String message) {
        Matcher alert = OPENSSL_ALERT.matcher(message);
        if (!alert.find()) {
            return message;
        }
        return "Received fatal alert: " + alert.group(1).toLowerCase(Locale.ROOT) + " (OpenSSL: " + message + ")";
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
