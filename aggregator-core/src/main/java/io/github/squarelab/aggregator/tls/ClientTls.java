package io.github.squarelab.aggregator.tls;

import io.github.squarelab.tls.TlsWords;
import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.TlsChannelCredentials;
import io.netty.handler.ssl.OpenSsl;
import java.net.URI;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.springframework.boot.ssl.SslBundle;

/**
 * How the aggregator's clients reach the square services: in plaintext, or over TLS with the SSL bundle
 * {@code aggregator.tls.bundle} names, whose trust store holds the CA they trust and whose key store, if it has one,
 * the certificate they present for mutual TLS. Every transport's client takes its TLS from here.
 */
public final class ClientTls {

    private static final ClientTls PLAINTEXT = new ClientTls(null, null);

    private final String bundleName;
    private final SslBundle bundle;

    private ClientTls(String bundleName, SslBundle bundle) {
        this.bundleName = bundleName;
        this.bundle = bundle;
    }

    public static ClientTls plaintext() {
        return PLAINTEXT;
    }

    /** @param bundleName the bundle's name under spring.ssl.bundle, for messages and /actuator/info */
    public static ClientTls of(String bundleName, SslBundle bundle) {
        return new ClientTls(bundleName, bundle);
    }

    public boolean enabled() {
        return bundle != null;
    }

    /** Whether the clients present a certificate of their own: the bundle has a key store. */
    public boolean mutual() {
        return enabled() && bundle.getStores().getKeyStore() != null;
    }

    /** Fails, naming the first one, unless every REST base URL is https under TLS and http without it. */
    public void requireScheme(List<URI> baseUrls) {
        String expected = enabled() ? "https" : "http";
        for (URI baseUrl : baseUrls) {
            if (!expected.equalsIgnoreCase(baseUrl.getScheme())) {
                throw new IllegalStateException(
                        enabled()
                                ? "aggregator.rest.base-url " + baseUrl + " is not https, but aggregator.tls.bundle="
                                        + bundleName + " asks for TLS"
                                : "aggregator.rest.base-url " + baseUrl
                                        + " is not http: set aggregator.tls.bundle to the SSL bundle that trusts it");
            }
        }
    }

    /** The gRPC channels' credentials: the bundle's trust and, for mutual TLS, its key; or none. */
    public ChannelCredentials grpcCredentials() {
        if (!enabled()) {
            return InsecureChannelCredentials.create();
        }
        TlsChannelCredentials.Builder credentials = TlsChannelCredentials.newBuilder()
                .trustManager(trustManagerFactory().getTrustManagers());
        if (mutual()) {
            credentials.keyManager(keyManagerFactory().getKeyManagers());
        }
        return credentials.build();
    }

    public TrustManagerFactory trustManagerFactory() {
        return bundle.getManagers().getTrustManagerFactory();
    }

    /** The client's own key, or null unless {@link #mutual()}. */
    public KeyManagerFactory keyManagerFactory() {
        return mutual() ? bundle.getManagers().getKeyManagerFactory() : null;
    }

    /** For the clients that take a JDK SSLContext (Jetty, Apache, java.net.http). */
    public SSLContext sslContext() {
        return bundle.createSslContext();
    }

    /** What /actuator/info says of it: never a key or a path to one. */
    public Map<String, Object> info() {
        Map<String, Object> info = new LinkedHashMap<>();
        info.put("mode", !enabled() ? "off" : mutual() ? "mtls" : "on");
        info.put("bundle", bundleName);
        return info;
    }

    /**
     * The TLS provider of a client on Netty (Reactor Netty's, and the gRPC channels', which run on the same Netty):
     * OpenSSL through netty-tcnative where it loads, as Netty then prefers it; else the JDK's SSLEngine.
     */
    public static String nettyProvider() {
        return TlsWords.provider(OpenSsl.isAvailable(), OpenSsl::versionString);
    }

    /** The JDK's default TLS provider, by name: what an SSLContext from an SSL bundle encrypts with. */
    public static String jdkProvider() {
        return TlsWords.jdk();
    }
}
