package io.github.squarelab.aggregator.rest;

import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.function.Supplier;
import reactor.core.publisher.Mono;
import reactor.netty.ByteBufMono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.client.HttpClientResponse;
import reactor.netty.resources.ConnectionProvider;

/**
 * Reactor Netty's client, used directly: WebClient would add a request object, filters and a codec lookup to every
 * call, for a body that is one number. The pool's acquire timeout and the client's response timeout bound a call.
 */
final class ReactorNettyExchange implements RestExchange {

    private final HttpClient http;
    private final ConnectionProvider connections;

    /** @param http a client bound to the replica's base URL and to {@code connections} */
    ReactorNettyExchange(HttpClient http, ConnectionProvider connections) {
        this.http = http;
        this.connections = connections;
    }

    @Override
    public Mono<Answer> get(String path) {
        return http.get().uri(path).responseSingle(ReactorNettyExchange::answer);
    }

    /** The payload is written here, where the request has its connection, not before it waits for one. */
    @Override
    public Mono<Answer> post(String path, Supplier<byte[]> json) {
        return http.post()
                .uri(path)
                .send((request, body) -> {
                    byte[] payload = json.get();
                    request.header(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON);
                    request.header(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(payload.length));
                    return body.send(Mono.fromSupplier(() -> Unpooled.wrappedBuffer(payload)));
                })
                .responseSingle(ReactorNettyExchange::answer);
    }

    private static Mono<Answer> answer(HttpClientResponse response, ByteBufMono body) {
        if (!response.status().equals(HttpResponseStatus.OK)) {
            return Mono.just(new Answer(response.status().code(), NO_BODY));
        }
        return body.asByteArray().map(bytes -> new Answer(200, bytes)).defaultIfEmpty(new Answer(200, NO_BODY));
    }

    @Override
    public void close() {
        connections.dispose();
    }
}
