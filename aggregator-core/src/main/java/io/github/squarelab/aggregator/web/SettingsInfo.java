package io.github.squarelab.aggregator.web;

import io.github.squarelab.aggregator.AggregatorProperties;
import io.github.squarelab.aggregator.rest.RestConnector;
import io.github.squarelab.aggregator.tls.ClientTls;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.actuate.info.Info;
import org.springframework.boot.actuate.info.InfoContributor;
import org.springframework.stereotype.Component;

/**
 * The settings that shape the aggregator's load on its downstreams, as it runs with them, under
 * {@code aggregator} in {@code GET /actuator/info}: tools such as the lab read them here rather than
 * re-deriving them from the arguments the aggregator was started with.
 */
@Component
class SettingsInfo implements InfoContributor {

    private final AggregatorProperties properties;
    private final ClientTls clientTls;

    SettingsInfo(AggregatorProperties properties, ClientTls clientTls) {
        this.properties = properties;
        this.clientTls = clientTls;
    }

    @Override
    public void contribute(Info.Builder builder) {
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("in-flight", properties.inFlight());
        settings.put("rest-max-connections", properties.rest().maxConnections());
        settings.put("rest-replicas", properties.rest().baseUrl().size());
        settings.put("rest-h2c-connections", properties.rest().h2cConnections());
        settings.put("rest-h2c-max-streams", properties.rest().h2cMaxStreams());
        // The HTTP client each REST path calls through, so that a measurement says which it measured.
        settings.put("rest-client", properties.rest().client());
        settings.put("rest-h2c-client", properties.rest().h2cClient());
        settings.put("deadline-ms", properties.deadline().toMillis());
        settings.put("call-deadline-ms", properties.callDeadline().toMillis());
        settings.put("max-n", properties.maxN());
        // Where it calls the square services: a lab measuring services it did not start finds them here.
        settings.put(
                "rest-base-url",
                properties.rest().baseUrl().stream().map(String::valueOf).toList());
        settings.put("grpc-target", properties.grpc().target());
        // Under TLS, how the calls to the square services are encrypted (on or mtls), the bundle, and the TLS
        // provider each transport's client encrypts with; never a key.
        if (clientTls.enabled()) {
            Map<String, Object> tls = clientTls.info();
            Map<String, String> providers = new LinkedHashMap<>();
            providers.put(
                    "rest",
                    RestConnector.tlsProvider(
                            "aggregator.rest.client", properties.rest().client()));
            providers.put(
                    "rest-h2c",
                    RestConnector.tlsProvider(
                            "aggregator.rest.h2c-client", properties.rest().h2cClient()));
            providers.put("grpc", ClientTls.nettyProvider());
            tls.put("providers", providers);
            settings.put("tls", tls);
        }
        builder.withDetail("aggregator", settings);
    }
}
