package io.github.squarelab.square.rest;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = "square.server=netty")
@ExtendWith(OutputCaptureExtension.class)
class NettyTlsAlpnTests extends TlsAlpnTests {

    /** TlsRefusalLog: who and why in one line, in place of Netty's warnings with stack traces. */
    @Test
    void aRefusedHandshakeIsOneLineThatSaysWhy(CapturedOutput output) throws Exception {
        try (Socket plaintext = new Socket("127.0.0.1", port)) {
            plaintext.setSoTimeout(5000);
            OutputStream out = plaintext.getOutputStream();
            out.write(
                    "GET /rest/square/unary/3 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            assertThat(plaintext.getInputStream().read())
                    .as("the server closes the connection")
                    .isEqualTo(-1);
        }

        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (!output.getOut().contains("refused a TLS connection") && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(output.getOut())
                .containsPattern("refused a TLS connection from /127\\.0\\.0\\.1:\\d+: not TLS \\(plaintext on the TLS"
                        + " port\\?\\)\\R")
                .doesNotContain("TLS handshake failed", "NotSslRecordException");
    }
}
