package io.github.squarelab.square.rest;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;

@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = "square.server=netty")
class NettyHttp2PriorKnowledgeTests extends Http2PriorKnowledgeTests {

    /** Reactor Netty replaces its HTTP/2 settings as a whole: the stream limits must not undo Boot's header limit. */
    @Test
    void theHeaderListSizeIsStillServerMaxHttpRequestHeaderSize() throws IOException {
        assertThat(Http2Settings.announcedBy(port)).containsEntry(Http2Settings.MAX_HEADER_LIST_SIZE, 8192L);
    }
}
