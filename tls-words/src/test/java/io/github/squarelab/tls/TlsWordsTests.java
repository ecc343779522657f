package io.github.squarelab.tls;

import static org.assertj.core.api.Assertions.assertThat;

import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.Test;

class TlsWordsTests {

    @Test
    void anAlertBoringSslReceivedReadsAsTheJdksWithBoringSslsTextAfterIt() {
        assertThat(TlsWords.alert("error:10000412:SSL routines:OPENSSL_internal:SSLV3_ALERT_BAD_CERTIFICATE"))
                .isEqualTo("Received fatal alert: bad_certificate (OpenSSL: error:10000412:SSL routines:"
                        + "OPENSSL_internal:SSLV3_ALERT_BAD_CERTIFICATE)");
        assertThat(TlsWords.alert("error:100000c0:SSL routines:OPENSSL_internal:PEER_DID_NOT_RETURN_A_CERTIFICATE"))
                .isEqualTo("Empty client certificate chain (OpenSSL: error:100000c0:SSL routines:"
                        + "OPENSSL_internal:PEER_DID_NOT_RETURN_A_CERTIFICATE)");
        assertThat(TlsWords.alert("Received fatal alert: certificate_required"))
                .isEqualTo("Received fatal alert: certificate_required");
    }

    @Test
    void aRefusalIsSaidByItsDeepestCause() {
        SSLHandshakeException refused = new SSLHandshakeException("handshake failed");
        refused.initCause(
                new SSLException("error:1000045c:SSL routines:OPENSSL_internal:TLSV1_ALERT_CERTIFICATE_REQUIRED"));

        assertThat(TlsWords.refusal(refused))
                .isEqualTo("Received fatal alert: certificate_required (OpenSSL: error:1000045c:SSL routines:"
                        + "OPENSSL_internal:TLSV1_ALERT_CERTIFICATE_REQUIRED)");
        assertThat(TlsWords.refusal(new SSLHandshakeException(null))).isEqualTo("SSLHandshakeException");
    }

    @Test
    void plaintextOnATlsPortIsSaidSoInEveryEnginesWording() {
        assertThat(TlsWords.refusal(new SSLException("not an SSL/TLS record: 474554202f20485454502f312e310d0a")))
                .isEqualTo(TlsWords.PLAINTEXT);
        assertThat(TlsWords.refusal(new SSLException("Unsupported or unrecognized SSL message")))
                .isEqualTo(TlsWords.PLAINTEXT);
        assertThat(TlsWords.refusal(new SSLException("Unrecognized SSL message, plaintext connection?")))
                .isEqualTo(TlsWords.PLAINTEXT);
        assertThat(TlsWords.refusal(new SSLException("Found an plain text HTTP request")))
                .isEqualTo(TlsWords.PLAINTEXT);
    }

    @Test
    void providersAreNamedWithTheirVersionOrTheirJdkProvider() {
        assertThat(TlsWords.openSsl("BoringSSL")).isEqualTo("OpenSSL (BoringSSL)");
        // SunJSSE on a stock JDK; another provider first (a FIPS JDK's) names itself.
        assertThat(TlsWords.jdk()).startsWith("JDK (").endsWith(")");
        assertThat(TlsWords.provider(true, () -> "BoringSSL")).isEqualTo("OpenSSL (BoringSSL)");
        assertThat(TlsWords.provider(false, () -> "unused")).isEqualTo(TlsWords.jdk());
    }
}
