package io.strata.worker.data;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.strata.proto.ReadBlockResponse;
import io.strata.proto.ReadStatus;

/**
 * Encodes a {@link ReadBlockResponse} as the data channel frames it: its length as a varint32, then
 * its bytes. Raw block bytes that follow are written unframed, which is why the outbound pipeline
 * has no length prepender.
 */
final class ResponseFrames {
  private ResponseFrames() {}

  static ByteBuf encode(ByteBufAllocator alloc, ReadBlockResponse response) {
    int size = response.getSerializedSize();
    ByteBuf buf = alloc.buffer(5 + size);
    int v = size;
    while ((v & ~0x7F) != 0) {
      buf.writeByte((v & 0x7F) | 0x80);
      v >>>= 7;
    }
    buf.writeByte(v);
    buf.writeBytes(response.toByteArray());
    return buf;
  }

  static ReadBlockResponse status(ReadStatus status, String message) {
    return ReadBlockResponse.newBuilder().setStatus(status).setMessage(message).build();
  }
}
