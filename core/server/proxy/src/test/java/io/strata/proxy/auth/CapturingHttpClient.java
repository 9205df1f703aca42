package io.strata.proxy.auth;

import java.io.ByteArrayInputStream;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.AbortableInputStream;
import software.amazon.awssdk.http.ExecutableHttpRequest;
import software.amazon.awssdk.http.HttpExecuteRequest;
import software.amazon.awssdk.http.HttpExecuteResponse;
import software.amazon.awssdk.http.SdkHttpClient;
import software.amazon.awssdk.http.SdkHttpResponse;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3ClientBuilder;

/**
 * An HTTP client for the real S3 client that keeps each request as it would go on the wire (head
 * and body bytes) and answers 200 with no body, so tests see exactly what the SDK sends by default
 * without a server.
 */
final class CapturingHttpClient implements SdkHttpClient {
  private final List<WireRequest> requests = new ArrayList<>();

  /** An S3 client for http://localhost:9000, path-style, that sends through a new capture. */
  static S3Client s3(
      CapturingHttpClient http,
      String accessKey,
      String secret,
      Consumer<S3ClientBuilder> customize) {
    S3ClientBuilder b =
        S3Client.builder()
            .httpClient(http)
            .region(Region.of("eu-central-1"))
            .endpointOverride(URI.create("http://localhost:9000"))
            .forcePathStyle(true)
            .credentialsProvider(
                StaticCredentialsProvider.create(AwsBasicCredentials.create(accessKey, secret)))
            .overrideConfiguration(o -> o.retryStrategy(r -> r.maxAttempts(1)));
    customize.accept(b);
    return b.build();
  }

  synchronized WireRequest last() {
    if (requests.isEmpty()) {
      throw new AssertionError("The client sent no request");
    }
    return requests.get(requests.size() - 1);
  }

  @Override
  public ExecutableHttpRequest prepareRequest(HttpExecuteRequest request) {
    return new ExecutableHttpRequest() {
      @Override
      public HttpExecuteResponse call() {
        byte[] body = WireRequest.readAll(request.contentStreamProvider().orElse(null));
        synchronized (CapturingHttpClient.this) {
          requests.add(WireRequest.of(request.httpRequest(), body));
        }
        return HttpExecuteResponse.builder()
            .response(
                SdkHttpResponse.builder()
                    .statusCode(200)
                    .putHeader("ETag", "\"0123456789abcdef0123456789abcdef\"")
                    .putHeader("Content-Length", "0")
                    .build())
            .responseBody(AbortableInputStream.create(new ByteArrayInputStream(new byte[0])))
            .build();
      }

      @Override
      public void abort() {}
    };
  }

  @Override
  public void close() {}
}
