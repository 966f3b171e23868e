FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/target/release/corkboard /usr/local/bin/corkboard
ENV CORKBOARD_LISTEN=0.0.0.0:8080 CORKBOARD_DATA_DIR=/data
VOLUME /data
EXPOSE 8080
ENTRYPOINT ["corkboard"]
CMD ["serve"]
