# One image recipe for the three services, chosen with the MODULE build argument:
#   docker build --build-arg MODULE=square-rest-service --build-arg HEALTH_PORT=7575 --build-arg PORTS=7575 .
# docker-compose.yml passes the arguments for each service. No RUN --mount, so that the classic builder
# (docker-compose v1) builds it as well as BuildKit.

FROM eclipse-temurin:17-jdk-noble AS build
ARG MODULE=aggregator-service
WORKDIR /src
# The wrapper and the root pom first: this layer, with Maven itself, stays cached while the sources change.
COPY mvnw pom.xml ./
COPY .mvn .mvn
RUN ./mvnw -B -q --version
COPY . .
RUN ./mvnw -B -q -pl "${MODULE}" -am package -DskipTests -DskipITs \
    && cp "${MODULE}/target/${MODULE}-1.0.0-SNAPSHOT.jar" /service.jar

FROM eclipse-temurin:17-jre-noble
ARG MODULE=aggregator-service
# The HTTP port that serves /actuator/health (the management port for square-grpc-service).
ARG HEALTH_PORT=8080
ARG PORTS=8080
LABEL org.opencontainers.image.title="${MODULE}" \
      org.opencontainers.image.source="rest-vs-grpc-lab"
RUN groupadd --system --gid 10001 service \
    && useradd --system --uid 10001 --gid service --no-create-home --home-dir /nonexistent service
COPY --from=build /service.jar /opt/service/service.jar
COPY docker/healthcheck.sh /usr/local/bin/healthcheck
# The services' own JVM options (heap, collector, -XX:+ExitOnOutOfMemoryError), the file every other way of
# starting them uses too.
COPY jvm.options /opt/service/jvm.options
ENV HEALTH_PORT=${HEALTH_PORT}
USER 10001:10001
EXPOSE ${PORTS}
HEALTHCHECK --interval=5s --timeout=3s --start-period=60s --retries=12 CMD ["/usr/local/bin/healthcheck"]
# Here, not in JAVA_TOOL_OPTIONS, so that setting those (compose, the manifests) cannot drop them: the JVM reads
# JAVA_TOOL_OPTIONS first, so it can add options and the file's own win. A JVM that runs out of memory exits,
# and its restart policy brings it back, rather than staying up deaf.
ENTRYPOINT ["java", "@/opt/service/jvm.options", "-jar", "/opt/service/service.jar"]
