package io.strata.client;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.strata.common.PathNames;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.GetStatusRequest;
import java.time.Duration;
import java.util.Optional;

/**
 * The write type that applies to a new file before it is written: the one its folder sets ({@code
 * strata fs setWriteType}), else the client's. A file written to the under store gets its folder's
 * type from the master when it is committed; a file whose bytes go to a worker's cache only
 * (ASYNC_THROUGH, MUST_CACHE) must know it before the first byte, so the folders' types are asked
 * of the master and kept for {@link #KEEP} (a type set meanwhile applies to this client's new files
 * at most that much later).
 */
final class FolderWriteTypes {
  /** How long a folder's type is used before it is asked for again. */
  static final Duration KEEP = Duration.ofSeconds(10);

  private final ClientContext ctx;
  private final Cache<String, Optional<WriteType>> folders =
      Caffeine.newBuilder().expireAfterWrite(KEEP).maximumSize(10_000).build();

  FolderWriteTypes(ClientContext ctx) {
    this.ctx = ctx;
  }

  /** The write type of a new file at {@code path} (normalized). */
  WriteType forNewFile(String path) throws StrataException {
    String parent = PathNames.parent(path);
    Optional<WriteType> set = folders.getIfPresent(parent);
    if (set == null) {
      try {
        set =
            Optional.ofNullable(
                WriteType.setBy(
                    ctx.master
                        .call(
                            s -> s.getStatus(GetStatusRequest.newBuilder().setPath(parent).build()))
                        .getFile()));
      } catch (StrataException e) {
        if (e.code() != ErrorCode.NOT_FOUND) {
          throw e;
        }
        // A folder that does not exist yet (made with the file) sets nothing.
        set = Optional.empty();
      }
      folders.put(parent, set);
    }
    return set.orElse(ctx.writeType);
  }
}
