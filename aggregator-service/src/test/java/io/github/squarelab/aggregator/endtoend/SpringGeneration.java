package io.github.squarelab.aggregator.endtoend;

import java.util.ArrayList;
import java.util.List;

/**
 * The Spring generation whose jars an end-to-end run starts (system property {@code lab.spring}, set by each
 * generation's failsafe configuration): the same tests, the same contract, and only the gRPC square service's
 * settings named differently, by net.devh's starter on Spring Boot 3.5 and by Spring gRPC on Spring Boot 4.1.
 */
enum SpringGeneration {
    BOOT_3_5("3.5") {
        @Override
        List<String> grpcServer(int port) {
            return List.of("--grpc.server.port=" + port, "--grpc.server.address=127.0.0.1");
        }

        @Override
        List<String> grpcTls(TestCertificates certificate, TestCertificates clientAuthority) {
            List<String> arguments = new ArrayList<>(List.of(
                    "--grpc.server.security.enabled=true",
                    "--grpc.server.security.certificate-chain=file:" + certificate.certificate(),
                    "--grpc.server.security.private-key=file:" + certificate.privateKey()));
            if (clientAuthority != null) {
                arguments.addAll(List.of(
                        "--grpc.server.security.client-auth=REQUIRE",
                        "--grpc.server.security.trust-cert-collection=file:" + clientAuthority.certificate()));
            }
            return arguments;
        }

        /** net.devh serves on grpc-netty-shaded, which reads Netty's switch under its shaded name. */
        @Override
        String grpcNoOpenSsl() {
            return "-Dio.grpc.netty.shaded.io.netty.handler.ssl.noOpenSsl=true";
        }
    },
    BOOT_4_1("4.1") {
        @Override
        List<String> grpcServer(int port) {
            return List.of("--spring.grpc.server.port=" + port, "--spring.grpc.server.address=127.0.0.1");
        }

        /** An SSL bundle, as for the REST square service. */
        @Override
        List<String> grpcTls(TestCertificates certificate, TestCertificates clientAuthority) {
            List<String> arguments = new ArrayList<>(List.of(
                    "--spring.grpc.server.ssl.bundle=square",
                    "--spring.ssl.bundle.pem.square.keystore.certificate=" + certificate.certificate(),
                    "--spring.ssl.bundle.pem.square.keystore.private-key=" + certificate.privateKey()));
            if (clientAuthority != null) {
                arguments.addAll(List.of(
                        "--spring.grpc.server.ssl.client-auth=require",
                        "--spring.ssl.bundle.pem.square.truststore.certificate=" + clientAuthority.certificate()));
            }
            return arguments;
        }

        /** Spring gRPC serves on grpc-netty, on the Netty Boot manages. */
        @Override
        String grpcNoOpenSsl() {
            return NO_OPENSSL;
        }
    };

    /** Netty's own switch off OpenSSL (BoringSSL), onto the JDK's SSLEngine. */
    static final String NO_OPENSSL = "-Dio.netty.handler.ssl.noOpenSsl=true";

    private final String version;

    SpringGeneration(String version) {
        this.version = version;
    }

    /** The gRPC square service on this port of the loopback address. */
    abstract List<String> grpcServer(int port);

    /** The gRPC square service serving this certificate; with a client authority, requiring a client's it signed. */
    abstract List<String> grpcTls(TestCertificates certificate, TestCertificates clientAuthority);

    /** The JVM option that puts the gRPC square service's TLS on the JDK's SSLEngine. */
    abstract String grpcNoOpenSsl();

    /** The generation this run's jars are built on: Spring Boot 3.5 unless {@code lab.spring} says 4.1. */
    static SpringGeneration current() {
        String asked = System.getProperty("lab.spring", BOOT_3_5.version);
        for (SpringGeneration generation : values()) {
            if (generation.version.equals(asked)) {
                return generation;
            }
        }
        throw new IllegalStateException("lab.spring=" + asked + " names no Spring generation: 3.5 or 4.1");
    }
}
