package io.strata.worker.data;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.TooLongFrameException;
import java.util.List;

/**
 * Splits the inbound byte stream into varint32-length-prefixed request frames, refusing any frame
 * longer than {@link #MAX_FRAME} bytes. Netty's own varint frame decoder has no bound, so a bad or
 * hostile length prefix could make the worker buffer gigabytes; a read request is a few hundred
 * bytes, so the bound here is generous and the channel is closed past it.
 */
final class RequestFrameDecoder extends ByteToMessageDecoder {
  static final int MAX_FRAME = 64 * 1024;

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    in.markReaderIndex();
    int length = 0;
    int shift = 0;
    while (true) {
      if (!in.isReadable()) {
        in.resetReaderIndex();
        return;
      }
      byte b = in.readByte();
      length |= (b & 0x7f) << shift;
      if (b >= 0) {
        break;
      }
      shift += 7;
      if (shift > 28) {
        throw new CorruptedFrameException("request length prefix is not a varint32");
      }
    }
    if (length < 0 || length > MAX_FRAME) {
      throw new TooLongFrameException(
          "request frame of " + length + " bytes exceeds the " + MAX_FRAME + "-byte limit");
    }
    if (in.readableBytes() < length) {
      in.resetReaderIndex();
      return;
    }
    out.add(in.readRetainedSlice(length));
  }
}
