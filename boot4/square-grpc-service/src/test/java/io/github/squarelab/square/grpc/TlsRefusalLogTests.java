package io.github.squarelab.square.grpc;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The one-line refusals on Spring Boot 4.1: Spring gRPC's mutual TLS, from an SSL bundle, on grpc-netty. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class TlsRefusalLogTests extends TlsRefusalLogContract {

    @DynamicPropertySource
    static void tls(DynamicPropertyRegistry registry) {
        registry.add("spring.grpc.server.port", () -> PORT);
        registry.add("spring.grpc.server.address", () -> "127.0.0.1");
        registry.add("spring.grpc.server.ssl.bundle", () -> "square");
        registry.add("spring.grpc.server.ssl.client-auth", () -> "require");
        registry.add("spring.ssl.bundle.pem.square.keystore.certificate", () -> "file:" + FOLDER.resolve("server.pem"));
        registry.add("spring.ssl.bundle.pem.square.keystore.private-key", () -> "file:" + FOLDER.resolve("server.key"));
        registry.add(
                "spring.ssl.bundle.pem.square.truststore.certificate", () -> "file:" + FOLDER.resolve("server.pem"));
    }
}
