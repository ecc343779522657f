package io.github.squarelab.square.grpc;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The one-line refusals on Spring Boot 3.5: net.devh's mutual TLS, from PEM files, on grpc-netty-shaded. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class TlsRefusalLogTests extends TlsRefusalLogContract {

    @DynamicPropertySource
    static void tls(DynamicPropertyRegistry registry) {
        registry.add("grpc.server.port", () -> PORT);
        registry.add("grpc.server.address", () -> "127.0.0.1");
        registry.add("grpc.server.security.enabled", () -> "true");
        registry.add("grpc.server.security.certificate-chain", () -> "file:" + FOLDER.resolve("server.pem"));
        registry.add("grpc.server.security.private-key", () -> "file:" + FOLDER.resolve("server.key"));
        registry.add("grpc.server.security.client-auth", () -> "REQUIRE");
        registry.add("grpc.server.security.trust-cert-collection", () -> "file:" + FOLDER.resolve("server.pem"));
    }
}
