package io.github.squarelab.aggregator.tls;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ConnectException;
import java.security.cert.CertificateExpiredException;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.Test;

class TlsFailuresTests {

    @Test
    void anAlertOpenSslReceivedReadsAsTheJdksWithOpenSslsTextAfterIt() {
        SSLHandshakeException error = new SSLHandshakeException("handshake failed");
        error.initCause(
                new SSLException("error:1000045c:SSL routines:OPENSSL_internal:TLSV1_ALERT_CERTIFICATE_REQUIRED"));

        assertThat(TlsFailures.handshake(error))
                .hasValue("Received fatal alert: certificate_required (OpenSSL: error:1000045c:SSL routines:"
                        + "OPENSSL_internal:TLSV1_ALERT_CERTIFICATE_REQUIRED)");
    }

    @Test
    void theJdksOwnWordsStayAsTheyAre() {
        assertThat(TlsFailures.handshake(new SSLHandshakeException("Received fatal alert: bad_certificate")))
                .hasValue("Received fatal alert: bad_certificate");
    }

    @Test
    void anExpiredCertificateIsSaidSoWhateverWrapsIt() {
        SSLHandshakeException error = new SSLHandshakeException("PKIX path validation failed");
        error.initCause(new CertificateExpiredException("NotAfter: Thu Jan 01 00:00:00 UTC 2026"));

        assertThat(TlsFailures.handshake(error))
                .hasValue("the certificate has expired (NotAfter: Thu Jan 01 00:00:00 UTC 2026)");
    }

    @Test
    void anErrorWithoutTlsInItIsNoHandshakeFailure() {
        assertThat(TlsFailures.handshake(new IOException("Connection reset"))).isEmpty();
        assertThat(TlsFailures.refused(new IOException("wrapped", new ConnectException("Connection refused"))))
                .isTrue();
    }
}
