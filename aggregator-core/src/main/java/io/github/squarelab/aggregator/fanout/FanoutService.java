package io.github.squarelab.aggregator.fanout;

import io.github.squarelab.aggregator.AggregatorProperties;
import io.github.squarelab.aggregator.admission.AdmissionBudget;
import io.github.squarelab.aggregator.admission.DeadlineAdmission;
import io.github.squarelab.aggregator.admission.OverloadedException;
import io.github.squarelab.payload.Shape;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.springframework.stereotype.Service;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;

/**
 * Asks the square service for the squares of 1..n over one transport, at most {@code aggregator.in-flight} unary calls
 * or one bidi stream per request, with no thread waiting on a call, and answers them as JSON in order. A request is
 * admitted only while its n fits the {@link AdmissionBudget} and {@link DeadlineAdmission}, and shed otherwise.
 */
@Service
public class FanoutService {

    private final Map<Transport, UnarySquareClient> unaryClients = new EnumMap<>(Transport.class);
    private final Map<Transport, StreamSquareClient> streamClients = new EnumMap<>(Transport.class);
    private final FanoutMetrics metrics;
    private final AdmissionBudget admission;
    private final Map<Transport, DeadlineAdmission.Lane> lanes = new EnumMap<>(Transport.class);
    private final AggregatorProperties properties;

    public FanoutService(
            List<UnarySquareClient> unaryClients,
            List<StreamSquareClient> streamClients,
            FanoutMetrics metrics,
            AdmissionBudget admission,
            DeadlineAdmission deadlineAdmission,
            AggregatorProperties properties) {
        unaryClients.forEach(client -> this.unaryClients.put(client.transport(), client));
        streamClients.forEach(client -> this.streamClients.put(client.transport(), client));
        this.metrics = metrics;
        this.admission = admission;
        for (Transport transport : Transport.values()) {
            lanes.put(transport, deadlineAdmission.lane(transport.tag()));
        }
        this.properties = properties;
    }

    /**
     * The squares of 1..n as the contract's JSON array, every call or message carrying the payload of
     * {@code shape}; fails with a {@link DownstreamException}. Throws an {@link OverloadedException} at once when the
     * request does not fit the admission budget; once admitted, the request's share is given back when the Mono ends,
     * so the caller must subscribe to it (Spring MVC always does).
     */
    public Mono<String> fanOut(Transport transport, int n, Shape shape) {
        // Shed here, on the request's thread, not inside the Mono: a shed then never goes asynchronous, and so never
        // waits, holding Tomcat's request and its buffers, for a thread to dispatch its 503.
        if (!admission.tryAdmit(n)) {
            metrics.shed(transport);
            throw overloaded(n);
        }
        DeadlineAdmission.Lane.Ticket ticket;
        try {
            ticket = lanes.get(transport).admit(n);
        } catch (OverloadedException tooSlow) {
            admission.release(n);
            metrics.shed(transport);
            throw tooSlow;
        }
        FanoutMetrics.Recording recording = metrics.start(transport);
        return Mono.defer(() -> collect(transport, n, shape, answersTo(ticket, recording)))
                // Calls failing at the same moment on two event loops reach flatMapSequential together, which
                // wraps them in one composite: the first says what went wrong.
                .onErrorMap(Exceptions::isMultiple, error -> Exceptions.unwrapMultiple(error)
                        .get(0))
                .timeout(properties.deadline(), Mono.error(this::deadlineExceeded))
                .map(Squares::toJson)
                .doFinally(signal -> {
                    ticket.close();
                    admission.release(n);
                    recording.end(signal == SignalType.ON_COMPLETE);
                });
    }

    /** The metrics' recorder, and the deadline admission told of every square answered. */
    private static CallRecorder answersTo(DeadlineAdmission.Lane.Ticket ticket, CallRecorder recording) {
        return new CallRecorder() {
            @Override
            public void started() {
                recording.started();
            }

            @Override
            public void finished(long nanos, boolean success) {
                recording.finished(nanos, success);
                if (success) {
                    ticket.answered();
                }
            }
        };
    }

    private Mono<Squares> collect(Transport transport, int n, Shape shape, CallRecorder recorder) {
        if (n == 0) {
            return Mono.just(new Squares(0));
        }
        StreamSquareClient stream = streamClients.get(transport);
        if (stream != null) {
            return stream.squares(n, shape, recorder);
        }
        UnarySquareClient client = unaryClients.get(transport);
        return Flux.range(1, n)
                .flatMapSequential(number -> call(client, number, shape, recorder), properties.inFlight(), 1)
                .collect(() -> new Squares(n), Squares::add)
                .flatMap(squares -> squares.isComplete() ? Mono.just(squares) : Mono.error(incomplete(squares)));
    }

    /**
     * One call, reported to the recorder exactly once, when its answer arrives and before the answer
     * travels on (by then flatMapSequential may start the next call, and the in-flight count must not see
     * both), or when it fails, or is cancelled unanswered (operators may also cancel a call that has
     * already answered, hence the flag).
     */
    private static Mono<Long> call(UnarySquareClient client, int number, Shape shape, CallRecorder recorder) {
        return Mono.defer(() -> {
            recorder.started();
            long start = System.nanoTime();
            AtomicBoolean reported = new AtomicBoolean();
            Consumer<Boolean> finish = success -> {
                if (reported.compareAndSet(false, true)) {
                    recorder.finished(System.nanoTime() - start, success);
                }
            };
            return client.square(number, shape)
                    .doOnSuccess(square -> finish.accept(square != null))
                    .doOnError(error -> finish.accept(false))
                    .doOnCancel(() -> finish.accept(false));
        });
    }

    private OverloadedException overloaded(int n) {
        return new OverloadedException(
                "the aggregator is busy: " + n + " more squares do not fit its budget of " + admission.maxSquares()
                        + " squares in flight (aggregator.admission.max-squares); retry later",
                properties.admission().retryAfter());
    }

    private DownstreamException deadlineExceeded() {
        return new DownstreamException(
                DownstreamException.Kind.TIMEOUT,
                "no complete answer from the square service within "
                        + properties.deadline().toMillis() + " ms (aggregator.deadline)");
    }

    private static DownstreamException incomplete(Squares squares) {
        return new DownstreamException(
                DownstreamException.Kind.BAD_ANSWER,
                "the square service answered " + squares.size() + " of " + squares.expected() + " squares");
    }
}
