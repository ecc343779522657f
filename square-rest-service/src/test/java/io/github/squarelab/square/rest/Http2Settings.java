package io.github.squarelab.square.rest;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * The SETTINGS a server sends first on an HTTP/2 connection, cleartext with prior knowledge or TLS with ALPN h2 (RFC
 * 9113, 3.3, 3.4 and 6.5).
 */
final class Http2Settings {

    static final int MAX_CONCURRENT_STREAMS = 0x3;
    static final int INITIAL_WINDOW_SIZE = 0x4;
    static final int MAX_HEADER_LIST_SIZE = 0x6;

    private static final int SETTINGS = 0x4;
    private static final int ACK = 0x1;
    private static final byte[] PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    /** An empty SETTINGS frame: length 0, type 4, no flags, stream 0. */
    private static final byte[] NO_SETTINGS = {0, 0, 0, SETTINGS, 0, 0, 0, 0, 0};

    private Http2Settings() {}

    /** Each setting's identifier and value, from the server's first SETTINGS frame that is not an acknowledgement. */
    static Map<Integer, Long> announcedBy(int port) throws IOException {
        return announcedOn(new Socket("127.0.0.1", port));
    }

    /** As {@link #announcedBy(int)}, on a connection already made, e.g. a TLS socket that negotiated h2; closes it. */
    static Map<Integer, Long> announcedOn(Socket connection) throws IOException {
        try (Socket socket = connection) {
            socket.setSoTimeout(5000);
            OutputStream out = socket.getOutputStream();
            out.write(PREFACE);
            out.write(NO_SETTINGS);
            out.flush();
            DataInputStream in = new DataInputStream(socket.getInputStream());
            while (true) {
                int length = in.readUnsignedShort() << 8 | in.readUnsignedByte();
                int type = in.readUnsignedByte();
                int flags = in.readUnsignedByte();
                in.readInt();
                byte[] payload = in.readNBytes(length);
                if (type == SETTINGS && (flags & ACK) == 0) {
                    return parse(payload);
                }
            }
        }
    }

    private static Map<Integer, Long> parse(byte[] payload) {
        Map<Integer, Long> settings = new HashMap<>();
        for (int i = 0; i + 6 <= payload.length; i += 6) {
            int id = (payload[i] & 0xff) << 8 | (payload[i + 1] & 0xff);
            long value = (payload[i + 2] & 0xffL) << 24
                    | (payload[i + 3] & 0xffL) << 16
                    | (payload[i + 4] & 0xffL) << 8
                    | (payload[i + 5] & 0xffL);
            settings.put(id, value);
        }
        return settings;
    }
}
