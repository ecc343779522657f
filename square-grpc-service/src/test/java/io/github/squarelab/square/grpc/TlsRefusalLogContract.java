package io.github.squarelab.square.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * Under mutual TLS on a real port, each handshake the service refuses is one line of its log that says why, in the
 * same words as the REST square service's, and never grpc-java's stack trace: plaintext on the TLS port, a client
 * that trusts no certificate, a client without one, a client that offers no h2. Both Spring generations run these: each
 * has a subclass, TlsRefusalLogTests, that serves {@link #PORT} under mutual TLS with the PEM files in {@link #FOLDER}
 * ({@code server.pem}, {@code server.key}, trusting {@code server.pem} for clients) as its gRPC starter spells it.
 */
@ExtendWith(OutputCaptureExtension.class)
public abstract class TlsRefusalLogContract {

    private static final String PASSWORD = "changeit";

    /** A self-signed key and certificate, as keytool makes them and as PEM files for the gRPC starter. */
    protected static final Path FOLDER = certificates();

    protected static final int PORT = freePort();

    @Test
    void plaintextOnTheTlsPortIsOneLineThatSaysSo(CapturedOutput output) throws Exception {
        int before = output.getOut().length();
        try (Socket plaintext = new Socket("127.0.0.1", PORT)) {
            plaintext.setSoTimeout(5000);
            OutputStream out = plaintext.getOutputStream();
            out.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            plaintext.getInputStream().readAllBytes();
        }

        assertThat(refusals(output, before))
                .containsPattern("refused a TLS connection: not TLS \\(plaintext on the TLS port\\?\\)\\R")
                .doesNotContain("TLS negotiation failed", "\tat ");
    }

    @Test
    void aClientThatTrustsNoCertificateIsOneLineThatSaysWhy(CapturedOutput output) throws Exception {
        SSLContext distrustful = SSLContext.getInstance("TLS");
        distrustful.init(keys(), new TrustManager[] {new TrustingNothing()}, null);
        int before = output.getOut().length();

        assertThatThrownBy(() -> handshake(distrustful, "h2")).isInstanceOf(SSLException.class);

        assertThat(refusals(output, before))
                .containsPattern("refused a TLS connection: Received fatal alert: certificate_unknown"
                        + "( \\(OpenSSL: [^\\n]*SSLV3_ALERT_CERTIFICATE_UNKNOWN\\))?\\R");
    }

    @Test
    void aClientWithoutACertificateIsOneLineThatSaysWhy(CapturedOutput output) throws Exception {
        SSLContext anonymous = SSLContext.getInstance("TLS");
        anonymous.init(null, trust(), null);
        int before = output.getOut().length();

        try {
            handshake(anonymous, "h2");
        } catch (IOException refused) {
            // TLS 1.3 ends the client's handshake before the server has read its (missing) certificate.
        }

        assertThat(refusals(output, before))
                // In the JDK's words, BoringSSL's after them.
                .containsPattern("refused a TLS connection: Empty client certificate chain \\(OpenSSL: [^\\n]*"
                        + "PEER_DID_NOT_RETURN_A_CERTIFICATE\\)\\R")
                .doesNotContain("\tat ");
    }

    @Test
    void aClientThatOffersNoH2IsOneLineThatSaysWhy(CapturedOutput output) throws Exception {
        SSLContext trusted = SSLContext.getInstance("TLS");
        trusted.init(keys(), trust(), null);
        int before = output.getOut().length();

        try {
            handshake(trusted, null);
        } catch (IOException closed) {
            // The server closes the connection once it finds no protocol in common.
        }

        assertThat(refusals(output, before))
                .contains("refused a TLS connection: no application protocol in common (the client did not offer h2"
                        + " by ALPN)");
    }

    /** A TCP connection closed before it says anything, as a port probe makes, is no refusal: nothing is logged. */
    @Test
    void aPortProbeLogsNothing(CapturedOutput output) throws Exception {
        int before = output.getOut().length();

        new Socket("127.0.0.1", PORT).close();
        // Then a refusal, which the service logs after the probe's close if it logs that at all.
        try (Socket plaintext = new Socket("127.0.0.1", PORT)) {
            plaintext.setSoTimeout(5000);
            plaintext.getOutputStream().write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            plaintext.getInputStream().readAllBytes();
        }

        String logged = refusals(output, before);
        assertThat(logged.split("refused a TLS connection", -1)).hasSize(2);
        assertThat(logged).contains("refused a TLS connection: not TLS");
    }

    /** A handshake, then a read until the server closes (which it does at once for every client here). */
    private static void handshake(SSLContext context, String alpn) throws IOException {
        try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", PORT)) {
            socket.setSoTimeout(5000);
            if (alpn != null) {
                var parameters = socket.getSSLParameters();
                parameters.setApplicationProtocols(new String[] {alpn});
                socket.setSSLParameters(parameters);
            }
            socket.startHandshake();
            socket.getInputStream().read();
        }
    }

    /**
     * The output from {@code before} on, once a refusal has been logged there (the server logs it on its own thread),
     * at most 5 s on: the capture is the whole class's, so an earlier test's lines are before it.
     */
    private static String refusals(CapturedOutput output, int before) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (!output.getOut().substring(before).contains("refused a TLS connection")
                && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        Thread.sleep(100);
        return output.getOut().substring(before);
    }

    private static KeyStore keyStore() throws Exception {
        KeyStore keys = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(FOLDER.resolve("square.p12"))) {
            keys.load(in, PASSWORD.toCharArray());
        }
        return keys;
    }

    private static javax.net.ssl.KeyManager[] keys() throws Exception {
        KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        keys.init(keyStore(), PASSWORD.toCharArray());
        return keys.getKeyManagers();
    }

    private static TrustManager[] trust() throws Exception {
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(keyStore());
        return trust.getTrustManagers();
    }

    /** Refuses every server certificate. */
    private static final class TrustingNothing implements X509TrustManager {

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType)
                throws java.security.cert.CertificateException {
            throw new java.security.cert.CertificateException("trusts nothing");
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType)
                throws java.security.cert.CertificateException {
            throw new java.security.cert.CertificateException("trusts nothing");
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
        }
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException("no free port", e);
        }
    }

    /** keytool's key pair for 127.0.0.1, and the same as PEM files, in a folder deleted on exit. */
    private static Path certificates() {
        try {
            Path folder = Files.createTempDirectory("square-grpc-tls");
            folder.toFile().deleteOnExit();
            Path keystore = folder.resolve("square.p12");
            Process keytool = new ProcessBuilder(List.of(
                            Path.of(System.getProperty("java.home"), "bin", "keytool")
                                    .toString(),
                            "-genkeypair",
                            "-alias",
                            "square",
                            "-keyalg",
                            "EC",
                            "-groupname",
                            "secp256r1",
                            "-dname",
                            "CN=localhost",
                            "-ext",
                            "SAN=ip:127.0.0.1,dns:localhost",
                            "-validity",
                            "1",
                            "-storetype",
                            "PKCS12",
                            "-keystore",
                            keystore.toString(),
                            "-storepass",
                            PASSWORD))
                    .redirectErrorStream(true)
                    .start();
            String said = new String(keytool.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (keytool.waitFor() != 0) {
                throw new IllegalStateException("keytool failed: " + said);
            }
            KeyStore keys = KeyStore.getInstance("PKCS12");
            try (InputStream in = Files.newInputStream(keystore)) {
                keys.load(in, PASSWORD.toCharArray());
            }
            Files.writeString(
                    folder.resolve("server.pem"),
                    pem("CERTIFICATE", keys.getCertificate("square").getEncoded()));
            Files.writeString(
                    folder.resolve("server.key"),
                    pem(
                            "PRIVATE KEY",
                            keys.getKey("square", PASSWORD.toCharArray()).getEncoded()));
            for (String name : List.of("square.p12", "server.pem", "server.key")) {
                folder.resolve(name).toFile().deleteOnExit();
            }
            return folder;
        } catch (Exception e) {
            throw new IllegalStateException("could not make the test's certificates", e);
        }
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n"
                + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }
}
