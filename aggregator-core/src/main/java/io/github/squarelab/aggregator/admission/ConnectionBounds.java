package io.github.squarelab.aggregator.admission;

import io.github.squarelab.aggregator.AggregatorProperties;
import org.apache.catalina.connector.Connector;
import org.apache.coyote.AbstractProtocol;
import org.springframework.stereotype.Component;

/**
 * Open connections bounded by the heap, so that a burst of clients cannot run it out; past {@link #maxConnections()}
 * the kernel queues them (docs/performance.md, "Tomcat's connections").
 */
@Component
public class ConnectionBounds {

    /** Each of a connection's two socket buffers, read and write (Tomcat's default is 8 KiB each). */
    static final int SOCKET_BUFFER_BYTES = 2048;
    /** The heap one open connection may take while it waits: its two socket buffers and Tomcat's objects. */
    static final long BYTES_PER_CONNECTION = 6 * 1024;

    private final int maxConnections;
    private volatile AbstractProtocol<?> protocol;

    ConnectionBounds(AggregatorProperties properties) {
        long configured = properties.admission().maxConnections();
        this.maxConnections = (int)
                (configured > 0 ? configured : defaultFor(Runtime.getRuntime().maxMemory()));
    }

    /** A sixteenth of the heap at {@link #BYTES_PER_CONNECTION} a connection, half the requests' eighth. */
    static long defaultFor(long maxHeapBytes) {
        return Math.max(64, Math.min(Integer.MAX_VALUE, maxHeapBytes / 16 / BYTES_PER_CONNECTION));
    }

    int maxConnections() {
        return maxConnections;
    }

    /**
     * Whether Tomcat holds as many connections as it may, so that a new one (a health check, say) waits in the kernel
     * until one of them closes; false before the server has started. Tomcat's count includes the connection its
     * acceptor waits for, so this is true from one below the limit.
     */
    public boolean atLimit() {
        AbstractProtocol<?> current = protocol;
        return current != null && current.getConnectionCount() >= maxConnections;
    }

    /** Applied to Tomcat's connector by each Spring Boot generation's wiring ({@code WebServerWiring}). */
    public void customize(Connector connector) {
        connector.setProperty("maxConnections", Integer.toString(maxConnections));
        connector.setProperty("socket.appReadBufSize", Integer.toString(SOCKET_BUFFER_BYTES));
        connector.setProperty("socket.appWriteBufSize", Integer.toString(SOCKET_BUFFER_BYTES));
        // Closed connections' objects and buffers kept for the next ones, which Tomcat does not do below a 2 GiB
        // heap: made anew, a burst's were promoted and filled the old generation (docs/performance.md, "Reused
        // connections").
        connector.setProperty("socket.bufferPool", Integer.toString(maxConnections));
        if (connector.getProtocolHandler() instanceof AbstractProtocol<?> tomcatProtocol) {
            protocol = tomcatProtocol;
        }
    }
}
