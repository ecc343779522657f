package io.github.squarelab.square.rest;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/** Reads HTTP/1.1 answers off a plain socket, to see the connection itself rather than a client's pool. */
final class RawHttp11 {

    private RawHttp11() {}

    /** "STATUS BODY" of one answer, with a Content-Length or chunked, and nothing past it. */
    static String readAnswer(InputStream in) throws IOException {
        String statusLine = line(in);
        int contentLength = -1;
        boolean chunked = false;
        for (String header = line(in); !header.isEmpty(); header = line(in)) {
            String lower = header.toLowerCase(Locale.ROOT);
            if (lower.startsWith("content-length:")) {
                contentLength = Integer.parseInt(
                        header.substring("content-length:".length()).trim());
            } else if (lower.startsWith("transfer-encoding:") && lower.contains("chunked")) {
                chunked = true;
            }
        }
        byte[] body;
        if (chunked) {
            body = chunks(in);
        } else if (contentLength >= 0) {
            body = in.readNBytes(contentLength);
        } else {
            throw new IOException("neither a Content-Length nor chunks after " + statusLine);
        }
        return statusLine.split(" ")[1] + " " + new String(body, StandardCharsets.UTF_8);
    }

    private static byte[] chunks(InputStream in) throws IOException {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        for (int size = Integer.parseInt(line(in).trim(), 16); size > 0; size = Integer.parseInt(line(in).trim(), 16)) {
            body.write(in.readNBytes(size));
            line(in);
        }
        line(in);
        return body.toByteArray();
    }

    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        for (int b = in.read(); b != '\n'; b = in.read()) {
            if (b < 0) {
                throw new EOFException("the connection was closed");
            }
            if (b != '\r') {
                line.write(b);
            }
        }
        return line.toString(StandardCharsets.US_ASCII);
    }
}
