package io.github.squarelab.floor;

/** A running square server, on a port of its own. */
public interface SquareServer extends AutoCloseable {

    /** The port it listens on: the one asked for, or the one the system chose for port 0. */
    int port();

    /** Under TLS, what encrypts: "OpenSSL (BoringSSL)" or "JDK (SunJSSE)". */
    String tlsProvider();

    /** Blocks until the server has stopped (from {@link #close()}, e.g. in a shutdown hook). */
    void awaitTermination() throws InterruptedException;

    /** Stops taking connections, lets answers under way finish for a moment, then stops. */
    @Override
    void close();
}
