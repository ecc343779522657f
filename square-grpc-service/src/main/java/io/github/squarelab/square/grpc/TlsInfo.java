package io.github.squarelab.square.grpc;

import io.github.squarelab.tls.TlsWords;
import io.grpc.netty.shaded.io.netty.handler.ssl.OpenSsl;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.actuate.info.Info;
import org.springframework.boot.actuate.info.InfoContributor;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

/**
 * Under TLS ({@code grpc.server.security.enabled}), {@code tls} in {@code GET /actuator/info}: the mode and the
 * provider that encrypts, so that a measurement says what it measured; never a key or a path to one.
 */
@Component
@ConditionalOnProperty(name = "grpc.server.security.enabled", havingValue = "true")
class TlsInfo implements InfoContributor {

    private final Environment environment;

    TlsInfo(Environment environment) {
        this.environment = environment;
    }

    @Override
    public void contribute(Info.Builder builder) {
        Map<String, Object> tls = new LinkedHashMap<>();
        boolean mutual = "REQUIRE".equalsIgnoreCase(environment.getProperty("grpc.server.security.client-auth", ""));
        tls.put("mode", mutual ? "mtls" : "on");
        tls.put("provider", provider());
        builder.withDetail("tls", tls);
    }

    /**
     * grpc-netty-shaded carries netty-tcnative's BoringSSL and, like grpc-java's GrpcSslContexts, prefers it where
     * it loads; else the JDK's SSLEngine.
     */
    private static String provider() {
        return TlsWords.provider(OpenSsl.isAvailable(), OpenSsl::versionString);
    }
}
