package io.github.squarelab.square.grpc;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.springframework.boot.actuate.info.Info;
import org.springframework.boot.actuate.info.InfoContributor;

/**
 * Under TLS, {@code tls} in {@code GET /actuator/info}: the mode and the provider that encrypts, so that a measurement
 * says what it measured; never a key or a path to one. Each Spring generation's GrpcServerWiring says whether its
 * starter asks for a client certificate, and which Netty's OpenSSL (grpc-netty-shaded's or grpc-netty's) it serves on.
 */
public class TlsInfo implements InfoContributor {

    private final boolean mutual;
    private final Supplier<String> provider;

    /**
     * @param provider grpc-netty's TLS provider, in {@code TlsWords.provider}'s words: it prefers netty-tcnative's
     *     BoringSSL where it loads, as grpc-java's GrpcSslContexts do; else the JDK's SSLEngine
     */
    public TlsInfo(boolean mutual, Supplier<String> provider) {
        this.mutual = mutual;
        this.provider = provider;
    }

    @Override
    public void contribute(Info.Builder builder) {
        Map<String, Object> tls = new LinkedHashMap<>();
        tls.put("mode", mutual ? "mtls" : "on");
        tls.put("provider", provider.get());
        builder.withDetail("tls", tls);
    }
}
