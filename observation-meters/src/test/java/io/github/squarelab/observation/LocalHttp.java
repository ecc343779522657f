package io.github.squarelab.observation;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * A service's own port, asked with the JDK's HTTP client: the services' tests that both Spring generations run use it
 * instead of TestRestTemplate, which Boot 4.1 moved to a module of its own, and which observes its own calls into the
 * service's registry (the JDK's client adds no metrics of its own).
 */
public final class LocalHttp {

    private static final HttpClient CLIENT =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private final int port;

    private LocalHttp(int port) {
        this.port = port;
    }

    public static LocalHttp on(int port) {
        return new LocalHttp(port);
    }

    /** The body of a GET, whatever its status. */
    public String get(String path) {
        return exchange(path).body();
    }

    /** A GET's whole answer: status, headers and body. */
    public HttpResponse<String> exchange(String path) {
        return send(request(path).GET().build());
    }

    /** A POST of {@code body} as {@code contentType}: the whole answer. */
    public HttpResponse<String> post(String path, String contentType, String body) {
        return send(request(path)
                .header("Content-Type", contentType)
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build());
    }

    private HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10));
    }

    private static HttpResponse<String> send(HttpRequest request) {
        try {
            return CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
