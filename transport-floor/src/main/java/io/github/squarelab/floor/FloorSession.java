package io.github.squarelab.floor;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import io.github.squarelab.floor.measure.FloorFailure;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Many client runs in one JVM, one a line: the lab measures the floor as it measures the paths, in parts that take
 * turns between the transports, on JVMs kept warm across them (a fresh JVM per run moved a transport's figure by up to
 * 37 % between its repeats). Each line on stdin is a JSON array of the words that follow {@code client} on the command
 * line; each run prints its JSON object on one line on stdout, or {@code {"error": "..."}} when it could not be run or
 * failed, and its progress and the {@code floor: measuring} and {@code floor: measured} marks on stderr. It ends at the
 * end of its input.
 */
final class FloorSession {

    private final BufferedReader input;
    private final PrintStream output;
    private final PrintStream progress;

    FloorSession(InputStream input, PrintStream output, PrintStream progress) {
        this.input = new BufferedReader(new InputStreamReader(input, StandardCharsets.UTF_8));
        this.output = output;
        this.progress = progress;
    }

    void serve() throws InterruptedException {
        String line;
        while ((line = nextLine()) != null) {
            if (!line.isBlank()) {
                output.println(run(line));
                output.flush();
            }
        }
    }

    private String nextLine() {
        try {
            return input.readLine();
        } catch (IOException e) {
            // The lab closed its end: nothing more to run.
            return null;
        }
    }

    private String run(String line) throws InterruptedException {
        List<String> words;
        try {
            words = words(line);
        } catch (IllegalArgumentException e) {
            return error(e.getMessage());
        }
        try {
            ClientSettings settings =
                    TransportFloor.clientSettings(words.get(0), Arguments.parse(words.subList(1, words.size())));
            FloorClient client = new FloorClient(settings, progress);
            return client.toJson(client.run());
        } catch (IllegalArgumentException e) {
            return error("usage: " + e.getMessage());
        } catch (FloorFailure e) {
            progress.println("floor: FAILED: " + e.getMessage());
            return error(e.getMessage());
        } catch (RuntimeException e) {
            // One run's surprise ends that run, not the session the lab measures the others with.
            progress.println("floor: FAILED: " + e);
            return error(e.toString());
        }
    }

    /** The run's words from its line: a JSON array of strings, the transport first. */
    private static List<String> words(String line) {
        try {
            JsonArray array = JsonParser.parseString(line).getAsJsonArray();
            List<String> words = new ArrayList<>();
            array.forEach(word -> words.add(word.getAsString()));
            if (words.isEmpty()) {
                throw new IllegalArgumentException("an empty run: expected the transport and its options");
            }
            return words;
        } catch (JsonParseException | IllegalStateException | UnsupportedOperationException e) {
            throw new IllegalArgumentException("a line must be a JSON array of strings, not: " + line);
        }
    }

    private static String error(String message) {
        JsonObject json = new JsonObject();
        json.addProperty("error", message);
        return json.toString();
    }
}
