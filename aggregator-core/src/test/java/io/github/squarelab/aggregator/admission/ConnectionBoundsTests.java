package io.github.squarelab.aggregator.admission;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.squarelab.aggregator.grpc.GrpcOnlyProperties;
import java.time.Duration;
import org.apache.catalina.connector.Connector;
import org.apache.coyote.AbstractProtocol;
import org.junit.jupiter.api.Test;

class ConnectionBoundsTests {

    @Test
    void theDefaultIsASixteenthOfTheHeapAt6KibibytesAConnectionAndAtLeast64() {
        assertThat(ConnectionBounds.defaultFor(128L << 20)).isEqualTo(1365);
        assertThat(ConnectionBounds.defaultFor(1L << 30)).isEqualTo(10922);
        assertThat(ConnectionBounds.defaultFor(1L << 20)).isEqualTo(64);
    }

    /** A connection closed at the limit leaves its objects and buffers for the next one rather than to the collector. */
    @Test
    void tomcatHoldsTheLimitAndKeepsAsManyClosedConnectionsForTheNextOnes() {
        ConnectionBounds bounds = new ConnectionBounds(GrpcOnlyProperties.to("unused:1", Duration.ofSeconds(30), 300));
        Connector connector = new Connector("org.apache.coyote.http11.Http11NioProtocol");
        bounds.customize(connector);

        AbstractProtocol<?> protocol = (AbstractProtocol<?>) connector.getProtocolHandler();
        assertThat(protocol.getMaxConnections()).isEqualTo(300);
        assertThat(protocol.getProperty("socket.bufferPool")).isEqualTo("300");
        assertThat(protocol.getProperty("socket.appReadBufSize")).isEqualTo("2048");
        assertThat(protocol.getProperty("socket.appWriteBufSize")).isEqualTo("2048");
    }
}
