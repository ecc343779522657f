package io.github.squarelab.floor.http;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP relay in front of a server that reads what passes through as HTTP/2 frames, so a test sees what the
 * server was sent: how many connections, whether each opened with the HTTP/2 preface (prior knowledge, no
 * HTTP/1.1 before it), and the most streams each had open at once (opened by the client's HEADERS, closed by
 * the server's END_STREAM or RST_STREAM, counted before the close is passed on). It relays a client's frames
 * in the bursts they came in, so a burst of HEADERS is all counted open before the server can answer any.
 */
final class Http2Tap implements AutoCloseable {

    private static final byte[] PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    private static final int DATA = 0;
    private static final int HEADERS = 1;
    private static final int RST_STREAM = 3;
    private static final int END_STREAM = 1;

    private final ServerSocket listener;
    private final int serverPort;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    /** One entry per connection: the most streams it had open at once; -1 if it did not open with the preface. */
    final List<AtomicInteger> mostOpenStreams = new CopyOnWriteArrayList<>();

    Http2Tap(int serverPort) throws IOException {
        this.serverPort = serverPort;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        daemon(this::accept);
    }

    int port() {
        return listener.getLocalPort();
    }

    @Override
    public void close() throws IOException {
        listener.close();
        for (Socket socket : sockets) {
            socket.close();
        }
    }

    private void accept() {
        try {
            while (true) {
                Socket client = listener.accept();
                Socket server = new Socket(InetAddress.getLoopbackAddress(), serverPort);
                sockets.addAll(List.of(client, server));
                AtomicInteger open = new AtomicInteger();
                AtomicInteger most = new AtomicInteger();
                mostOpenStreams.add(most);
                daemon(() -> relay(client, server, true, open, most));
                daemon(() -> relay(server, client, false, open, most));
            }
        } catch (IOException closed) {
            // The tap is closed.
        }
    }

    /** Passes frames on, flushing whenever nothing more is waiting, so a burst stays a burst. */
    private static void relay(Socket from, Socket to, boolean fromClient, AtomicInteger open, AtomicInteger most) {
        try (InputStream in = new BufferedInputStream(from.getInputStream());
                OutputStream out = new BufferedOutputStream(to.getOutputStream())) {
            if (fromClient) {
                byte[] first = in.readNBytes(PREFACE.length);
                if (!Arrays.equals(first, PREFACE)) {
                    // Not HTTP/2 with prior knowledge: marked, and cut off, since what follows is not frames.
                    most.set(-1);
                    return;
                }
                out.write(first);
            }
            byte[] header;
            while ((header = in.readNBytes(9)).length == 9) {
                int length = (header[0] & 0xff) << 16 | (header[1] & 0xff) << 8 | (header[2] & 0xff);
                int type = header[3];
                boolean endStream = (header[4] & END_STREAM) != 0;
                if (fromClient && type == HEADERS) {
                    most.accumulateAndGet(open.incrementAndGet(), Math::max);
                } else if (!fromClient && ((type == DATA || type == HEADERS) && endStream || type == RST_STREAM)) {
                    open.decrementAndGet();
                }
                out.write(header);
                out.write(in.readNBytes(length));
                if (in.available() == 0) {
                    out.flush();
                }
            }
        } catch (IOException closed) {
            // One side closed: so does the other, below.
        } finally {
            try {
                from.close();
                to.close();
            } catch (IOException ignored) {
                // Already closed.
            }
        }
    }

    private static void daemon(Runnable task) {
        Thread thread = new Thread(task, "http2-tap");
        thread.setDaemon(true);
        thread.start();
    }
}
