package io.strata.client.data;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.strata.proto.ReadBlockResponse;
import java.io.IOException;

/**
 * The client end of one data channel (see data.proto): decodes the varint32-length-prefixed
 * ReadBlockResponse of the exchange in progress, then copies exactly the announced number of raw
 * bytes straight from Netty's buffers into the caller's array. Bytes that arrive when no exchange
 * expects them break the protocol and close the channel. Runs on the channel's event loop only,
 * except {@link #begin}, whose write is published by the request's write task.
 */
final class ReadResponseHandler extends ChannelInboundHandlerAdapter {
  /** A reply header is a few short fields; anything larger is a corrupt stream. */
  private static final int MAX_HEADER_BYTES = 1 << 20;

  private volatile Transfer transfer;

  /** Holds the start of a header split across reads; null when empty. */
  private ByteBuf pending;

  void begin(Transfer t) {
    transfer = t;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) throws IOException {
    ByteBuf data = (ByteBuf) msg;
    ByteBuf in = data;
    if (pending != null) {
      pending.writeBytes(data);
      data.release();
      in = pending;
      pending = null;
    }
    try {
      while (in.isReadable()) {
        Transfer t = transfer;
        if (t == null) {
          throw new DataClient.ProtocolViolation(
              "worker sent " + in.readableBytes() + " bytes while no read was in progress");
        }
        if (!t.hasHeader()) {
          ReadBlockResponse header = parseHeader(in);
          if (header == null) {
            pending = ctx.alloc().heapBuffer(Math.max(64, in.readableBytes() * 2));
            pending.writeBytes(in);
            break;
          }
          if (!t.onHeader(header)) {
            throw new DataClient.ProtocolViolation(
                "worker announced "
                    + header.getLength()
                    + " bytes, which is not the length asked for");
          }
        } else {
          t.deliver(in, (int) Math.min(in.readableBytes(), t.remaining()));
        }
        if (t.remaining() == 0) {
          transfer = null;
          t.complete();
        }
      }
    } finally {
      in.release();
    }
  }

  /** Parses a whole header or returns null, leaving the buffer as it was, when it is partial. */
  private static ReadBlockResponse parseHeader(ByteBuf in) throws IOException {
    int start = in.readerIndex();
    int length = 0;
    for (int shift = 0; ; shift += 7) {
      if (shift >= 35) {
        throw new DataClient.ProtocolViolation("malformed length prefix of a reply header");
      }
      if (!in.isReadable()) {
        in.readerIndex(start);
        return null;
      }
      byte b = in.readByte();
      length |= (b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        break;
      }
    }
    if (length < 0 || length > MAX_HEADER_BYTES) {
      throw new DataClient.ProtocolViolation(
          "reply header of " + length + " bytes is out of range");
    }
    if (in.readableBytes() < length) {
      in.readerIndex(start);
      return null;
    }
    ReadBlockResponse header = ReadBlockResponse.parseFrom(in.nioBuffer(in.readerIndex(), length));
    in.skipBytes(length);
    return header;
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    failCurrent(new IOException("the worker closed the connection"));
    if (pending != null) {
      pending.release();
      pending = null;
    }
    ctx.fireChannelInactive();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    failCurrent(cause);
    // The exchange has already failed above; nothing waits for the close.
    var unused = ctx.close();
  }

  private void failCurrent(Throwable cause) {
    Transfer t = transfer;
    transfer = null;
    if (t != null) {
      t.fail(cause);
    }
  }
}
