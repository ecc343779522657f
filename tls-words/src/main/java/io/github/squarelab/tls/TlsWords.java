package io.github.squarelab.tls;

import java.security.NoSuchAlgorithmException;
import java.util.Locale;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;

/**
 * TLS failures and providers in one set of words, whichever engine did the work. BoringSSL (netty-tcnative, and
 * grpc-netty-shaded's copy of it) and the JDK's SSLEngine say the same thing differently; the services say it once.
 */
public final class TlsWords {

    /** What a handshake on a TLS port that got plaintext (an HTTP request, a gRPC preface) is said to be. */
    public static final String PLAINTEXT = "not TLS (plaintext on the TLS port?)";

    /** An alert as BoringSSL's reason code names it: TLSV1_ALERT_CERTIFICATE_REQUIRED. */
    private static final Pattern OPENSSL_ALERT = Pattern.compile("(?:SSLV3|TLSV1)_ALERT_([A-Z_]+)");

    private TlsWords() {}

    /**
     * An alert in the JDK's words whichever engine received it: OpenSSL's engine reports one as a reason code
     * ("error:1000045c:SSL routines:OPENSSL_internal:TLSV1_ALERT_CERTIFICATE_REQUIRED"), the JDK's as "Received
     * fatal alert: certificate_required"; so is a client certificate that never came. OpenSSL's own text is kept after
     * them. Any other message stays as it is.
     */
    public static String alert(String message) {
        Matcher alert = OPENSSL_ALERT.matcher(message);
        if (alert.find()) {
            return "Received fatal alert: " + alert.group(1).toLowerCase(Locale.ROOT) + " (OpenSSL: " + message + ")";
        }
        // A server that requires a client certificate and got none.
        if (message.contains("PEER_DID_NOT_RETURN_A_CERTIFICATE")) {
            return "Empty client certificate chain (OpenSSL: " + message + ")";
        }
        return message;
    }

    /**
     * Why a server refused a handshake: the deepest cause's message, plaintext said as such (Netty quotes its bytes
     * in hex, the JDK and Tomcat say it their own ways), an alert in the JDK's words.
     */
    public static String refusal(Throwable error) {
        Throwable root = error;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String message =
                root.getMessage() != null ? root.getMessage() : root.getClass().getSimpleName();
        boolean plaintext = message.startsWith("not an SSL/TLS record")
                || message.startsWith("Unsupported or unrecognized SSL message")
                || message.startsWith("Unrecognized SSL message")
                || message.startsWith("Found an plain text HTTP request");
        return plaintext ? PLAINTEXT : alert(message);
    }

    /**
     * A Netty side's provider: OpenSSL's engine (with its version) where it encrypts, else the JDK's. Netty (plain or
     * grpc-netty-shaded's copy) prefers OpenSSL wherever netty-tcnative loads; each caller asks its own Netty.
     */
    public static String provider(boolean openSsl, Supplier<String> version) {
        return openSsl ? openSsl(version.get()) : jdk();
    }

    /** BoringSSL (or another OpenSSL) through netty-tcnative, with the version it says it is. */
    public static String openSsl(String version) {
        return "OpenSSL (" + version + ")";
    }

    /** The JDK's SSLEngine, with the security provider that serves it (SunJSSE unless configured otherwise). */
    public static String jdk() {
        try {
            return "JDK (" + SSLContext.getDefault().getProvider().getName() + ")";
        } catch (NoSuchAlgorithmException noDefault) {
            return "JDK";
        }
    }
}
