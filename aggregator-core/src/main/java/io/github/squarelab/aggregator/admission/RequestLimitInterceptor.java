package io.github.squarelab.aggregator.admission;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import io.github.squarelab.aggregator.AggregatorProperties;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.AsyncHandlerInterceptor;

/**
 * Holds a fan-out request's place in the {@link RequestLimit} until its answer is written, and sheds one that finds no
 * place with a 503 written here, as a shed must cost less than the work it turns away (docs/performance.md, "Sheds").
 */
public final class RequestLimitInterceptor implements AsyncHandlerInterceptor {

    private static final String HELD = RequestLimitInterceptor.class.getName() + ".held";
    /** The problem body up to its instance, which the request's path ends. */
    private final String problemStart;

    private final RequestLimit limit;
    private final String retryAfter;
    private final Consumer<HttpServletRequest> onShed;

    /** @param onShed told of each request shed here, before the 503 is answered (for the shed counter) */
    public RequestLimitInterceptor(
            RequestLimit limit, AggregatorProperties.Admission settings, Consumer<HttpServletRequest> onShed) {
        this.limit = limit;
        this.retryAfter = Long.toString(OverloadedException.wholeSeconds(settings.retryAfter()));
        this.onShed = onShed;
        this.problemStart = "{\"type\":\"about:blank\",\"title\":\"Service Unavailable\",\"status\":503,\"detail\":\""
                + "the aggregator is busy: " + limit.maxRequests() + " requests are in progress, its most at once"
                + " (aggregator.admission.max-requests); retry later\",\"instance\":\"";
    }

    @Override
    public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler)
            throws IOException {
        // The async dispatch that writes an answer passes here again: its place was taken on the first pass.
        if (request.getDispatcherType() == DispatcherType.ASYNC || !(handler instanceof HandlerMethod)) {
            return true;
        }
        if (!limit.tryAcquire()) {
            onShed.accept(request);
            shed(request, response);
            return false;
        }
        request.setAttribute(HELD, Boolean.TRUE);
        return true;
    }

    private void shed(HttpServletRequest request, HttpServletResponse response) throws IOException {
        byte[] body = (problemStart + new String(JsonStringEncoder.getInstance().quoteAsString(request.getRequestURI()))
                        + "\"}")
                .getBytes(StandardCharsets.UTF_8);
        response.setStatus(HttpServletResponse.SC_SERVICE_UNAVAILABLE);
        response.setHeader(HttpHeaders.RETRY_AFTER, retryAfter);
        response.setContentType(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
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
