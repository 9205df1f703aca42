package io.strata.common.proto;

import com.google.protobuf.Descriptors.FileDescriptor;
import io.strata.proto.Common;
import io.strata.proto.Data;
import io.strata.proto.Master;
import io.strata.proto.Worker;
import io.strata.proto.journal.Journal;
import java.util.List;

/**
 * The compiled descriptors of every file in core/common/src/main/proto/strata, in a fixed order.
 * {@code ProtoCompatibilityTest} fails when a file there is missing from this list.
 */
final class StrataProtoFiles {
  static final String SOURCE_DIRECTORY = "src/main/proto/strata";

  private StrataProtoFiles() {}

  static List<FileDescriptor> all() {
    return List.of(
        Common.getDescriptor(),
        Data.getDescriptor(),
        Journal.getDescriptor(),
        Master.getDescriptor(),
        Worker.getDescriptor());
  }
}
