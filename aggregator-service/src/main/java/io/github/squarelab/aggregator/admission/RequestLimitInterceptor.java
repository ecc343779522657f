package io.github.squarelab.aggregator.admission;

import io.github.squarelab.aggregator.AggregatorProperties;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.util.function.Consumer;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.AsyncHandlerInterceptor;

/**
 * Holds a fan-out request's place in the {@link RequestLimit} from the moment its handler is chosen until its answer
 * is written, which for an asynchronous answer is the end of its async dispatch, not the end of its fan-out: an answer
 * that waits for a Tomcat thread still holds Tomcat's buffers. A request that finds no place is shed with a 503
 * before it parses n or starts anything.
 */
public final class RequestLimitInterceptor implements AsyncHandlerInterceptor {

    private static final String HELD = RequestLimitInterceptor.class.getName() + ".held";

    private final RequestLimit limit;
    private final AggregatorProperties.Admission settings;
    private final Consumer<HttpServletRequest> onShed;

    /** @param onShed told of each request shed here, before the 503 is answered (for the shed counter) */
    public RequestLimitInterceptor(
            RequestLimit limit, AggregatorProperties.Admission settings, Consumer<HttpServletRequest> onShed) {
        this.limit = limit;
        this.settings = settings;
        this.onShed = onShed;
    }

    @Override
    public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler) {
        // The async dispatch that writes an answer passes here again: its place was taken on the first pass.
        if (request.getDispatcherType() == DispatcherType.ASYNC || !(handler instanceof HandlerMethod)) {
            return true;
        }
        if (!limit.tryAcquire()) {
            onShed.accept(request);
            throw new OverloadedException(
                    "the aggregator is busy: " + limit.maxRequests() + " requests are in progress, its most at once"
                            + " (aggregator.admission.max-requests); retry later",
                    settings.retryAfter());
        }
        request.setAttribute(HELD, Boolean.TRUE);
        return true;
    }

    /** Called once the answer is written: after the async dispatch for an asynchronous answer, else on this thread. */
    @Override
    public void afterCompletion(
            HttpServletRequest request, HttpServletResponse response, Object handler, Exception failure) {
        if (request.getAttribute(HELD) != null) {
            request.removeAttribute(HELD);
            limit.release();
        }
    }
}
