package io.github.squarelab.floor.measure;

/**
 * What a client's TLS handshake agreed on, as the client saw it.
 *
 * @param provider what encrypted on the client's side: "OpenSSL (BoringSSL)" or "JDK (SunJSSE)"
 * @param protocol TLSv1.3, say
 * @param cipher TLS_AES_256_GCM_SHA384, say
 * @param alpn the application protocol ALPN chose: h2 or http/1.1
 */
public record Negotiated(String provider, String protocol, String cipher, String alpn) {}
