package io.strata.proxy.xml;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.AbortableInputStream;
import software.amazon.awssdk.http.ExecutableHttpRequest;
import software.amazon.awssdk.http.HttpExecuteRequest;
import software.amazon.awssdk.http.HttpExecuteResponse;
import software.amazon.awssdk.http.SdkHttpClient;
import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.http.SdkHttpResponse;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * The real AWS SDK v2 S3 client over an HTTP client that answers every request with a canned
 * response and keeps what was sent: the SDK's own marshalling and unmarshalling, no network.
 */
final class SdkStub implements SdkHttpClient {
  /** A request as the SDK sent it. */
  record Sent(SdkHttpRequest request, byte[] body) {}

  final List<Sent> sent = new ArrayList<>();
  private int status = 200;
  private byte[] responseBody = new byte[0];

  final S3Client client =
      S3Client.builder()
          .region(Region.US_EAST_1)
          .credentialsProvider(
              StaticCredentialsProvider.create(
                  AwsBasicCredentials.create(
                      "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")))
          .endpointOverride(URI.create("http://127.0.0.1:9"))
          .forcePathStyle(true)
          .httpClient(this)
          .build();

  /** The next answers are this status and body. */
  SdkStub answer(int status, byte[] body) {
    this.status = status;
    this.responseBody = body;
    return this;
  }

  Sent last() {
    return sent.get(sent.size() - 1);
  }

  @Override
  public ExecutableHttpRequest prepareRequest(HttpExecuteRequest request) {
    return new ExecutableHttpRequest() {
      @Override
      public HttpExecuteResponse call() {
        byte[] body =
            request
                .contentStreamProvider()
                .map(
                    p -> {
                      try (InputStream in = p.newStream()) {
                        return in.readAllBytes();
                      } catch (IOException e) {
                        throw new UncheckedIOException(e);
                      }
                    })
                .orElse(new byte[0]);
        sent.add(new Sent(request.httpRequest(), body));
        return HttpExecuteResponse.builder()
            .response(
                SdkHttpResponse.builder()
                    .statusCode(status)
                    .putHeader("Content-Type", "application/xml")
                    .putHeader("Content-Length", Integer.toString(responseBody.length))
                    .putHeader("x-amz-request-id", "STUBREQUEST")
                    .build())
            .responseBody(AbortableInputStream.create(new ByteArrayInputStream(responseBody)))
            .build();
      }

      @Override
      public void abort() {}
    };
  }

  @Override
  public void close() {}
}
