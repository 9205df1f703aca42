package io.strata.worker;

import io.strata.proto.ReadBlockRequest;
import io.strata.proto.ReadBlockResponse;
import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;

/**
 * A minimal client of the data channel for tests: sends varint32-framed requests on one socket and
 * reads each framed response and the raw bytes after it.
 */
final class DataClient implements AutoCloseable {
  /** A response and the raw bytes that followed it. */
  record Reply(ReadBlockResponse response, byte[] data) {}

  private final Socket socket;
  private final InputStream in;
  private final OutputStream out;

  DataClient(int port) throws IOException {
    socket = new Socket("127.0.0.1", port);
    socket.setSoTimeout(60_000);
    in = new BufferedInputStream(socket.getInputStream());
    out = socket.getOutputStream();
  }

  void send(ReadBlockRequest request) throws IOException {
    request.writeDelimitedTo(out);
    out.flush();
  }

  Reply receive() throws IOException {
    ReadBlockResponse response = ReadBlockResponse.parseDelimitedFrom(in);
    if (response == null) {
      throw new EOFException("channel closed before a response");
    }
    byte[] data = in.readNBytes((int) response.getLength());
    if (data.length != response.getLength()) {
      throw new EOFException(
          "channel closed after " + data.length + " of " + response.getLength() + " bytes");
    }
    return new Reply(response, data);
  }

  Reply read(ReadBlockRequest request) throws IOException {
    send(request);
    return receive();
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
