package io.github.squarelab.aggregator.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.squarelab.aggregator.AggregatorProperties;
import io.github.squarelab.aggregator.netty.ClientEventLoops;
import io.github.squarelab.aggregator.tls.ClientTls;
import io.github.squarelab.payload.Shape;
import io.grpc.Grpc;
import io.grpc.InsecureServerCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.SingleThreadEventExecutor;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.config.DestructionAwareBeanPostProcessor;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;

/**
 * One Netty: the channel as configured runs on the event loops it shares with the REST client (epoll where Netty
 * has it), not on grpc-java's own, and the application shuts it down before those loops stop.
 */
class GrpcChannelEventLoopsTests {

    private static final Duration DEADLINE = Duration.ofSeconds(10);

    private Server server;

    @BeforeEach
    void startServer() throws IOException {
        server = Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create())
                .addService(new InProcessSquareServer.Correct())
                .build()
                .start();
    }

    @AfterEach
    void stopServer() throws InterruptedException {
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    @Test
    void callsRunOnTheSharedEventLoops() throws InterruptedException {
        String transport = Epoll.isAvailable() ? "epoll" : "nio";
        try (ClientEventLoops loops = new ClientEventLoops("shared")) {
            assertThat(loops.socketChannelType())
                    .isEqualTo(Epoll.isAvailable() ? EpollSocketChannel.class : NioSocketChannel.class);
            ManagedChannel channel = GrpcClientConfiguration.unaryChannel(
                    properties(), loops, ClientTls.plaintext(), GrpcChannelMaker.plain());
            try {
                GrpcUnarySquareClient client = new GrpcUnarySquareClient(channel, "shared", DEADLINE);
                AtomicReference<String> answeredOn = new AtomicReference<>();

                Long square = client.square(7, Shape.SMALL)
                        .doOnNext(
                                answer -> answeredOn.set(Thread.currentThread().getName()))
                        .block();

                assertThat(square).isEqualTo(49L);
                // directExecutor(): the answer is delivered on the transport's event loop, one of the shared ones.
                assertThat(answeredOn.get()).startsWith("shared-" + transport + "-");
            } finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    /**
     * Each call's deadline timer goes to whichever loop comes next and is cancelled from the loop its answer arrived
     * on; a loop without a connection must still take those timers off soon after, not when its next timer is due a
     * call deadline (10 s) later. Netty queues such a cancel as a task for the loop: none may be left waiting.
     */
    @Test
    void loopsWithoutConnectionsLetGoOfCancelledDeadlinesWithinAWake() throws InterruptedException {
        try (ClientEventLoops loops = new ClientEventLoops("timers")) {
            ManagedChannel channel = GrpcClientConfiguration.unaryChannel(
                    properties(), loops, ClientTls.plaintext(), GrpcChannelMaker.plain());
            try {
                GrpcUnarySquareClient client = new GrpcUnarySquareClient(channel, "timers", DEADLINE);
                for (int i = 1; i <= 200; i++) {
                    assertThat(client.square(i, Shape.SMALL).block()).isEqualTo((long) i * i);
                }

                long giveUp = System.nanoTime() + Duration.ofSeconds(2).toNanos();
                List<Integer> waiting = waitingTasks(loops.group());
                while (waiting.stream().anyMatch(n -> n > 0) && System.nanoTime() < giveUp) {
                    Thread.sleep(20);
                    waiting = waitingTasks(loops.group());
                }
                assertThat(waiting).as("tasks waiting on each loop").allMatch(n -> n == 0);
            } finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    private static List<Integer> waitingTasks(EventLoopGroup group) {
        List<Integer> waiting = new ArrayList<>();
        for (EventExecutor loop : group) {
            waiting.add(((SingleThreadEventExecutor) loop).pendingTasks());
        }
        return waiting;
    }

    @Test
    void theChannelsAreShutDownBeforeTheirEventLoopsStop() {
        List<String> destroyed = new CopyOnWriteArrayList<>();
        Map<String, Boolean> seen = new ConcurrentHashMap<>();
        List<ManagedChannel> channels = new CopyOnWriteArrayList<>();
        AtomicReference<EventLoopGroup> loops = new AtomicReference<>();
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
            context.registerBean(AggregatorProperties.class, this::properties);
            context.registerBean(ClientTls.class, ClientTls::plaintext);
            context.scan(ClientEventLoops.class.getPackageName());
            context.register(GrpcClientConfiguration.class);
            context.getBeanFactory().addBeanPostProcessor(new DestructionAwareBeanPostProcessor() {
                @Override
                public void postProcessBeforeDestruction(Object bean, String name) {
                    destroyed.add(name);
                    if (bean instanceof ManagedChannel) {
                        seen.merge(
                                "loops shutting down when a channel shuts down",
                                loops.get().isShuttingDown(),
                                Boolean::logicalOr);
                    } else if (bean instanceof ClientEventLoops) {
                        seen.put(
                                "channels shut down when the loops stop",
                                channels.stream().allMatch(ManagedChannel::isShutdown));
                    }
                }
            });
            context.refresh();
            channels.addAll(context.getBeansOfType(ManagedChannel.class).values());
            loops.set(context.getBean(ClientEventLoops.class).group());
        }

        assertThat(channels).hasSize(2);
        assertThat(destroyed).containsSubsequence("squareGrpcChannel", "clientEventLoops");
        assertThat(destroyed).containsSubsequence("squareGrpcStreamChannel", "clientEventLoops");
        assertThat(seen)
                .containsEntry("loops shutting down when a channel shuts down", false)
                .containsEntry("channels shut down when the loops stop", true);
        assertThat(loops.get().isTerminated()).isTrue();
    }

    private AggregatorProperties properties() {
        return GrpcOnlyProperties.to("127.0.0.1:" + server.getPort(), DEADLINE);
    }
}
