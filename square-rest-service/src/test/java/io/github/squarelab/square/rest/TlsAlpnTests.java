package io.github.squarelab.square.rest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import reactor.netty.http.Http11SslContextSpec;
import reactor.netty.http.Http2SslContextSpec;
import reactor.netty.http.HttpProtocol;
import reactor.netty.http.client.HttpClient;

/**
 * With TLS (server.ssl.bundle, an ordinary SSL bundle), the port speaks HTTP/2 chosen by ALPN ({@code h2}) beside
 * HTTP/1.1, on each server (a subclass per value of square.server), with a certificate keytool makes for the test;
 * and each handshake the server refuses is one line of its log that says who and why.
 */
@ExtendWith(OutputCaptureExtension.class)
abstract class TlsAlpnTests {

    private static final String PASSWORD = "changeit";

    @LocalServerPort
    int port;

    /** The service's key and certificate, and the certificate alone for the client to trust. */
    private static final Path FOLDER = certificates();

    @DynamicPropertySource
    static void tls(DynamicPropertyRegistry registry) {
        registry.add("server.ssl.bundle", () -> "square");
        registry.add("spring.ssl.bundle.jks.square.keystore.location", () -> FOLDER.resolve("square.p12")
                .toString());
        registry.add("spring.ssl.bundle.jks.square.keystore.password", () -> PASSWORD);
        registry.add("spring.ssl.bundle.jks.square.keystore.type", () -> "PKCS12");
    }

    @Test
    void answersOverHttp2ChosenByAlpnAndOverHttp11OnTheSamePort() {
        assertThat(get(HttpProtocol.H2, "/rest/square/unary/3")).isEqualTo("HTTP/2.0 200 9");
        assertThat(get(HttpProtocol.HTTP11, "/rest/square/unary/3")).isEqualTo("HTTP/1.1 200 9");
    }

    /** The same limits as with prior knowledge ({@link Http2PriorKnowledgeTests}), on a connection ALPN made h2. */
    @Test
    void theServerAnnouncesTheStreamLimitsOverTls() throws Exception {
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        KeyStore keys = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(FOLDER.resolve("square.p12"))) {
            keys.load(in, PASSWORD.toCharArray());
        }
        trust.init(keys);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, trust.getTrustManagers(), null);
        SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", port);
        SSLParameters parameters = socket.getSSLParameters();
        parameters.setApplicationProtocols(new String[] {"h2"});
        socket.setSSLParameters(parameters);
        socket.startHandshake();
        assertThat(socket.getApplicationProtocol()).isEqualTo("h2");

        Map<Integer, Long> settings = Http2Settings.announcedOn(socket);

        assertThat(settings).containsEntry(Http2Settings.MAX_CONCURRENT_STREAMS, 160L);
        assertThat(settings.get(Http2Settings.INITIAL_WINDOW_SIZE)).isEqualTo(16L * 1024);
    }

    /** A client that trusts no certificate ends the handshake with an alert: the server says so, once, in one line. */
    @Test
    void aHandshakeTheClientAbandonsIsOneLineThatSaysWhy(CapturedOutput output) throws Exception {
        SSLContext distrustful = SSLContext.getInstance("TLS");
        distrustful.init(null, new TrustManager[] {new TrustingNothing()}, null);
        int before = output.getOut().length();
        try (SSLSocket socket = (SSLSocket) distrustful.getSocketFactory().createSocket("127.0.0.1", port)) {
            socket.setSoTimeout(5000);
            assertThatThrownBy(socket::startHandshake).isInstanceOf(SSLException.class);
        }

        assertThat(refusals(output, before))
                // BoringSSL's own words after the JDK's, where Netty runs on BoringSSL.
                .containsPattern("refused a TLS connection from /127\\.0\\.0\\.1:\\d+: Received fatal alert: "
                        + "certificate_unknown( \\(OpenSSL: [^\\n]*SSLV3_ALERT_CERTIFICATE_UNKNOWN\\))?\\R");
    }

    /** Plaintext on the TLS port: the server says it was not TLS, in one line, whatever else it answers. */
    @Test
    void plaintextOnTheTlsPortIsOneLineThatSaysSo(CapturedOutput output) throws Exception {
        int before = output.getOut().length();
        try (Socket plaintext = new Socket("127.0.0.1", port)) {
            plaintext.setSoTimeout(5000);
            OutputStream out = plaintext.getOutputStream();
            out.write(
                    "GET /rest/square/unary/3 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            // Tomcat answers 400 (this port requires TLS) before it closes; the others close at once.
            plaintext.getInputStream().readAllBytes();
        }

        assertThat(refusals(output, before))
                .containsPattern("refused a TLS connection from /127\\.0\\.0\\.1:\\d+: not TLS \\(plaintext on the TLS"
                        + " port\\?\\)\\R")
                .doesNotContain("TLS handshake failed", "NotSslRecordException", "\tat ");
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

    /** Refuses every server certificate. */
    private static final class TrustingNothing implements X509TrustManager {

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            throw new CertificateException("trusts nothing");
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            throw new CertificateException("trusts nothing");
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
        }
    }

    /** The answer as "VERSION STATUS BODY". */
    private String get(HttpProtocol protocol, String path) {
        File trusted = FOLDER.resolve("square.pem").toFile();
        return HttpClient.create()
                .protocol(protocol)
                .secure(spec -> spec.sslContext(
                        protocol == HttpProtocol.H2
                                ? Http2SslContextSpec.forClient().configure(builder -> builder.trustManager(trusted))
                                : Http11SslContextSpec.forClient().configure(builder -> builder.trustManager(trusted))))
                .baseUrl("https://127.0.0.1:" + port)
                .get()
                .uri(path)
                .responseSingle((response, body) -> body.asString()
                        .map(text -> response.version().text() + " "
                                + response.status().code() + " " + text))
                .block(Duration.ofSeconds(20));
    }

    /** A key pair and a certificate for 127.0.0.1, made with the JDK's keytool, in a folder deleted on exit. */
    private static Path certificates() {
        try {
            Path folder = Files.createTempDirectory("square-tls");
            folder.toFile().deleteOnExit();
            String keytool =
                    Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
            String keystore = folder.resolve("square.p12").toString();
            run(List.of(
                    keytool,
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
                    keystore,
                    "-storepass",
                    PASSWORD));
            run(List.of(
                    keytool,
                    "-exportcert",
                    "-rfc",
                    "-alias",
                    "square",
                    "-keystore",
                    keystore,
                    "-storepass",
                    PASSWORD,
                    "-file",
                    folder.resolve("square.pem").toString()));
            folder.resolve("square.p12").toFile().deleteOnExit();
            folder.resolve("square.pem").toFile().deleteOnExit();
            return folder;
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException("could not make the test's certificate with keytool", e);
        }
    }

    private static void run(List<String> command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        if (process.waitFor() != 0) {
            throw new IOException(String.join(" ", command.subList(0, 2)) + " failed: " + output);
        }
    }
}
