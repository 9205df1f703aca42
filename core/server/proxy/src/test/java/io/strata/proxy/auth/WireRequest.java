package io.strata.proxy.auth;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestDecoder;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.http.ContentStreamProvider;
import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.utils.http.SdkHttpUtils;

/**
 * A request as the proxy's HTTP layer sees it: the head that a client put on the wire, parsed back
 * by Netty's own decoder, so that tests check what a real server receives (raw path and query, one
 * char per byte, headers with their repeats) rather than what the client meant.
 */
record WireRequest(
    String method, String rawPath, String rawQuery, HttpHeaders headers, byte[] body) {

  /** Serialises a request the way the SDK's HTTP clients do, then decodes it with Netty. */
  static WireRequest of(SdkHttpRequest request, byte[] body) {
    String query =
        SdkHttpUtils.encodeAndFlattenQueryParameters(request.rawQueryParameters()).orElse("");
    String path = request.encodedPath().isEmpty() ? "/" : request.encodedPath();
    StringBuilder head = new StringBuilder();
    head.append(request.method().name())
        .append(' ')
        .append(path)
        .append(query.isEmpty() ? "" : "?" + query)
        .append(" HTTP/1.1\r\n");
    for (Map.Entry<String, List<String>> h : request.headers().entrySet()) {
      for (String v : h.getValue()) {
        head.append(h.getKey()).append(": ").append(v).append("\r\n");
      }
    }
    head.append("\r\n");
    return parse(head.toString().getBytes(StandardCharsets.UTF_8), body);
  }

  /** Decodes a request head given as bytes (UTF-8 where a client sent non-ASCII). */
  static WireRequest parse(byte[] head, byte[] body) {
    EmbeddedChannel channel = new EmbeddedChannel(new HttpRequestDecoder());
    try {
      channel.writeInbound(Unpooled.wrappedBuffer(head));
      HttpRequest req = channel.readInbound();
      if (req == null || !req.decoderResult().isSuccess()) {
        throw new IllegalArgumentException(
            "Netty could not decode the request head: "
                + (req == null ? "nothing" : req.decoderResult()));
      }
      String uri = req.uri();
      int q = uri.indexOf('?');
      return new WireRequest(
          req.method().name(),
          q < 0 ? uri : uri.substring(0, q),
          q < 0 ? "" : uri.substring(q + 1),
          req.headers(),
          body);
    } finally {
      channel.finishAndReleaseAll();
    }
  }

  static byte[] readAll(ContentStreamProvider provider) {
    if (provider == null) {
      return new byte[0];
    }
    try (InputStream in = provider.newStream()) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      in.transferTo(out);
      return out.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  AuthResult verify(SigV4Verifier verifier) {
    return verifier.verify(method, rawPath, rawQuery, headers);
  }

  WireRequest withHeader(String name, String value) {
    HttpHeaders copy = headers.copy();
    copy.set(name, value);
    return new WireRequest(method, rawPath, rawQuery, copy, body);
  }

  WireRequest withoutHeader(String name) {
    HttpHeaders copy = headers.copy();
    copy.remove(name);
    return new WireRequest(method, rawPath, rawQuery, copy, body);
  }

  WireRequest withPath(String path) {
    return new WireRequest(method, path, rawQuery, headers, body);
  }

  WireRequest withQuery(String query) {
    return new WireRequest(method, rawPath, query, headers, body);
  }

  WireRequest withBody(byte[] newBody) {
    return new WireRequest(method, rawPath, rawQuery, headers, newBody);
  }
}
